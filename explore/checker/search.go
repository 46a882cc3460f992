package checker

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"
)

// Options bound and steer a search.
type Options struct {
	// MaxStates stops the search at this many distinct states (0: no bound).
	MaxStates int
	// MaxDepth bounds the search to the states within this many transitions of the start (0: no
	// bound): those are all expanded and judged, and none beyond.
	MaxDepth int
	// MaxMemory bounds, in bytes, the memory that the search's tables take — the levels, the
	// fingerprints seen, the records of how each state was reached, the graph walked: past their
	// shares of it (shares) they spill to disk, into SpillDir, and the search goes on. It is the
	// runtime's soft memory limit while the search runs too. What does not spill (the model's own
	// tables) may still outgrow it: then the search stops (StoppedBy "memory"; not below 16 MB,
	// which the runtime alone may pass). 0: no bound, nothing spills.
	MaxMemory uint64
	// SpillDir is where a directory for the spill files is made ("" : os.TempDir()); it is
	// removed when the search ends.
	SpillDir string
	// Workers is how many goroutines expand each level (0: one). More than one needs a model that
	// forks (Parallel); the search finds the same states, violations and paths whatever their
	// number (see expand.go).
	Workers int
	// Bitstate, when not 0, makes the seen set a bit array of this many bytes (bitSet): a partial
	// search that goes on where the exact one could not, and says how much it may have missed. It
	// keeps no graph, so cycles are not judged.
	Bitstate uint64
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
	// "max-depth" (a state at Options.MaxDepth had transitions), "memory" (what does not spill
	// passed Options.MaxMemory; with CycleCheck "memory", every state was explored but the cycle
	// search would not fit), "interrupted" (Stop; with CycleCheck "interrupted" too when every
	// state was explored but the cycle search was not done), "broken" (see Broken), "disk" (a
	// spill file could not be written or read: SpillError), or "bitstate" (a bitstate search
	// that ran to its end: partial by its nature).
	StoppedBy string
	// CycleCheck tells how cycles that fairness does not break were ruled out: "acyclic" (every
	// transition led deeper), "reduced" (the graph walked, or the reduced graph, has no cycle at
	// all: see findCycle), "searched" (a depth-first search over every interleaving), "memory"
	// (not judged: see StoppedBy), or "".
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
	// Workers is how many goroutines expanded the levels.
	Workers int
	// SpillPeak is the most bytes the search had on disk at once (0: nothing spilled); SpillError
	// the error that stopped it (StoppedBy "disk").
	SpillPeak  int64
	SpillError string
	// Bitstate: the bit array's size in bytes (0: an exact search), the share of its bits set at
	// the end, the chance then that a state never seen is taken as seen (Omission), and the
	// states expected to have been taken as seen so and never explored (Lost; what only they
	// lead to is lost with them).
	Bitstate uint64
	BitsSet  float64
	Omission float64
	Lost     float64
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
	start time.Time

	// The breadth-first search's tables: the states seen, how each was reached (path.go), the
	// graph walked, the chunks of the levels (level.go), and where they spill. cur is the level
	// the merge is merging, next the one it is making.
	seen       seenSet
	recs       *array[uint64]
	g          *graph
	q          *queue
	cur, next  *level
	sp         *spill
	levelShare int
	count      int    // states numbered
	deeper     int    // the states of cur's depth or less: those numbered before cur's successors
	back       bool   // a transition led back to a state of its depth or less
	last       uint32 // the last state found: one of the deepest
	stopped    bool   // the search will not be complete
	lastReport time.Time

	// The workers (expand.go) and the merge of what they made (merge.go).
	master  *worker[S, T] // the model itself: the merge's own expansions
	workers []*worker[S, T]
	found   atomic.Pointer[foundSnap]
	slots   []batch[T]
	claimed atomic.Int64 // batches taken by the workers
	merged  atomic.Int64 // batches merged
	merging atomic.Bool
	over    atomic.Bool // no batch left, or halted
	halted  atomic.Bool
	mergeMu sync.Mutex
	waitMu  sync.Mutex
	wait    *sync.Cond
	redo    batch[T]
}

