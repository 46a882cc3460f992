package checker

import "slices"

// The records of how each state was first reached, by its number (the order found): its parent's
// number and the transition from it (Model.Pack), eight bytes a state, from which a path is
// rebuilt. They spill to disk past their share of Options.MaxMemory (spill.go).

// recChunk is how many records a chunk holds.
const recChunk = 1 << 16

// addState adds fp to the states seen, reached from state parent by ev, unless it is there: it
// tells the state's number and whether it was there. missed is what a worker did not find fp in
// (seenSet.add).
func (x *search[S, T]) addState(fp Fingerprint, parent uint32, ev T, missed seenReader) (uint32, bool) {
	idx, old, err := x.seen.add(fp, uint32(x.count), missed)
	if err != nil {
		x.fail(err)
	}
	if old {
		return idx, true
	}
	if err := x.recs.push(uint64(parent)<<32 | uint64(x.m.Pack(ev))); err != nil {
		x.fail(err)
	}
	x.count++
	return idx, false
}

// path rebuilds the path from the initial state to state idx.
func (x *search[S, T]) path(idx uint32) []T {
	var evs []T
	for idx != 0 {
		r := x.recs.at(uint64(idx))
		evs = append(evs, x.m.Unpack(uint32(r)))
		idx = uint32(r >> 32)
	}
	slices.Reverse(evs)
	return evs
}
