package chaos

import (
	"errors"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	live := []int{4, 2, 5, 1}
	for _, tc := range []struct {
		t      Target
		live   []int
		leader int
		want   int
		err    string
	}{
		{t: Target{Kind: TargetID, ID: 3}, live: live, want: 3},
		{t: Target{Kind: TargetID, ID: 3}, live: nil, want: 3}, // an ID as is, dead or not
		{t: Target{Kind: TargetLeader}, live: live, leader: 5, want: 5},
		{t: Target{Kind: TargetLeader}, live: live, leader: 0, err: "no leader agreed on"},
		{t: Target{Kind: TargetHighest}, live: live, want: 5},
		{t: Target{Kind: TargetLowest}, live: live, want: 1},
		{t: Target{Kind: TargetHighest}, live: nil, err: "highest: no node to choose from"},
		{t: Target{Kind: TargetLowest}, live: []int{}, err: "lowest: no node to choose from"},
		{t: Target{Kind: TargetRandom}, live: nil, err: "random: no node to choose from"},
		{t: Target{Kind: "boss"}, live: live, err: `unknown target kind "boss" (accepted: id, leader, highest, lowest, random)`},
	} {
		got, err := Resolve(tc.t, tc.live, tc.leader, rand.New(rand.NewSource(1)))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Resolve(%+v) error = %v, want %q", tc.t, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%+v, %v, %d) = %d, %v; want %d", tc.t, tc.live, tc.leader, got, err, tc.want)
		}
	}
	if _, err := Resolve(Target{Kind: TargetLeader}, live, 0, nil); !errors.Is(err, ErrNoLeader) {
		t.Errorf("no leader: error %v does not wrap ErrNoLeader", err)
	}
	if _, err := Resolve(Target{Kind: TargetRandom}, nil, 0, nil); !errors.Is(err, ErrNoCandidate) {
		t.Errorf("no candidates: error %v does not wrap ErrNoCandidate", err)
	}
	if _, err := Resolve(Target{Kind: TargetRandom}, live, 0, nil); err == nil {
		t.Errorf("random without a source should fail")
	}
}

func TestResolveRandom(t *testing.T) {
	pick := func(seed int64, live []int) []int {
		rng := rand.New(rand.NewSource(seed))
		var out []int
		for range 20 {
			id, err := Resolve(Target{Kind: TargetRandom}, live, 0, rng)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, id)
		}
		return out
	}
	a, b := pick(7, []int{1, 2, 3, 4, 5}), pick(7, []int{5, 3, 1, 4, 2})
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same seed chose differently for the same set in another order: %v vs %v", a, b)
	}
	seen := map[int]bool{}
	for _, id := range a {
		if id < 1 || id > 5 {
			t.Fatalf("random chose %d, not a candidate", id)
		}
		seen[id] = true
	}
	if len(seen) < 3 {
		t.Errorf("twenty draws hit only %v", seen)
	}
}

func TestShape(t *testing.T) {
	ids := []int{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		shape  string
		ids    []int
		target int
		want   Partition
	}{
		{ShapeHalves, ids, 0, Partition{Groups: [][]int{{1, 2}, {3, 4, 5}}}},
		{ShapeHalves, []int{1, 2, 3, 4, 5, 6}, 0, Partition{Groups: [][]int{{1, 2, 3}, {4, 5, 6}}}},
		{ShapeHalves, []int{5, 3, 1, 2}, 0, Partition{Groups: [][]int{{3, 5}, {1, 2}}}},
		{ShapeHalves, []int{2, 1}, 0, Partition{Groups: [][]int{{2}, {1}}}},
		{ShapeIsolate, ids, 5, Partition{Groups: [][]int{{5}, {1, 2, 3, 4}}}},
		{ShapeIsolate, []int{3, 1}, 1, Partition{Groups: [][]int{{1}, {3}}}},
		{ShapeBridge, ids, 0, Partition{Groups: [][]int{{1, 2, 3}, {3, 4, 5}}}},
		{ShapeBridge, []int{1, 2, 3, 4}, 0, Partition{Groups: [][]int{{1, 2, 3}, {3, 4}}}},
		{ShapeBridge, []int{1, 2, 3}, 0, Partition{Groups: [][]int{{1, 2}, {2, 3}}}},
		{ShapeMajoritiesRing, ids, 0, Partition{Reach: map[int][]int{
			1: {2, 5}, 2: {1, 3}, 3: {2, 4}, 4: {3, 5}, 5: {1, 4}}}},
		// n=3: a majority is 2, so each node hears one other, the next one around the ring.
		{ShapeMajoritiesRing, []int{1, 2, 3}, 0, Partition{Reach: map[int][]int{1: {2}, 2: {3}, 3: {1}}}},
		// n=6: a majority is 4, so each node hears the one before it and the two after it.
		{ShapeMajoritiesRing, []int{1, 2, 3, 4, 5, 6}, 0, Partition{Reach: map[int][]int{
			1: {2, 3, 6}, 2: {1, 3, 4}, 3: {2, 4, 5}, 4: {3, 5, 6}, 5: {1, 4, 6}, 6: {1, 2, 5}}}},
	} {
		got, err := Shape(tc.shape, tc.ids, tc.target, nil)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Shape(%s, %v, %d) = %+v, %v; want %+v", tc.shape, tc.ids, tc.target, got, err, tc.want)
		}
	}
}

