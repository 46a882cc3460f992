package topology

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// The kinds of network. They are the values of --topology and of cluster.json's "topology".
const (
	// Mesh: every node talks to every other node directly.
	Mesh = "mesh"
	// Ring: a one-way ring; a node sends to its successor only.
	Ring = "ring"
	// BiRing: a two-way ring; a node sends to its predecessor and its successor.
	BiRing = "biring"
)

// Kinds lists the accepted kinds, in the order error messages name them.
var Kinds = []string{Mesh, Ring, BiRing}

// ParseKind checks a --topology value; the error names the accepted ones.
func ParseKind(s string) (string, error) {
	k := strings.TrimSpace(s)
	for _, x := range Kinds {
		if k == x {
			return x, nil
		}
	}
	return "", fmt.Errorf("unknown topology %q (accepted: %s)", s, strings.Join(Kinds, ", "))
}

// Topology is a network of nodes: its kind and the ring order of the IDs. Order[i+1] is Order[i]'s
// successor and Order[0] is the last one's; messages on a one-way ring travel that way. In a mesh the
// order only fixes the order of nodes (it still defines Succ and Pred, which a mesh never needs).
//
// Methods take an ID; for an ID that is not in the topology they return 0 (never a node's ID), nil,
// -1 or false, so a caller holding a stale or forged ID gets no neighbour rather than a panic.
type Topology struct {
	Kind  string
	Order []int
	// Spec is a general graph's --topology value as given (grid:4x4, @edges.txt); "" otherwise.
	Spec string

	pos map[int]int   // ID -> index in Order; built by New
	adj map[int][]int // a general graph's neighbours, ascending; built by NewGraph
}

// New builds a topology from a kind and a ring order of distinct positive IDs (Place makes one).
func New(kind string, order []int) (*Topology, error) {
	k, err := ParseKind(kind)
	if err != nil {
		return nil, err
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("topology %s: the ring order is empty (want at least one ID)", k)
	}
	t := &Topology{Kind: k, Order: append([]int(nil), order...), pos: make(map[int]int, len(order))}
	for i, id := range order {
		if id < 1 {
			return nil, fmt.Errorf("topology %s: ID %d at position %d is not positive (IDs start at 1)", k, id, i)
		}
		if j, dup := t.pos[id]; dup {
			return nil, fmt.Errorf("topology %s: ID %d appears twice in the ring order (positions %d and %d)", k, id, j, i)
		}
		t.pos[id] = i
	}
	return t, nil
}

// Position is id's index in the ring order, or -1 when id is not in the topology.
func (t *Topology) Position(id int) int {
	if t.pos != nil {
		if i, ok := t.pos[id]; ok {
			return i
		}
		return -1
	}
	for i, x := range t.Order { // a Topology built without New
		if x == id {
			return i
		}
	}
	return -1
}

// Succ is the node after id in the ring order (id itself in a one-node ring), or 0.
func (t *Topology) Succ(id int) int { return t.step(id, 1) }

// Pred is the node before id in the ring order (id itself in a one-node ring), or 0.
func (t *Topology) Pred(id int) int { return t.step(id, -1) }

// step is the node k places away from id around the ring (k may be negative).
func (t *Topology) step(id, k int) int {
	i := t.Position(id)
	if i < 0 {
		return 0
	}
	n := len(t.Order)
	return t.Order[((i+k)%n+n)%n]
}

// Neighbours are the nodes id sends to in the whole network: every other node in a mesh (ascending),
// the successor on a one-way ring, the predecessor and the successor on a two-way ring (once when
// they are the same node), its edges' other ends in a general graph (ascending). A node is never
// its own neighbour, so a one-node network has none.
func (t *Topology) Neighbours(id int) []int {
	if t.Position(id) < 0 {
		return nil
	}
	switch t.Kind {
	case Graph:
		return slices.Clone(t.adj[id])
	case Mesh:
		return t.others(id)
	case Ring:
		return t.distinct(id, t.Succ(id))
	default: // BiRing
		return t.distinct(id, t.Pred(id), t.Succ(id))
	}
}

// Links are the peers a node dials, nearest first. It is every other node for every kind, because a
// ring routes around a dead neighbour (NextLive) and may then have to reach any node further on; the
// order is what differs, so that dialling in order brings up the links the node uses first: a mesh in
// ascending ID order, a one-way ring in the direction of travel (succ, succ of succ, ...), a two-way
// ring alternating outwards (succ, pred, the one after succ, the one before pred, ...). Which of
// two nodes dials a link both use, and whether a link carries both ways, is the transport's choice.
// A general graph links along its edges only: its neighbours.
func (t *Topology) Links(id int) []int {
	if t.Position(id) < 0 {
		return nil
	}
	n := len(t.Order)
	switch t.Kind {
	case Graph:
		return t.Neighbours(id)
	case Mesh:
		return t.others(id)
	case Ring:
		out := make([]int, 0, n-1)
		for k := 1; k < n; k++ {
			out = append(out, t.step(id, k))
		}
		return out
	default: // BiRing
		var cand []int
		for k := 1; k < n; k++ {
			cand = append(cand, t.step(id, k), t.step(id, -k))
		}
		return t.distinct(id, cand...)
	}
}

// NextLive walks around the ring from id in direction dir (+1 towards the successor, -1 towards the
// predecessor, as election.Message.Dir) and returns the first node that alive accepts, skipping the
// rest. It never returns id itself; false when no other node is alive, when dir is 0, when id is not
// in the topology or when it is a general graph (which has no way round).
func (t *Topology) NextLive(id, dir int, alive func(int) bool) (int, bool) {
	if t.Position(id) < 0 || dir == 0 || t.Kind == Graph {
		return 0, false
	}
	if dir > 0 {
		dir = 1
	} else {
		dir = -1
	}
	for k := 1; k < len(t.Order); k++ {
		if x := t.step(id, k*dir); alive(x) {
			return x, true
		}
	}
	return 0, false
}

// others lists every ID but id, ascending.
func (t *Topology) others(id int) []int {
	out := make([]int, 0, len(t.Order))
	for _, x := range t.Order {
		if x != id {
			out = append(out, x)
		}
	}
	sort.Ints(out)
	return out
}

// distinct keeps the first occurrence of each ID in xs, leaving out self.
func (t *Topology) distinct(self int, xs ...int) []int {
	out := make([]int, 0, len(xs))
	seen := map[int]bool{self: true}
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
