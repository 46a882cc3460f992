package checker

// Fingerprint is a state's 128-bit hash. Two states with equal fingerprints are taken as one: the
// chance that two of S distinct states collide is about S²/2^129 (TLC keeps 64 bits).
type Fingerprint [2]uint64

// Class is what fairness makes of a transition.
type Class uint8

const (
	// Instant: a transition that takes no time (a delivery). A cycle of instant transitions alone
	// is a run only while time passing would change none of its states (Model.Restless).
	Instant Class = iota
	// Timed: a transition that moves the clock (a timer firing, heartbeats, a detector's timeout).
	Timed
	// Fault: the environment's choice (a crash, a restart, a partition, its heal). Fairness never
	// owes it, and a state where only faults are enabled is quiescent.
	Fault
)

// Violation is a property broken, as the model judges it; the checker finds the path to it.
type Violation struct {
	Property string
	Detail   string
	// Limit is non-empty when the property is not promised under the model's configuration: why.
	// The search goes on past such a violation, for the others; it stops at one that is promised.
	Limit string
}

// Found tells which properties were found broken so far. A property judged in every state is
// judged no more once it is broken, and a reduced set need not keep it visible.
type Found interface {
	Has(property string) bool
}

// Model is a system as the checker sees it: its states (S) and transitions (T), which the checker
// holds but never looks into, and how each state is judged. The explorer's model of a cluster of
// election machines is one (package explore).
//
// A state from Init or Keep stays valid; one made by Next is valid until the next call of Next or
// Reduce (which may look at successors), one read back by a Stower's Unstow until the next Unstow:
// the model reuses its space, for most successors are states seen before, garbage at once.
type Model[S any, T comparable] interface {
	// Init is the initial state.
	Init() S
	// Enabled appends the transitions enabled in s to out[:0], in a fixed order.
	Enabled(s S, out []T) []T
	// Reduce is the partial-order reduction: a persistent set of trs, the transitions enabled in
	// s, in trs's array, whose exploration reaches every quiescent state that trs reaches and
	// keeps every cycle. Which transitions commute is the model's knowledge. found, when not nil,
	// tells the properties found broken so far: a set that would change what a property still
	// judged in every state reads is not taken (the visibility proviso); nil: none is judged.
	Reduce(s S, trs []T, found Found) []T
	// Next makes the successor of s by t.
	Next(s S, t T) S
	// Keep is a copy of s, a state made by Next, that stays valid.
	Keep(s S) S
	// Fingerprint is s's fingerprint.
	Fingerprint(s S) Fingerprint
	// Class is what fairness makes of t.
	Class(t T) Class
	// Broken is an assumption of the model that the last Next (or Init) broke, "" when none: what
	// the search finds past it is not to be trusted (the explorer's reduction rests on what the
	// machines declare, and holds every step to it).
	Broken() string

	// Visit is told of every state the search expands, in order (the model's own figures).
	Visit(s S)
	// Invariant judges s when it is first reached.
	Invariant(s S, found Found) *Violation
	// Edge judges the path that reached s, at every transition that does (the explorer's message
	// bound: what a fault-free path sent).
	Edge(s S, found Found) *Violation
	// Quiescent judges s, in which only faults are enabled.
	Quiescent(s S) *Violation
	// Endless is the violation that a cycle of n transitions, which fairness does not break, is.
	Endless(n int) *Violation
	// Restless tells whether time passing alone would change s (the explorer's heartbeats, which
	// come every interval whatever is in flight): a cycle of instant transitions through s is then
	// not a run.
	Restless(s S) bool

	// Pack writes t in 32 bits, for the records of the states seen; Unpack reads it back.
	Pack(t T) uint32
	Unpack(p uint32) T
	// Stower makes the codec of one search's levels.
	Stower() Stower[S]
}

// Stower writes states into the search's levels, compactly, and reads them back.
type Stower[S any] interface {
	// Stow appends s to b.
	Stow(b []byte, s S) []byte
	// Unstow reads the state at the start of b and returns it and the rest of b.
	Unstow(b []byte) (S, []byte)
}