func TestShapeErrors(t *testing.T) {
	for _, tc := range []struct {
		shape  string
		ids    []int
		target int
		err    string
	}{
		{"thirds", []int{1, 2, 3}, 0, `unknown partition shape "thirds" (accepted: halves, random-halves, isolate, bridge, majorities-ring, minority-third, primaries)`},
		{ShapeHalves, []int{1}, 0, "partition halves needs at least 2 nodes, got 1"},
		{ShapeIsolate, nil, 0, "partition isolate needs at least 2 nodes, got 0"},
		{ShapeBridge, []int{1, 2}, 0, "partition bridge needs at least 3 nodes"},
		{ShapeMajoritiesRing, []int{1, 2}, 0, "partition majorities-ring needs at least 3 nodes"},
		{ShapeHalves, []int{1, 2, 1}, 0, "partition halves: node 1 is listed twice"},
		{ShapeIsolate, []int{1, 2, 3}, 4, "partition isolate: node 4 is not among the nodes [1 2 3]"},
		{ShapeRandomHalves, []int{1, 2, 3}, 0, "partition random-halves: no random source"},
	} {
		_, err := Shape(tc.shape, tc.ids, tc.target, nil)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Shape(%s, %v, %d) error = %v, want %q", tc.shape, tc.ids, tc.target, err, tc.err)
		}
	}
}

func TestShapeRandomHalves(t *testing.T) {
	ids := []int{1, 2, 3, 4, 5, 6, 7}
	draw := func(seed int64) Partition {
		p, err := Shape(ShapeRandomHalves, ids, 0, rand.New(rand.NewSource(seed)))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a := draw(3)
	if !reflect.DeepEqual(a, draw(3)) {
		t.Fatalf("the same seed split differently")
	}
	if len(a.Groups) != 2 || len(a.Groups[0]) != 3 || len(a.Groups[1]) != 4 {
		t.Fatalf("random-halves of 7 gave %v, want sides of 3 and 4", a.Groups)
	}
	all := append(append([]int(nil), a.Groups[0]...), a.Groups[1]...)
	sort.Ints(all)
	if !reflect.DeepEqual(all, ids) {
		t.Fatalf("random-halves %v is not a split of %v", a.Groups, ids)
	}
	if ids[0] != 1 || ids[6] != 7 {
		t.Fatalf("Shape shuffled the caller's slice: %v", ids)
	}
	differs := false
	for seed := int64(0); seed < 10 && !differs; seed++ {
		differs = !reflect.DeepEqual(a, draw(seed))
	}
	if !differs {
		t.Errorf("ten seeds gave the same split %v", a.Groups)
	}
}

// TestMajoritiesRingSeesMajorities checks the shape's promise for many sizes: every node sees a
// majority counting itself, and no two nodes see the same set.
func TestMajoritiesRingSeesMajorities(t *testing.T) {
	for n := 3; n <= 12; n++ {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i + 1
		}
		p, err := Shape(ShapeMajoritiesRing, ids, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		views := map[string]int{}
		for x, peers := range p.Reach {
			if len(peers)+1 != n/2+1 {
				t.Errorf("n=%d: node %d sees %d nodes with itself, want a majority %d", n, x, len(peers)+1, n/2+1)
			}
			view := append([]int{x}, peers...)
			sort.Ints(view)
			key := fmt.Sprint(view)
			if y, dup := views[key]; dup {
				t.Errorf("n=%d: nodes %d and %d see the same majority %s", n, x, y, key)
			}
			views[key] = x
		}
	}
}

func TestReachable(t *testing.T) {
	for _, tc := range []struct {
		p    Partition
		want map[int][]int
	}{
		{Partition{Groups: [][]int{{1, 2}, {3, 4, 5}}},
			map[int][]int{1: {2}, 2: {1}, 3: {4, 5}, 4: {3, 5}, 5: {3, 4}}},
		{Partition{Groups: [][]int{{1, 2, 3}, {3, 4, 5}}}, // bridge: 3 hears both sides
			map[int][]int{1: {2, 3}, 2: {1, 3}, 3: {1, 2, 4, 5}, 4: {3, 5}, 5: {3, 4}}},
		{Partition{Groups: [][]int{{1}, {2, 3}}},
			map[int][]int{1: {}, 2: {3}, 3: {2}}},
		{Partition{Reach: map[int][]int{1: {2}, 2: {3}, 3: {1}}},
			map[int][]int{1: {2}, 2: {3}, 3: {1}}},
	} {
		if got := tc.p.Reachable(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Reachable(%+v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}
