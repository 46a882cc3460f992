package report

// The network section: the cluster's graph drawn here, in Go, as an inline SVG (the page's script
// has no part in it, so it shows without JavaScript), each node coloured by what it believed at the
// end of the run.

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/topology"
)

// maxNetNodes is the most nodes the section draws: beyond it the picture is a blot and its layout
// (quadratic per iteration when force-directed) would slow the report for nothing.
const maxNetNodes = 2000

// network is what the page's network section shows.
type network struct {
	Spec   string
	Nodes  int
	Links  int
	Layout string // how the nodes were placed, in words
	Pulses bool   // the nodes carry the last pulse they started
	Legend []netLegend
	Notes  []string // what is odd about the graph (not connected, edges to unknown nodes)
	SVG    template.HTML
}

// netLegend is one node state in the legend: a swatch drawn like the nodes, and how many nodes
// ended in it.
type netLegend struct {
	Swatch template.HTML
	Label  string
	Count  int
}

// pt is a position in layout units: neighbouring nodes are about one unit apart.
type pt struct{ x, y float64 }

// netEdge is a link to draw; wrap marks a torus's wrap-around link, drawn as two stubs pointing
// out of the lattice rather than a line across the whole picture.
type netEdge struct {
	a, b int
	wrap bool
}

// The node states at the end of the run, as CSS classes (n-…) and in words.
const (
	stLeader   = "leader"
	stFollower = "follower"
	stOther    = "other" // believes in a node that is not the agreed leader
	stNone     = "none"  // believes in no one: ⊥
	stPaused   = "paused"
	stDead     = "dead"
)

// netState is a node's end state with the leader it believed in.
type netState struct {
	state   string
	believe int
	pulse   int // the last pulse it started, 0 for none
}

// buildNetwork lays out and draws the cluster's network, or returns nil when there is nothing worth
// drawing: a mesh (every node linked to every other says nothing) or an empty cluster.
// maxRingDrawn is the largest ring the network section draws; a general graph is always drawn.
const maxRingDrawn = 64

func buildNetwork(c *rundir.Cluster, d *Data, v *check.Verdict) *network {
	graph := topology.IsGraph(c.Topology)
	kind := strings.TrimSpace(c.Topology)
	if !graph && kind != topology.Ring && kind != topology.BiRing {
		return nil
	}
	order := ringOrder(c, d)
	if len(order) == 0 || (!graph && len(order) > maxRingDrawn) {
		return nil // a ring is a circle: past a few dozen nodes its picture says nothing the lanes do not
	}
	nw := &network{Spec: kind, Nodes: len(order)}
	known := make(map[int]bool, len(order))
	for _, id := range order {
		known[id] = true
	}
	var edges []netEdge
	if graph {
		if _, err := c.Net(); err != nil {
			nw.Notes = append(nw.Notes, fmt.Sprintf("cluster.json: %v (drawn as it is)", err))
		}
		seen := map[[2]int]bool{}
		var unknown []string
		for _, e := range c.Edges {
			a, b := min(e[0], e[1]), max(e[0], e[1])
			switch {
			case !known[a] || !known[b]:
				unknown = append(unknown, fmt.Sprintf("%d-%d", e[0], e[1]))
			case a != b && !seen[[2]int{a, b}]:
				seen[[2]int{a, b}] = true
				edges = append(edges, netEdge{a: a, b: b})
			}
		}
		if len(unknown) > 0 {
			nw.Notes = append(nw.Notes, fmt.Sprintf("%d edge(s) name a node that is not in the cluster and are not drawn: %s",
				len(unknown), strings.Join(unknown[:min(len(unknown), 8)], ", ")))
		}
	} else if len(order) > 1 {
		// A ring's links follow from the ring order; a one-way ring's run from each node to its
		// successor, the way its messages travel.
		for p, a := range order {
			b := order[(p+1)%len(order)]
			if len(order) == 2 && p == 1 {
				break // a two-node ring has one link, not the same link twice
			}
			edges = append(edges, netEdge{a: a, b: b})
		}
	}
	nw.Links = len(edges)
	if len(order) > maxNetNodes {
		nw.Notes = append(nw.Notes, fmt.Sprintf("%d nodes are too many to draw readably (at most %d): the picture is left out", len(order), maxNetNodes))
		return nw
	}
	pos, how := layoutNetwork(kind, order, edges)
	nw.Layout = how
	states := endStates(order, d, v)
	for _, s := range states {
		if s.pulse > 0 {
			nw.Pulses = true
		}
	}
	nw.SVG = drawNetwork(nw, order, pos, edges, states, kind == topology.Ring)
	nw.Legend = netLegendOf(order, states, v)
	return nw
}

