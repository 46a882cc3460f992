package report

// The network section: the cluster's graph drawn here, in Go, as an inline SVG (the page's script
// has no part in it, so it shows without JavaScript), each node coloured by what it believed at the
// end of the run.

import (
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
