package check

import (
	"fmt"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// electionAcc is an Election being measured.
type electionAcc struct {
	Election
	open    bool         // agreement not reached yet
	decided map[int]bool // nodes whose role (initiator or not) is known (while it is the current one)
	// startNet lists the rule records in force when it started (network.go's records), and
	// started tells whether a point was in force then.
	startNet []int
	started  bool
	// lastT is the time of its last event while open (a send or receipt of its messages, an elect,
	// a leader; from its start), and maxGap the longest stretch while open without one.
	lastT, maxGap int64
}

// elecState is the segmentation into elections as the play goes by.
type elecState struct {
	out []*electionAcc
	cur *electionAcc
	// queue holds the points (up to the end) not looked at for agreement yet.
	queue []*point
}

// elections segments the run into elections. Once no election is open (the previous one reached
// agreement), or at the beginning, the next one starts at the first elect of a running node; or,
// while the live nodes disagree, at a node crowning itself or sending an election or announcement
// message without an elect (Bully's highest node, restarted, just announces itself). An election is
// open until the live nodes agree on a live leader (end_ns), and its window runs until the next one
// starts or the run ends: every send in the window is counted for it, late ones too (they come while
// the nodes agree, so they start nothing). The play segments it (elecPoint, elecEvent); this closes
// the last one and measures them.
func (c *checker) elections() []*electionAcc {
	es := c.elec
	es.look(c)
	c.measure(es.out)
	return es.out
}

// elecPoint queues a new point to be looked at for agreement before the next event.
func (c *checker) elecPoint(pt *point) {
	if pt.t <= c.end {
		c.elec.queue = append(c.elec.queue, pt)
	}
}

// look closes the open election at the first queued point where the live nodes agree.
func (es *elecState) look(c *checker) {
	for _, pt := range es.queue {
		cur := es.cur
		if cur == nil || !cur.open || pt.t < cur.StartNS {
			continue
		}
		if l, ok := c.agreed(pt.state); ok {
			end, leader := pt.t, l
			cur.EndNS, cur.Leader, cur.open = &end, &leader, false
		}
	}
	es.queue = es.queue[:0]
}

// elecEvent counts an event (up to the end) for the election it falls in, or starts one.
func (c *checker) elecEvent(e *mEvent, x *incarnation) {
	es := c.elec
	es.look(c)
	t := e.t
	running := x != nil && x.start <= t && t < x.end
	electionKind := e.Msg != nil && c.algOK && c.alg.IsElection(e.Msg.Kind)
	announceKind := e.Msg != nil && c.algOK && c.alg.IsAnnounce(e.Msg.Kind)
	crowns := e.Ev == logs.EvLeader && e.Leader == e.node
	if running && (es.cur == nil || !es.cur.open) {
		_, agreed := c.agreed(c.sweep.state())
		if e.Ev == logs.EvElect || (!agreed && (crowns || (e.Ev == logs.EvSend && (electionKind || announceKind)))) {
			if es.cur != nil {
				es.cur.decided = nil
			}
			es.cur = &electionAcc{Election: Election{StartNS: t, ByKind: map[string]int{}}, open: true, decided: map[int]bool{}, lastT: t}
			if pt := c.sweep.pt; pt != nil {
				es.cur.startNet, es.cur.started = pt.net.records(), true
			}
			es.out = append(es.out, es.cur)
			// The point of this instant was looked at before the election opened: look again, or
			// an election that ends in the instant it starts (a ring of one) never ends.
			if pt := c.sweep.pt; pt != nil && pt.t >= t {
				es.queue = append(es.queue, pt)
			}
		}
	}
	cur := es.cur
	if cur == nil {
		return
	}
	// An agreement that a node then leaves by adopting another leader, with no election begun, was
	// not the election's end: the nodes went on disagreeing, and what they send until they agree
	// again is this election's (it reopens, and the next point of agreement closes it). Swarm seed
	// 20271787 (run --sim -a bully -n 5, stop and restart among the faults): node 4, restarted, found
	// its link to 5 not up yet, crowned itself and in the same instant deferred to 5's coordinator;
	// the live nodes agreed on 5 at that instant, then 1, 2 and 3 took 4's coordinator and followed
	// 4, which never sent them a heartbeat; 200ms later they suspected it, and that election was
	// judged as one with no fault in its window, though it was the restart's.
	// Only while the agreed leader still runs, no fault came since the agreement and no partition or
	// link rule is in force: RSDP's nodes take another leader without an election when a fault cuts
	// them off from theirs, and that is the fault's own election.
	if running && !cur.open && cur.Leader != nil && e.Ev == logs.EvLeader && e.Leader != 0 && e.Leader != *cur.Leader &&
		c.liveNode(*cur.Leader) && !c.faultBetween(*cur.EndNS, t) && !c.netRuleInForce() {
		cur.open, cur.EndNS, cur.Leader = true, nil, nil
	}
	if cur.open && (e.Ev == logs.EvElect || e.Ev == logs.EvLeader || ((e.Ev == logs.EvSend || e.Ev == logs.EvRecv) && (electionKind || announceKind))) {
		cur.maxGap, cur.lastT = max(cur.maxGap, t-cur.lastT), max(cur.lastT, t)
	}
	// An initiator is a node that elects, crowns itself or sends an election message before
	// receiving one.
	switch {
	case running && (e.Ev == logs.EvElect || crowns || (e.Ev == logs.EvSend && electionKind)):
		if !cur.decided[e.node] {
			cur.decided[e.node] = true
			cur.Initiators++
		}
	case e.Ev == logs.EvRecv && electionKind:
		cur.decided[e.node] = true
	}
	if e.Ev == logs.EvSend && e.Msg != nil {
		cur.ByKind[e.Msg.Kind]++
		switch {
		case electionKind:
			cur.Messages++
		case c.algOK && c.alg.IsAnnounce(e.Msg.Kind):
			cur.Announce++
		}
	}
}

// measure fills each election's faults and bound. The faults counted are the chaos ops from the
// previous election's agreement (or the beginning) to this one's agreement (or, when it never agreed,
// the end of its window): those that can have caused or disturbed it. The kill that starts the next
// election therefore counts for the next one only, though it falls in this one's window. A partition
// or link rule in force when the election starts counts too, wherever its record falls.
//
// A fault also counts for an election that starts within the failure detector's timeout after it,
// even when an earlier election's agreement came in between: the nodes learn of a fault through
// their detectors, which take up to the timeout to suspect and a heartbeat to trust again, and the
// earlier agreement can be a coincidence of the fault (the two sides of a healed partition still
// following one leader) reached before every node's detector had noticed it. Seeds 828, 846, 1076
// (bench chaos --sim -a lelann): a heal, the ring re-elected across the first pair of neighbours
// that trusted each other again, and 30-50ms later, when the second pair did, once more: a node of
// the side that had been cut off opened an epoch older than the ring's, whose messages (3 of 28)
// went until a node of the ring's epoch answered with a catch-up; that election was judged as one
// "with no fault in its window".
func (c *checker) measure(out []*electionAcc) {
	n := len(c.run.Cluster.Nodes)
	noticed := int64(c.run.Cluster.Timeout.D())
	for k, e := range out {
		lo, hi := int64(-1<<63), c.end
		if k > 0 && out[k-1].EndNS != nil {
			lo = min(*out[k-1].EndNS, e.StartNS-noticed)
		}
		if k+1 < len(out) {
			hi = out[k+1].StartNS - 1
		}
		if e.EndNS != nil {
			hi = *e.EndNS
		}
		counted := map[int]bool{}
		for j := range c.faults {
			if t := c.opTime[j]; t > lo && t <= hi {
				e.Faults++
				counted[j] = true
			}
		}
		// A partition or link rule already in force when the election starts disturbs it as much
		// as one that comes during it (seed 914, bench chaos --sim: a link loss from 272ms to
		// 1193ms, and an election from 1048ms to 1110ms judged as one with no fault in its window).
		if e.started {
			for _, j := range e.startNet {
				if !counted[j] {
					e.Faults++
				}
			}
		}
		// So does a node's clock under a fault (clocks.go), whenever its record came.
		for _, s := range c.clockSpans() {
			if !counted[s.j] && s.from <= e.StartNS && e.StartNS < s.to {
				e.Faults++
				counted[s.j] = true
			}
		}
		// The first election, started before any fault, has the configured initiators.
		if k == 0 && len(c.run.Cluster.Initiators) > 0 && (len(c.faults) == 0 || c.opTime[0] > e.StartNS) {
			e.Initiators = len(c.run.Cluster.Initiators)
		}
		e.Initiators = max(e.Initiators, 1)
		if b, ok := c.bound(n, e.Initiators); ok {
			e.Bound = &b
		}
	}
}

// bound is the algorithm's bound on one election's messages: from the graph (EdgeBound) when it
// depends on it, else from n and the initiators.
func (c *checker) bound(n, initiators int) (int, bool) {
	switch {
	case !c.algOK:
		return 0, false
	case c.alg.EdgeBound != nil:
		net, err := c.run.Cluster.Net()
		if err != nil {
			return 0, false
		}
		return c.alg.EdgeBound(c.ids, net.Edges(), c.run.Cluster.Options)
	case c.alg.Bound != nil:
		return c.alg.Bound(n, initiators)
	}
	return 0, false
}

// complexity: an election whose messages + announcements exceed the algorithm's bound is a
// violation, unless a fault fell in its window (then it is only reported).
func (c *checker) complexity(els []*electionAcc) Property {
	p := Property{Name: PropComplexity, OK: true}
	switch {
	case !c.algOK:
		p.Detail = fmt.Sprintf("algorithm %q is not known to this leaderlab: not judged", c.run.Cluster.Algo)
		return p
	case c.alg.Bound == nil && c.alg.EdgeBound == nil:
		p.Detail = "no bound stated for " + c.alg.Name
		return p
	case len(els) == 0:
		p.Detail = "no election to judge"
		return p
	}
	var over, excused, within []string
	for k, e := range els {
		if e.Bound == nil {
			continue
		}
		used := e.Messages + e.Announce
		what := fmt.Sprintf("election %d at %s: %d+%d = %d messages, bound %d", k+1, c.rel(e.StartNS), e.Messages, e.Announce, used, *e.Bound)
		switch {
		case used <= *e.Bound:
			within = append(within, fmt.Sprintf("%d/%d", used, *e.Bound))
		case e.Faults == 0:
			over = append(over, what+", with no fault in its window")
		default:
			excused = append(excused, what+fmt.Sprintf(", over but not judged: %s in its window", plural(e.Faults, "fault", "faults")))
		}
	}
	var parts []string
	switch {
	case len(over) > 0:
		p.OK = false
		parts = append(parts, fmt.Sprintf("%s over the bound: %s", plural(len(over), "election", "elections"), listed(over)))
	case len(within) > 0:
		parts = append(parts, fmt.Sprintf("%s within the bound (%s)", plural(len(within), "election", "elections"), listedShort(within)))
	}
	if len(excused) > 0 {
		parts = append(parts, listed(excused))
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("no bound stated for %s with %d nodes", c.alg.Name, len(c.run.Cluster.Nodes)))
	}
	p.Detail = strings.Join(parts, "; ")
	return p
}

// listedShort joins short items with commas, naming at most maxListed.
func listedShort(items []string) string {
	if len(items) <= maxListed {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:maxListed], ", ") + fmt.Sprintf(", and %d more", len(items)-maxListed)
}

// liveNode tells whether node id runs, not paused, in the state in force.
func (c *checker) liveNode(id int) bool {
	i, ok := c.index[id]
	if !ok {
		return false
	}
	st := c.sweep.state()
	return i < len(st) && st[i].live()
}

// faultBetween tells whether a fault took effect in (from, to].
func (c *checker) faultBetween(from, to int64) bool {
	for _, t := range c.opTime {
		if t > from && t <= to {
			return true
		}
	}
	return false
}

// netRuleInForce tells whether a partition or link rule is in force at the point being played.
func (c *checker) netRuleInForce() bool {
	pt := c.sweep.pt
	return pt != nil && len(pt.net.records()) > 0
}
