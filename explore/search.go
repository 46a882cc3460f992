package explore

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// Property names, after the TLA+ ones of seeds 000 and 004.
const (
	// PropSameLeader: once quiescent, the live nodes believe in one leader
	// (ElectionTerminationImpliesSameLeader).
	PropSameLeader = "ElectionTerminationImpliesSameLeader"
	// PropHighest: that leader is the highest live ID and believes in itself
	// (HighestAliveProcessIsLeader; seed 000's EventuallySolved).
	PropHighest = "HighestAliveProcessIsLeader"
	// PropWillEnd: every path reaches quiescence with no node still electing: no deadlock with an
	// election open, no cycle without end under fair delivery (ElectionWillEnd).
	PropWillEnd = "ElectionWillEnd"
	// PropBound: a fault-free election sends no more messages than the algorithm's bound.
	PropBound = "MessageBound"
	// PropUnique: until a fault happens, no two live nodes believe in themselves at once, in any
	// state (an invariant, like seed 004's; after a crash or a restart two leaders overlap for a
	// moment in every algorithm, which the run's checker allows a grace for and the explorer, whose
	// deliveries take no time, cannot measure).
	PropUnique = "UniqueLeader"
	// PropPulse: a synchronizer's pulse safety, for synchronous algorithms: no message of the
	// algorithm reaches a node after the node started the pulse that should have taken it, in any
	// state (only ABD, which trusts a delay bound, can break it: under --timers async).
	PropPulse = "PulseSafety"
)

// Properties lists the properties checked, in the order they are reported.
var Properties = []string{PropUnique, PropSameLeader, PropHighest, PropWillEnd, PropBound, PropPulse}

// Result is what a search found.
type Result struct {
	Config Config
	// Distinct states found, transitions taken (edges, including those to states seen before),
	// the depth of the deepest state (the diameter, from the initial state), the quiescent states,
	// and the most messages in flight in one state.
	Distinct    int
	Transitions int64
	Depth       int
	Quiescent   int
	MaxInFlight int
	// Complete: every reachable state was explored; false when MaxStates stopped the search (or a
	// violation did).
	Complete bool
	// StoppedBy says what stopped an incomplete search that found no violation: "max-states",
	// "max-depth" (a state at Config.MaxDepth had transitions),
	// "memory" (the heap reached Config.MaxMemory), "interrupted" (Config.Stop; with CycleCheck
	// "interrupted" too when every state was explored but the cycle search was not done), or
	// "broken" (see Broken).
	StoppedBy string
	// CycleCheck tells how ElectionWillEnd's cycles were ruled out: "acyclic" (every transition led
	// deeper, so there is no cycle), "reduced" (the reduced graph has none at all, which proves the
	// full graph has none: see findCycle; a topological sort of the graph the search walked tells,
	// and when that graph has a cycle, a depth-first search of the reduced graph looks for a fair
	// one), "searched" (a depth-first search over every interleaving), or "".
	CycleCheck string
	// sorted is what the topological sort of the graph walked said, when it ran: "acyclic",
	// "cyclic" (the depth-first search decided), or "not kept".
	sorted string
	// Bound is the algorithm's bound for the configuration (HasBound false: none stated);
	// MostMessages the most messages a fault-free path sent by a quiescent state.
	Bound    int
	HasBound bool
	// Synchronous: the algorithm runs over a synchronizer, and PulseSafety is judged.
	Synchronous  bool
	MostMessages int
	Elapsed      time.Duration
	HeapBytes    uint64
	// Violations are the properties found broken, the first (a shortest) trace of each. The
	// search stops at one the algorithm promises; one it does not promise under this
	// configuration (Violation.Limit) is kept and the search goes on, for the others.
	Violations []*Violation
	// Deepest is, for a search stopped by a bound, the path to one of the deepest states found
	// (Property "deepest"): where an unending state space goes.
	Deepest *Violation
	// Broken, when not empty, says that a machine broke an assumption of the partial-order
	// reduction (a ring node sent off its routes): the search stopped, and its counts are not to
	// be trusted. BrokenAt is the path to that send.
	Broken   string
	BrokenAt *Violation
	// NotPromised lists the properties the algorithm does not promise under this configuration,
	// with why (from its declaration).
	NotPromised map[string]string
}

// Violation is a property broken, with the shortest trace to it.
type Violation struct {
	Property string
	Detail   string
	// Limit is non-empty when the algorithm does not promise the property under this
	// configuration: why (its declaration's words).
	Limit string
	// Trace is the path from the initial state; for a cycle, the transitions from CycleAt on lead
	// back to the state at CycleAt (-1: no cycle).
	Trace   []Step
	CycleAt int
	ev      []event
}

// Step is one transition of a trace, as people read it.
type Step struct {
	Event string
	Now   time.Duration
	// Beliefs after it, by ID-1: the leader, 0 for ⊥, -1 for a crashed node.
	Beliefs []int
	ev      event
}

