package topology

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// ascending is the ring order 1..n.
func ascending(n int) []int { return seq(n, 1, 1) }

func mustGraph(t *testing.T, spec string, n int, seed int64) *Topology {
	t.Helper()
	pos, err := Generate(spec, n, seed)
	if err != nil {
		t.Fatalf("Generate(%q, %d): %v", spec, n, err)
	}
	g, err := NewGraph(spec, ascending(n), OnIDs(pos, ascending(n)))
	if err != nil {
		t.Fatalf("NewGraph(%q, %d): %v", spec, n, err)
	}
	return g
}

func degrees(g *Topology) map[int]int {
	out := map[int]int{}
	for _, id := range g.Order {
		out[id] = len(g.Neighbours(id))
	}
	return out
}

func TestGridAndTorusShapes(t *testing.T) {
	for _, tc := range []struct {
		spec       string
		n, edges   int
		diam       int
		minD, maxD int
	}{
		{"grid:4x4", 16, 24, 6, 2, 4},
		{"grid:1x5", 5, 4, 4, 1, 2}, // a path
		{"grid:3x7", 21, 3*6 + 2*7, 8, 2, 4},
		{"torus:4x4", 16, 32, 4, 4, 4},
		{"torus:3x3", 9, 18, 2, 4, 4},
		{"torus:2x3", 6, 3 + 6, 2, 3, 3}, // two rows: the vertical wrap is the same edge
		{"torus:1x1", 1, 0, 0, 0, 0},
	} {
		if pos, _ := Generate(tc.spec, tc.n, 1); len(pos) != tc.edges || !slices.Equal(pos, uniqueEdges(slices.Clone(pos))) {
			t.Errorf("%s: Generate gave %d edges %v, want %d, each once with the smaller end first", tc.spec, len(pos), pos, tc.edges)
		}
		g := mustGraph(t, tc.spec, tc.n, 1)
		if got := len(g.Edges()); got != tc.edges {
			t.Errorf("%s: %d edges, want %d", tc.spec, got, tc.edges)
		}
		if got := g.Diameter(); got != tc.diam {
			t.Errorf("%s: diameter %d, want %d", tc.spec, got, tc.diam)
		}
		for id, d := range degrees(g) {
			if d < tc.minD || d > tc.maxD {
				t.Errorf("%s: node %d has degree %d, want %d..%d", tc.spec, id, d, tc.minD, tc.maxD)
			}
		}
	}
	// Row-major positions: in grid:4x4 ascending, node 6 (row 1, column 1) links to 2, 5, 7, 10.
	if got := mustGraph(t, "grid:4x4", 16, 1).Neighbours(6); !slices.Equal(got, []int{2, 5, 7, 10}) {
		t.Errorf("grid:4x4 neighbours of 6 = %v, want [2 5 7 10]", got)
	}
}

func TestTreeIsKAry(t *testing.T) {
	for _, k := range []int{1, 2, 3, 5} {
		for _, n := range []int{1, 2, 7, 40} {
			g := mustGraph(t, fmt.Sprintf("tree:%d", k), n, 1)
			if got := len(g.Edges()); got != n-1 {
				t.Fatalf("tree:%d n=%d: %d edges, want n-1 = %d", k, n, got, n-1)
			}
			for id, d := range degrees(g) {
				if d > k+1 {
					t.Errorf("tree:%d n=%d: node %d has degree %d > k+1", k, n, id, d)
				}
			}
			// The root (position 0, ID 1) is at depth floor(log_k) of the last position: every node
			// is reached.
			if len(g.Distances(1)) != n {
				t.Errorf("tree:%d n=%d: not connected", k, n)
			}
		}
	}
}

