package chaos

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// The partition shapes, with Jepsen's meanings.
const (
	ShapeHalves         = "halves"          // the first half of the IDs | the second half
	ShapeRandomHalves   = "random-halves"   // a random split into halves
	ShapeIsolate        = "isolate"         // one node | the rest
	ShapeBridge         = "bridge"          // two halves that share one bridging node
	ShapeMajoritiesRing = "majorities-ring" // every node sees a majority, no two the same one
	ShapeMinorityThird  = "minority-third"  // a third of the nodes, drawn at random | the rest
	ShapePrimaries      = "primaries"       // every node that believes itself leader on a side of its own
)

// Shapes lists the partition shapes in the order error messages name them.
var Shapes = []string{ShapeHalves, ShapeRandomHalves, ShapeIsolate, ShapeBridge, ShapeMajoritiesRing, ShapeMinorityThird, ShapePrimaries}

// NemesisShapes are the shapes the nemesis draws a partition from when it is not told which: the
// first five, so that the seeds of older runs draw the schedules they drew.
var NemesisShapes = Shapes[:5]

// shapeMin is the fewest nodes each shape can cut.
var shapeMin = map[string]int{
	ShapeHalves: 2, ShapeRandomHalves: 2, ShapeIsolate: 2, ShapeBridge: 3, ShapeMajoritiesRing: 3,
	ShapeMinorityThird: 3, ShapePrimaries: 2,
}

// SelfLeaders is what a Cluster may also offer: the running nodes that believe themselves leader,
// ascending (the primaries). Without it, "primaries" is the leader the live nodes follow.
type SelfLeaders interface {
	SelfLeaders() []int
}

// Errors of Resolve, for an executor that records a step it could not carry out and goes on.
var (
	// ErrNoLeader: the step targets the leader but the live nodes agree on none.
	ErrNoLeader = errors.New("no leader agreed on")
	// ErrNoCandidate: the step targets highest, lowest or random but there is no node to choose from.
	ErrNoCandidate = errors.New("no node to choose from")
)

// Resolve turns a target into a node ID when its step fires. It is pure: the cluster's state comes in
// as arguments. candidates are the nodes the action may apply to (the live nodes for kill and pause;
// an executor may pass the dead ones for restart and the paused ones for resume); highest, lowest and
// random choose among them, random with rng (the order of candidates does not matter). An ID is
// returned as it is, and leader is the given leader, the node the live nodes agree on (0: none). For
// restart leader, an executor passes the leader it last killed.
func Resolve(t Target, candidates []int, leader int, rng *rand.Rand) (int, error) {
	switch t.Kind {
	case TargetID:
		return t.ID, nil
	case TargetLeader:
		if leader == 0 {
			return 0, ErrNoLeader
		}
		return leader, nil
	case TargetHighest, TargetLowest, TargetRandom:
		if len(candidates) == 0 {
			return 0, fmt.Errorf("%s: %w", t.Kind, ErrNoCandidate)
		}
		c := append([]int(nil), candidates...)
		sort.Ints(c)
		switch t.Kind {
		case TargetHighest:
			return c[len(c)-1], nil
		case TargetLowest:
			return c[0], nil
		}
		if rng == nil {
			return 0, errors.New("random: no random source (the executor must pass the run's seeded source)")
		}
		return c[rng.Intn(len(c))], nil
	}
	return 0, fmt.Errorf("unknown target kind %q (accepted: %s, %s, %s, %s, %s)", t.Kind,
		TargetID, TargetLeader, TargetHighest, TargetLowest, TargetRandom)
}

// Partition is a network split in one of two forms.
//
// Groups: each node hears the other members of every group it is in. The groups of a plain split
// are disjoint; bridge's two groups overlap on exactly one node, the bridge, which therefore hears
// (and is heard by) both sides while the sides do not hear each other.
//
// Reach: Reach[x] lists, ascending, the peers whose messages x accepts; x drops what comes from
// anyone else. It is the form for splits that groups cannot express: majorities-ring. The relation
// need not be symmetric: x may hear y while y does not hear x. An executor carries it out by telling
// each node x which senders to accept, so a node's own sends are filtered at the receiver.
//
// Exactly one of the two is set; Reachable turns either into the Reach form.
type Partition struct {
	Groups [][]int
	Reach  map[int][]int
}

// Reachable returns the partition in the Reach form. A node in no group hears no one and is absent.
func (p Partition) Reachable() map[int][]int {
	if p.Reach != nil {
		return p.Reach
	}
	hears := map[int]map[int]bool{}
	for _, g := range p.Groups {
		for _, x := range g {
			if hears[x] == nil {
				hears[x] = map[int]bool{}
			}
			for _, y := range g {
				if y != x {
					hears[x][y] = true
				}
			}
		}
	}
	out := make(map[int][]int, len(hears))
	for x, set := range hears {
		peers := make([]int, 0, len(set))
		for y := range set {
			peers = append(peers, y)
		}
		sort.Ints(peers)
		out[x] = peers
	}
	return out
}