// has tells whether a violation of prop was found.
func (r *Result) has(prop string) bool {
	for _, v := range r.Violations {
		if v.Property == prop {
			return true
		}
	}
	return false
}

// Violation is the first violation of a property the algorithm promises, or nil.
func (r *Result) Violation() *Violation {
	for _, v := range r.Violations {
		if v.Limit == "" {
			return v
		}
	}
	return nil
}

// report keeps the first violation of each property, with its trace, and tells whether the
// search must stop (the algorithm promises the property).
func (x *Explorer) report(r *Result, v *Violation, seen *seenTable, fp fingerprint) bool {
	if r.has(v.Property) {
		return false
	}
	r.Violations = append(r.Violations, x.withTrace(v, seen, fp))
	return v.Limit == ""
}

// rec is how a state was first reached: its parent, the transition from it, and the state's number
// in the order found (0: the initial state). seenTable.put keeps a state's number when it sets the
// record of one it holds.
type rec struct {
	parent fingerprint
	ev     uint32
	idx    uint32
}

// Run searches breadth-first, so that the first violation found has a shortest trace.
func (x *Explorer) Run() *Result {
	start := time.Now()
	// Most successors are states seen before, garbage at once: collect less often, in a heap that
	// is mostly the fingerprints' table anyway.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if x.memLimit > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(x.memLimit)))
	}
	r := &Result{Config: x.cfg, Bound: x.bound, HasBound: x.hasBound, NotPromised: x.promised, Synchronous: x.alg.Synchronous}
	init := x.initial()
	seen := newSeenTable(1 << 16)
	seen.put(init.fp, rec{idx: 0})
	g := newGraph()
	x.parts = parts{}
	defer func() { x.parts = parts{} }()
	var frontier, next level
	x.stow(&frontier, init)
	var cur state
	var evs []event
	back := false
	lastReport := start
	stopped := false
	if x.breach != "" { // a machine's first steps broke it
		x.stopBroken(r, seen, init.fp)
		stopped = true
	}
	last := init.fp // the last state found: one of the deepest
	for depth := 0; frontier.n > 0 && !stopped; depth++ {
		r.Depth = depth
		next = level{buf: next.buf[:0]}
		// the states found before this level's successors: those of depth <= this one
		deeper := uint32(seen.Len())
		for rest := frontier.buf; len(rest) > 0; {
			rest = x.unstow(rest, &cur)
			s := &cur
			r.MaxInFlight = max(r.MaxInFlight, s.inflight)
			evs = x.enabled(s, evs)
			if settled(evs) {
				r.Quiescent++
				if x.onQuiescent != nil {
					x.onQuiescent(s)
				}
				if v := x.checkQuiescent(s, r); v != nil && x.report(r, v, seen, s.fp) {
					stopped = true
					break
				}
			}
			if x.cfg.MaxDepth > 0 && depth >= x.cfg.MaxDepth {
				if len(evs) > 0 { // judged, not expanded: the bound cuts a path here
					r.StoppedBy, stopped = "max-depth", true
				}
				g.expanded()
				continue
			}
			if !x.cfg.NoReduction {
				evs = x.ample(s, evs, x.visibility(s, r))
			}
			for _, ev := range evs {
				t := x.applyScratch(s, ev)
				r.Transitions++
				old, ok := seen.get(t.fp)
				if ok {
					g.edge(old.idx)
				} else {
					g.edge(uint32(seen.Len()))
				}
				// An invariant broken in a new state: the state is kept (its trace is the shortest),
				// and the search stops unless the property is not promised here.
				var broken *Violation
				if !ok && t.crashes+t.restarts == 0 && !t.partUsed && !r.has(PropUnique) {
					if ls := selfLeaders(t); len(ls) > 1 {
						broken = x.violation(PropUnique, fmt.Sprintf("with no fault, %s believe in themselves at once", joinIDs(ls)))
					}
				}
				if broken == nil && !ok && x.alg.Synchronous && !r.has(PropPulse) {
					if who := lateAt(t); len(who) > 0 {
						broken = x.violation(PropPulse, fmt.Sprintf("%s took a message of a pulse it had already left (late: the synchronizer's delay bound was broken)", joinIDs(who)))
					}
				}
				if x.breach != "" {
					seen.put(t.fp, rec{parent: s.fp, ev: x.pack(ev), idx: uint32(seen.Len())})
					x.stopBroken(r, seen, t.fp)
					stopped = true
					break
				}
				if broken != nil {
					seen.put(t.fp, rec{parent: s.fp, ev: x.pack(ev), idx: uint32(seen.Len())})
					if x.report(r, broken, seen, t.fp) {
						stopped = true
						break
					}
					x.stow(&next, t)
					continue
				}
				if x.hasBound && t.sent > x.bound && !r.has(PropBound) {
					v := x.violation(PropBound, fmt.Sprintf("a fault-free election sent %d messages, over the bound of %d for %d nodes", t.sent, x.bound, x.n))
					if !ok {
						seen.put(t.fp, rec{parent: s.fp, ev: x.pack(ev), idx: uint32(seen.Len())})
					}
					if x.report(r, v, seen, t.fp) {
						stopped = true
						break
					}
				}
				if ok {
					if old.idx < deeper {
						back = true
					}
					continue
				}
				seen.put(t.fp, rec{parent: s.fp, ev: x.pack(ev), idx: uint32(seen.Len())})
				x.stow(&next, t)
				last = t.fp
				if seen.Len()&0xffff == 0 && x.overMemory() {
					r.StoppedBy = "memory"
					stopped = true
					break
				}
				if seen.Len()&0xfff == 0 && x.stopped() {
					r.StoppedBy = "interrupted"
					stopped = true
					break
				}
				if seen.Len() >= x.cfg.MaxStates {
					r.StoppedBy = "max-states"
					stopped = true
					break
				}
			}
			if stopped {
				break
			}
			g.expanded()
			if x.cfg.Progress != nil && time.Since(lastReport) > 3*time.Second {
				lastReport = time.Now()
				el := time.Since(start).Seconds()
				fmt.Fprintf(x.cfg.Progress, "explore: %d distinct states, depth %d, %.0f states/s\n", seen.Len(), depth, float64(seen.Len())/el)
			}
		}
		frontier, next = next, frontier
	}
	r.Distinct = seen.Len()
	r.Complete = !stopped
	if stopped && r.Violation() == nil && r.Broken == "" {
		// an incomplete search: the path to one of its deepest states says where the states went
		r.Deepest = x.withTrace(&Violation{Property: "deepest", CycleAt: -1}, seen, last)
	}
	r.HeapBytes = heapInUse()
	if r.Complete {
		r.CycleCheck = "acyclic"
		if back {
			frontier, next = level{}, level{}
			r.CycleCheck = "reduced"
			// the graph walked has no cycle: that settles it, as the depth-first search of the
			// reduced graph would (see findCycle), without making a transition again
			acyclic, kept := g.acyclic(seen.Len())
			g = nil
			r.sorted = map[bool]string{true: "acyclic", false: "cyclic"}[acyclic]
			if !kept {
				r.sorted = "not kept"
			}
			v, done, cyclic := (*Violation)(nil), true, false
			if !acyclic || !kept {
				v, done, cyclic = x.findCycle(init, seen.Len(), start, !x.cfg.NoReduction)
			}
			if done && v == nil && cyclic {
				// the reduced graph has cycles, none of them fair: only the full graph can tell
				// whether a fair one exists
				r.CycleCheck = "searched"
				v, done, _ = x.findCycle(init, seen.Len(), start, false)
			} else if x.cfg.NoReduction {
				r.CycleCheck = "searched"
			}
			if v != nil {
				r.Violations = append(r.Violations, v)
			}
			if !done { // every state explored, but ElectionWillEnd not judged
				r.Complete, r.CycleCheck, r.StoppedBy = false, "interrupted", "interrupted"
			}
		}
	}
	r.Elapsed = time.Since(start)
	return r
}

