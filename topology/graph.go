package topology

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand"
	"slices"
	"strconv"
	"strings"
)

// Graph is the Kind of a general graph: links only along its edges. The --topology values that name
// one are the families grid:RxC, torus:RxC, tree:K, random:D and @FILE (an edge list); cluster.json
// keeps the value as given and the edges themselves, so a node never regenerates or re-reads them.
const Graph = "graph"

// Families lists the graph families, in the order error messages name them.
var Families = []string{"grid:RxC", "torus:RxC", "tree:K", "random:D", "@FILE"}

// IsGraph tells whether a --topology value names a general graph rather than mesh, ring or biring.
func IsGraph(spec string) bool {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "@") {
		return true
	}
	fam, _, ok := strings.Cut(s, ":")
	return ok && slices.Contains([]string{"grid", "torus", "tree", "random"}, fam)
}

// Family is what an algorithm's Topologies list names for a --topology value: Graph for every general
// graph, the value itself otherwise.
func Family(spec string) string {
	if IsGraph(spec) {
		return Graph
	}
	return strings.TrimSpace(spec)
}

// Generate returns the edges of a generated graph over the positions 0..n-1 (each pair once, the
// smaller position first, sorted). The positions are the indexes of a ring order from Place, so
// with --ids ascending position p holds ID p+1.
//
//   - grid:RxC: R rows of C, row by row; R·C must be n. Each position links to its right and lower
//     neighbours.
//   - torus:RxC: the grid with each row and column closed into a ring.
//   - tree:K: the K-ary tree of n positions in heap order: the parent of p is (p-1)/K.
//   - random:D: connected with mean degree D (|E| = round(n·D/2)): a random spanning tree, then
//     random further edges, all drawn from seed.
//
// Errors name the value and what is accepted, not the flag. @FILE is not generated: read it with
// ParseEdges.
func Generate(spec string, n int, seed int64) ([][2]int, error) {
	s := strings.TrimSpace(spec)
	if n < 1 {
		return nil, fmt.Errorf("%q: cannot build a graph of %d nodes (want at least 1)", spec, n)
	}
	fam, arg, ok := strings.Cut(s, ":")
	if !ok || !IsGraph(s) || strings.HasPrefix(s, "@") {
		return nil, fmt.Errorf("unknown graph %q (accepted: %s)", spec, strings.Join(Families, ", "))
	}
	switch fam {
	case "grid", "torus":
		r, c, err := dims(arg)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", spec, err)
		}
		if r*c != n {
			return nil, fmt.Errorf("%q has %d×%d = %d nodes, but the cluster has %d (make -n %d, or choose R×C = %d)", spec, r, c, r*c, n, r*c, n)
		}
		return lattice(r, c, fam == "torus"), nil
	case "tree":
		k, err := strconv.Atoi(arg)
		if err != nil || k < 1 {
			return nil, fmt.Errorf("%q: the arity %q is not a whole number of at least 1 (e.g. tree:2 for a binary tree)", spec, arg)
		}
		var out [][2]int
		for p := 1; p < n; p++ {
			out = append(out, [2]int{(p - 1) / k, p})
		}
		return sortEdges(out), nil
	default: // random
		d, err := strconv.ParseFloat(arg, 64)
		if err != nil || math.IsNaN(d) || math.IsInf(d, 0) {
			return nil, fmt.Errorf("%q: the mean degree %q is not a number (e.g. random:3)", spec, arg)
		}
		return random(spec, n, d, seed)
	}
}

// dims reads "RxC" (x or ×), both at least 1.
func dims(arg string) (int, int, error) {
	a, b, ok := strings.Cut(strings.ReplaceAll(arg, "×", "x"), "x")
	r, err1 := strconv.Atoi(a)
	c, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not RxC (rows x columns, e.g. 4x4)", arg)
	}
	if r < 1 || c < 1 {
		return 0, 0, fmt.Errorf("%d rows x %d columns: want at least 1 of each", r, c)
	}
	return r, c, nil
}

// lattice is the R×C grid, closed into a torus when wrap.
func lattice(r, c int, wrap bool) [][2]int {
	var out [][2]int
	at := func(i, j int) int { return i*c + j }
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if j+1 < c || (wrap && c > 1) {
				out = append(out, [2]int{at(i, j), at(i, (j+1)%c)})
			}
			if i+1 < r || (wrap && r > 1) {
				out = append(out, [2]int{at(i, j), at((i+1)%r, j)})
			}
		}
	}
	return uniqueEdges(out)
}

// uniqueEdges puts each edge's smaller end first, sorts, and keeps each edge once (a torus of one or
// two rows or columns closes onto edges it already has).
func uniqueEdges(e [][2]int) [][2]int {
	for i := range e {
		e[i] = [2]int{min(e[i][0], e[i][1]), max(e[i][0], e[i][1])}
	}
	return slices.Compact(sortEdges(e))
}

