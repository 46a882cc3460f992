package check

// What the faults did: the failovers (a fault that took the agreed leader away, until the nodes
// agree again), the convergence after each heal, and warnings for the faults that never bit, so
// that a green run cannot be a vacuous one.

import (
	"fmt"
	"slices"

	"github.com/leaderlab/leaderlab/logs"
)

// pointAt returns the point in force at t, nil before the first.
func (c *checker) pointAt(t int64) *point {
	if i := c.at(t); i >= 0 {
		return &c.points[i]
	}
	return nil
}

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

// firstAgreement finds the first moment from `from` (the state in force then included) up to the
// end when agree holds.
func (c *checker) firstAgreement(from int64, agree func(*point) (int, bool)) (int64, int, bool) {
	if from > c.end {
		return 0, 0, false
	}
	for i := max(c.at(from), 0); i < len(c.points) && c.points[i].t <= c.end; i++ {
		if l, ok := agree(&c.points[i]); ok {
			return max(c.points[i].t, from), l, true
		}
	}
	return 0, 0, false
}

// failovers measures, for each fault that took away the leader the live nodes agreed on just
// before, the time until they agree again (see Failover for what counts). A partition is measured
// from its record, but agreement is looked for only once every node holds its rules: until then
// the old leader may still look agreed on.
func (c *checker) failovers() []Failover {
	out := []Failover{}
	for j, op := range c.faults {
		te := c.opTime[j]
		before := c.pointAt(te - 1)
		if te > c.end || before == nil {
			continue
		}
		l, ok := c.majorityAgreed(before)
		if !ok {
			continue
		}
		from, fault := te, ""
		switch op.Op {
		case logs.OpKill, logs.OpStop, logs.OpPause:
			if !slices.Contains(op.Targets, l) {
				continue
			}
			fault = fmt.Sprintf("%s %d at %s", op.Op, l, c.rel(te))
		case logs.OpPartition:
			if c.accept[j] == nil || !c.cutsOff(j, l, before) {
				continue
			}
			fault = fmt.Sprintf("partition cutting %d off at %s", l, c.rel(te))
			from = c.effect[j]
		default:
			continue
		}
		f := Failover{Fault: fault, AtMS: roundMS(te-c.begin, 1000)}
		if t, nl, ok := c.firstAgreement(from, c.majorityAgreed); ok {
			ms := roundMS(t-te, 1000)
			f.MS, f.Leader = &ms, &nl
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

// heals measures, for each heal, the time from its record until every live node follows one live
// leader, looked for once every node has dropped its rules.
func (c *checker) heals() []Heal {
	out := []Heal{}
	for j, op := range c.faults {
		if op.Op != logs.OpHeal || op.TS > c.end {
			continue
		}
		h := Heal{AtMS: roundMS(op.TS-c.begin, 1000)}
		if t, l, ok := c.firstAgreement(c.effect[j], c.agreedAt); ok {
			ms := roundMS(t-op.TS, 1000)
			h.ConvergedMS, h.Leader = &ms, &l
		}
		out = append(out, h)
	}
	return out
}

// partitioned is the time, up to the end, the live nodes were in two or more components.
func (c *checker) partitioned() int64 {
	var d int64
	for i, pt := range c.points {
		to := c.end
		if i+1 < len(c.points) {
			to = min(c.points[i+1].t, c.end)
		}
		if len(pt.comps) >= 2 && to > pt.t {
			d += to - pt.t
		}
	}
	return d
}

// faultsThatNeverBit warns of each applied fault, up to the end, that cannot have done what it was
// meant to: a kill or pause of a dead node, a pause of a paused one, a pause shorter than the
// failure detector's timeout, a restart of a running node, a partition that cut no link between two
// live nodes, a link rule on a link that carried nothing while it was in force.
func (c *checker) faultsThatNeverBit() {
	timeout := c.run.Cluster.Timeout.D()
	bit := c.partitionsThatBit()
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
			st := c.stateAt(op.TS - 1)
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
			if c.accept[j] != nil && !bit[j] {
				never(j, "it cut no link between two live nodes while it was in force")
			}
		case logs.OpLink:
			w, ok := c.linkWin[j]
			if !ok {
				continue // an invalid record, warned about already
			}
			to := min(w.to, c.end)
			if !c.linkCarried(op.From, op.To, w.from, to) {
				never(j, "no message or heartbeat from %d to %d is seen while it was in force (%s..%s)",
					op.From, op.To, c.rel(w.from), c.rel(to))
			}
		}
	}
}

// partitionsThatBit marks the partitions that, at some moment up to the end, blocked a link from
// a live node to another.
func (c *checker) partitionsThatBit() map[int]bool {
	bit := map[int]bool{}
	for _, pt := range c.points {
		if pt.t > c.end {
			break
		}
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
	return bit
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

// linkCarried tells whether anything is seen going from a to b in [from, to]: a send, a recv or a
// drop of a message on the link, b's failure detector suspecting or trusting a (it was listening
// for a's heartbeats), or a's heartbeat counter growing between two of its stats events around the
// window. Heartbeats are not logged one by one and the counter does not say to whom, so the last is
// a benefit of the doubt: a node that sent heartbeats to anyone may have sent them to b.
func (c *checker) linkCarried(a, b int, from, to int64) bool {
	in := func(t int64) bool { return t >= from && t <= to }
	for i, e := range c.log(a).Events {
		if in(c.ts[a][i]) && (e.Ev == logs.EvSend || e.Ev == logs.EvDrop) && e.To == b {
			return true
		}
	}
	for i, e := range c.log(b).Events {
		if !in(c.ts[b][i]) {
			continue
		}
		switch e.Ev {
		case logs.EvRecv, logs.EvDrop:
			if e.From == a {
				return true
			}
		case logs.EvSuspect, logs.EvTrust:
			if e.Peer == a {
				return true
			}
		}
	}
	var sent int64
	var since int64
	inc := 0
	for i, e := range c.log(a).Events {
		t := c.ts[a][i]
		if e.Inc != inc {
			inc, sent, since = e.Inc, 0, t // a new process counts from zero
		}
		if e.Ev != logs.EvStats || e.Stats == nil {
			continue
		}
		if e.Stats.HeartbeatsSent > sent && since <= to && t >= from {
			return true
		}
		sent, since = e.Stats.HeartbeatsSent, t
	}
	return false
}