func TestRandomIsConnectedWithMeanDegreeAndDeterministic(t *testing.T) {
	for seed := int64(0); seed < 200; seed++ {
		n := 2 + int(seed%60)
		d := 2.0 + float64(seed%4)
		if d > float64(n-1) {
			d = float64(n - 1)
		}
		spec := fmt.Sprintf("random:%g", d)
		pos, err := Generate(spec, n, seed)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if _, err := NewGraph(spec, ascending(n), OnIDs(pos, ascending(n))); err != nil {
			t.Fatalf("seed %d n %d: %v", seed, n, err) // NewGraph refuses a disconnected graph
		}
		want := max(n-1, int(float64(n)*d/2+0.5))
		if len(pos) != want {
			t.Errorf("seed %d n %d %s: %d edges, want %d (mean degree %.2f)", seed, n, spec, len(pos), want, 2*float64(len(pos))/float64(n))
		}
		again, _ := Generate(spec, n, seed)
		if !slices.Equal(pos, again) {
			t.Fatalf("seed %d: the same seed drew another graph", seed)
		}
	}
	a, _ := Generate("random:3", 30, 1)
	b, _ := Generate("random:3", 30, 2)
	if slices.Equal(a, b) {
		t.Error("seeds 1 and 2 drew the same random:3 graph of 30 nodes")
	}
}

func TestGenerateRefusesBadSpecs(t *testing.T) {
	for _, tc := range []struct {
		spec string
		n    int
		want string
	}{
		{"grid:0x3", 0, "cannot build a graph of 0 nodes"},
		{"grid:0x3", 16, "want at least 1 of each"},
		{"grid:4x4", 20, "make -n 16"},
		{"grid:4by4", 16, "is not RxC"},
		{"torus:x", 16, "is not RxC"},
		{"tree:0", 5, "arity"},
		{"tree:two", 5, "arity"},
		{"random:1", 10, "mean degree from 1.8"},
		{"random:20", 10, "to 9 (a mesh)"},
		{"random:NaN", 10, "not a number"},
		{"hypercube:3", 8, "unknown graph"},
		{"@edges.txt", 8, "unknown graph"},
	} {
		_, err := Generate(tc.spec, tc.n, 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Generate(%q, %d) = %v, want an error containing %q", tc.spec, tc.n, err, tc.want)
		}
	}
}

func TestParseEdges(t *testing.T) {
	good := "# a square with a tail\n1 2\n2-3\n3,4 # comment\n\n4 1\n2 1\n4\t5\n"
	e, err := ParseEdges(strings.NewReader(good), "sq.txt", 5)
	if err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 1}, {0, 3}, {1, 2}, {2, 3}, {3, 4}}; !slices.Equal(e, want) {
		t.Errorf("edges %v, want %v (positions, each once)", e, want)
	}
	for _, tc := range []struct{ text, want string }{
		{"1 2\n2 3 4\n", "sq.txt:2: \"2 3 4\" is not an edge"},
		{"1 2\n\n# x\n1 x\n", "sq.txt:4: vertex \"x\""},
		{"1 9\n", "sq.txt:1: vertex \"9\" is not one of 1..5"},
		{"0 1\n", "vertex \"0\""},
		{"3 3\n", "sq.txt:1: \"3 3\" links vertex 3 to itself"},
		{"# nothing\n", "no edges"},
	} {
		_, err := ParseEdges(strings.NewReader(tc.text), "sq.txt", 5)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseEdges(%q) = %v, want an error containing %q", tc.text, err, tc.want)
		}
	}
}

