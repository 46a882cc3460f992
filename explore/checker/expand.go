package checker

import (
	"slices"
	"sync"
	"sync/atomic"
)

// The workers. The levels are expanded in batches of batchLen states (chunks, level.go), taken in
// order by Options.Workers goroutines, each with a model of its own (Parallel.Fork): a worker makes
// every successor of its batch's states, judges each (the invariants, the path property, the
// model's broken assumption), looks it up in the seen set (which it reads while the merge adds:
// seen.go), and stows those the set did not have. What it made is merged (merge.go) batch by batch
// in order, by the workers in turn: the merge numbers the new states, records the edges, reports
// the violations, and makes the next level, exactly as the one-goroutine search did taking the
// states one after another. So the states, their order and numbers, the violations and their paths
// are the same whatever the number of workers: TLC's workers share a queue, and a violation's
// trace found by several can be longer than the shortest; stateright's breadth-first search with
// several threads takes states in no fixed order.
//
// There is no barrier between levels: the merge seals the next level's states into chunks as it
// makes them, and a worker with nothing left of one level takes the next level's first chunks
// while the merge of the last batches goes on (with a barrier, one worker waited for the other at
// each of Franklin's 55 levels, and longer whenever the system held the other back).
//
// What a worker judges with is the set of properties found broken when it started the batch (a
// snapshot: foundSnap); the reduction's proviso and the invariants read it. When the merge finds a
// new one, the states it has not merged yet were judged with the old set: the merge makes them
// again itself, with the new (merge.go: redo). That happens once a property at most.

// Parallel is a Model that several workers can search at once (Options.Workers).
type Parallel[S any, T comparable] interface {
	Model[S, T]
	// Fork is a copy of the model for one more worker, to be used at the same time as the model
	// and its other forks: it shares what states refer to (the explorer's numbered messages,
	// the parts its Stower numbers), and has scratch of its own. Its Stower reads what the
	// parent's last Stower writes, and the other way round. Visit and Quiescent, called on a fork,
	// keep its figures there.
	Fork() Model[S, T]
}

// worker is one goroutine's model and codec.
type worker[S any, T comparable] struct {
	m   Model[S, T]
	st  Stower[S]
	evs []T
}

// foundSnap is the properties found broken at a point of the search, for the workers to judge
// with (Found); version is how many.
type foundSnap struct {
	version int
	props   []string
}

func (f *foundSnap) Has(p string) bool { return slices.Contains(f.props, p) }

// batch is a chunk of states and what a worker made of them: for each state what it was judged
// (stateOut), and for each transition taken, in order, its successor (succ); the successors the
// seen set did not have, stowed one after another (out).
type batch[T comparable] struct {
	g       int    // its number in the queue
	c       *chunk // its states
	in      []byte // the chunk's bytes
	buf     []byte // in's room when the chunk is on disk
	states  []stateOut
	succs   []succ[T]
	out     []byte
	version int        // the found set judged with
	seen    seenReader // the seen set as the worker looked in it
	err     error
	ready   atomic.Bool
}

type stateOut struct {
	at      int // where the state begins in the batch's in
	settled bool
	quiet   *Violation // Model.Quiescent's verdict, when settled
	cut     bool       // at Options.MaxDepth: judged, not expanded
	cutHas  bool       // and had transitions
	first   int        // its successors: succs[first:first+n]
	n       int
}

type succ[T comparable] struct {
	ev      T
	fp      Fingerprint
	idx     uint32 // the seen set's number for it, when seen
	seen    bool
	at, end int        // where it is stowed in out, when not seen
	inv     *Violation // the invariants' verdict, when not seen
	edge    *Violation // the path property's
	broken  string     // the model's assumption it broke
}

// setUpWorkers makes the workers: the model itself alone, or a fork each.
func (x *search[S, T]) setUpWorkers(st Stower[S]) {
	x.master = &worker[S, T]{m: x.m, st: st}
	n := max(x.o.Workers, 1)
	p, ok := x.m.(Parallel[S, T])
	if !ok || n == 1 {
		x.workers = []*worker[S, T]{x.master}
	} else {
		for range n {
			f := p.Fork()
			x.workers = append(x.workers, &worker[S, T]{m: f, st: f.Stower()})
		}
	}
	x.out.Workers = len(x.workers)
	x.slots = make([]batch[T], x.window()*len(x.workers))
}

// window is how many batches each worker may have made and not merged yet: enough that a merge
// that takes long (the seen table doubling, a spill) or a worker that the system holds back for a
// while do not leave the others waiting. A batch's record takes about batchBytes.
func (x *search[S, T]) window() int {
	if x.o.MaxMemory == 0 {
		return 64
	}
	return min(max(int(x.o.MaxMemory/(256*batchBytes)), 8), 64)
}

const batchBytes = 32 << 10

// expandAll runs the workers until the search is over: no level left, or halted.
func (x *search[S, T]) expandAll() {
	var wg sync.WaitGroup
	for _, w := range x.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.work(w)
		}()
	}
	wg.Wait()
}

