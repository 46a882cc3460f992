package checker

import "slices"

// path rebuilds the path from the initial state to the state fp from the records of the states
// seen: each keeps its parent and the transition from it, packed in 32 bits (Model.Pack).
func (x *search[S, T]) path(fp Fingerprint) []T {
	var evs []T
	for {
		r, _ := x.seen.get(fp)
		if r.idx == 0 {
			break
		}
		evs = append(evs, x.m.Unpack(r.ev))
		fp = r.parent
	}
	slices.Reverse(evs)
	return evs
}