// random draws a connected graph with mean degree d: a random tree (each position in a random order
// links to one drawn before it), then further edges drawn uniformly among the missing ones.
func random(spec string, n int, d float64, seed int64) ([][2]int, error) {
	most := float64(n - 1)
	least := 2 * float64(n-1) / float64(n)
	if d < least-1e-9 || d > most+1e-9 {
		return nil, fmt.Errorf("%q: a connected graph of %d nodes has a mean degree from %.3g (a tree) to %g (a mesh)", spec, n, least, most)
	}
	want := int(math.Round(float64(n) * d / 2))
	rng := rand.New(rand.NewSource(seed))
	perm := rng.Perm(n)
	have := map[[2]int]bool{}
	var out [][2]int
	add := func(a, b int) bool {
		e := [2]int{min(a, b), max(a, b)}
		if a == b || have[e] {
			return false
		}
		have[e] = true
		out = append(out, e)
		return true
	}
	for i := 1; i < n; i++ {
		add(perm[i], perm[rng.Intn(i)])
	}
	if want > len(out) {
		// Draw among the missing pairs without rejection, so a dense graph costs no more to make.
		var missing [][2]int
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				if !have[[2]int{a, b}] {
					missing = append(missing, [2]int{a, b})
				}
			}
		}
		rng.Shuffle(len(missing), func(i, j int) { missing[i], missing[j] = missing[j], missing[i] })
		for _, e := range missing[:min(len(missing), want-len(out))] {
			add(e[0], e[1])
		}
	}
	return sortEdges(out), nil
}

// ParseEdges reads an edge list (the @FILE topology): one edge per line as "a b", "a-b" or "a,b",
// between vertices 1..n; blank lines and everything after '#' are ignored; an edge listed twice (or
// both ways) counts once. The vertices are positions, 1-based: vertex v is position v-1 of the ring
// order, so with --ids ascending vertex v is node v. Errors name the file and line. It returns the
// edges over positions 0..n-1, as Generate does.
func ParseEdges(r io.Reader, name string, n int) ([][2]int, error) {
	sc := bufio.NewScanner(r)
	have := map[[2]int]bool{}
	var out [][2]int
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		f := strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '\t' || r == ',' || r == '-' })
		if len(f) != 2 {
			return nil, fmt.Errorf("%s:%d: %q is not an edge (want two vertices as \"a b\", \"a-b\" or \"a,b\")", name, line, text)
		}
		var e [2]int
		for i, x := range f {
			v, err := strconv.Atoi(x)
			if err != nil || v < 1 || v > n {
				return nil, fmt.Errorf("%s:%d: vertex %q is not one of 1..%d (the cluster has %d nodes)", name, line, x, n, n)
			}
			e[i] = v - 1
		}
		if e[0] == e[1] {
			return nil, fmt.Errorf("%s:%d: %q links vertex %d to itself (a node is never its own neighbour)", name, line, text, e[0]+1)
		}
		e = [2]int{min(e[0], e[1]), max(e[0], e[1])}
		if !have[e] {
			have[e] = true
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(out) == 0 && n > 1 {
		return nil, fmt.Errorf("%s: no edges (want one edge per line, as \"1 2\")", name)
	}
	return sortEdges(out), nil
}

// OnIDs turns edges over positions into edges over the IDs of a ring order (order[p] is position p's
// ID), each with the smaller ID first, sorted.
func OnIDs(edges [][2]int, order []int) [][2]int {
	out := make([][2]int, len(edges))
	for i, e := range edges {
		a, b := order[e[0]], order[e[1]]
		out[i] = [2]int{min(a, b), max(a, b)}
	}
	return sortEdges(out)
}

// NewGraph builds a general graph's Topology from the IDs of its ring order and its edges between
// them. It refuses an edge to an unknown ID, a self-loop and a graph that is not connected, naming
// the nodes cut off.
func NewGraph(spec string, order []int, edges [][2]int) (*Topology, error) {
	t, err := New(Mesh, order)
	if err != nil {
		return nil, err
	}
	t.Kind, t.Spec = Graph, strings.TrimSpace(spec)
	t.adj = make(map[int][]int, len(order))
	for _, e := range edges {
		a, b := e[0], e[1]
		if t.Position(a) < 0 || t.Position(b) < 0 {
			return nil, fmt.Errorf("graph %s: edge %d-%d names a node that is not in the cluster (IDs: %s)", spec, a, b, span(sorted(order)))
		}
		if a == b {
			return nil, fmt.Errorf("graph %s: edge %d-%d links a node to itself", spec, a, b)
		}
		if !slices.Contains(t.adj[a], b) {
			t.adj[a] = append(t.adj[a], b)
			t.adj[b] = append(t.adj[b], a)
		}
	}
	for _, id := range order {
		slices.Sort(t.adj[id])
	}
	if cut := t.unreached(); len(cut) > 0 {
		return nil, fmt.Errorf("graph %s is not connected: %s cannot reach node %d (add edges, or choose a denser graph)", spec, nodesNamed(cut), sorted(order)[0])
	}
	return t, nil
}

