package chaos

import (
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestMinorityThird(t *testing.T) {
	for n := 3; n <= 10; n++ {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = i + 1
		}
		p, err := Shape(ShapeMinorityThird, ids, 0, rand.New(rand.NewSource(int64(n))))
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Groups) != 2 || len(p.Groups[0]) != max(1, n/3) || len(p.Groups[0])+len(p.Groups[1]) != n {
			t.Errorf("n=%d: minority-third %v, want %d | %d", n, p.Groups, max(1, n/3), n-max(1, n/3))
		}
	}
	if _, err := Shape(ShapeMinorityThird, []int{1, 2}, 0, rand.New(rand.NewSource(1))); err == nil {
		t.Error("minority-third of 2 nodes was accepted")
	}
}

func TestPrimaries(t *testing.T) {
	for _, tc := range []struct {
		ids, prim []int
		want      [][]int
		err       string
	}{
		{[]int{1, 2, 3, 4, 5}, []int{5}, [][]int{{5}, {1, 2, 3, 4}}, ""},
		{[]int{1, 2, 3, 4, 5}, []int{2, 5}, [][]int{{1, 2, 4}, {3, 5}}, ""},
		{[]int{1, 2, 3, 4, 5, 6}, []int{1, 4, 6}, [][]int{{1, 2}, {3, 4}, {5, 6}}, ""},
		{[]int{1, 2, 3}, nil, nil, "no leader agreed on"},
		{[]int{1, 2}, []int{1, 2}, [][]int{{1}, {2}}, ""},
		{[]int{1}, []int{1}, nil, "every node is a primary"},
	} {
		p, err := Primaries(tc.ids, tc.prim)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Primaries(%v, %v) error %v, want %q", tc.ids, tc.prim, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(p.Groups, tc.want) {
			t.Errorf("Primaries(%v, %v) = %v %v, want %v", tc.ids, tc.prim, p.Groups, err, tc.want)
		}
	}
}

// The nemesis draws only the older shapes unless told otherwise (old seeds keep their schedules),
// and only the shapes it is told.
func TestNemesisShapes(t *testing.T) {
	draw := func(shapes []string) map[string]bool {
		seen := map[string]bool{}
		for seed := range int64(60) {
			nm := Nemesis{Kinds: []string{NemesisPartition}, Interval: 200 * time.Millisecond, Nodes: 6, Until: 5 * time.Second, MinHold: 100 * time.Millisecond, Shapes: shapes}
			s, err := nm.Draw(seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range s.Steps {
				if st.Op == OpPartition {
					seen[st.Shape] = true
				}
			}
		}
		return seen
	}
	if got := draw(nil); got[ShapeMinorityThird] || got[ShapePrimaries] || !got[ShapeHalves] {
		t.Errorf("the default nemesis drew %v", got)
	}
	if got := draw([]string{ShapePrimaries, ShapeMinorityThird}); len(got) != 2 || !got[ShapePrimaries] || !got[ShapeMinorityThird] {
		t.Errorf("told primaries,minority-third, the nemesis drew %v", got)
	}
	nm := Nemesis{Kinds: []string{NemesisPartition}, Interval: time.Second, Nodes: 2, Until: 5 * time.Second, Shapes: []string{ShapeBridge}}
	if err := nm.Validate(); err == nil || !strings.Contains(err.Error(), "no shape fits 2 nodes") {
		t.Errorf("bridge over 2 nodes: %v", err)
	}
}
