package report

import (
	"strings"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/topology"
)

// Layout is where a picture of the cluster puts each node, in layout units (neighbours about one
// unit apart): the report's network section's layout, for any topology (a mesh is a circle in ID
// order). leaderlab ui draws its live cluster with it.
type Layout struct {
	Nodes []NodeAt `json:"nodes"`
	Edges [][2]int `json:"edges"`          // the links, smaller ID first (a one-way ring: from, to)
	Ring  bool     `json:"ring,omitempty"` // a one-way ring: the edges have a direction
	Mesh  bool     `json:"mesh,omitempty"` // every node linked to every other (the edges are left out)
	How   string   `json:"how"`            // how the nodes were placed, in words
}

// NodeAt is one node's place.
type NodeAt struct {
	ID int     `json:"id"`
	X  float64 `json:"x"`
	Y  float64 `json:"y"`
}

// LayoutOf lays out cluster c.
func LayoutOf(c *rundir.Cluster) Layout {
	kind := strings.TrimSpace(c.Topology)
	order := c.Ring
	if len(order) == 0 {
		order = c.IDs()
	}
	var edges []netEdge
	switch {
	case topology.IsGraph(kind):
		seen := map[[2]int]bool{}
		for _, e := range c.Edges {
			a, b := min(e[0], e[1]), max(e[0], e[1])
			if a != b && !seen[[2]int{a, b}] {
				seen[[2]int{a, b}] = true
				edges = append(edges, netEdge{a: a, b: b})
			}
		}
	case kind == topology.Ring || kind == topology.BiRing:
		for p, a := range order {
			if len(order) < 2 || (len(order) == 2 && p == 1) {
				break
			}
			edges = append(edges, netEdge{a: a, b: order[(p+1)%len(order)]})
		}
	}
	l := Layout{Ring: kind == topology.Ring, Mesh: kind == topology.Mesh, Edges: [][2]int{}}
	var pos map[int]pt
	if l.Mesh {
		pos, l.How = circleLayout(order), "a circle in ID order (a mesh: every node linked to every other)"
	} else {
		pos, l.How = layoutNetwork(kind, order, edges)
	}
	for _, id := range order {
		p := pos[id]
		l.Nodes = append(l.Nodes, NodeAt{ID: id, X: p.x, Y: p.y})
	}
	for _, e := range edges {
		l.Edges = append(l.Edges, [2]int{e.a, e.b})
	}
	return l
}
