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
	"slices"
	"strconv"
	"strings"

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

// hostKey names a node incarnation: the "a.b" of a msg.id "a.b.seq".
type hostKey struct{ node, inc int }

// structuredID reads a msg.id as the nodes make them, "<node>.<inc>.<seq>" (decimal, no leading
// zeros, each at least 1), so that the sends of one incarnation, numbered 1, 2, 3, ..., are kept as
// a range instead of one string each.
func structuredID(id string) (hostKey, uint64, bool) {
	a, rest, ok1 := strings.Cut(id, ".")
	b, c, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 {
		return hostKey{}, 0, false
	}
	node, ok3 := positive(a)
	inc, ok4 := positive(b)
	seq, ok5 := positive(c)
	if !ok3 || !ok4 || !ok5 || node > 1<<31 || inc > 1<<31 {
		return hostKey{}, 0, false
	}
	return hostKey{int(node), int(inc)}, seq, true
}

// positive reads a decimal number of at least 1 written without a sign or leading zeros.
func positive(s string) (uint64, bool) {
	if s == "" || s[0] == '0' || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// sendClass sorts a node's sends, along its log, into the ones kept as ranges (a msg.id of the
// node's own, "<node>.<inc>.<seq>", whose seq grows along the log, as the nodes number them) and
// the others, kept by their string. Each reader of the logs keeps one, so that it sorts a send as
// every other reader does.
type sendClass struct{ last map[hostKey]uint64 }

func newSendClass() *sendClass { return &sendClass{last: map[hostKey]uint64{}} }

func (s *sendClass) ranged(node int, id string) (hostKey, uint64, bool) {
	h, seq, ok := structuredID(id)
	if !ok || h.node != node || seq <= s.last[h] {
		return hostKey{}, 0, false
	}
	s.last[h] = seq
	return h, seq, true
}

// seqRuns is a set of sequence numbers, added in increasing order, as ranges.
type seqRuns [][2]uint64

func (r *seqRuns) add(seq uint64) {
	if n := len(*r); n > 0 && (*r)[n-1][1]+1 == seq {
		(*r)[n-1][1] = seq
		return
	}
	*r = append(*r, [2]uint64{seq, seq})
}

func (r seqRuns) has(seq uint64) bool {
	i, _ := slices.BinarySearchFunc(r, seq, func(x [2]uint64, s uint64) int {
		switch {
		case x[1] < s:
			return -1
		case x[0] > s:
			return 1
		}
		return 0
	})
	return i < len(r) && r[i][0] <= seq && seq <= r[i][1]
}

// sendRef is a send event: node's event i.
type sendRef struct{ node, i int }

// sentSet holds every msg.id the cluster's nodes sent, and which send a recv is matched with: the
// first in (node ID, place in the log) order, as when a run reuses an id. The ids a node numbers as
// it should are ranges; only the others take memory of their own.
type sentSet struct {
	ranges map[hostKey]*seqRuns
	other  map[string]sendRef // the first send of every other id
	// count counts every send of an other id; a ranged id sent again (by another node, or out
	// of its order) is an other send too, so ids sent twice are found in other.
	count map[string]int
	// first is the first send of every id some node sent twice, when the run has any (dups).
	first map[string]sendRef
	dups  int // sends that reused an id
}

func newSentSet() *sentSet {
	return &sentSet{ranges: map[hostKey]*seqRuns{}, other: map[string]sendRef{}, count: map[string]int{}}
}

// add records a send of node's event i (ranged: sorted so by the reader's sendClass).
func (s *sentSet) add(node, i int, id string, h hostKey, seq uint64, ranged bool) {
	if ranged {
		r := s.ranges[h]
		if r == nil {
			r = &seqRuns{}
			s.ranges[h] = r
		}
		r.add(seq)
		return
	}
	s.count[id]++
	if old, ok := s.other[id]; !ok || node < old.node || (node == old.node && i < old.i) {
		s.other[id] = sendRef{node, i}
	}
}

// has tells whether any node sent id so far.
func (s *sentSet) has(id string) bool {
	if _, ok := s.other[id]; ok {
		return true
	}
	h, seq, ok := structuredID(id)
	if !ok {
		return false
	}
	r := s.ranges[h]
	return r != nil && r.has(seq)
}

// reusedIDs lists the ids sent more than once: an other id sent twice, or an id both ranged and
// sent again as an other send.
func (s *sentSet) reusedIDs() map[string]bool {
	out := map[string]bool{}
	for id := range s.other {
		if s.count[id] > 1 {
			out[id] = true
		} else if h, seq, ok := structuredID(id); ok {
			if r := s.ranges[h]; r != nil && r.has(seq) {
				out[id] = true
			}
		}
	}
	return out
}

// match is the send a recv of id is matched with: a ranged send (host's seq, its index not kept)
// or ref; ok false when no node sent id.
type match struct {
	ok   bool
	node int
	ref  int // the send's index in node's log; -1 for a ranged send
	host hostKey
	seq  uint64
}

func (s *sentSet) match(id string) match {
	if r, ok := s.first[id]; ok {
		return match{ok: true, node: r.node, ref: r.i}
	}
	o, isOther := s.other[id]
	if h, seq, ok := structuredID(id); ok {
		if r := s.ranges[h]; r != nil && r.has(seq) && (!isOther || h.node <= o.node) {
			return match{ok: true, node: h.node, ref: -1, host: h, seq: seq}
		}
	}
	if isOther {
		return match{ok: true, node: o.node, ref: o.i}
	}
	return match{}
}

// emitted tracks which sends a pass of the merged order has handed out, to tell whether a recv's
// send came before it.
type emitted struct {
	class  *sendClass
	maxSeq map[hostKey]uint64
	pos    map[int]int // node -> events handed out
}

func newEmitted() *emitted {
	return &emitted{class: newSendClass(), maxSeq: map[hostKey]uint64{}, pos: map[int]int{}}
}

// saw records an event handed out.
func (em *emitted) saw(e *mEvent) {
	em.pos[e.node] = e.i + 1
	if e.Ev == logs.EvSend && e.Msg != nil {
		if h, seq, ok := em.class.ranged(e.node, e.Msg.ID); ok {
			em.maxSeq[h] = seq
		}
	}
}

func (em *emitted) has(m match) bool {
	if m.ref >= 0 {
		return em.pos[m.node] > m.ref
	}
	return em.maxSeq[m.host] >= m.seq
}

// head is a node's next event in the merge.
type head struct {
	node int
	r    logs.EventReader
	e    *logs.Event // the reader's, valid until its next call
	line int
	i    int
	t    int64 // the event's time in the order: max(its ts, the node's previous time)
	// t0 is t before a recv waited for its send; waiting: it waits.
	t0      int64
	waiting bool
	ready   bool // a recv whose send came: not to wait again
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
		if g.advance(hd, 0) {
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
				hd.waiting, hd.t0 = true, hd.t
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
	hd.t, hd.waiting, hd.ready = t, false, true
	heap.Push(&g.h, hd)
}
