package check

// What the faults did: the failovers (a fault that took the agreed leader away, until the nodes
// agree again), the convergence after each heal, and warnings for the faults that never bit, so
// that a green run cannot be a vacuous one.

import (
	"fmt"
	"slices"

	"github.com/leaderlab/leaderlab/logs"
)

// agreedAt is agreed for a point: every live node follows one live leader.
func (c *checker) agreedAt(pt *point) (int, bool) { return c.agreed(pt.state) }

// majorityAgreed tells whether the live nodes of the component that holds a strict majority of
// the live nodes follow one of them, which believes in itself. While the network is whole that
// component is every live node, and this is agreed.
func (c *checker) majorityAgreed(pt *point) (int, bool) {
	if pt.comps == nil {
		return c.agreed(pt.state)
	}
	live := 0
	for _, s := range pt.state {
		if s.live() {
			live++
		}
	}
	for _, comp := range pt.comps {
		if 2*len(comp) <= live {
			continue
		}
		l := 0
		for _, id := range comp {
			b := pt.state[c.index[id]].belief
			if b == 0 || (l != 0 && b != l) {
				return 0, false
			}
			l = b
		}
		// Every member is live and follows l; l among them follows itself.
		return l, slices.Contains(comp, l)
	}
	return 0, false
}

// agreeWatch looks, from the point in force at `from` on (up to the end), for the first moment when
// agree holds, as the play goes by: found is then its time (max(the point's, from)) and leader.
type agreeWatch struct {
	from   int64
	agree  func(*point) (int, bool)
	done   bool
	found  bool
	at     int64
	leader int
}

// watchAgreement starts a watch at `from` (a probe there looks at the point then in force; later
// points are looked at as they come).
func (c *checker) watchAgreement(p *player, from int64, agree func(*point) (int, bool)) *agreeWatch {
	w := &agreeWatch{from: from, agree: agree}
	if from > c.end {
		w.done = true
		return w
	}
	p.probe(from, func(pt *point) {
		if pt != nil && pt.t <= c.end {
			c.lookWatch(w, pt)
		}
		if !w.done {
			c.watches = append(c.watches, w)
		}
	})
	return w
}

func (c *checker) lookWatch(w *agreeWatch, pt *point) {
	if l, ok := w.agree(pt); ok {
		w.done, w.found, w.at, w.leader = true, true, max(pt.t, w.from), l
	}
}

// watchPoint looks at a new point for every watch still looking.
func (c *checker) watchPoint(pt *point) {
	if len(c.watches) == 0 {
		return
	}
	if pt.t > c.end {
		c.watches = nil
		return
	}
	keep := c.watches[:0]
	for _, w := range c.watches {
		c.lookWatch(w, pt)
		if !w.done {
			keep = append(keep, w)
		}
	}
	c.watches = keep
}

// failoverStart asks, for each fault, whether it took away the leader the live nodes agreed on just
// before (the point in force then), and if so watches for their next agreement. A partition is
// measured from its record, but agreement is looked for only once every node holds its rules:
// until then the old leader may still look agreed on.
func (c *checker) failoverStart(p *player) {
	for j, op := range c.faults {
		te := c.opTime[j]
		if te > c.end {
			continue
		}
		p.probe(te-1, func(before *point) {
			if before == nil {
				return
			}
			l, ok := c.majorityAgreed(before)
			if !ok {
				return
			}
			from, fault := te, ""
			switch op.Op {
			case logs.OpKill, logs.OpStop, logs.OpPause:
				if !slices.Contains(op.Targets, l) {
					return
				}
				fault = fmt.Sprintf("%s %d at %s", op.Op, l, c.rel(te))
			case logs.OpPartition:
				if !hasSides(op) || !c.cutsOff(j, l, before) {
					return
				}
				fault = fmt.Sprintf("partition cutting %d off at %s", l, c.rel(te))
				from = c.effect[j]
			default:
				return
			}
			c.failing = append(c.failing, failoverWatch{j: j, te: te, fault: fault, w: c.watchAgreement(p, from, c.majorityAgreed)})
		})
	}
}

type failoverWatch struct {
	j     int
	te    int64
	fault string
	w     *agreeWatch
}

// failovers measures, for each fault that took away the leader the live nodes agreed on just
// before, the time until they agree again (see Failover for what counts).
func (c *checker) failovers() []Failover {
	out := []Failover{}
	slices.SortStableFunc(c.failing, func(a, b failoverWatch) int { return a.j - b.j })
	for _, fw := range c.failing {
		f := Failover{Fault: fw.fault, AtMS: roundMS(fw.te-c.begin, 1000)}
		if fw.w.found {
			ms := roundMS(fw.w.at-fw.te, 1000)
			f.MS, f.Leader = &ms, &fw.w.leader
		}
		out = append(out, f)
	}
	return out
}

