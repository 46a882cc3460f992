package check

import (
	"cmp"
	"fmt"
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

// TestCausalMergeIsTheFixpointSorted: where node clocks are off (each node's times shifted), the
// merge moves every recv that comes before its send to the send's time, and its node's later events
// with it — the least times that keep each log's order and put every send before its recv — and
// hands the events out in (time, node, place) order of those times.
func TestCausalMergeIsTheFixpointSorted(t *testing.T) {
	for seed := range uint64(300) {
		r := rand.New(rand.NewPCG(seed, 2))
		n := 2 + r.IntN(5)
		run := &logs.Run{Nodes: map[int]*logs.NodeLog{}}
		var ids []int
		skew := map[int]int64{}
		for id := 1; id <= n; id++ {
			ids = append(ids, id)
			run.Cluster.Nodes = append(run.Cluster.Nodes, rundir.Node{ID: id})
			run.Nodes[id] = &logs.NodeLog{Node: id}
			skew[id] = int64(r.IntN(9)) - 4 // each node's clock is off by up to 4
		}
		// A causal execution in true time: a node sends, another receives later.
		type flight struct {
			to  int
			m   string
			at  int64
			src int
		}
		var flying []flight
		seq := map[int]int{}
		for now := int64(0); now < 60; now++ {
			id := 1 + r.IntN(n)
			add := func(e logs.Event) {
				nl := run.Nodes[id]
				e.TS, e.Node, e.Inc, e.LC = now+skew[id], id, 1, uint64(len(nl.Events)+1)
				nl.Events = append(nl.Events, e)
			}
			if k := slices.IndexFunc(flying, func(f flight) bool { return f.to == id && f.at < now }); k >= 0 && r.IntN(2) == 0 {
				f := flying[k]
				flying = slices.Delete(flying, k, k+1)
				add(logs.Event{Ev: logs.EvRecv, From: f.src, Msg: &electionMsg{ID: f.m, Kind: "ok"}})
				continue
			}
			to := 1 + r.IntN(n)
			seq[id]++
			m := fmt.Sprintf("%d.1.%d", id, seq[id])
			add(logs.Event{Ev: logs.EvSend, To: to, Msg: &electionMsg{ID: m, Kind: "ok"}})
			flying = append(flying, flight{to: to, m: m, at: now, src: id})
		}
		// The fixpoint, by iterating to the end.
		ts := map[int][]int64{}
		sentAt := map[string][2]int{}
		for _, id := range ids {
			for i, e := range run.Nodes[id].Events {
				ts[id] = append(ts[id], e.TS)
				if e.Ev == logs.EvSend {
					sentAt[e.Msg.ID] = [2]int{id, i}
				}
			}
		}
		for changed := true; changed; {
			changed = false
			for _, id := range ids {
				for i, e := range run.Nodes[id].Events {
					v := ts[id][i]
					if i > 0 {
						v = max(v, ts[id][i-1])
					}
					if e.Ev == logs.EvRecv {
						s := sentAt[e.Msg.ID]
						v = max(v, ts[s[0]][s[1]])
					}
					if v != ts[id][i] {
						ts[id][i], changed = v, true
					}
				}
			}
		}
		var want []evRef
		for _, id := range ids {
			for i := range run.Nodes[id].Events {
				want = append(want, evRef{t: ts[id][i], node: id, i: i})
			}
		}
		slices.SortFunc(want, func(a, b evRef) int {
			return cmp.Or(cmp.Compare(a.t, b.t), cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i))
		})
		sends := newSentSet()
		class := newSendClass()
		for _, id := range ids {
			for i, e := range run.Nodes[id].Events {
				if e.Ev == logs.EvSend {
					h, s, ok := class.ranged(id, e.Msg.ID)
					sends.add(id, i, e.Msg.ID, h, s, ok)
				}
			}
		}
		if got := mergedOrder(t, run, ids, true, sends); !slices.Equal(got, want) {
			t.Fatalf("seed %d: merge %v\nfixpoint %v", seed, got, want)
		}
	}
}