// Run searches m breadth-first, by levels, so that the first violation of each property found
// has a shortest path; then, if every state was explored and a transition led back to a state
// found before, it looks for a cycle that fairness does not break (findCycle).
func Run[S any, T comparable](m Model[S, T], o Options) *Outcome[T] {
	x := &search[S, T]{m: m, o: o, out: &Outcome[T]{}, start: time.Now()}
	x.run()
	return x.out
}

// shares are the parts of Options.MaxMemory that each table keeps in memory before it spills:
// the seen set's table a fifth (and its sorted copy, made when it goes to disk, about as much
// again), each level a sixteenth, the records a twentieth, the graph a tenth: some 60% in all, the
// rest for the model and the garbage between collections.
type shares struct {
	seen  int // fingerprints in the table
	level int // bytes, each
	recs  int // bytes
	graph int // bytes
}

func (x *search[S, T]) shares() shares {
	b := int(x.o.MaxMemory)
	if b == 0 {
		return shares{}
	}
	c := 1024
	for c*2*slotBytes <= b/5 {
		c *= 2
	}
	return shares{seen: c * 3 / 4, level: b / 16, recs: b / 20, graph: b / 10}
}

func (x *search[S, T]) run() {
	m, r := x.m, x.out
	// Most successors are states seen before, garbage at once: collect less often, in a heap that
	// is mostly the fingerprints' table anyway.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	if x.o.MaxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(x.o.MaxMemory)))
	}
	x.sp = &spill{parent: x.o.SpillDir}
	defer x.sp.close()
	sh := x.shares()
	if x.o.Bitstate > 0 {
		x.seen = newBitSet(x.o.Bitstate)
	} else {
		x.seen = newFPSet(x.sp, sh.seen)
	}
	seen := x.seen
	defer seen.close()
	x.recs = newArray[uint64](recChunk, sh.recs, x.sp)
	defer x.recs.close()
	x.g = newGraph(sh.graph, x.sp)
	defer func() { x.g.drop() }()
	if x.o.Bitstate > 0 {
		x.g.drop()
	}
	x.q, x.levelShare = &queue{}, sh.level
	x.wait = sync.NewCond(&x.waitMu)
	x.found.Store(&foundSnap{})

	init := m.Init()
	x.seen.add(m.Fingerprint(init), 0, nil) // nothing to fail: the set is empty
	x.recs.push(0)                          // the initial state's record, never read
	x.count = 1
	st := m.Stower()
	x.cur = x.newLevel(0, 0)
	x.cur.add(st.Stow(nil, init))
	x.cur.seal()
	x.next, x.deeper = x.newLevel(1, 1), 1
	defer func() { x.cur.close(); x.next.close() }()
	x.setUpWorkers(st)
	x.lastReport = x.start
	if b := m.Broken(); b != "" { // the model's first steps broke it
		x.stopBroken(b, nil)
	}
	x.expandAll()
	x.seen.tidy()
	r.Distinct = x.count
	r.Complete = !x.stopped
	if x.stopped && !r.promised() && r.Broken == "" {
		// an incomplete search: the path to one of its deepest states says where the states went
		r.Deepest = &Finding[T]{Path: x.path(x.last), CycleAt: -1}
	}
	r.HeapBytes = heapInUse()
	if bs, ok := x.seen.(*bitSet); ok {
		r.Bitstate, r.BitsSet, r.Omission, r.Lost = x.o.Bitstate, float64(bs.set)/float64(bs.m), bs.omission(), bs.lost
		r.Sorted = "not kept"
		if r.Complete {
			r.Complete, r.StoppedBy = false, "bitstate"
		}
	} else if r.Complete && x.back {
		// the graph walked has no cycle: that settles it, as the depth-first search of the reduced
		// graph would (see findCycle), without making a transition again
		seen.close() // the cycle search numbers the states in a table of its own
		acyclic, kept, err := x.g.acyclic(x.count, int(x.o.MaxMemory)/4, x.sp)
		if err != nil {
			x.fail(err)
		} else {
			x.g.drop()
			x.judgeCycles(init, acyclic, kept)
		}
	} else if r.Complete {
		r.CycleCheck = "acyclic"
	}
	r.SpillPeak = x.sp.peak
}

// cycleBytes is about what the cycle search takes a state: its table of numbers, and the states
// on its stack.
const cycleBytes = 64