// cutsOff tells whether partition j, by its own rules, leaves leader l outside the component that
// holds a strict majority of the nodes live just before it (or leaves no such component).
func (c *checker) cutsOff(j, l int, before *point) bool {
	var live []int
	for k, s := range before.state {
		if s.live() {
			live = append(live, c.ids[k])
		}
	}
	for _, comp := range c.recordComponents(j, live) {
		if 2*len(comp) > len(live) {
			return !slices.Contains(comp, l)
		}
	}
	return true
}

// healStart watches, for each heal, for the first moment every live node follows one live leader,
// looked for once every node has dropped its rules.
func (c *checker) healStart(p *player) {
	for j, op := range c.faults {
		if op.Op != logs.OpHeal || op.TS > c.end {
			continue
		}
		c.healing = append(c.healing, healWatch{j: j, w: c.watchAgreement(p, c.effect[j], c.agreedAt)})
	}
}

type healWatch struct {
	j int
	w *agreeWatch
}

// heals measures, for each heal, the time from its record until every live node follows one live
// leader, looked for once every node has dropped its rules.
func (c *checker) heals() []Heal {
	out := []Heal{}
	for _, hw := range c.healing {
		op := c.faults[hw.j]
		h := Heal{AtMS: roundMS(op.TS-c.begin, 1000)}
		if hw.w.found {
			ms := roundMS(hw.w.at-op.TS, 1000)
			h.ConvergedMS, h.Leader = &ms, &hw.w.leader
		}
		out = append(out, h)
	}
	return out
}

// partitioned is the time, up to the end, the live nodes were in two or more components (summed as
// the points went by).
func (c *checker) partitioned() int64 { return c.partTime }

// partitionedPoint adds a point's stretch [pt.t, to) to the time split into components.
func (c *checker) partitionedPoint(pt *point, to int64) {
	to = min(to, c.end)
	if len(pt.comps) >= 2 && to > pt.t {
		c.partTime += to - pt.t
	}
}

// faultsThatNeverBit warns of each applied fault, up to the end, that cannot have done what it was
// meant to: a kill or pause of a dead node, a pause of a paused one, a pause shorter than the
// failure detector's timeout, a restart of a running node, a partition that cut no link between two
// live nodes, a link rule on a link that carried nothing while it was in force.
func (c *checker) faultsThatNeverBit() {
	timeout := c.run.Cluster.Timeout.D()
	bit := c.bit
	never := func(j int, format string, args ...any) {
		c.warnf("%s: never bit: %s", c.faultName(j), fmt.Sprintf(format, args...))
	}
	for j, op := range c.faults {
		if op.TS > c.end {
			continue
		}
		switch op.Op {
		case logs.OpKill, logs.OpStop:
			for _, id := range op.Targets {
				if c.victim(id, op.TS) == nil {
					never(j, "node %d was already dead", id)
				}
			}
		case logs.OpPause:
			st := c.pauseBefore[j]
			for _, id := range op.Targets {
				k, ok := c.index[id]
				switch {
				case !ok:
				case st[k].inc == 0:
					never(j, "node %d was already dead", id)
				case st[k].paused:
					never(j, "node %d was already paused", id)
				default:
					if d, ok := c.pauseLength(j, id, st[k].inc); ok && timeout > 0 && d < int64(timeout) {
						never(j, "node %d was paused for %s, less than the failure detector's timeout (%s), too short for a peer to suspect it",
							id, fmtDur(d), timeout)
					}
				}
			}
		case logs.OpRestart:
			for _, id := range op.Targets {
				if why := c.restartMissed(id, op.TS); why != "" {
					never(j, "%s", why)
				}
			}
		case logs.OpPartition:
			if hasSides(op) && !bit[j] {
				never(j, "it cut no link between two live nodes while it was in force")
			}
		case logs.OpLink:
			w, ok := c.linkWin[j]
			if !ok {
				continue // an invalid record, warned about already
			}
			to := min(w.to, c.end)
			if !c.carried[j] {
				never(j, "no message or heartbeat from %d to %d is seen while it was in force (%s..%s)",
					op.From, op.To, c.rel(w.from), c.rel(to))
			}
		}
	}
}

// neverBitStart asks the timeline, for each pause, about the node's state just before it.
func (c *checker) neverBitStart(p *player) {
	c.pauseBefore = map[int][]nodeState{}
	for j, op := range c.faults {
		if op.Op != logs.OpPause || op.TS > c.end {
			continue
		}
		p.probe(op.TS-1, func(pt *point) {
			if pt != nil {
				c.pauseBefore[j] = pt.state
			} else {
				c.pauseBefore[j] = make([]nodeState, len(c.ids))
			}
		})
	}
	c.bit = map[int]bool{}
	c.carried = map[int]bool{}
	c.linksFrom, c.linksTo = map[int][]linkWatch{}, map[int][]linkWatch{}
	for j, op := range c.faults {
		w, ok := c.linkWin[j]
		if op.Op != logs.OpLink || !ok || op.TS > c.end {
			continue
		}
		lw := linkWatch{j: j, a: op.From, b: op.To, from: w.from, to: min(w.to, c.end)}
		c.linksFrom[op.From] = append(c.linksFrom[op.From], lw)
		c.linksTo[op.To] = append(c.linksTo[op.To], lw)
	}
	c.hbState = map[int]*hbCount{}
}

