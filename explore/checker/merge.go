package checker

// The merge: what the workers made of a batch (expand.go), taken state by state, transition by
// transition, in the level's order, as the one-goroutine search took them. A successor the worker
// found in the seen set was there before the batch (the merge adds in order, and a worker reads
// only what was added before it); one it did not find is looked up again here, where the merge
// alone adds: it may have been added since, by an earlier batch or state. So the numbers, the
// edges, the next level and the first violation of each property (with its path) come out as one
// goroutine would make them.

import "sync/atomic"

// redone counts the states made again by the merge (the tests see that it happens).
var redone atomic.Int64

// mergeBatch merges batch b; when it is its level's last, the level is done, and the next is
// whole.
func (x *search[S, T]) mergeBatch(b *batch[T]) {
	if b.err != nil {
		x.fail(b.err)
		return
	}
	for i := range b.states {
		if x.mergeState(b, i) {
			return
		}
	}
	x.q.slot(b.g).Store(nil) // merged: nobody reads the chunk again
	if (b.g+1)%queuePage == 0 {
		(*x.q.pages.Load())[b.g/queuePage] = nil
	}
	if b.g == x.cur.first+x.cur.chunks-1 {
		x.endLevel()
	}
}

// endLevel closes the level merged: the next one is sealed whole, and is the one to merge (or the
// search is over).
func (x *search[S, T]) endLevel() {
	x.cur.close()
	if err := x.next.seal(); err != nil {
		x.fail(err)
		return
	}
	x.seen.tidy()
	if x.next.chunks == 0 {
		x.finish()
		return
	}
	x.cur, x.deeper = x.next, x.count
	x.out.Depth = x.cur.depth
	x.next = x.newLevel(x.cur.depth+1, uint32(x.count))
}

// mergeState merges the i-th state of b; it tells whether the search halted.
func (x *search[S, T]) mergeState(b *batch[T], i int) bool {
	r := x.out
	so := b.states[i]
	succs, out := b.succs[so.first:so.first+so.n], b.out
	sIdx, depth := b.c.first+uint32(i), b.c.depth
	// what the successors not seen were looked up in (none for those made here)
	missed := b.seen
	if b.version != x.version() { // judged with an older found set: again, with this one
		so, succs, out = x.redoState(b, so.at, depth)
		missed = nil
	}
	if so.settled {
		r.Quiescent++
		if so.quiet != nil {
			v0 := x.version()
			if x.report(so.quiet, func() []T { return x.path(sIdx) }) {
				x.halt()
				return true
			}
			if x.version() != v0 && !so.cut { // the reduction chose with the old set
				_, succs, out = x.redoState(b, so.at, depth)
				missed = nil
			}
		}
	}
	if so.cut {
		if so.cutHas { // judged, not expanded: the bound cuts a path here
			r.StoppedBy, x.stopped = "max-depth", true
		}
		x.g.expanded()
		return false
	}
	for j := 0; j < len(succs); j++ {
		v0 := x.version()
		if x.mergeSucc(&succs[j], out, sIdx, missed) {
			return true
		}
		if x.version() != v0 && j+1 < len(succs) { // the rest were judged with the old set
			evs := make([]T, 0, len(succs)-j-1)
			for _, sc := range succs[j+1:] {
				evs = append(evs, sc.ev)
			}
			succs, out = x.redoEvs(b, so.at, evs)
			missed, j = nil, -1
		}
	}
	x.g.expanded()
	x.progress(depth)
	return false
}

// mergeSucc merges one transition of state sIdx; it tells whether the search halted.
func (x *search[S, T]) mergeSucc(sc *succ[T], out []byte, sIdx uint32, missed seenReader) bool {
	r := x.out
	r.Transitions++
	idx, old := sc.idx, sc.seen
	if !old { // the worker did not see it: it is seen now, or new, and added at once
		idx, old = x.addState(sc.fp, sIdx, sc.ev, missed)
	}
	x.g.edge(idx)
	if sc.broken != "" {
		x.stopBroken(sc.broken, append(x.path(sIdx), sc.ev))
		return true
	}
	// An invariant broken in a new state: the state is kept (its trace is the shortest), and the
	// search stops unless the property is not promised here.
	if !old && sc.inv != nil {
		if x.report(sc.inv, func() []T { return x.path(idx) }) {
			x.halt()
			return true
		}
		return x.keep(out[sc.at:sc.end])
	}
	if sc.edge != nil {
		path := func() []T { return x.path(idx) }
		if old && x.o.Bitstate > 0 { // a state a bitstate search has seen has no number
			path = func() []T { return append(x.path(sIdx), sc.ev) }
		}
		if x.report(sc.edge, path) {
			x.halt()
			return true
		}
	}
	if old {
		if idx < uint32(x.deeper) {
			x.back = true
		}
		return false
	}
	if x.keep(out[sc.at:sc.end]) {
		return true
	}
	x.last = idx
	switch {
	case x.count&0xffff == 0 && x.overMemory():
		r.StoppedBy = "memory"
	case x.count&0xfff == 0 && x.interrupted():
		r.StoppedBy = "interrupted"
	case x.o.MaxStates > 0 && x.count >= x.o.MaxStates:
		r.StoppedBy = "max-states"
	default:
		return x.halted.Load() // a spill file failed
	}
	x.halt()
	return true
}

// keep adds a new state to the next level; it tells whether the search halted.
func (x *search[S, T]) keep(stowed []byte) bool {
	if err := x.next.add(stowed); err != nil {
		x.fail(err)
	}
	return x.halted.Load()
}

// redoState makes the state at in[at:] of b again, with the found set now, on the merge's own
// model; it returns what it made (in x.redo, until the next redo).
func (x *search[S, T]) redoState(b *batch[T], at, depth int) (stateOut, []succ[T], []byte) {
	redone.Add(1)
	rb := &x.redo
	rb.states, rb.succs, rb.out = rb.states[:0], rb.succs[:0], rb.out[:0]
	s, _ := x.master.st.Unstow(b.in[at:])
	x.expandState(x.master, rb, x.seen, s, at, depth, x.found.Load())
	so := rb.states[0]
	return so, rb.succs[so.first : so.first+so.n], rb.out
}

// redoEvs makes the successors of the state at in[at:] of b by evs again, with the found set now.
func (x *search[S, T]) redoEvs(b *batch[T], at int, evs []T) ([]succ[T], []byte) {
	redone.Add(1)
	rb := &x.redo
	rb.succs, rb.out = rb.succs[:0], rb.out[:0]
	s, _ := x.master.st.Unstow(b.in[at:])
	x.expandEvs(x.master, rb, x.seen, s, evs, x.found.Load())
	return rb.succs, rb.out
}