// ringOrder is cluster.json's ring order, or the lanes' IDs when it has none (a hand-made run):
// position p of a generated graph is Ring[p].
func ringOrder(c *rundir.Cluster, d *Data) []int {
	if len(c.Ring) > 0 {
		return c.Ring
	}
	out := make([]int, len(d.Lanes))
	for i, l := range d.Lanes {
		out[i] = l.ID
	}
	return out
}

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

// endStates is what each node was at the end of the run (Data.End, where the checker judged
// agreement): dead, paused, the agreed leader, following it, following another, or believing in no
// one; and the last pulse it started by then.
func endStates(order []int, d *Data, v *check.Verdict) map[int]netState {
	lane := make(map[int]int, len(d.Lanes))
	for i, l := range d.Lanes {
		lane[l.ID] = i
	}
	end := d.End
	alive := make([]bool, len(d.Lanes))
	for _, x := range d.Incs {
		// Inclusive at the end, as the checker's liveAt: a node stopped by the launcher at the end
		// was still there when it was judged.
		if x.From <= end && end <= x.To {
			alive[x.Lane] = true
		}
	}
	paused := make([]bool, len(d.Lanes))
	for _, s := range d.Paused {
		if s.From <= end && end < s.To {
			paused[s.Lane] = true
		}
	}
	belief := make([]int, len(d.Lanes))
	for _, b := range d.Beliefs {
		if b.From <= end && end <= b.To {
			belief[b.Lane] = b.Leader
		}
	}
	pulse := make([]int, len(d.Lanes))
	if y := markType(logs.EvPulse); y >= 0 {
		for i, t := range d.Marks.Y {
			if t == y && d.Marks.T[i] <= end {
				pulse[d.Marks.L[i]] = d.Marks.A[i] // the marks are sorted by time: the last one wins
			}
		}
	}
	leader := 0
	if v != nil && v.Leader != nil {
		leader = *v.Leader
	}
	out := make(map[int]netState, len(order))
	for _, id := range order {
		l, ok := lane[id]
		if !ok {
			out[id] = netState{state: stDead}
			continue
		}
		s := netState{believe: belief[l], pulse: pulse[l]}
		switch {
		case !alive[l]:
			s.state, s.believe = stDead, 0
		case paused[l]:
			s.state = stPaused
		case leader != 0 && id == leader:
			s.state = stLeader
		case s.believe == 0:
			s.state = stNone
		case s.believe == leader:
			s.state = stFollower
		default:
			s.state = stOther
		}
		out[id] = s
	}
	return out
}

// stateWords says a node's end state for its tooltip.
func stateWords(s netState) string {
	switch s.state {
	case stLeader:
		return "the agreed leader"
	case stFollower:
		return "follows the agreed leader n" + strconv.Itoa(s.believe)
	case stOther:
		return "follows n" + strconv.Itoa(s.believe) + ", not an agreed leader"
	case stNone:
		return "believes in no leader (⊥)"
	case stPaused:
		return "paused at the end"
	}
	return "dead at the end"
}

