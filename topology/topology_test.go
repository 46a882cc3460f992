package topology

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestParseKind(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "mesh", want: Mesh},
		{in: "ring", want: Ring},
		{in: "biring", want: BiRing},
		{in: " ring ", want: Ring},
		{in: "", err: `unknown topology "" (accepted: mesh, ring, biring)`},
		{in: "star", err: `unknown topology "star" (accepted: mesh, ring, biring)`},
		{in: "Ring", err: `unknown topology "Ring"`},
	} {
		got, err := ParseKind(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseKind(%q) error = %v, want it to contain %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseKind(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		kind  string
		order []int
		err   string
	}{
		{"torus", []int{1, 2}, `unknown topology "torus"`},
		{Ring, nil, "ring order is empty"},
		{Ring, []int{1, 0, 2}, "ID 0 at position 1 is not positive"},
		{Mesh, []int{1, 2, 1}, "ID 1 appears twice in the ring order (positions 0 and 2)"},
	} {
		_, err := New(tc.kind, tc.order)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("New(%q, %v) error = %v, want it to contain %q", tc.kind, tc.order, err, tc.err)
		}
	}
}

func TestNewCopiesOrder(t *testing.T) {
	order := []int{1, 2, 3}
	topo, err := New(Ring, order)
	if err != nil {
		t.Fatal(err)
	}
	order[0] = 9
	if topo.Order[0] != 1 {
		t.Fatalf("New kept the caller's slice: Order = %v", topo.Order)
	}
}

func TestNeighboursAndLinks(t *testing.T) {
	order := []int{3, 1, 5, 2, 4} // succ: 3->1->5->2->4->3
	for _, tc := range []struct {
		kind            string
		order           []int
		id              int
		succ, pred, pos int
		neigh, links    []int
	}{
		{Ring, order, 3, 1, 4, 0, []int{1}, []int{1, 5, 2, 4}},
		{Ring, order, 4, 3, 2, 4, []int{3}, []int{3, 1, 5, 2}},
		{BiRing, order, 5, 2, 1, 2, []int{1, 2}, []int{2, 1, 4, 3}},
		{BiRing, order, 3, 1, 4, 0, []int{4, 1}, []int{1, 4, 5, 2}},
		{Mesh, order, 5, 2, 1, 2, []int{1, 2, 3, 4}, []int{1, 2, 3, 4}},
		// Two nodes: pred and succ are the same node, listed once.
		{BiRing, []int{2, 1}, 1, 2, 2, 1, []int{2}, []int{2}},
		{Ring, []int{2, 1}, 2, 1, 1, 0, []int{1}, []int{1}},
		// One node: its own successor, but never its own neighbour.
		{Ring, []int{1}, 1, 1, 1, 0, []int{}, []int{}},
		{BiRing, []int{1}, 1, 1, 1, 0, []int{}, []int{}},
		{Mesh, []int{1}, 1, 1, 1, 0, []int{}, []int{}},
		// An ID that is not in the topology.
		{Ring, order, 9, 0, 0, -1, nil, nil},
		{Mesh, order, 0, 0, 0, -1, nil, nil},
	} {
		topo, err := New(tc.kind, tc.order)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprint(tc.kind, " ", tc.order)
		if got := topo.Succ(tc.id); got != tc.succ {
			t.Errorf("%s: Succ(%d) = %d, want %d", name, tc.id, got, tc.succ)
		}
		if got := topo.Pred(tc.id); got != tc.pred {
			t.Errorf("%s: Pred(%d) = %d, want %d", name, tc.id, got, tc.pred)
		}
		if got := topo.Position(tc.id); got != tc.pos {
			t.Errorf("%s: Position(%d) = %d, want %d", name, tc.id, got, tc.pos)
		}
		if got := topo.Neighbours(tc.id); !reflect.DeepEqual(got, tc.neigh) {
			t.Errorf("%s: Neighbours(%d) = %v, want %v", name, tc.id, got, tc.neigh)
		}
		if got := topo.Links(tc.id); !reflect.DeepEqual(got, tc.links) {
			t.Errorf("%s: Links(%d) = %v, want %v", name, tc.id, got, tc.links)
		}
	}
}

func TestPositionWithoutNew(t *testing.T) {
	topo := &Topology{Kind: Ring, Order: []int{2, 3, 1}}
	if topo.Position(1) != 2 || topo.Succ(1) != 2 || topo.Pred(2) != 1 || topo.Position(7) != -1 {
		t.Fatalf("a literal Topology answers wrongly: pos(1)=%d succ(1)=%d pred(2)=%d pos(7)=%d",
			topo.Position(1), topo.Succ(1), topo.Pred(2), topo.Position(7))
	}
}

func TestNextLive(t *testing.T) {
	topo, err := New(BiRing, []int{3, 1, 5, 2, 4})
	if err != nil {
		t.Fatal(err)
	}
	deadSet := func(dead ...int) func(int) bool {
		return func(id int) bool {
			for _, d := range dead {
				if d == id {
					return false
				}
			}
			return true
		}
	}
	for _, tc := range []struct {
		id, dir int
		dead    []int
		want    int
		ok      bool
	}{
		{3, +1, nil, 1, true},
		{3, -1, nil, 4, true},
		{3, +7, nil, 1, true}, // only the sign of dir counts
		{3, -2, nil, 4, true},
		{3, +1, []int{1}, 5, true},
		{3, +1, []int{1, 5, 2}, 4, true},
		{3, -1, []int{4, 2}, 5, true},
		{3, +1, []int{1, 5, 2, 4}, 0, false},    // everyone else is dead
		{3, +1, []int{3, 1, 5, 2}, 4, true},     // id itself may be dead; it is never returned
		{3, +1, []int{1, 2, 3, 4, 5}, 0, false}, // never id itself
		{3, 0, nil, 0, false},
		{8, +1, nil, 0, false},
	} {
		got, ok := topo.NextLive(tc.id, tc.dir, deadSet(tc.dead...))
		if got != tc.want || ok != tc.ok {
			t.Errorf("NextLive(%d, %d) with %v dead = %d, %v; want %d, %v", tc.id, tc.dir, tc.dead, got, ok, tc.want, tc.ok)
		}
	}
	one, _ := New(Ring, []int{1})
	if got, ok := one.NextLive(1, 1, func(int) bool { return true }); ok {
		t.Errorf("a one-node ring has no next node, got %d", got)
	}
}
