package sim

import (
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/election"
)

// KindCount counts the messages of one kind since the start (or the last ResetCounts): sent (every
// send event), delivered (recv events) and dropped (refused, or lost in flight to a node that died).
type KindCount struct {
	Kind      string
	Sent      int
	Delivered int
	Dropped   int
}

// count is the index of kind's counters (made on first use; never removed, so that messages in
// flight keep theirs).
func (s *Sim) count(kind string) int32 {
	for i := range s.kinds {
		if s.kinds[i].Kind == kind {
			return int32(i)
		}
	}
	s.kinds = append(s.kinds, KindCount{Kind: kind})
	return int32(len(s.kinds) - 1)
}

// Counts lists the message counters by kind, sorted by kind.
func (s *Sim) Counts() []KindCount {
	out := slices.DeleteFunc(slices.Clone(s.kinds), func(k KindCount) bool { return k == KindCount{Kind: k.Kind} })
	slices.SortFunc(out, func(a, b KindCount) int { return strings.Compare(a.Kind, b.Kind) })
	return out
}

// Sent is the number of messages of kind sent so far.
func (s *Sim) Sent(kind string) int { return s.lookup(kind).Sent }

// Delivered is the number of messages of kind delivered so far.
func (s *Sim) Delivered(kind string) int { return s.lookup(kind).Delivered }

// Dropped is the number of messages of kind dropped so far.
func (s *Sim) Dropped(kind string) int { return s.lookup(kind).Dropped }

// Messages is the number of messages of every kind sent so far.
func (s *Sim) Messages() int {
	t := 0
	for _, k := range s.kinds {
		t += k.Sent
	}
	return t
}

func (s *Sim) lookup(kind string) KindCount {
	for _, k := range s.kinds {
		if k.Kind == kind {
			return k
		}
	}
	return KindCount{Kind: kind}
}

// ResetCounts sets every message counter to zero (a story counts one phase at a time).
func (s *Sim) ResetCounts() {
	for i := range s.kinds {
		s.kinds[i] = KindCount{Kind: s.kinds[i].Kind}
	}
}

// Leader is node id's belief (0 for ⊥, or when it is killed).
func (s *Sim) Leader(id int) int {
	if n := s.node(id); n != nil && n.alive {
		return n.m.Leader()
	}
	return 0
}

// Participant tells whether node id is running an election.
func (s *Sim) Participant(id int) bool {
	n := s.node(id)
	return n != nil && n.alive && n.m.Participant()
}

// Alive tells whether node id's process runs (paused or not).
func (s *Sim) Alive(id int) bool { n := s.node(id); return n != nil && n.alive }

// Paused tells whether node id is paused.
func (s *Sim) Paused(id int) bool { n := s.node(id); return n != nil && n.alive && n.paused }

// Incarnation is node id's current (or last) incarnation.
func (s *Sim) Incarnation(id int) int {
	if n := s.node(id); n != nil {
		return n.inc
	}
	return 0
}

// Machine is node id's current state machine (nil when it is killed), for tests that look inside.
func (s *Sim) Machine(id int) election.Machine {
	if n := s.node(id); n != nil && n.alive {
		return n.m
	}
	return nil
}

// Converged tells whether every live node (paused ones too) believes in the highest live ID and
// that node believes in itself — the checker's agreement — and returns that ID.
func (s *Sim) Converged() (int, bool) {
	top := 0
	for _, id := range s.ids {
		if s.nodes[id].alive {
			top = id
		}
	}
	if top == 0 {
		return 0, false
	}
	for _, id := range s.ids {
		if n := s.nodes[id]; n.alive && (n.m.Leader() != top || n.m.Participant()) {
			return top, false
		}
	}
	return top, true
}

func (s *Sim) node(id int) *node {
	if id < 1 || id > s.cfg.N {
		return nil
	}
	return s.nodes[id]
}
