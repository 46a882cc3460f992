package check

// The run's message ids: which msg.ids were sent, and which send a recv is matched with (the
// first in node ID and log order, when a run reuses an id). The nodes number their sends 1, 2,
// 3, ... per incarnation ("<node>.<inc>.<seq>"), so an incarnation's ids are kept as ranges: the
// set takes memory for the incarnations, not for the messages.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

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
