package check

// The second pass: the run played in time order, instant by instant — the timeline's changes, then
// the instant's events — and each new point and each event handed to the properties, which judge
// as they go and keep only what their verdict needs. A question about the state at a moment (who
// was live when a rule was sent, who led just before a fault) is a probe, answered with the point
// in force at that moment once the play has passed it.

import (
	"container/heap"
	"io"
	"math"
)

// probeAt is a question about the point in force at t (nil before the first point).
type probeAt struct {
	t   int64
	seq int
	fn  func(*point)
}

type probeHeap []probeAt

func (h probeHeap) Len() int { return len(h) }
func (h probeHeap) Less(a, b int) bool {
	return h[a].t < h[b].t || (h[a].t == h[b].t && h[a].seq < h[b].seq)
}
func (h probeHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *probeHeap) Push(x any)   { *h = append(*h, x.(probeAt)) }
func (h *probeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// player plays the run once.
type player struct {
	c      *checker
	sw     *sweeper
	probes probeHeap
	seq    int
	// last is the latest point, beforeLast the one before it: a point's stretch is known when the
	// next one comes.
	last, beforeLast *point
}

// probe asks fn about the point in force at t (after every change at t). A probe may ask another,
// at t or later.
func (p *player) probe(t int64, fn func(*point)) {
	p.seq++
	heap.Push(&p.probes, probeAt{t: t, seq: p.seq, fn: fn})
}

// answer answers the probes about moments before t: no change before t is still to come.
func (p *player) answer(before int64) {
	for len(p.probes) > 0 && p.probes[0].t < before {
		q := heap.Pop(&p.probes).(probeAt)
		q.fn(p.sw.pt)
	}
}

// play makes the second pass.
func (c *checker) play() error {
	p := &player{c: c, sw: newSweeper(c.model)}
	c.sweep = p.sw
	c.startStreams(p)
	g, err := newMerger(c.stream, c.ids, c.causal, c.sends)
	if err != nil {
		return c.logsErr(err)
	}
	defer g.close()
	evT, evs, err := g.instant()
	evOK := err == nil
	if err != nil && err != io.EOF {
		return c.logsErr(err)
	}
	for {
		t, ok := p.sw.nextStatic()
		switch {
		case !ok && !evOK:
		case !ok || (evOK && evT < t):
			t, ok = evT, true
		}
		if !ok {
			break
		}
		p.answer(t)
		var these []*mEvent
		if evOK && evT == t {
			these = evs
		}
		if pt := p.sw.instant(t, these); pt != nil {
			if p.last != nil {
				c.pointStretch(p.last, p.beforeLast, pt.t, true)
			}
			p.beforeLast, p.last = p.last, pt
			c.newPoint(pt)
		}
		if these != nil {
			c.onEvents(t, these)
			evT, evs, err = g.instant()
			evOK = err == nil
			if err != nil && err != io.EOF {
				return c.logsErr(err)
			}
		}
	}
	p.answer(math.MaxInt64)
	// The last point's stretch runs to the end of everything.
	if p.last != nil {
		c.pointStretch(p.last, p.beforeLast, 0, false)
	}
	p.sw.finish()
	c.finishStreams()
	return nil
}