// work takes batches until the search is over. The merge is shared: a worker that has made a
// batch merges a few that are ready (as many as there are workers) and goes back to making
// batches; with none it may take (none sealed yet, or the window full), it merges all that are
// ready, or waits. A worker that merged whatever was ready while the others made batches left
// them one fewer pair of hands: some 1.2 times one worker's speed on two.
func (x *search[S, T]) work(w *worker[S, T]) {
	for {
		g, ok := x.claim()
		if !ok {
			return
		}
		b := &x.slots[g%len(x.slots)]
		b.g, b.c = g, x.q.at(g)
		x.expandBatch(w, b)
		b.ready.Store(true)
		x.signal()
		x.tryMerge(len(x.workers))
	}
}

// claim takes the next batch (false: the search is over), merging or waiting while there is none
// to take.
func (x *search[S, T]) claim() (int, bool) {
	for {
		if x.over.Load() {
			return 0, false
		}
		g := x.claimed.Load()
		if x.claimable(g) {
			if x.claimed.CompareAndSwap(g, g+1) {
				return int(g), true
			}
			continue
		}
		x.tryMerge(0)
		x.waitMu.Lock()
		for !x.over.Load() && !x.claimable(x.claimed.Load()) && !x.mergeable() {
			x.wait.Wait()
		}
		x.waitMu.Unlock()
	}
}

// claimable: batch g is sealed, and within the window of the merge.
func (x *search[S, T]) claimable(g int64) bool {
	return g < x.q.sealed.Load() && g < x.merged.Load()+int64(len(x.slots))
}

// mergeable: the search goes on, the next batch to merge is ready and nobody is merging.
func (x *search[S, T]) mergeable() bool {
	k := x.merged.Load()
	return !x.over.Load() && !x.merging.Load() && k < x.claimed.Load() && x.slots[k%int64(len(x.slots))].ready.Load()
}

// signal wakes the waiting workers: something they wait for may have changed (a batch made ready,
// sealed or merged, the merge let go, the search over). The lock orders it after a waiter's look.
func (x *search[S, T]) signal() {
	x.waitMu.Lock()
	x.wait.Broadcast()
	x.waitMu.Unlock()
}

// tryMerge merges the batches that are ready, in order, at most most of them (0: all), unless
// another worker is merging. Merging all, a worker that finds the merge busy leaves the ready
// batches to the one merging, which looks again once it has let go and so sees any batch made
// ready meanwhile; a worker that merges a few leaves the rest to the next, and a worker with
// nothing to take merges all, so none is left unmerged.
func (x *search[S, T]) tryMerge(most int) {
	for {
		if !x.mergeMu.TryLock() {
			return
		}
		x.merging.Store(true)
		for n := 0; !x.over.Load() && (most == 0 || n < most); n++ {
			k := x.merged.Load()
			if k >= x.claimed.Load() {
				break
			}
			b := &x.slots[k%int64(len(x.slots))]
			if !b.ready.Load() {
				break
			}
			x.mergeBatch(b)
			b.ready.Store(false)
			b.c, b.in = nil, nil
			x.merged.Store(k + 1)
		}
		x.merging.Store(false)
		x.mergeMu.Unlock()
		x.signal()
		if most != 0 || !x.mergeable() {
			return
		}
	}
}

// expandBatch makes batch b.
func (x *search[S, T]) expandBatch(w *worker[S, T], b *batch[T]) {
	f := x.found.Load()
	b.version = f.version
	b.states, b.succs, b.out, b.err = b.states[:0], b.succs[:0], b.out[:0], nil
	in, buf, err := b.c.read(b.buf, x.sp)
	b.buf = buf
	if err != nil {
		b.err = err
		return
	}
	b.in = in
	seen := x.seen.hold()
	defer x.seen.let(seen)
	b.seen = seen
	for rest := in; len(rest) > 0; {
		at := len(in) - len(rest)
		var s S
		s, rest = w.st.Unstow(rest)
		x.expandState(w, b, seen, s, at, b.c.depth, f)
	}
}

// expandState judges s, found at depth, and makes its successors into b, judged with f.
func (x *search[S, T]) expandState(w *worker[S, T], b *batch[T], seen seenReader, s S, at, depth int, f Found) {
	m := w.m
	so := stateOut{at: at, first: len(b.succs)}
	m.Visit(s)
	w.evs = m.Enabled(s, w.evs)
	if x.settled(m, w.evs) {
		so.settled = true
		so.quiet = m.Quiescent(s)
	}
	if x.o.MaxDepth > 0 && depth >= x.o.MaxDepth {
		so.cut, so.cutHas = true, len(w.evs) > 0
		b.states = append(b.states, so)
		return
	}
	evs := w.evs
	if x.o.Reduce {
		evs = m.Reduce(s, evs, f)
	}
	x.expandEvs(w, b, seen, s, evs, f)
	so.n = len(b.succs) - so.first
	b.states = append(b.states, so)
}

// expandEvs makes the successors of s by evs into b, judged with f.
func (x *search[S, T]) expandEvs(w *worker[S, T], b *batch[T], seen seenReader, s S, evs []T, f Found) {
	m := w.m
	for _, ev := range evs {
		t := m.Next(s, ev)
		sc := succ[T]{ev: ev, fp: m.Fingerprint(t), broken: m.Broken()}
		sc.idx, sc.seen = seen.get(sc.fp)
		if !sc.seen {
			sc.inv = m.Invariant(t, f)
			sc.at = len(b.out)
			b.out = w.st.Stow(b.out, t)
			sc.end = len(b.out)
		}
		sc.edge = m.Edge(t, f)
		b.succs = append(b.succs, sc)
	}
}
