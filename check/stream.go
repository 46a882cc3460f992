package check

// The run in time order, streamed: a k-way merge of the node logs, each read an event at a time,
// in the order the checker has always judged a run in — by time, then node ID, then place in the
// node's log — with each node's times made non-decreasing along its file (a clock that steps back
// does not reorder a file) and, where the wall clocks of different hosts put a recv before its
// send, the recv (and its node's later events) moved to the send's time, as the logical clocks
// say. Memory is one event per node, the events of one instant, and the recvs waiting for their
// send.

import (
	"container/heap"
	"io"
	"math"
	"slices"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// mEvent is one event in the merged order: a copy of the log's event (its msg too), its time in the
// order, its node and its place in the node's log.
type mEvent struct {
	logs.Event
	msg  election.Message
	t    int64
	node int
	i    int // index in the node's log
	line int // 1-based line in the file; 0 for a log built in memory without line numbers
}

func (e *mEvent) set(src *logs.Event) {
	e.Event = *src
	if src.Msg != nil {
		e.msg = *src.Msg
		e.Msg = &e.msg
	}
}

// head is a node's next event in the merge.
type head struct {
	node int
	r    logs.EventReader
	e    *logs.Event // the reader's, valid until its next call
	line int
	i    int
	t    int64 // the event's time in the order: max(its ts, the node's previous time)
	// t0 is t before a recv waited for its send.
	t0    int64
	ready bool // a recv whose send came: not to wait again
}

type headHeap []*head

func (h headHeap) Len() int { return len(h) }
func (h headHeap) Less(a, b int) bool {
	return h[a].t < h[b].t || (h[a].t == h[b].t && h[a].node < h[b].node)
}
func (h headHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *headHeap) Push(x any)   { *h = append(*h, x.(*head)) }
func (h *headHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

type outHeap []*mEvent

func (h outHeap) Len() int { return len(h) }
func (h outHeap) Less(a, b int) bool {
	x, y := h[a], h[b]
	if x.t != y.t {
		return x.t < y.t
	}
	if x.node != y.node {
		return x.node < y.node
	}
	return x.i < y.i
}
func (h outHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *outHeap) Push(x any)   { *h = append(*h, x.(*mEvent)) }
func (h *outHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// merger hands out the cluster's events an instant at a time. Without causal, each node's next
// event is a head in a heap by (time, node): its pop order is the order. With causal (the run has a
// recv that the wall clocks put before its send), a recv whose send is still to come waits, out of
// the heap, until the send is handed out; it then takes the send's time. Events are held back until
// no waiting recv can come before them, and handed out by (time, node, place), as the sorted order
// of the moved times gives them.
type merger struct {
	heads  []*head
	h      headHeap
	causal bool
	sends  *sentSet
	em     *emitted
	wait   map[string][]*head // recvs waiting for the send of a msg.id
	nwait  int
	out    outHeap
	lastT  int64
	buf    []*mEvent
	free   []*mEvent
	torn   map[int][]logs.TornLine
	// moved counts the recvs moved to their send's time, and most is the furthest one moved.
	moved int
	most  int64
	err   error
}

// newMerger opens the logs of the cluster's nodes that have one. causal needs the run's sends.
func newMerger(s *logs.Stream, ids []int, causal bool, sends *sentSet) (*merger, error) {
	g := &merger{causal: causal, sends: sends, em: newEmitted(), wait: map[string][]*head{}, torn: map[int][]logs.TornLine{}}
	have := map[int]bool{}
	for _, id := range s.Nodes {
		have[id] = true
	}
	for _, id := range ids {
		if !have[id] {
			continue
		}
		r, err := s.Node(id)
		if err != nil {
			g.close()
			return nil, err
		}
		hd := &head{node: id, r: r, i: -1}
		g.heads = append(g.heads, hd)
		if g.advance(hd, math.MinInt64) {
			g.h = append(g.h, hd)
		}
		if g.err != nil {
			g.close()
			return nil, g.err
		}
	}
	heap.Init(&g.h)
	return g, nil
}

func (g *merger) close() {
	for _, hd := range g.heads {
		hd.r.Close()
	}
}

// advance reads a node's next event, whose time is at least prev; false at the end of its log.
func (g *merger) advance(hd *head, prev int64) bool {
	e, line, err := hd.r.Next()
	if err != nil {
		if err == io.EOF {
			g.torn[hd.node] = hd.r.Torn()
		} else if g.err == nil {
			g.err = err
		}
		hd.e = nil
		return false
	}
	hd.e, hd.line, hd.i = e, line, hd.i+1
	hd.t, hd.ready = max(e.TS, prev), false
	return true
}

func (g *merger) take(hd *head) *mEvent {
	var me *mEvent
	if n := len(g.free); n > 0 {
		me, g.free = g.free[n-1], g.free[:n-1]
	} else {
		me = &mEvent{}
	}
	me.set(hd.e)
	me.t, me.node, me.i, me.line = hd.t, hd.node, hd.i, hd.line
	if g.causal {
		g.em.saw(me)
	}
	return me
}

// instant returns the events of the next instant of the order, in order, valid until the next
// call; io.EOF after the last. An error is a log's (the caller reports logs.Stream.Err).
func (g *merger) instant() (int64, []*mEvent, error) {
	g.free = append(g.free, g.buf...)
	g.buf = g.buf[:0]
	if g.causal {
		return g.causalInstant()
	}
	if g.err != nil {
		return 0, nil, g.err
	}
	if len(g.h) == 0 {
		return 0, nil, io.EOF
	}
	t := g.h[0].t
	for len(g.h) > 0 && g.h[0].t == t {
		hd := g.h[0]
		g.buf = append(g.buf, g.take(hd))
		if g.advance(hd, t) {
			heap.Fix(&g.h, 0)
		} else {
			heap.Pop(&g.h)
		}
		if g.err != nil {
			return 0, nil, g.err
		}
	}
	return t, g.buf, nil
}

func (g *merger) causalInstant() (int64, []*mEvent, error) {
	for {
		if g.err != nil {
			return 0, nil, g.err
		}
		if len(g.out) > 0 {
			t := g.out[0].t
			if (len(g.h) == 0 && g.nwait == 0) || (len(g.h) > 0 && t < g.h[0].t) {
				for len(g.out) > 0 && g.out[0].t == t {
					g.buf = append(g.buf, heap.Pop(&g.out).(*mEvent))
				}
				return t, g.buf, nil
			}
		}
		if len(g.h) == 0 {
			if g.nwait == 0 {
				return 0, nil, io.EOF
			}
			// Every node left waits for a send that comes after a recv of its own: no clock can
			// order that. The earliest waits no longer, at the latest time handed out.
			var first *head
			for _, hs := range g.wait {
				for _, hd := range hs {
					if first == nil || hd.t0 < first.t0 || (hd.t0 == first.t0 && hd.node < first.node) {
						first = hd
					}
				}
			}
			g.release(first, max(first.t0, g.lastT), false)
			continue
		}
		hd := g.h[0]
		e := hd.e
		if e.Ev == logs.EvRecv && e.Msg != nil && !hd.ready {
			if m := g.sends.match(e.Msg.ID); m.ok && m.node != hd.node && !g.em.has(m) {
				heap.Pop(&g.h)
				hd.t0 = hd.t
				g.wait[e.Msg.ID] = append(g.wait[e.Msg.ID], hd)
				g.nwait++
				continue
			}
		}
		me := g.take(hd)
		g.lastT = max(g.lastT, me.t)
		heap.Push(&g.out, me)
		if g.advance(hd, me.t) {
			heap.Fix(&g.h, 0)
		} else {
			heap.Pop(&g.h)
		}
		if me.Ev == logs.EvSend && me.Msg != nil {
			if hs := g.wait[me.Msg.ID]; len(hs) > 0 && g.em.has(g.sends.match(me.Msg.ID)) {
				delete(g.wait, me.Msg.ID)
				for _, w := range hs {
					g.release(w, max(w.t0, me.t), true)
				}
			}
		}
	}
}

// release puts a waiting recv back in the heap at time t.
func (g *merger) release(hd *head, t int64, bySend bool) {
	if hs := g.wait[hd.e.Msg.ID]; len(hs) > 0 {
		g.wait[hd.e.Msg.ID] = slices.DeleteFunc(hs, func(x *head) bool { return x == hd })
		if len(g.wait[hd.e.Msg.ID]) == 0 {
			delete(g.wait, hd.e.Msg.ID)
		}
	}
	g.nwait--
	if bySend && t > hd.t0 {
		g.moved++
		g.most = max(g.most, t-hd.t0)
	}
	hd.t, hd.ready = t, true
	heap.Push(&g.h, hd)
}