// unreached lists the nodes the lowest ID cannot reach, ascending.
func (t *Topology) unreached() []int {
	ids := sorted(t.Order)
	dist := t.Distances(ids[0])
	var out []int
	for _, id := range ids {
		if _, ok := dist[id]; !ok {
			out = append(out, id)
		}
	}
	return out
}

// Edges lists the links of any topology, each once with the smaller ID first, sorted: a graph's
// edges, every pair of a mesh, the ring's neighbours of a one- or two-way ring.
func (t *Topology) Edges() [][2]int {
	var out [][2]int
	for _, a := range t.Order {
		var nb []int
		switch t.Kind {
		case Graph:
			nb = t.adj[a]
		case Mesh:
			nb = t.others(a)
		default:
			nb = t.distinct(a, t.Pred(a), t.Succ(a))
		}
		for _, b := range nb {
			if a < b {
				out = append(out, [2]int{a, b})
			}
		}
	}
	return sortEdges(out)
}

// Distances are the hop counts from id to every node it reaches along the topology's edges
// (Neighbours; one-way on a one-way ring), id itself at 0.
func (t *Topology) Distances(id int) map[int]int {
	dist := map[int]int{id: 0}
	queue := []int{id}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		for _, b := range t.Neighbours(a) {
			if _, ok := dist[b]; !ok {
				dist[b] = dist[a] + 1
				queue = append(queue, b)
			}
		}
	}
	return dist
}

// Diameter is the largest distance between two nodes (0 for one node; -1 when some node cannot reach
// another).
func (t *Topology) Diameter() int {
	d := 0
	for _, a := range t.Order {
		dist := t.Distances(a)
		if len(dist) < len(t.Order) {
			return -1
		}
		for _, x := range dist {
			d = max(d, x)
		}
	}
	return d
}

// Clusters partitions the nodes into k connected clusters (synchronizer γ's): k centres chosen
// farthest-first from the lowest ID (each next centre the node farthest from those chosen, the lowest
// ID on a tie), then every node joins the nearest centre, the lower centre on a tie, in breadth-first
// order from all centres at once, so that each cluster is connected through its members. It returns
// each node's centre (the cluster's leader). k is clamped to 1..N. Deterministic: every node
// computes the same clusters from the same graph.
func (t *Topology) Clusters(k int) map[int]int {
	ids := sorted(t.Order)
	k = max(1, min(k, len(ids)))
	centres := []int{ids[0]}
	near := t.Distances(ids[0])
	for len(centres) < k {
		far, best := 0, -1
		for _, id := range ids {
			if d, ok := near[id]; ok && d > best && !slices.Contains(centres, id) {
				far, best = id, d
			}
		}
		if best <= 0 {
			break
		}
		centres = append(centres, far)
		for id, d := range t.Distances(far) {
			if old, ok := near[id]; !ok || d < old {
				near[id] = d
			}
		}
	}
	slices.Sort(centres)
	of := make(map[int]int, len(ids))
	frontier := make([]int, 0, len(centres))
	for _, c := range centres {
		of[c] = c
		frontier = append(frontier, c)
	}
	for len(frontier) > 0 {
		var next []int
		// A node reached in this round joins the lowest centre among its neighbours of the round before.
		claim := map[int]int{}
		for _, a := range frontier {
			for _, b := range t.Neighbours(a) {
				if _, done := of[b]; done {
					continue
				}
				if c, ok := claim[b]; !ok || of[a] < c {
					if !ok {
						next = append(next, b)
					}
					claim[b] = of[a]
				}
			}
		}
		slices.Sort(next)
		for _, b := range next {
			of[b] = claim[b]
		}
		frontier = next
	}
	return of
}

// sortEdges sorts edges in place and returns them.
func sortEdges(e [][2]int) [][2]int {
	slices.SortFunc(e, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return e
}

// sorted is an ascending copy of ids.
func sorted(ids []int) []int {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// nodesNamed names a few nodes: "node 5", "nodes 5, 6", "nodes 5, 6, 7 and 9 more".
func nodesNamed(ids []int) string {
	if len(ids) == 1 {
		return "node " + strconv.Itoa(ids[0])
	}
	var s []string
	for _, id := range ids[:min(len(ids), 8)] {
		s = append(s, strconv.Itoa(id))
	}
	out := "nodes " + strings.Join(s, ", ")
	if len(ids) > 8 {
		out += fmt.Sprintf(" and %d more", len(ids)-8)
	}
	return out
}