// Shape draws a partition of ids (the live nodes, or all of them, in the order the caller wants the
// shape to follow) when its step fires:
//
//   - halves: the first len/2 IDs of the list | the rest (the second side is the larger one).
//   - random-halves: the same after shuffling the list with rng.
//   - isolate: target alone | the rest.
//   - bridge: the list cut in two at its middle node, the bridge, which is in both groups: for
//     1..5, [1 2 3] and [3 4 5].
//   - minority-third: a third of the list (at least one node), drawn with rng | the rest, as
//     Jepsen's minority-third.
//   - primaries: target's list of primaries (see Primaries); Shape itself refuses it.
//   - majorities-ring: the list read as a ring; m is a majority of it (len/2+1) and each node hears
//     the m-1 nodes nearest it (half before and half after it, one more after it when m-1 is odd),
//     so it sees a majority counting itself, but its neighbours each see a different one. Returned
//     in the Reach form.
//
// Only random-halves draws from rng; pass a shuffled list to arrange the others at random.
func Shape(shape string, ids []int, target int, rng *rand.Rand) (Partition, error) {
	need, ok := shapeMin[shape]
	if !ok {
		return Partition{}, fmt.Errorf("unknown partition shape %q (accepted: %s)", shape, strings.Join(Shapes, ", "))
	}
	n := len(ids)
	if n < need {
		return Partition{}, fmt.Errorf("partition %s needs at least %d nodes, got %d", shape, need, n)
	}
	seen := make(map[int]bool, n)
	for _, id := range ids {
		if seen[id] {
			return Partition{}, fmt.Errorf("partition %s: node %d is listed twice", shape, id)
		}
		seen[id] = true
	}
	list := append([]int(nil), ids...)
	switch shape {
	case ShapeHalves:
		return groups(list[:n/2], list[n/2:]), nil
	case ShapeRandomHalves:
		if rng == nil {
			return Partition{}, errors.New("partition random-halves: no random source")
		}
		rng.Shuffle(n, func(i, j int) { list[i], list[j] = list[j], list[i] })
		return groups(list[:n/2], list[n/2:]), nil
	case ShapeIsolate:
		if !seen[target] {
			return Partition{}, fmt.Errorf("partition isolate: node %d is not among the nodes %v", target, ids)
		}
		rest := make([]int, 0, n-1)
		for _, id := range list {
			if id != target {
				rest = append(rest, id)
			}
		}
		return groups([]int{target}, rest), nil
	case ShapeBridge:
		mid := n / 2
		return groups(list[:mid+1], list[mid:]), nil
	case ShapeMinorityThird:
		if rng == nil {
			return Partition{}, errors.New("partition minority-third: no random source")
		}
		rng.Shuffle(n, func(i, j int) { list[i], list[j] = list[j], list[i] })
		k := max(1, n/3)
		return groups(list[:k], list[k:]), nil
	case ShapePrimaries:
		return Partition{}, errors.New("partition primaries: the primaries come from the cluster (Primaries)")
	default: // ShapeMajoritiesRing
		return Partition{Reach: majoritiesRing(list)}, nil
	}
}

// groups copies and sorts each side.
func groups(sides ...[]int) Partition {
	out := make([][]int, len(sides))
	for i, s := range sides {
		out[i] = append([]int(nil), s...)
		sort.Ints(out[i])
	}
	return Partition{Groups: out}
}

// majoritiesRing: the node at ring position i hears the back nodes before it and the ahead nodes
// after it, n/2 in all.
func majoritiesRing(ring []int) map[int][]int {
	n := len(ring)
	others := n / 2 // a majority n/2+1, less the node itself
	back := others / 2
	ahead := others - back
	out := make(map[int][]int, n)
	for i, x := range ring {
		var peers []int
		for k := -back; k <= ahead; k++ {
			if k != 0 {
				peers = append(peers, ring[((i+k)%n+n)%n])
			}
		}
		sort.Ints(peers)
		out[x] = peers
	}
	return out
}

// Primaries cuts ids (in ring order) so that no two primaries hear each other, as Jepsen's primaries
// partition does: each primary is on a side of its own, and the other nodes are dealt to the sides
// in turn, in the order of ids. With one primary it is "isolate" of that node.
func Primaries(ids, primaries []int) (Partition, error) {
	if len(primaries) == 0 {
		return Partition{}, fmt.Errorf("partition primaries: %w", ErrNoLeader)
	}
	side := map[int]int{}
	for i, p := range primaries {
		side[p] = i
	}
	sides := make([][]int, len(primaries))
	if len(primaries) == 1 {
		sides = append(sides, nil)
	}
	k := 0
	for _, id := range ids {
		if i, ok := side[id]; ok {
			sides[i] = append(sides[i], id)
			continue
		}
		if len(primaries) == 1 {
			sides[1] = append(sides[1], id)
			continue
		}
		sides[k%len(primaries)] = append(sides[k%len(primaries)], id)
		k++
	}
	if len(sides[len(sides)-1]) == 0 {
		return Partition{}, fmt.Errorf("partition primaries: every node is a primary, %v: nothing to cut", primaries)
	}
	return groups(sides...), nil
}
