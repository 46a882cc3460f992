package checker

import "testing"

// The graph's topological sort on graphs made by hand: a diamond has no cycle; a loop of two, or a
// state that leads to itself, is one; a graph with a state not expanded is not judged.
func TestGraphAcyclic(t *testing.T) {
	build := func(succ [][]uint32) *graph {
		g := newGraph(0, &spill{})
		for _, ts := range succ {
			for _, to := range ts {
				g.edge(to)
			}
			g.expanded()
		}
		return g
	}
	for _, c := range []struct {
		name    string
		succ    [][]uint32
		states  int
		acyclic bool
		ok      bool
	}{
		{"diamond", [][]uint32{{1, 2}, {3}, {3}, {}}, 4, true, true},
		{"edge back to the start", [][]uint32{{1, 2}, {3}, {3}, {0}}, 4, false, true},
		{"self-loop", [][]uint32{{1}, {1}}, 2, false, true},
		{"one state not expanded", [][]uint32{{1, 2}, {}}, 3, false, false},
	} {
		acyclic, ok, _ := build(c.succ).acyclic(c.states, 0, nil)
		if acyclic != c.acyclic || ok != c.ok {
			t.Errorf("%s: acyclic %v ok %v, want %v %v", c.name, acyclic, ok, c.acyclic, c.ok)
		}
	}
}
