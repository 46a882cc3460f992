package checker

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"
)

// Options bound and steer a search.
type Options struct {
	// MaxStates stops the search at this many distinct states (0: no bound).
	MaxStates int
	// MaxDepth bounds the search to the states within this many transitions of the start (0: no
	// bound): those are all expanded and judged, and none beyond.
	MaxDepth int
	// MaxMemory stops the search when its heap reaches this many bytes, and is the runtime's soft
	// memory limit while it runs (0: no bound).
	MaxMemory uint64
	// Reduce explores the persistent sets of Model.Reduce instead of every transition.
	Reduce bool
	// Progress, when set, gets a line every few seconds of search.
	Progress io.Writer
	// Stop, when closed, ends the search where it is.
	Stop <-chan struct{}
}

// Outcome is what a search found.
type Outcome[T any] struct {
	// Distinct states found, transitions taken (edges, including those to states seen before), the
	// depth of the deepest state expanded, and the quiescent states.
	Distinct    int
	Transitions int64
	Depth       int
	Quiescent   int
	// Complete: every reachable state was explored (and the cycles judged).
	Complete bool
	// StoppedBy says what stopped an incomplete search that found no violation: "max-states",
	// "max-depth" (a state at Options.MaxDepth had transitions), "memory", "interrupted" (Stop;
	// with CycleCheck "interrupted" too when every state was explored but the cycle search was not
	// done), or "broken" (see Broken).
	StoppedBy string
	// CycleCheck tells how cycles that fairness does not break were ruled out: "acyclic" (every
	// transition led deeper), "reduced" (the graph walked, or the reduced graph, has no cycle at
	// all: see findCycle), "searched" (a depth-first search over every interleaving), or "".
	CycleCheck string
	// Sorted is what the topological sort of the graph walked said, when it ran: "acyclic",
	// "cyclic" (the depth-first search decided), or "not kept".
	Sorted string
	// Violations are the properties found broken, in the order found, each with a shortest path
	// (for a cycle, a path to it and the cycle).
	Violations []*Finding[T]
	// Deepest is, for a search stopped by a bound, the path to one of the deepest states found.
	Deepest *Finding[T]
	// Broken, when not empty, is the model's broken assumption (Model.Broken) that stopped the
	// search; BrokenAt the path to the transition that broke it.
	Broken   string
	BrokenAt *Finding[T]
	// HeapBytes is the heap in use after the breadth-first search.
	HeapBytes uint64
}

// Finding is a path from the initial state: to a state that breaks Violation, or into a cycle that
// does (the transitions from CycleAt on lead back to the state at CycleAt; -1: no cycle). Deepest's
// and BrokenAt's have no Violation.
type Finding[T any] struct {
	*Violation
	Path    []T
	CycleAt int
}

// Has tells whether a violation of property was found.
func (o *Outcome[T]) Has(property string) bool {
	for _, v := range o.Violations {
		if v.Property == property {
			return true
		}
	}
	return false
}

// promised tells whether a violation of a property the model promises was found.
func (o *Outcome[T]) promised() bool {
	for _, v := range o.Violations {
		if v.Limit == "" {
			return true
		}
	}
	return false
}

// search is one search's state.
type search[S any, T comparable] struct {
	m     Model[S, T]
	o     Options
	out   *Outcome[T]
	seen  *seenTable
	start time.Time
}

// rec is how a state was first reached: its parent, the transition from it (Model.Pack), and the
// state's number in the order found (0: the initial state). seenTable.put keeps a state's number
// when it sets the record of one it holds.
type rec struct {
	parent Fingerprint
	ev     uint32
	idx    uint32
}

// level is one depth of the breadth-first search: the states found at it and not expanded yet,
// stowed one after another (Model.Stower): kept whole, a level was what bounded a search.
type level struct {
	buf []byte
	n   int
}