// stopBroken records the broken assumption (x.breach) in r, with the path to the state fp where a
// send broke it, and clears it.
func (x *Explorer) stopBroken(r *Result, seen *seenTable, fp fingerprint) {
	r.Broken, r.StoppedBy, x.breach = x.breach, "broken", ""
	r.BrokenAt = x.withTrace(&Violation{Property: "route", Detail: r.Broken, CycleAt: -1}, seen, fp)
}

// visibility is what the reduction must not reorder in s (see ample): whether a transition of
// node id from s to t changes id's belief in itself while UniqueLeader is judged, or makes it late
// while PulseSafety is; nil when neither is judged any more.
func (x *Explorer) visibility(s *state, r *Result) func(s, t *state, id int) bool {
	unique := s.crashes+s.restarts == 0 && !s.partUsed && !r.has(PropUnique)
	pulse := x.alg.Synchronous && !r.has(PropPulse)
	if !unique && !pulse {
		return nil
	}
	return func(s, t *state, id int) bool {
		a, b := s.nodes[id-1], t.nodes[id-1]
		// a fault ends what UniqueLeader judges: a crash is not visible to it
		faultFree := t.crashes+t.restarts == 0 && !t.partUsed
		if unique && faultFree && a.alive() && b.alive() && (a.m.Leader() == id) != (b.m.Leader() == id) {
			return true
		}
		return pulse && b.alive() && slices.Contains(lateAt(t), id) && !slices.Contains(lateAt(s), id)
	}
}