// judgeCycles rules out, or finds, a cycle that fairness does not break, once every state was
// explored and some transition led back to a state found before; acyclic and kept are what the
// topological sort of the graph walked said (graph.acyclic). The depth-first search holds every
// state in memory: when the breadth-first one had to spill, and it would not fit, the cycles are
// not judged, and the outcome says so.
func (x *search[S, T]) judgeCycles(init S, acyclic, kept bool) {
	r := x.out
	r.CycleCheck = "reduced"
	states := x.count
	r.Sorted = map[bool]string{true: "acyclic", false: "cyclic"}[acyclic]
	if !kept {
		r.Sorted = "not kept"
	}
	if (!acyclic || !kept) && x.sp.spilled() && uint64(states)*cycleBytes > x.o.MaxMemory/2 {
		r.Complete, r.CycleCheck, r.StoppedBy = false, "memory", "memory"
		return
	}
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
func (x *search[S, T]) settled(m Model[S, T], evs []T) bool {
	for _, e := range evs {
		if m.Class(e) != Fault {
			return false
		}
	}
	return true
}

// report keeps the first violation of each property, with the path to it, and tells whether the
// search must stop (the property is promised).
func (x *search[S, T]) report(v *Violation, path func() []T) bool {
	r := x.out
	if r.Has(v.Property) {
		return false
	}
	r.Violations = append(r.Violations, &Finding[T]{Violation: v, Path: path(), CycleAt: -1})
	f := &foundSnap{version: len(r.Violations)}
	for _, v := range r.Violations {
		f.props = append(f.props, v.Property)
	}
	x.found.Store(f)
	return v.Limit == ""
}

// version is the number of properties found broken: what the found set was at a point.
func (x *search[S, T]) version() int { return len(x.out.Violations) }

// stopBroken records the model's broken assumption b, with the path to where a transition broke it.
func (x *search[S, T]) stopBroken(b string, path []T) {
	x.out.Broken, x.out.StoppedBy = b, "broken"
	x.out.BrokenAt = &Finding[T]{Path: path, CycleAt: -1}
	x.halt()
}

// fail stops the search on a spill file's error.
func (x *search[S, T]) fail(err error) {
	if x.out.StoppedBy == "" {
		x.out.StoppedBy, x.out.SpillError = "disk", err.Error()
	}
	x.out.Complete = false
	x.halt()
}

// halt stops the search where the merge is (the merge alone calls it, or the search before its
// workers start).
func (x *search[S, T]) halt() {
	x.stopped = true
	x.halted.Store(true)
	x.finish()
}

// finish ends the search: the workers leave.
func (x *search[S, T]) finish() {
	x.over.Store(true)
	if x.wait != nil {
		x.signal()
	}
}

// newLevel makes the level of depth whose first state is number base.
func (x *search[S, T]) newLevel(depth int, base uint32) *level {
	return &level{depth: depth, base: base, maxMem: x.levelShare, sp: x.sp, q: x.q}
}

// overMemory tells whether the live heap, at the last collection, passed the search's memory
// bound: what does not spill outgrew it. Not below 16 MB, which the runtime alone may pass (tests
// bound a search to kilobytes to make every table spill).
func (x *search[S, T]) overMemory() bool {
	if x.o.MaxMemory < 16<<20 {
		return false
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > x.o.MaxMemory
}

// interrupted tells whether Options.Stop was closed.
func (x *search[S, T]) interrupted() bool {
	select {
	case <-x.o.Stop:
		return true
	default:
		return false
	}
}

// progress writes a line every few seconds.
func (x *search[S, T]) progress(depth int) {
	if x.o.Progress == nil || time.Since(x.lastReport) < 3*time.Second {
		return
	}
	x.lastReport = time.Now()
	el := time.Since(x.start).Seconds()
	disk := ""
	if used := x.sp.onDisk(); used > 0 {
		disk = fmt.Sprintf(", %d MB on disk", used>>20)
	}
	// "so far", not "distinct": the figure the search ends with is the one scripts read
	fmt.Fprintf(x.o.Progress, "explore: %d states so far, depth %d, %.0f states/s%s\n", x.count, depth, float64(x.count)/el, disk)
}

// heapInUse is the heap in use now, for the figures.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