// partitionsThatBit marks the partitions that, at some moment up to the end, blocked a link from
// a live node to another: each point up to the end is looked at as it comes.
func (c *checker) partitionsThatBit(pt *point) {
	if pt.t > c.end {
		return
	}
	bit := c.bit
	for x, h := range pt.net.at {
		kx, ok := c.index[x]
		if h.accept == nil || bit[h.part] || !ok || !pt.state[kx].live() {
			continue
		}
		for k, s := range pt.state {
			if y := c.ids[k]; y != x && s.live() && !h.accept[y] {
				bit[h.part] = true
				break
			}
		}
	}
}

// pauseLength is how long pause j held node id: from its record to the next resume record of the
// node. ok is false when none came, or the incarnation died first (then the pause is not short).
func (c *checker) pauseLength(j, id, inc int) (int64, bool) {
	op := c.faults[j]
	for k := j + 1; k < len(c.faults); k++ {
		r := c.faults[k]
		if r.Op != logs.OpResume || !slices.Contains(r.Targets, id) {
			continue
		}
		if x := c.incOf(id, inc); x == nil || x.died < r.TS {
			return 0, false
		}
		return r.TS - op.TS, true
	}
	return 0, false
}

// restartMissed says why a restart of node id recorded at t started nothing new; "" when it did.
// The launcher records a restart before it spawns the process, the simulator as it does: the
// restart's own incarnation starts within killSlack of the record.
func (c *checker) restartMissed(id int, t int64) string {
	var x, prev *incarnation
	for _, y := range c.incs[id] {
		if y.start <= t+killSlack {
			prev, x = x, y
		}
	}
	switch {
	case x == nil:
		return fmt.Sprintf("no incarnation of node %d started", id)
	case x.start < t-killSlack && x.died > t:
		return fmt.Sprintf("node %d was running (incarnation %d)", id, x.inc)
	case x.start < t-killSlack:
		return fmt.Sprintf("no new incarnation of node %d started", id)
	case prev != nil && prev.died > x.start:
		return fmt.Sprintf("node %d was running (incarnation %d had not died when %d started)", id, prev.inc, x.inc)
	}
	return ""
}

// linkWatch is a link rule's window, [from, to], in which something must be seen on its link.
type linkWatch struct {
	j, a, b  int
	from, to int64
}

// hbCount follows a node's heartbeat counter along its log: the last stats event's count (sent)
// and time (since), counted from zero again in a new incarnation.
type hbCount struct {
	inc   int
	sent  int64
	since int64
}

// linkCarried tells, event by event, whether anything is seen going from a to b while a link rule
// from a to b was in force ([from, to]): a send, a recv or a drop of a message on the link, b's
// failure detector suspecting or trusting a (it was listening for a's heartbeats), or a's heartbeat
// counter growing between two of its stats events around the window. Heartbeats are not logged one
// by one and the counter does not say to whom, so the last is a benefit of the doubt: a node that
// sent heartbeats to anyone may have sent them to b.
func (c *checker) linkCarried(e *mEvent) {
	t := e.t
	in := func(w linkWatch) bool { return t >= w.from && t <= w.to }
	if ws := c.linksFrom[e.node]; len(ws) > 0 {
		for _, w := range ws {
			if in(w) && (e.Ev == logs.EvSend || e.Ev == logs.EvDrop) && e.To == w.b {
				c.carried[w.j] = true
			}
		}
		hb := c.hbState[e.node]
		if hb == nil {
			hb = &hbCount{}
			c.hbState[e.node] = hb
		}
		if e.Inc != hb.inc {
			hb.inc, hb.sent, hb.since = e.Inc, 0, t // a new process counts from zero
		}
		if e.Ev == logs.EvStats && e.Stats != nil {
			for _, w := range ws {
				if e.Stats.HeartbeatsSent > hb.sent && hb.since <= w.to && t >= w.from {
					c.carried[w.j] = true
				}
			}
			hb.sent, hb.since = e.Stats.HeartbeatsSent, t
		}
	}
	for _, w := range c.linksTo[e.node] {
		if !in(w) {
			continue
		}
		switch e.Ev {
		case logs.EvRecv, logs.EvDrop:
			if e.From == w.a {
				c.carried[w.j] = true
			}
		case logs.EvSuspect, logs.EvTrust:
			if e.Peer == w.a {
				c.carried[w.j] = true
			}
		}
	}
}
