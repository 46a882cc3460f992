package checker

// graph is the reduced graph that the breadth-first search walks, kept as it goes, so that
// ElectionWillEnd's cycles can be ruled out by a topological sort over numbers instead of a second
// search that makes every transition again (which took as long as the first: Bully at N = 5 with a
// crash, 49.6 M states, 3 min 40 s of breadth-first search and as long again depth-first). States are
// numbered in the order they are found, which is the order the search expands them (level by level,
// each level in the order it was found), so a state's successors are a run of the edges: off[i] to
// off[i+1]. Four bytes an edge and four a state, against some 250 a state for the rest of the search.
type graph struct {
	off    []uint32   // off[i]: where state i's successors start in the edges; off[len-1]: their count
	chunks [][]uint32 // the edges, by the number of the state each leads to, in chunks of edgeChunk
	n      uint64     // edges kept
	gaveUp bool       // too many edges to number in 32 bits: the depth-first search decides
}

const edgeChunk = 1 << 20

func newGraph() *graph { return &graph{off: []uint32{0}} }

// edge records a transition of the state being expanded to state number to.
func (g *graph) edge(to uint32) {
	if g.gaveUp {
		return
	}
	if g.n == 1<<32-1 {
		g.gaveUp, g.off, g.chunks = true, nil, nil
		return
	}
	if g.n%edgeChunk == 0 {
		g.chunks = append(g.chunks, make([]uint32, 0, edgeChunk))
	}
	c := &g.chunks[len(g.chunks)-1]
	*c = append(*c, to)
	g.n++
}

// expanded ends the successors of the state being expanded; the next edges are the next state's.
func (g *graph) expanded() {
	if !g.gaveUp {
		g.off = append(g.off, uint32(g.n))
	}
}

func (g *graph) at(k uint32) uint32 { return g.chunks[k/edgeChunk][k%edgeChunk] }

// acyclic tells whether the graph of states states (numbered 0..states-1, every one expanded) has
// no cycle, by Kahn's topological sort: take away, one at a time, the states that no edge left
// reaches; a cycle is what stays. ok is false when the graph was not kept whole (the caller must
// search another way).
func (g *graph) acyclic(states int) (acyclic, ok bool) {
	if g.gaveUp || len(g.off) != states+1 {
		return false, false
	}
	in := make([]uint32, states)
	for k := uint32(0); uint64(k) < g.n; k++ {
		in[g.at(k)]++
	}
	ready := make([]uint32, 0, 1024)
	for i, d := range in {
		if d == 0 {
			ready = append(ready, uint32(i))
		}
	}
	done := 0
	for len(ready) > 0 {
		i := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		done++
		for k := g.off[i]; k < g.off[i+1]; k++ {
			t := g.at(k)
			if in[t]--; in[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	return done == states, true
}