func TestNewGraphRefusesDisconnectedAndUnknown(t *testing.T) {
	_, err := NewGraph("@x", ascending(6), [][2]int{{1, 2}, {2, 3}, {4, 5}})
	if err == nil || !strings.Contains(err.Error(), "not connected: nodes 4, 5, 6 cannot reach node 1") {
		t.Errorf("disconnected: %v", err)
	}
	if _, err := NewGraph("@x", ascending(3), [][2]int{{1, 2}, {2, 7}}); err == nil || !strings.Contains(err.Error(), "not in the cluster") {
		t.Errorf("unknown ID: %v", err)
	}
	g, err := NewGraph("@x", []int{3, 1, 2}, [][2]int{{1, 2}, {2, 3}, {3, 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(g.Edges(), [][2]int{{1, 2}, {2, 3}}) {
		t.Errorf("edges %v", g.Edges())
	}
	if _, ok := g.NextLive(1, 1, func(int) bool { return true }); ok {
		t.Error("NextLive on a graph found a way round")
	}
	if !slices.Equal(g.Links(2), []int{1, 3}) || !slices.Equal(g.Links(1), []int{2}) {
		t.Errorf("links along the edges only: %v %v", g.Links(2), g.Links(1))
	}
}

func TestOnIDsFollowsThePlacement(t *testing.T) {
	pos, _ := Generate("grid:1x3", 3, 1) // 0-1, 1-2
	if got := OnIDs(pos, []int{3, 1, 2}); !slices.Equal(got, [][2]int{{1, 2}, {1, 3}}) {
		t.Errorf("OnIDs = %v, want [[1 2] [1 3]]", got)
	}
}

func TestEdgesOfEveryKind(t *testing.T) {
	m, _ := New(Mesh, ascending(4))
	if len(m.Edges()) != 6 {
		t.Errorf("mesh of 4: %d edges, want 6", len(m.Edges()))
	}
	r, _ := New(BiRing, []int{1, 3, 2, 4})
	if want := [][2]int{{1, 3}, {1, 4}, {2, 3}, {2, 4}}; !slices.Equal(r.Edges(), want) {
		t.Errorf("biring edges %v, want %v", r.Edges(), want)
	}
	two, _ := New(BiRing, ascending(2))
	if len(two.Edges()) != 1 {
		t.Errorf("biring of 2: %v, want one edge", two.Edges())
	}
}

func TestClustersAreConnectedAndCoverEveryNode(t *testing.T) {
	for _, spec := range []string{"grid:8x8", "torus:5x5", "tree:3", "random:3"} {
		for _, k := range []int{1, 2, 4, 8, 100} {
			n := 64
			if spec == "torus:5x5" {
				n = 25
			}
			g := mustGraph(t, spec, n, 7)
			of := g.Clusters(k)
			if len(of) != n {
				t.Fatalf("%s k=%d: %d nodes clustered, want %d", spec, k, len(of), n)
			}
			members := map[int][]int{}
			for id, c := range of {
				members[c] = append(members[c], id)
			}
			if want := min(k, n); len(members) != want {
				t.Errorf("%s k=%d: %d clusters, want %d", spec, k, len(members), want)
			}
			for c, ms := range members {
				if of[c] != c {
					t.Fatalf("%s k=%d: centre %d is not in its own cluster", spec, k, c)
				}
				// Connected inside: a search from the centre along edges within the cluster
				// reaches every member.
				seen := map[int]bool{c: true}
				stack := []int{c}
				for len(stack) > 0 {
					a := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					for _, b := range g.Neighbours(a) {
						if of[b] == c && !seen[b] {
							seen[b] = true
							stack = append(stack, b)
						}
					}
				}
				if len(seen) != len(ms) {
					t.Errorf("%s k=%d: cluster %d is not connected (%d of %d reached)", spec, k, c, len(seen), len(ms))
				}
			}
			if again := g.Clusters(k); fmt.Sprint(again) != fmt.Sprint(of) {
				t.Fatalf("%s k=%d: clustering is not deterministic", spec, k)
			}
		}
	}
}

func TestIsGraphAndFamily(t *testing.T) {
	for spec, want := range map[string]bool{"grid:4x4": true, "torus:2x2": true, "tree:2": true, "random:3": true, "@f.txt": true,
		"mesh": false, "ring": false, "biring": false, "grid": false, "star:5": false} {
		if IsGraph(spec) != want {
			t.Errorf("IsGraph(%q) = %v", spec, !want)
		}
	}
	if Family("grid:4x4") != Graph || Family("mesh") != Mesh {
		t.Error("Family")
	}
}
