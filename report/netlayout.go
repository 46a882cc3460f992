package report

// Where the network section puts each node: a circle for a ring or a mesh, rows and columns for a
// lattice, levels for a tree, and a force-directed layout for any other graph.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/topology"
)

// layoutNetwork places the nodes: the R×C lattice of a grid or torus (position p at row p/C,
// column p%C, as topology.Generate numbers them), the layers of a tree under its root Ring[0], a
// circle in ring order for a ring, and a deterministic force-directed layout for anything else. It
// marks a torus's wrap-around edges in edges.
func layoutNetwork(spec string, order []int, edges []netEdge) (map[int]pt, string) {
	fam, arg, _ := strings.Cut(spec, ":")
	switch fam {
	case "grid", "torus":
		if r, c, ok := latticeDims(arg); ok && r*c == len(order) {
			pos := make(map[int]pt, len(order))
			for p, id := range order {
				pos[id] = pt{float64(p % c), float64(p / c)}
			}
			for i := range edges {
				a, b := pos[edges[i].a], pos[edges[i].b]
				if math.Abs(a.x-b.x)+math.Abs(a.y-b.y) > 1.5 {
					edges[i].wrap = true
				}
			}
			return pos, fmt.Sprintf("the %d×%d lattice, row by row in ring order", r, c)
		}
	case "tree":
		return treeLayout(order, edges), fmt.Sprintf("layers by distance from n%d, the root (ring position 0)", order[0])
	case topology.Ring, topology.BiRing:
		return circleLayout(order), "a circle in ring order"
	}
	return forceLayout(order, edges), fmt.Sprintf("force-directed (deterministic: from a circle in ring order, %d steps)", forceSteps(len(order)))
}

// latticeDims reads RxC (x or ×) as topology.Generate does.
func latticeDims(arg string) (int, int, bool) {
	a, b, ok := strings.Cut(strings.ReplaceAll(arg, "×", "x"), "x")
	r, err1 := strconv.Atoi(strings.TrimSpace(a))
	c, err2 := strconv.Atoi(strings.TrimSpace(b))
	return r, c, ok && err1 == nil && err2 == nil && r >= 1 && c >= 1
}

// circleLayout puts the nodes on a circle in ring order, neighbours one unit apart.
func circleLayout(order []int) map[int]pt {
	n := len(order)
	pos := make(map[int]pt, n)
	if n == 1 {
		pos[order[0]] = pt{}
		return pos
	}
	r := max(0.5, 1/(2*math.Sin(math.Pi/float64(n))))
	for p, id := range order {
		// From the top, clockwise: how a ring is usually drawn.
		a := 2*math.Pi*float64(p)/float64(n) - math.Pi/2
		pos[id] = pt{r * math.Cos(a), r * math.Sin(a)}
	}
	return pos
}

// adjacency lists each node's neighbours in ring order, so that layouts that walk the graph are
// deterministic and follow the generator's numbering (a heap-ordered tree's children left to right).
func adjacency(order []int, edges []netEdge) map[int][]int {
	at := make(map[int]int, len(order))
	for p, id := range order {
		at[id] = p
	}
	adj := make(map[int][]int, len(order))
	for _, e := range edges {
		adj[e.a] = append(adj[e.a], e.b)
		adj[e.b] = append(adj[e.b], e.a)
	}
	for id := range adj {
		slices.SortFunc(adj[id], func(p, q int) int { return cmp.Compare(at[p], at[q]) })
	}
	return adj
}

// treeLayout draws the breadth-first tree from order[0]: depth down, each leaf in a column of its
// own left to right, each parent centred over its children. A layer too wide to read in one row
// staggers its nodes up and down, so that neighbours in it are further apart. Nodes the root cannot
// reach go in a last row.
func treeLayout(order []int, edges []netEdge) map[int]pt {
	adj := adjacency(order, edges)
	root := order[0]
	depth := map[int]int{root: 0}
	children := map[int][]int{}
	queue := []int{root}
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		for _, b := range adj[a] {
			if _, ok := depth[b]; !ok {
				depth[b] = depth[a] + 1
				children[a] = append(children[a], b)
				queue = append(queue, b)
			}
		}
	}
	col := map[int]float64{}
	next := 0.0
	var place func(int)
	place = func(a int) {
		ch := children[a]
		if len(ch) == 0 {
			col[a] = next
			next++
			return
		}
		for _, b := range ch {
			place(b)
		}
		col[a] = (col[ch[0]] + col[ch[len(ch)-1]]) / 2
	}
	place(root)
	deepest := 0
	width := map[int]int{}
	for _, d := range depth {
		deepest = max(deepest, d)
		width[d]++
	}
	var unreached []int
	for _, id := range order {
		if _, ok := depth[id]; !ok {
			unreached = append(unreached, id)
		}
	}
	// Layers far apart enough that the picture is not a thin strip: at most about 2.5 times as
	// wide as it is tall.
	gap := 1.0
	if deepest > 0 {
		gap = max(1, (next-1)/(2.5*float64(deepest)))
	}
	pos := make(map[int]pt, len(order))
	byDepth := map[int][]int{}
	for _, id := range order {
		if d, ok := depth[id]; ok {
			pos[id] = pt{col[id], float64(d) * gap}
			byDepth[d] = append(byDepth[d], id)
		}
	}
	// A wide layer alternates up and down along its columns, when the layers are far enough apart
	// for it not to be mistaken for another layer.
	for d, ids := range byDepth {
		if width[d] <= 32 || gap < 1.5 {
			continue
		}
		slices.SortFunc(ids, func(p, q int) int { return cmp.Compare(col[p], col[q]) })
		for i, id := range ids {
			shift := -0.25 * gap
			if i%2 == 1 {
				shift = 0.25 * gap
			}
			pos[id] = pt{col[id], float64(d)*gap + shift}
		}
	}
	for i, id := range unreached {
		pos[id] = pt{float64(i), float64(deepest+1) * gap}
	}
	return pos
}