// overMemory tells whether the live heap has reached the search's memory bound.
func (x *Explorer) overMemory() bool {
	if x.memLimit == 0 {
		return false
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc > x.memLimit
}

// selfLeaders lists the live nodes that believe in themselves.
func selfLeaders(s *state) []int {
	var out []int
	for i, ns := range s.nodes {
		if ns.alive() && ns.m.Leader() == i+1 {
			out = append(out, i+1)
		}
	}
	return out
}

// lateAt lists the live nodes whose synchronizer counted a late message.
func lateAt(s *state) []int {
	var out []int
	for i, ns := range s.nodes {
		if l, ok := ns.m.(interface{ Late() int }); ok && ns.alive() && l.Late() > 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// sides lists the two sides of a partition mask.
func (x *Explorer) sides(mask uint64) (a, b []int) {
	for id := 1; id <= x.n; id++ {
		if mask>>id&1 != 0 {
			a = append(a, id)
		} else {
			b = append(b, id)
		}
	}
	return a, b
}

// idList writes IDs as the chaos language's groups do: 1,2,4.
func idList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// checkQuiescent judges a state where nothing more happens without a fault.
func (x *Explorer) checkQuiescent(s *state, r *Result) *Violation {
	if s.sent >= 0 {
		r.MostMessages = max(r.MostMessages, s.sent)
	}
	if s.part == 0 {
		return x.checkComponent(s, nil, "")
	}
	a, b := x.sides(s.part)
	if v := x.checkComponent(s, a, "the side "+idList(a)+" of the partition: "); v != nil {
		return v
	}
	return x.checkComponent(s, b, "the side "+idList(b)+" of the partition: ")
}

// checkComponent judges the live nodes of one component (nil: every node).
func (x *Explorer) checkComponent(s *state, comp []int, where string) *Violation {
	in := func(id int) bool { return comp == nil || slices.Contains(comp, id) }
	top := 0
	var leaders []int
	for i, ns := range s.nodes {
		if !ns.alive() || !in(i+1) {
			continue
		}
		top = i + 1
		if ns.m.Leader() == i+1 {
			leaders = append(leaders, i+1)
		}
	}
	if top == 0 {
		return nil
	}
	for i, ns := range s.nodes {
		if ns.alive() && in(i+1) && (ns.m.Participant() || ns.m.Leader() == 0) {
			return x.violation(PropWillEnd, fmt.Sprintf("%snothing is left in flight and no timer is armed, but node %d is still electing (its leader is ⊥): the election never ends", where, i+1))
		}
	}
	if len(leaders) > 1 {
		return x.violation(PropSameLeader, fmt.Sprintf("%squiescent with %d leaders: %s each believe in themselves", where, len(leaders), joinIDs(leaders)))
	}
	want := s.nodes[top-1].m.Leader()
	for i, ns := range s.nodes {
		if ns.alive() && in(i+1) && ns.m.Leader() != want {
			return x.violation(PropSameLeader, fmt.Sprintf("%squiescent with nodes disagreeing: node %d follows %d, node %d follows %d", where, top, want, i+1, ns.m.Leader()))
		}
	}
	if want != top {
		return x.violation(PropHighest, fmt.Sprintf("%squiescent with every live node following %d, but the highest live ID is %d", where, want, top))
	}
	return nil
}

func (x *Explorer) violation(prop, detail string) *Violation {
	return &Violation{Property: prop, Detail: detail, Limit: x.promised[prop], CycleAt: -1}
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	switch len(s) {
	case 1:
		return s[0]
	case 2:
		return s[0] + " and " + s[1]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// pack and unpack store an event in 32 bits: kind, node, peer, and the timer's name as an index into
// the explorer's table of names.
func (x *Explorer) pack(ev event) uint32 {
	t := 0
	if ev.kind == evTimer {
		t = slices.Index(x.timerNames, ev.timer)
		if t < 0 {
			x.timerNames = append(x.timerNames, ev.timer)
			t = len(x.timerNames) - 1
		}
	}
	if ev.kind == evPartition {
		return uint32(ev.kind) | uint32(ev.mask)<<4
	}
	return uint32(ev.kind) | uint32(ev.node)<<4 | uint32(ev.peer)<<12 | uint32(t)<<20
}

func (x *Explorer) unpack(p uint32) event {
	if evKind(p&0xf) == evPartition {
		return event{kind: evPartition, mask: uint64(p >> 4)}
	}
	ev := event{kind: evKind(p & 0xf), node: int(p >> 4 & 0xff), peer: int(p >> 12 & 0xff)}
	if ev.kind == evTimer {
		ev.timer = x.timerNames[p>>20]
	}
	return ev
}

// withTrace rebuilds the path to the state fp from the parents' records, and replays it.
func (x *Explorer) withTrace(v *Violation, seen *seenTable, fp fingerprint) *Violation {
	var evs []event
	for {
		r, _ := seen.get(fp)
		if r.idx == 0 {
			break
		}
		evs = append(evs, x.unpack(r.ev))
		fp = r.parent
	}
	slices.Reverse(evs)
	v.ev = evs
	v.Trace = x.replay(evs)
	return v
}

// replay runs the events from the initial state and describes each.
func (x *Explorer) replay(evs []event) []Step {
	s := x.initial()
	out := make([]Step, 0, len(evs))
	for _, ev := range evs {
		what := x.describeIn(s, ev)
		s = x.apply(s, ev)
		st := Step{Event: what, Now: s.now, ev: ev}
		for _, ns := range s.nodes {
			b := -1
			if ns.alive() {
				b = ns.m.Leader()
			}
			st.Beliefs = append(st.Beliefs, b)
		}
		out = append(out, st)
	}
	return out
}

// describeIn is describe with what a delivery carries in s: the message's kind and round (or its
// leader), or the detector's news.
func (x *Explorer) describeIn(s *state, ev event) string {
	d := x.describe(ev)
	if ev.kind != evDeliver {
		return d
	}
	l := s.links[x.linkIndex(ev.peer, ev.node)]
	if l == nil {
		return d
	}
	switch p := l.q[0]; p.k {
	case pEOF:
		return d + " end of stream"
	case pHello:
		return d + " hello"
	default:
		m := &x.msgs[p.id]
		d += " " + m.Kind
		if m.Cand != 0 {
			d += fmt.Sprintf(" cand %d", m.Cand)
		}
		if m.Round != 0 {
			d += fmt.Sprintf(" round %d", m.Round)
		}
		if m.Phase != 0 {
			d += fmt.Sprintf(" phase %d", m.Phase)
		}
		return d
	}
}

func (x *Explorer) describe(ev event) string {
	switch ev.kind {
	case evDeliver:
		return fmt.Sprintf("deliver %d->%d", ev.peer, ev.node)
	case evTimer:
		return fmt.Sprintf("timer %s fires at %d", ev.timer, ev.node)
	case evCrash:
		return fmt.Sprintf("crash %d", ev.node)
	case evRestart:
		return fmt.Sprintf("restart %d", ev.node)
	case evPartition:
		a, b := x.sides(ev.mask)
		return fmt.Sprintf("partition %s|%s", idList(a), idList(b))
	case evHeal:
		return "heal"
	case evTimeout:
		return fmt.Sprintf("%d suspects %d (timeout)", ev.node, ev.peer)
	case evHeartbeat:
		if ev.peer == 1 {
			return "a round of heartbeats"
		}
		return fmt.Sprintf("%d rounds of heartbeats", ev.peer)
	}
	return "?"
}

// stopped tells whether Config.Stop was closed.
func (x *Explorer) stopped() bool {
	select {
	case <-x.cfg.Stop:
		return true
	default:
		return false
	}
}

// limits says which properties the algorithm does not promise under this configuration.
func (x *Explorer) limits() map[string]string {
	out := map[string]string{}
	if x.alg.Limits == nil {
		return out
	}
	var faults []string
	if x.cfg.Timers == TimersAsync {
		faults = append(faults, "async timers")
	}
	if x.cfg.Partitions {
		faults = append(faults, "partition")
	}
	if x.cfg.Crashes > 0 {
		faults = append(faults, "crash")
	}
	for _, l := range x.alg.Limits(x.cfg.Options) {
		for _, f := range l.Faults {
			if !slices.Contains(faults, f) {
				continue
			}
			switch l.Property {
			case "uniqueness":
				out[PropSameLeader] = l.Why
				out[PropUnique] = l.Why
			case "agreement":
				out[PropHighest] = l.Why
				out[PropWillEnd] = l.Why
			case "complexity":
				out[PropBound] = l.Why
			case "pulses":
				out[PropPulse] = l.Why
			}
		}
	}
	return out
}

// ample is partial-order reduction: of the transitions enabled in s, a subset whose exploration
// reaches every quiescent state that the whole set reaches (a persistent set): the transitions of a
// set of nodes G, when nothing the nodes outside G can do gives a node of G a transition it does not
// have now. Transitions at different nodes commute: each changes its own node, takes the head of a
// link into it and appends to links out of it; a crash of one node and a step of another commute
// (what the step sends the dead node is lost either way), and so do two crashes. So what must not
// happen outside G is a message put at the head of an empty link into G: a message behind one
// already queued is no risk (the node is offered the head anyway); a crashed node that may not
// restart sends nothing, and one that may restart is in G (a restart does not commute with a step
// that sends to the restarted node: before it, the message is lost); a live node may send to a node
// of G only along its routes or as an answer
// (mayReach, answers), or by crashing (the detector's end of stream reaches every node) while
// crashes are still allowed; and no timer can fire while a message is in flight (timely timers). G
// is grown from one node by adding every node outside it that could: the closure. Then the other
// nodes' transitions are explored after one of G's, not before it as well. A crash in G and a crash
// outside it do not both fit in the budget, but the argument needs only that a crash of G taken
// first in a path commutes with what comes before it there, and that a delivery of G stays enabled
// along a path that takes none of G's. Under async timers, a timer may fire at any moment and move
// the clock that every step reads: then G qualifies only if no node outside it has a timer armed.
//
// The invariants judged at every state (UniqueLeader, PulseSafety) need one more condition, the
// ample sets' visibility proviso: a reduced set must not change what they read, or a state where
// two nodes believe in themselves for a moment could lie on a path the reduction skips. So a set
// with a transition that would change its node's belief in itself (or make it late) is not taken
// while the invariant is still judged. Of the sets that qualify, the one with the fewest transitions
// is taken. Quiescent states, the message bound and the invariants are what the properties judge,
// and a persistent set with the proviso preserves them in a finite, acyclic graph; the cycle search
// looks for cycles in the reduced graph first (findCycle).
func (x *Explorer) ample(s *state, evs []event, visible func(s, t *state, id int) bool) []event {
	if len(evs) <= 1 || s.inflight == 0 {
		return evs
	}
	if x.cfg.Partitions && (!s.partUsed || s.part != 0) {
		return evs // a partition or its heal changes where the messages sent from now on go
	}
	canRestart := s.restarts < x.cfg.Restarts
	canCrash := s.crashes < x.cfg.Crashes
	async := x.cfg.Timers == TimersAsync
	// whether s is in one epoch, found out the first time it matters (a scan of every message)
	one := int8(0)
	oneEpoch := func() bool {
		if one == 0 {
			one = 2
			if x.oneEpoch(s) {
				one = 1
			}
		}
		return one == 1
	}
	// the nodes that a message in flight to them may make send anything (see answers), found out
	// the first time it matters
	stir, stirKnown := uint64(0), false
	stirred := func() uint64 {
		if !stirKnown {
			stir, stirKnown = x.stirred(s), true
		}
		return stir
	}
	// Who may put a message at the head of an empty link into whom, as bit sets by ID: empty[k]
	// the live nodes whose link from k is empty; reach[k] those of them k may reach as the
	// configuration stands; on a mesh whose machines declare their reactions, with no crash to
	// come, answer[k] those k may answer, and reach[k] is empty[k] only while a node outside G is
	// stirred (see meshReach). force: the crashed nodes that may restart.
	var empty, reach, answer [MaxN + 1]uint64
	var force uint64
	meshAnswers := x.ring == nil && x.reactive && !canCrash
	for k := 1; k <= x.n; k++ {
		if !s.nodes[k-1].alive() {
			if canRestart {
				force |= 1 << k
			}
			continue
		}
		for j := 1; j <= x.n; j++ {
			if j != k && s.nodes[j-1].alive() && s.links[x.linkIndex(k, j)] == nil {
				empty[k] |= 1 << j
			}
		}
		switch {
		case canCrash || x.ring == nil && !x.reactive:
			reach[k] = empty[k]
		case meshAnswers:
			for j := 1; j <= x.n; j++ {
				if empty[k]>>j&1 != 0 && x.answers(s, k, j) {
					answer[k] |= 1 << j
				}
			}
		default:
			for j := 1; j <= x.n; j++ {
				if empty[k]>>j&1 != 0 && x.mayReach(s, k, j, oneEpoch()) {
					reach[k] |= 1 << j
				}
			}
		}
	}
	// closure grows G from node i: a crashed node that may restart is in it whatever its links
	// (what G sends it is lost before its restart and kept after)
	closure := func(i int) uint64 {
		g := uint64(1)<<i | force
		for {
			old := g
			for k := 1; k <= x.n; k++ {
				if g>>k&1 != 0 {
					continue
				}
				r := reach[k]
				if meshAnswers {
					r = answer[k]
					if stirred()&^g != 0 {
						r = empty[k]
					}
				}
				if r&g != 0 {
					g |= 1 << k
				}
			}
			if g == old {
				return g
			}
		}
	}
	type cand struct {
		g    uint64
		n    int
		deli bool
	}
	var cands [MaxN]cand
	nc := 0
	for i := 1; i <= x.n; i++ {
		if !s.nodes[i-1].alive() {
			continue
		}
		g := closure(i)
		if async && x.timedOutside(s, g) {
			continue // a timer elsewhere may move the clock that G's steps read
		}
		c := cand{g: g}
		for _, e := range evs {
			if e.node >= 1 && g>>e.node&1 != 0 {
				c.n++
				c.deli = c.deli || e.kind == evDeliver
			}
		}
		if c.deli && c.n < len(evs) && !slices.ContainsFunc(cands[:nc], func(o cand) bool { return o.g == g }) {
			cands[nc] = c
			nc++
		}
	}
	slices.SortStableFunc(cands[:nc], func(a, b cand) int { return a.n - b.n })
	for _, c := range cands[:nc] {
		if visible != nil && x.anyVisible(s, evs, c.g, visible) {
			continue
		}
		out := evs[:0]
		for _, e := range evs {
			if e.node >= 1 && c.g>>e.node&1 != 0 {
				out = append(out, e)
			}
		}
		return out
	}
	return evs
}

// timedOutside tells whether a node outside g (bit ID) has a timer armed.
func (x *Explorer) timedOutside(s *state, g uint64) bool {
	for j, ns := range s.nodes {
		if g>>(j+1)&1 == 0 && len(ns.timers) > 0 {
			return true
		}
	}
	return false
}

// anyVisible tells whether one of the transitions in evs of the nodes in g (bit ID) changes what
// visible reads. It applies them on the explorer's scratch state, and leaves no trace of it (a
// broken route seen on the way is seen again when the transition is taken).
func (x *Explorer) anyVisible(s *state, evs []event, g uint64, visible func(s, t *state, id int) bool) bool {
	breach := x.breach
	defer func() { x.breach = breach }()
	for _, e := range evs {
		if e.node >= 1 && g>>e.node&1 != 0 && visible(s, x.applyScratch(s, e), e.node) {
			return true
		}
	}
	return false
}

// mayReach tells whether live node k may, by its own transitions, ever put a message of the
// algorithm at the head of the empty link to node i, as the cluster stands in s with no crash or
// restart still to come and no partition in force or to come, while i takes no step. On a mesh,
// yes. On a ring, if i is next to k on k's routes (onRoute): either way round, for a two-way ring's
// messages and the catch-up go both ways; or if k may answer a stale message of i's in flight (a
// catch-up goes back to whoever sent the stale message, on its routes or not). None of that but the
// forward route is possible in one epoch (oneEpoch): no message can arrive stale, so no catch-up is
// sent, and a one-way ring's messages go forward only. The search holds every send to this (route,
// below): a machine that broke it would make the reduction unsound.
func (x *Explorer) mayReach(s *state, k, i int, oneEpoch bool) bool {
	if x.ring == nil {
		return true
	}
	if oneEpoch {
		return x.onRoute(s, k, i, !x.oneWay)
	}
	return x.onRoute(s, k, i, true) || s.links[x.linkIndex(i, k)] != nil
}

// answers tells whether live node k may answer node i, on a mesh whose machines declare what a
// message may make them send (election.Reactor): whether a message of i's that k does not declare
// ReactNone is on its way to k. That and the stirred nodes are what may reach i on a mesh while i
// takes no step and no crash, restart or partition is still to come (see ample): only what is in
// flight can set a node sending; a node that a message declared ReactAny (or the detector's news)
// is on its way to may send anything, and what it sends may set any other node off; a ReactAnswer
// message makes its receiver answer its sender alone, and the answer sets nothing off. So while any
// node outside the set being reduced is stirred, any node may reach it; else only answers. The
// search holds every send to the declarations (answer).
func (x *Explorer) answers(s *state, k, i int) bool {
	l := s.links[x.linkIndex(i, k)]
	if l == nil {
		return false
	}
	r := s.nodes[k-1].m.(election.Reactor)
	for _, p := range l.q {
		if p.k != pMsg || r.Reaction(i, x.msgs[p.id]) != election.ReactNone {
			return true
		}
	}
	return false
}

// stirred is the set of live nodes (bit ID) that something in flight to them may set sending
// anything: a message they declare ReactAny, or the detector's news (unless declared ReactNone:
// newsReaction).
func (x *Explorer) stirred(s *state) uint64 {
	var out uint64
	for li, l := range s.links {
		to := li%x.n + 1
		if l == nil || out>>to&1 != 0 || !s.nodes[to-1].alive() {
			continue
		}
		r, _ := s.nodes[to-1].m.(election.Reactor)
		for _, p := range l.q {
			if r == nil || p.k == pMsg && r.Reaction(li/x.n+1, x.msgs[p.id]) == election.ReactAny ||
				p.k != pMsg && x.newsReaction(s, li/x.n+1, to) == election.ReactAny {
				out |= 1 << to
				break
			}
		}
	}
	return out
}

// onRoute tells whether i is next to k on the ring, forward (and backward, with both), over the
// nodes k may route around: dead, or suspected by k (the ring core sends to the next node it does
// not suspect).
func (x *Explorer) onRoute(s *state, k, i int, both bool) bool {
	skip := s.nodes[k-1].suspects
	for j, ns := range s.nodes {
		if !ns.alive() {
			skip |= 1 << (j + 1)
		}
	}
	n, p := len(x.ring), x.pos[k]
	for _, dir := range [2]int{1, -1} {
		if dir < 0 && !both {
			break
		}
		for d := 1; d < n; d++ {
			c := x.ring[((p+dir*d)%n+n)%n]
			if c == i {
				return true
			}
			if skip>>c&1 == 0 {
				break
			}
		}
	}
	return false
}

// epocher is a ring machine that tells its epoch (election.ringCore).
type epocher interface{ Epoch() int }

// oneEpoch tells whether s is in one epoch, and stays so along any transitions but timers, faults
// and heartbeats: every live node that has joined an election and every message in flight is in one
// epoch; no catch-up is in flight; no node is a restarted one that has not learnt the epoch; no
// partition is in force or to come, and no node suspects a peer from silence (the trust that ends
// it opens a new epoch). Then no message can arrive stale. A machine that does not tell its epoch
// rules it out.
func (x *Explorer) oneEpoch(s *state) bool {
	if x.ring == nil || s.part != 0 || (x.cfg.Partitions && !s.partUsed) {
		return false
	}
	e := 0
	same := func(r int) bool {
		if r <= 0 || (e != 0 && r != e) {
			return false
		}
		e = r
		return true
	}
	for _, ns := range s.nodes {
		if !ns.alive() {
			continue
		}
		m, ok := ns.m.(epocher)
		if !ok || ns.byTimeout != 0 {
			return false
		}
		if r := m.Epoch(); r != 0 && !same(r) {
			return false
		}
	}
	for _, l := range s.links {
		if l == nil {
			continue
		}
		for _, p := range l.q {
			if p.k != pMsg {
				continue
			}
			if m := &x.msgs[p.id]; m.Kind == election.RingCatchUp || !same(m.Round) {
				return false
			}
		}
	}
	return true
}

// route holds a send from node from to node to to what mayReach assumes, and records the first
// that breaks it (the search stops there and says so): on a ring, a send goes to a node next to the
// sender on its routes, either way round, or answers the message being delivered; and a transition
// from a state in one epoch sends no answer off the routes, and on a one-way ring nothing backward.
func (x *Explorer) route(s *state, from, to int, m *election.Message) {
	if x.breach != "" || x.cfg.NoReduction || from == to {
		return
	}
	if x.ring == nil {
		x.answer(s, from, to, m)
		return
	}
	onRoute := x.onRoute(s, from, to, true)
	switch {
	case !onRoute && to != x.stepFrom:
		x.breach = fmt.Sprintf("node %d sent to node %d, which is not next to it on the ring over the nodes it may route around, nor the sender of what it was handling; the partial-order reduction assumes a ring node sends only along its routes (rerun with --no-reduction)", from, to)
	case (!onRoute || x.oneWay && !x.onRoute(s, from, to, false)) && x.preOneEpoch():
		x.breach = fmt.Sprintf("node %d sent to node %d, back against the ring or off its routes, in a transition from a state in one epoch; the partial-order reduction assumes that only a catch-up, the answer to a stale message, goes so, and none can arrive stale in one epoch (rerun with --no-reduction)", from, to)
	}
}

// answer holds a send on a mesh to what the receiver of the message being delivered declared
// (election.Reactor, see answers): nothing for ReactNone; for ReactAnswer, messages to the sender
// alone, each of which the sender declares it handles without sending anything.
func (x *Explorer) answer(s *state, from, to int, m *election.Message) {
	if !x.reactive || x.react == election.ReactAny || from != x.reactNode {
		return
	}
	switch {
	case x.react == election.ReactNone && x.reactNews:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling the news that node %d is gone, for which it declared it sends nothing (election.NewsReactor); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case x.react == election.ReactNone:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling a message from node %d for which it declared it sends nothing (election.ReactNone); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case to != x.reactFrom:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling a message from node %d that it declared it only answers (election.ReactAnswer); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case s.nodes[to-1].alive() && s.nodes[to-1].m.(election.Reactor).Reaction(from, *m) != election.ReactNone:
		x.breach = fmt.Sprintf("node %d answered node %d with %s, which node %d does not declare it handles without sending (election.ReactNone); the partial-order reduction on a mesh assumes an answer is not answered (rerun with --no-reduction)", from, to, m.Kind, to)
	}
}

// preOneEpoch is oneEpoch of the state the transition being made starts from.
func (x *Explorer) preOneEpoch() bool {
	if x.preOne == 0 {
		x.preOne = 2
		if x.pre != nil && x.oneEpoch(x.pre) {
			x.preOne = 1
		}
	}
	return x.preOne == 1
}

// newsReaction is what the news on its way from node from to node to in s, that from is gone, may
// make to send (election.NewsReactor), read with the messages ahead of it on the link: ReactAny
// unless the machines declare it and the configuration lets the reduction lean on it
// (newsReactive: no restart, whose news and refused dials come from live nodes, and timely timers),
// and while other news is on its way to the same node (the declaration does not cover two).
func (x *Explorer) newsReaction(s *state, from, to int) election.Reaction {
	if !x.newsReactive || !s.nodes[to-1].alive() {
		return election.ReactAny
	}
	ahead := x.ahead[:0]
	defer func() { x.ahead = ahead[:0] }()
	found := false
	for j := 1; j <= x.n; j++ {
		l := s.links[x.linkIndex(j, to)]
		if l == nil {
			continue
		}
		for _, p := range l.q {
			switch {
			case p.k == pMsg:
				if j == from && !found {
					ahead = append(ahead, x.msgs[p.id])
				}
			case j != from || p.k != pEOF || found:
				return election.ReactAny
			default:
				found = true
			}
		}
	}
	if !found {
		return election.ReactAny
	}
	return s.nodes[to-1].m.(election.NewsReactor).SuspectReaction(from, ahead)
}