// netLegendOf counts the nodes in each state, in a fixed order, leaving out the states no node
// ended in.
func netLegendOf(order []int, states map[int]netState, v *check.Verdict) []netLegend {
	count := map[string]int{}
	for _, id := range order {
		count[states[id].state]++
	}
	leader := "leader"
	if v != nil && v.Leader != nil {
		leader = "leader n" + strconv.Itoa(*v.Leader)
	}
	labels := []struct{ state, label string }{
		{stLeader, leader},
		{stFollower, "follows it"},
		{stOther, "follows another node"},
		{stNone, "no leader (⊥)"},
		{stPaused, "paused at the end"},
		{stDead, "dead at the end"},
	}
	var out []netLegend
	for _, x := range labels {
		if count[x.state] == 0 {
			continue
		}
		var sb strings.Builder
		sb.WriteString(`<svg class="net" width="16" height="16" viewBox="0 0 16 16" aria-hidden="true">`)
		drawNode(&sb, 8, 8, 6.5, "", 0, 0, netState{state: x.state})
		sb.WriteString(`</svg>`)
		out = append(out, netLegend{Swatch: template.HTML(sb.String()), Label: x.label, Count: count[x.state]})
	}
	return out
}

// drawNetwork renders the SVG. The sizes follow the layout: a pixel scale that makes the natural
// picture from 360 px across for a few nodes to 1100 px for hundreds, or that puts the closest
// nodes 44 px apart when that fits in 1100 px (between 14 and 80 px per unit in any case), circles
// as large as the closest nodes allow, and labels that fit in their circles; the SVG scales with
// its viewBox from there.
func drawNetwork(nw *network, order []int, pos map[int]pt, edges []netEdge, states map[int]netState, directed bool) template.HTML {
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, id := range order {
		p := pos[id]
		minX, maxX = min(minX, p.x), max(maxX, p.x)
		minY, maxY = min(minY, p.y), max(maxY, p.y)
	}
	extent := max(maxX-minX, maxY-minY, 1)
	// Circles are sized by the typical closest pair (the 10th percentile of nearest-neighbour
	// distances), so that one pair that a force-directed layout left close does not shrink all.
	near := closeDistance(order, pos)
	across := max(360, min(1100, 70*math.Sqrt(float64(len(order)))))
	scale := max(14, min(80, max(across/extent, min(44/near, 1100/extent))))
	r := min(20, max(4, 0.36*near*scale))
	digits := len(strconv.Itoa(slices.Max(order)))
	font := min(13, max(5, 1.9*r/(0.62*float64(max(digits, 2)))))
	pulseFont := max(5, min(9, font*0.75))
	stub := 0.32 * scale
	margin := r + 4
	if nw.Pulses {
		margin += pulseFont + 2
	}
	for _, e := range edges {
		if e.wrap {
			margin = max(margin, stub+6)
		}
	}
	w := (maxX-minX)*scale + 2*margin
	h := (maxY-minY)*scale + 2*margin
	at := func(id int) (float64, float64) {
		p := pos[id]
		return margin + (p.x-minX)*scale, margin + (p.y-minY)*scale
	}
	var sb strings.Builder
	sb.Grow(300 * len(order))
	fmt.Fprintf(&sb, `<svg class="net" id="network-graph" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">`,
		num(w), num(h), num(w), num(h), template.HTMLEscapeString(fmt.Sprintf("the network %s: %d nodes, %d links", nw.Spec, nw.Nodes, nw.Links)))
	if directed {
		sb.WriteString(`<defs><marker id="net-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#8a93a3"/></marker></defs>`)
	}
	sb.WriteString(`<g class="edges">`)
	for _, e := range edges {
		x1, y1 := at(e.a)
		x2, y2 := at(e.b)
		title := fmt.Sprintf("n%d – n%d", e.a, e.b)
		dx, dy := x2-x1, y2-y1
		d := math.Hypot(dx, dy)
		switch {
		case e.wrap && d > 0:
			// Each end points away from the other: the link leaves the lattice and comes back in on
			// the opposite side.
			ux, uy := dx/d, dy/d
			fmt.Fprintf(&sb, `<path class="edge wrap" d="M%s,%s L%s,%s M%s,%s L%s,%s"><title>%s (wraps around)</title></path>`,
				num(x1-ux*r), num(y1-uy*r), num(x1-ux*(r+stub)), num(y1-uy*(r+stub)),
				num(x2+ux*r), num(y2+uy*r), num(x2+ux*(r+stub)), num(y2+uy*(r+stub)), title)
		case directed && d > 2*r:
			// End at the successor's circle so that the arrowhead shows.
			ux, uy := dx/d, dy/d
			fmt.Fprintf(&sb, `<line class="edge" x1="%s" y1="%s" x2="%s" y2="%s" marker-end="url(#net-arrow)"><title>n%d → n%d</title></line>`,
				num(x1+ux*r), num(y1+uy*r), num(x2-ux*(r+1)), num(y2-uy*(r+1)), e.a, e.b)
		default:
			fmt.Fprintf(&sb, `<line class="edge" x1="%s" y1="%s" x2="%s" y2="%s"><title>%s</title></line>`, num(x1), num(y1), num(x2), num(y2), title)
		}
	}
	sb.WriteString(`</g>`)
	fmt.Fprintf(&sb, `<g class="nodes" font-size="%s">`, num(font))
	for _, id := range order {
		x, y := at(id)
		drawNode(&sb, x, y, r, strconv.Itoa(id), id, pulseFont, states[id])
	}
	sb.WriteString(`</g></svg>`)
	return template.HTML(sb.String())
}

