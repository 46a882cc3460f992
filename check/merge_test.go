package check

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMergeIsTheSortedOrder: the heap merge of the nodes' times gives exactly the order a sort by
// (time, node, place in the log) gives, ties and empty logs included.
func TestMergeIsTheSortedOrder(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		m := &model{ts: map[int][]int64{}}
		var want []evRef
		for id := 1; id <= 1+r.IntN(12); id++ {
			m.ids = append(m.ids, id)
			var ts []int64
			var t int64
			for i := range r.IntN(30) {
				t += int64(r.IntN(3)) // many equal times
				ts = append(ts, t)
				want = append(want, evRef{t: t, node: id, i: i})
			}
			m.ts[id] = ts
		}
		slices.SortFunc(want, func(a, b evRef) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i))
		})
		m.merge()
		if !slices.Equal(m.order, want) {
			t.Fatalf("seed %d: merge %v\nsort %v", seed, m.order, want)
		}
	}
}
