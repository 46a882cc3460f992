package checker

import "fmt"

// graph is the reduced graph that the breadth-first search walks, kept as it goes, so that
// ElectionWillEnd's cycles can be ruled out by a topological sort over numbers instead of a second
// search that makes every transition again (which took as long as the first: Bully at N = 5 with a
// crash, 49.6 M states, 3 min 40 s of breadth-first search and as long again depth-first). States are
// numbered in the order they are found, which is the order the search expands them (level by level,
// each level in the order it was found), so a state's successors are a run of the edges: off[i] to
// off[i+1]. Four bytes an edge and four a state; past their share of Options.MaxMemory, the oldest
// go to disk (spill.go), and the sort maps them back.
type graph struct {
	off    *array[uint32] // off[i]: where state i's successors start in the edges; the last: their count
	edges  *array[uint32] // by the number of the state each leads to
	gaveUp bool           // too many edges to number in 32 bits, or none kept (bitstate)
	err    error
}

const edgeChunk = 1 << 20

// newGraph keeps at most maxMem bytes of the graph in memory (0: no bound).
func newGraph(maxMem int, sp *spill) *graph {
	g := &graph{off: newArray[uint32](edgeChunk, maxMem/3, sp), edges: newArray[uint32](edgeChunk, maxMem-maxMem/3, sp)}
	g.off.push(0)
	return g
}

// edge records a transition of the state being expanded to state number to.
func (g *graph) edge(to uint32) {
	if g.gaveUp {
		return
	}
	if g.edges.Len() == 1<<32-1 {
		g.drop()
		return
	}
	if err := g.edges.push(to); err != nil {
		g.err = err
		g.drop()
	}
}

// expanded ends the successors of the state being expanded; the next edges are the next state's.
func (g *graph) expanded() {
	if g.gaveUp {
		return
	}
	if err := g.off.push(uint32(g.edges.Len())); err != nil {
		g.err = err
		g.drop()
	}
}

// drop gives the graph up: the depth-first search decides.
func (g *graph) drop() {
	g.gaveUp = true
	g.off.close()
	g.edges.close()
}

func (g *graph) bytes() int {
	if g.gaveUp {
		return 0
	}
	return g.off.bytes() + g.edges.bytes()
}

// acyclic tells whether the graph of states states (numbered 0..states-1, every one expanded) has
// no cycle, by Kahn's topological sort: take away, one at a time, the states that no edge left
// reaches; a cycle is what stays. ok is false when the graph was not kept whole (the caller must
// search another way). The counts of edges left into each state take four bytes a state; with
// maxMem (not 0) less than that, they are a mapped file.
func (g *graph) acyclic(states, maxMem int, sp *spill) (acyclic, ok bool, err error) {
	if g.gaveUp || g.off.Len() != uint64(states+1) {
		return false, false, nil
	}
	if err := g.off.mapAll(); err != nil {
		return false, false, err
	}
	defer g.off.unmap()
	if err := g.edges.mapAll(); err != nil {
		return false, false, err
	}
	defer g.edges.unmap()
	var in []uint32
	if maxMem > 0 && states*4 > maxMem {
		m, err := mappedCounts(sp, states)
		if err != nil {
			return false, false, err
		}
		defer m.close()
		in = m.counts
	} else {
		in = make([]uint32, states)
	}
	n := g.edges.Len()
	for k := uint64(0); k < n; k++ {
		in[g.edges.at(k)]++
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
		for k, end := g.off.at(uint64(i)), g.off.at(uint64(i)+1); k < end; k++ {
			t := g.edges.at(uint64(k))
			if in[t]--; in[t] == 0 {
				ready = append(ready, t)
			}
		}
	}
	return done == states, true, nil
}

// counts is a file of four-byte counts mapped into memory, writable.
type counts struct {
	counts []uint32
	data   []byte
	size   int64
	sp     *spill
}

func mappedCounts(sp *spill, n int) (*counts, error) {
	f, err := sp.create("counts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &counts{size: int64(n) * 4, sp: sp}
	if err := f.Truncate(c.size); err != nil {
		return nil, sp.failed(fmt.Errorf("a spill file for the topological sort: %w", err))
	}
	if c.data, err = mmapRW(f, int(c.size)); err != nil {
		return nil, sp.failed(fmt.Errorf("mapping a spill file for the topological sort: %w", err))
	}
	sp.grew(c.size)
	c.counts = u32s(c.data)
	return c, nil
}

func (c *counts) close() {
	munmap(c.data)
	c.sp.grew(-c.size)
}