// drawNode writes one node: its circle, its label (none for a legend swatch) and its last pulse.
func drawNode(sb *strings.Builder, x, y, r float64, label string, id int, pulseFont float64, s netState) {
	if label == "" {
		fmt.Fprintf(sb, `<g class="node n-%s">`, s.state)
	} else {
		tip := "n" + label + ": " + stateWords(s)
		if s.pulse > 0 {
			tip += "; last pulse " + strconv.Itoa(s.pulse)
		}
		fmt.Fprintf(sb, `<g class="node n-%s" data-id="%d"><title>%s</title>`, s.state, id, template.HTMLEscapeString(tip))
	}
	fmt.Fprintf(sb, `<circle cx="%s" cy="%s" r="%s"/>`, num(x), num(y), num(r))
	if s.state == stDead {
		c := r * 0.62
		fmt.Fprintf(sb, `<path class="cross" d="M%s,%s L%s,%s M%s,%s L%s,%s"/>`,
			num(x-c), num(y-c), num(x+c), num(y+c), num(x+c), num(y-c), num(x-c), num(y+c))
	}
	if label != "" {
		fmt.Fprintf(sb, `<text x="%s" y="%s">%s</text>`, num(x), num(y), template.HTMLEscapeString(label))
		if s.pulse > 0 {
			// Below and to the right, where a lattice or a tree has no link.
			fmt.Fprintf(sb, `<text class="pulse" x="%s" y="%s" font-size="%s">p%d</text>`, num(x+r*0.7), num(y+r*0.7+pulseFont*0.55), num(pulseFont), s.pulse)
		}
	}
	sb.WriteString(`</g>`)
}

// closeDistance is the 10th percentile of the nodes' nearest-neighbour distances (1 for one node).
func closeDistance(order []int, pos map[int]pt) float64 {
	if len(order) < 2 {
		return 1
	}
	ps := make([]pt, len(order))
	for i, id := range order {
		ps[i] = pos[id]
	}
	near := make([]float64, len(ps))
	for i := range near {
		near[i] = math.Inf(1)
	}
	for i := range ps {
		for j := i + 1; j < len(ps); j++ {
			d := math.Hypot(ps[i].x-ps[j].x, ps[i].y-ps[j].y)
			near[i], near[j] = min(near[i], d), min(near[j], d)
		}
	}
	slices.Sort(near)
	return max(near[len(near)/10], 0.05)
}

// num writes a coordinate with one decimal at most.
func num(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	return strings.TrimSuffix(s, ".0")
}
