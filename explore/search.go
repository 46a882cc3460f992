package explore

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"time"
)

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

// stopped tells whether Config.Stop was closed.
func (x *Explorer) stopped() bool {
	select {
	case <-x.cfg.Stop:
		return true
	default:
		return false
	}
}
