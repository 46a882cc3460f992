package checker

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// The workers. A level is expanded in batches of batchLen states, taken in order by Options.Workers
// goroutines, each with a model of its own (Parallel.Fork): a worker makes every successor of its
// batch's states, judges each (the invariants, the path property, the model's broken assumption),
// looks it up in the seen set (which it reads while the merge adds: seen.go), and stows those the
// set did not have. What it made is merged (merge.go) batch by batch in the level's order, by
// whichever worker finishes the batch that is next: the merge numbers the new states, records the
// edges, reports the violations, and makes the next level, exactly as the one-goroutine search
// did taking the level's states one after another. So the states, their order and numbers, the
// violations and their paths are the same whatever the number of workers: TLC's workers share a
// queue, and a violation's trace found by several can be longer than the shortest; stateright's
// breadth-first search with several threads takes states in no fixed order.
//
// What a worker judges with is the set of properties found broken when it started the batch (a
// snapshot: foundSnap); the reduction's proviso and the invariants read it. When the merge finds a
// new one, the states of the level it has not merged yet were judged with the old set: the merge
// makes them again itself, with the new (merge.go: redo). That happens once a property at most.

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

// batch is batchLen states of the level and what a worker made of them: for each state what it
// was judged (stateOut), and for each transition taken, in order, its successor (succ); the
// successors the seen set did not have, stowed one after another (out).
type batch[T comparable] struct {
	k       int
	in      []byte // the batch's states, stowed
	buf     []byte // in's room when the level is on disk
	states  []stateOut
	succs   []succ[T]
	out     []byte
	version int // the found set judged with
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

// expandLevel expands the frontier, at depth, into the next level. The batches in the hands of the
// workers and not merged yet are at most len(slots): a worker takes a token before it takes a
// batch, and the merge gives one back for each batch it has merged.
func (x *search[S, T]) expandLevel(depth int) {
	x.nb = x.frontier.batches()
	x.claimed.Store(0)
	x.merged.Store(0)
	x.tokens = make(chan struct{}, len(x.slots))
	for range len(x.slots) {
		x.tokens <- struct{}{}
	}
	x.quit = make(chan struct{})
	if x.halted.Load() {
		close(x.quit)
	}
	var wg sync.WaitGroup
	for _, w := range x.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x.work(w, depth)
		}()
	}
	wg.Wait()
	if !x.halted.Load() && int(x.merged.Load()) != x.nb {
		panic(fmt.Sprintf("checker: a level of %d batches ended with %d merged", x.nb, x.merged.Load()))
	}
}

// work takes batches until the level has none left (or the search halts). The merge is shared: a
// worker that has made a batch merges a few that are ready (as many as there are workers), and
// goes back to making batches; with no batch left to take, or none it may take (the window is
// full), it merges all that are ready. A worker that merged whatever was ready while the others
// made batches left them one fewer pair of hands: some 1.2 times one worker's speed on two.
func (x *search[S, T]) work(w *worker[S, T], depth int) {
	for {
		select {
		case <-x.tokens:
		case <-x.quit:
			return
		default:
			x.tryMerge(depth, 0)
			select {
			case <-x.tokens:
			case <-x.quit:
				return
			}
		}
		k := int(x.claimed.Add(1)) - 1
		if k >= x.nb || x.halted.Load() {
			x.tryMerge(depth, 0)
			return
		}
		b := &x.slots[k%len(x.slots)]
		b.k = k
		x.expandBatch(w, b, depth)
		b.ready.Store(true)
		x.tryMerge(depth, len(x.workers))
	}
}

// tryMerge merges the batches that are ready, in order, at most most of them (0: all), unless
// another worker is merging. Merging all, a worker that finds the merge busy leaves the ready
// batches to the one merging, which looks again once it has let go and so sees any batch made
// ready meanwhile; a worker that merges a few leaves the rest to the next, and every worker merges
// all before it leaves the level, so none is left unmerged.
func (x *search[S, T]) tryMerge(depth, most int) {
	for {
		if !x.mergeMu.TryLock() {
			return
		}
		for n := 0; !x.halted.Load() && (most == 0 || n < most); n++ {
			k := int(x.merged.Load())
			if k >= x.nb {
				break
			}
			b := &x.slots[k%len(x.slots)]
			if !b.ready.Load() {
				break
			}
			x.mergeBatch(b, depth)
			b.ready.Store(false)
			x.merged.Store(int64(k + 1))
			x.tokens <- struct{}{}
		}
		x.mergeMu.Unlock()
		k := int(x.merged.Load())
		if most != 0 || x.halted.Load() || k >= x.nb || !x.slots[k%len(x.slots)].ready.Load() {
			return
		}
	}
}

// expandBatch makes batch b of the frontier.
func (x *search[S, T]) expandBatch(w *worker[S, T], b *batch[T], depth int) {
	f := x.found.Load()
	b.version = f.version
	b.states, b.succs, b.out, b.err = b.states[:0], b.succs[:0], b.out[:0], nil
	in, buf, err := x.frontier.batch(b.k, b.buf)
	b.buf = buf
	if err != nil {
		b.err = err
		return
	}
	b.in = in
	for rest := in; len(rest) > 0; {
		at := len(in) - len(rest)
		var s S
		s, rest = w.st.Unstow(rest)
		x.expandState(w, b, s, at, depth, f)
	}
}

// expandState judges s, found at depth, and makes its successors into b, judged with f.
func (x *search[S, T]) expandState(w *worker[S, T], b *batch[T], s S, at, depth int, f Found) {
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
	x.expandEvs(w, b, s, evs, f)
	so.n = len(b.succs) - so.first
	b.states = append(b.states, so)
}

// expandEvs makes the successors of s by evs into b, judged with f.
func (x *search[S, T]) expandEvs(w *worker[S, T], b *batch[T], s S, evs []T, f Found) {
	m := w.m
	for _, ev := range evs {
		t := m.Next(s, ev)
		sc := succ[T]{ev: ev, fp: m.Fingerprint(t), broken: m.Broken()}
		sc.idx, sc.seen = x.seen.get(sc.fp)
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
