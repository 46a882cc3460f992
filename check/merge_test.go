package check

import (
	"cmp"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// evRef is one event in the run's global order.
type evRef struct {
	t    int64
	node int
	i    int
}

// TestMergeIsTheSortedOrder: the heap merge of the nodes' times gives exactly the order a sort by
// (time, node, place in the log) gives, ties and empty logs included.
func TestMergeIsTheSortedOrder(t *testing.T) {
	for seed := range uint64(200) {
		r := rand.New(rand.NewPCG(seed, 1))
		run := &logs.Run{Nodes: map[int]*logs.NodeLog{}}
		var ids []int
		var want []evRef
		for id := 1; id <= 1+r.IntN(12); id++ {
			ids = append(ids, id)
			run.Cluster.Nodes = append(run.Cluster.Nodes, rundir.Node{ID: id})
			nl := &logs.NodeLog{Node: id}
			var ts int64
			for i := range r.IntN(30) {
				ts += int64(r.IntN(3)) // many equal times
				nl.Events = append(nl.Events, logs.Event{TS: ts, Node: id, Inc: 1, LC: uint64(i + 1), Ev: logs.EvElect})
				want = append(want, evRef{t: ts, node: id, i: i})
			}
			run.Nodes[id] = nl
		}
		slices.SortFunc(want, func(a, b evRef) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i))
		})
		if got := mergedOrder(t, run, ids, false, nil); !slices.Equal(got, want) {
			t.Fatalf("seed %d: merge %v\nsort %v", seed, got, want)
		}
	}
}

// mergedOrder is the merger's order of a run's events.
func mergedOrder(t *testing.T, run *logs.Run, ids []int, causal bool, sends *sentSet) []evRef {
	t.Helper()
	g, err := newMerger(logs.StreamOf(run), ids, causal, sends)
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	var got []evRef
	for {
		_, evs, err := g.instant()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			got = append(got, evRef{t: e.t, node: e.node, i: e.i})
		}
	}
}

// pointAt plays a run and returns the point in force at t.
func pointAt(t *testing.T, run *logs.Run, at int64) *point {
	t.Helper()
	m, err := newModel(logs.StreamOf(run))
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{model: m}
	var got *point
	c.probes = append(c.probes, probeAt{t: at, fn: func(pt *point) { got = pt }})
	if err := c.play(); err != nil {
		t.Fatal(err)
	}
	if got == nil {
		t.Fatalf("no point at %d", at)
	}
	return got
}