// Run searches m breadth-first, by levels, so that the first violation of each property found
// has a shortest path; then, if every state was explored and a transition led back to a state
// found before, it looks for a cycle that fairness does not break (findCycle).
func Run[S any, T comparable](m Model[S, T], o Options) *Outcome[T] {
	x := &search[S, T]{m: m, o: o, out: &Outcome[T]{}, start: time.Now()}
	x.run()
	return x.out
}

func (x *search[S, T]) run() {
	m, r, start := x.m, x.out, x.start
	// Most successors are states seen before, garbage at once: collect less often, in a heap that
	// is mostly the fingerprints' table anyway.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if x.o.MaxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(x.o.MaxMemory)))
	}
	init := m.Init()
	initFP := m.Fingerprint(init)
	seen := newSeenTable(1 << 16)
	x.seen = seen
	seen.put(initFP, rec{idx: 0})
	g := newGraph()
	st := m.Stower()
	var frontier, next level
	stow(&frontier, st, init)
	var evs []T
	back := false
	lastReport := start
	stopped := false
	if b := m.Broken(); b != "" { // the model's first steps broke it
		x.stopBroken(b, initFP)
		stopped = true
	}
	last := initFP // the last state found: one of the deepest
	for depth := 0; frontier.n > 0 && !stopped; depth++ {
		r.Depth = depth
		next = level{buf: next.buf[:0]}
		// the states found before this level's successors: those of depth <= this one
		deeper := uint32(seen.Len())
		for rest := frontier.buf; len(rest) > 0; {
			var s S
			s, rest = st.Unstow(rest)
			sfp := m.Fingerprint(s)
			m.Visit(s)
			evs = m.Enabled(s, evs)
			if x.settled(evs) {
				r.Quiescent++
				if v := m.Quiescent(s); v != nil && x.report(v, sfp) {
					stopped = true
					break
				}
			}
			if x.o.MaxDepth > 0 && depth >= x.o.MaxDepth {
				if len(evs) > 0 { // judged, not expanded: the bound cuts a path here
					r.StoppedBy, stopped = "max-depth", true
				}
				g.expanded()
				continue
			}
			if x.o.Reduce {
				evs = m.Reduce(s, evs, r)
			}
			for _, ev := range evs {
				t := m.Next(s, ev)
				tfp := m.Fingerprint(t)
				r.Transitions++
				old, ok := seen.get(tfp)
				if ok {
					g.edge(old.idx)
				} else {
					g.edge(uint32(seen.Len()))
				}
				// An invariant broken in a new state: the state is kept (its trace is the shortest),
				// and the search stops unless the property is not promised here.
				var broken *Violation
				if !ok {
					broken = m.Invariant(t, r)
				}
				if b := m.Broken(); b != "" {
					seen.put(tfp, rec{parent: sfp, ev: m.Pack(ev), idx: uint32(seen.Len())})
					x.stopBroken(b, tfp)
					stopped = true
					break
				}
				if broken != nil {
					seen.put(tfp, rec{parent: sfp, ev: m.Pack(ev), idx: uint32(seen.Len())})
					if x.report(broken, tfp) {
						stopped = true
						break
					}
					stow(&next, st, t)
					continue
				}
				if v := m.Edge(t, r); v != nil {
					if !ok {
						seen.put(tfp, rec{parent: sfp, ev: m.Pack(ev), idx: uint32(seen.Len())})
					}
					if x.report(v, tfp) {
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
				seen.put(tfp, rec{parent: sfp, ev: m.Pack(ev), idx: uint32(seen.Len())})
				stow(&next, st, t)
				last = tfp
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
				if x.o.MaxStates > 0 && seen.Len() >= x.o.MaxStates {
					r.StoppedBy = "max-states"
					stopped = true
					break
				}
			}
			if stopped {
				break
			}
			g.expanded()
			if x.o.Progress != nil && time.Since(lastReport) > 3*time.Second {
				lastReport = time.Now()
				el := time.Since(start).Seconds()
				fmt.Fprintf(x.o.Progress, "explore: %d distinct states, depth %d, %.0f states/s\n", seen.Len(), depth, float64(seen.Len())/el)
			}
		}
		frontier, next = next, frontier
	}
	r.Distinct = seen.Len()
	r.Complete = !stopped
	if stopped && !r.promised() && r.Broken == "" {
		// an incomplete search: the path to one of its deepest states says where the states went
		r.Deepest = &Finding[T]{Path: x.path(last), CycleAt: -1}
	}
	r.HeapBytes = heapInUse()
	if r.Complete && back {
		// the graph walked has no cycle: that settles it, as the depth-first search of the reduced
		// graph would (see findCycle), without making a transition again
		acyclic, kept := g.acyclic(seen.Len())
		frontier, next = level{}, level{}
		x.judgeCycles(init, acyclic, kept)
	} else if r.Complete {
		r.CycleCheck = "acyclic"
	}
}

// judgeCycles rules out, or finds, a cycle that fairness does not break, once every state was
// explored and some transition led back to a state found before; acyclic and kept are what the
// topological sort of the graph walked said (graph.acyclic).
func (x *search[S, T]) judgeCycles(init S, acyclic, kept bool) {
	r := x.out
	r.CycleCheck = "reduced"
	states := x.seen.Len()
	r.Sorted = map[bool]string{true: "acyclic", false: "cyclic"}[acyclic]
	if !kept {
		r.Sorted = "not kept"
	}
	x.seen = nil // the cycle search numbers the states in a table of its own
	v, done, cyclic := (*Finding[T])(nil), true, false
	if !acyclic || !kept {
		v, done, cyclic = x.findCycle(init, states, x.o.Reduce)
	}
	if done && v == nil && cyclic {
		// the reduced graph has cycles, none of them fair: only the full graph can tell whether a
		// fair one exists
		r.CycleCheck = "searched"
		v, done, _ = x.findCycle(init, states, false)
	} else if !x.o.Reduce {
		r.CycleCheck = "searched"
	}
	if v != nil {
		r.Violations = append(r.Violations, v)
	}
	if !done { // every state explored, but the cycles not judged
		r.Complete, r.CycleCheck, r.StoppedBy = false, "interrupted", "interrupted"
	}
}

// settled: of the transitions evs, only faults remain.
func (x *search[S, T]) settled(evs []T) bool {
	for _, e := range evs {
		if x.m.Class(e) != Fault {
			return false
		}
	}
	return true
}

// stow appends s to the level lv.
func stow[S any](lv *level, st Stower[S], s S) {
	lv.buf = st.Stow(lv.buf, s)
	lv.n++
}

// report keeps the first violation of each property, with the path to the state fp, and tells
// whether the search must stop (the property is promised).
func (x *search[S, T]) report(v *Violation, fp Fingerprint) bool {
	if x.out.Has(v.Property) {
		return false
	}
	x.out.Violations = append(x.out.Violations, &Finding[T]{Violation: v, Path: x.path(fp), CycleAt: -1})
	return v.Limit == ""
}

// stopBroken records the model's broken assumption b, with the path to the state fp where a
// transition broke it.
func (x *search[S, T]) stopBroken(b string, fp Fingerprint) {
	x.out.Broken, x.out.StoppedBy = b, "broken"
	x.out.BrokenAt = &Finding[T]{Path: x.path(fp), CycleAt: -1}
}

// overMemory tells whether the live heap has reached the search's memory bound.
func (x *search[S, T]) overMemory() bool {
	if x.o.MaxMemory == 0 {
		return false
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc > x.o.MaxMemory
}

// stopped tells whether Options.Stop was closed.
func (x *search[S, T]) stopped() bool {
	select {
	case <-x.o.Stop:
		return true
	default:
		return false
	}
}

// heapInUse is the heap in use now, for the figures.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