// forceSteps is how many steps the force-directed layout takes for n nodes: each is quadratic in
// n, so a large graph takes fewer.
func forceSteps(n int) int {
	return max(40, min(300, 20_000_000/max(1, n*n)))
}

// forceLayout is a Fruchterman–Reingold layout with a fixed number of steps from a circle in ring
// order (no randomness: the same run gives the same picture), with a little pull to the centre so
// that parts that are not connected stay in view. Edges come out about one unit long.
func forceLayout(order []int, edges []netEdge) map[int]pt {
	n := len(order)
	if n <= 2 {
		return circleLayout(order)
	}
	idx := make(map[int]int, n)
	p := make([]pt, n)
	r0 := math.Sqrt(float64(n)) * 0.6
	for i, id := range order {
		idx[id] = i
		a := 2 * math.Pi * float64(i) / float64(n)
		p[i] = pt{r0 * math.Cos(a), r0 * math.Sin(a)}
	}
	type link struct{ a, b int }
	links := make([]link, len(edges))
	for i, e := range edges {
		links[i] = link{idx[e.a], idx[e.b]}
	}
	const k = 1.0 // the ideal edge length
	steps := forceSteps(n)
	temp := r0 / 2
	cool := math.Pow(0.01/temp, 1/float64(steps))
	disp := make([]pt, n)
	for range steps {
		for i := range disp {
			// The pull to the centre.
			disp[i] = pt{-0.02 * p[i].x, -0.02 * p[i].y}
		}
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				dx, dy := p[i].x-p[j].x, p[i].y-p[j].y
				d2 := dx*dx + dy*dy
				if d2 < 1e-12 {
					// Two nodes on one spot: push them apart along a direction of their own.
					a := float64(i*7 + j*13)
					dx, dy, d2 = 0.01*math.Cos(a), 0.01*math.Sin(a), 1e-4
				}
				f := k * k / d2 // k²/d, over d to make (dx, dy) a unit vector
				disp[i].x += dx * f
				disp[i].y += dy * f
				disp[j].x -= dx * f
				disp[j].y -= dy * f
			}
		}
		for _, l := range links {
			dx, dy := p[l.a].x-p[l.b].x, p[l.a].y-p[l.b].y
			d := math.Sqrt(dx*dx + dy*dy)
			f := d / k // d²/k, over d
			disp[l.a].x -= dx * f
			disp[l.a].y -= dy * f
			disp[l.b].x += dx * f
			disp[l.b].y += dy * f
		}
		for i := range p {
			d := math.Hypot(disp[i].x, disp[i].y)
			if d > 0 {
				s := min(d, temp) / d
				p[i].x += disp[i].x * s
				p[i].y += disp[i].y * s
			}
		}
		temp *= cool
	}
	spread(p, 60)
	// Scale so that the edges are one unit long on average: the drawing sizes circles by distance.
	if len(links) > 0 {
		sum := 0.0
		for _, l := range links {
			sum += math.Hypot(p[l.a].x-p[l.b].x, p[l.a].y-p[l.b].y)
		}
		if mean := sum / float64(len(links)); mean > 1e-9 {
			for i := range p {
				p[i].x /= mean
				p[i].y /= mean
			}
		}
	}
	pos := make(map[int]pt, n)
	for i, id := range order {
		pos[id] = p[i]
	}
	return pos
}

// spread evens out a force-directed layout's density: a well-connected graph (a random one) packs
// its core far tighter than its rim, so that the core's circles would have to be tiny. Every pair
// closer than a share of the room each node would have were they spread evenly over the picture
// is pushed apart, for a fixed number of rounds (deterministic, as the layout).
func spread(p []pt, rounds int) {
	n := len(p)
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, q := range p {
		minX, maxX = min(minX, q.x), max(maxX, q.x)
		minY, maxY = min(minY, q.y), max(maxY, q.y)
	}
	area := max(maxX-minX, 1e-9) * max(maxY-minY, 1e-9)
	want := 0.7 * math.Sqrt(area/float64(n))
	disp := make([]pt, n)
	for range rounds {
		clear(disp)
		moved := false
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				dx, dy := p[i].x-p[j].x, p[i].y-p[j].y
				d := math.Hypot(dx, dy)
				if d >= want {
					continue
				}
				moved = true
				if d < 1e-9 {
					a := float64(i*7 + j*13)
					dx, dy, d = math.Cos(a), math.Sin(a), 1
				}
				f := (want - d) / d / 4 // each end moves a quarter of the gap: a damped half
				disp[i].x += dx * f
				disp[i].y += dy * f
				disp[j].x -= dx * f
				disp[j].y -= dy * f
			}
		}
		if !moved {
			return
		}
		for i := range p {
			p[i].x += disp[i].x
			p[i].y += disp[i].y
		}
	}
}
