package explore

// What package checker sees of the model: checker.Model's methods, over the model's states and
// transitions, each the model's own function or property under the checker's name.

import "github.com/leaderlab/leaderlab/explore/checker"

var _ checker.Model[*state, event] = (*model)(nil)

// Init is the state after every node's start.
func (x *model) Init() *state {
	x.breach = ""
	return x.initial()
}

// Enabled lists the transitions of s (transitions.go).
func (x *model) Enabled(s *state, out []event) []event { return x.enabled(s, out) }

// Reduce is the partial-order reduction (reduction.go): ample, with the visibility proviso of the
// invariants still judged.
func (x *model) Reduce(s *state, evs []event, found checker.Found) []event {
	var visible func(s, t *state, id int) bool
	if found != nil {
		visible = x.visibility(s, found)
	}
	return x.ample(s, evs, visible)
}

// Next makes the successor of s by ev in the model's scratch state.
func (x *model) Next(s *state, ev event) *state {
	x.breach = ""
	return x.applyScratch(s, ev)
}

// Keep copies a state out of the scratch.
func (x *model) Keep(s *state) *state { return s.clone() }

func (x *model) Fingerprint(s *state) checker.Fingerprint { return s.fp }

// Class: a delivery takes no time; crashes, restarts, a partition and its heal are faults.
func (x *model) Class(ev event) checker.Class {
	switch ev.kind {
	case evDeliver:
		return checker.Instant
	case evCrash, evRestart, evPartition, evHeal:
		return checker.Fault
	}
	return checker.Timed
}

// Broken is a send that broke the reduction's assumption (route, answer, keptPromises) in the last
// transition made.
func (x *model) Broken() string { return x.breach }

// Visit keeps the most messages in flight in a state expanded (the model's or the fork's).
func (x *model) Visit(s *state) {
	x.maxInFlight = max(x.maxInFlight, s.inflight)
	if x.onVisit != nil {
		x.onVisit(s)
	}
}

// Invariant judges UniqueLeader and PulseSafety in a state first reached (properties.go).
func (x *model) Invariant(s *state, found checker.Found) *checker.Violation {
	return x.checkInvariants(s, found)
}

// Edge judges MessageBound: what a fault-free path sent.
func (x *model) Edge(s *state, found checker.Found) *checker.Violation { return x.checkBound(s, found) }

// Quiescent judges a state where nothing more happens without a fault.
func (x *model) Quiescent(s *state) *checker.Violation {
	if x.onQuiescent != nil {
		x.onQuiescent(s)
	}
	return x.checkQuiescent(s)
}

// Endless is ElectionWillEnd broken by a cycle.
func (x *model) Endless(n int) *checker.Violation { return x.checkCycle(n) }

// Restless: a round of heartbeats would change s (heartbeat.go).
func (x *model) Restless(s *state) bool { return x.heartbeatsWould(s, -1) > 0 }

func (x *model) Pack(ev event) uint32  { return x.pack(ev) }
func (x *model) Unpack(p uint32) event { return x.unpack(p) }

// Stower makes the codec of one search's levels (stow.go): its tables new, or a fork's, those of
// the model's last Stower.
func (x *model) Stower() checker.Stower[*state] {
	if !x.isFork {
		x.parts = &parts{}
	}
	return newStower(x.n, x.parts)
}
