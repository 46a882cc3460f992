package election

import "fmt"

// The optional machine interfaces: what a machine may offer beyond Machine, each a small interface
// a driver finds with a type assertion (as hashicorp/raft's WithPreVote and WithClose extend its
// Transport). They are declared here, once; the drivers (node, sim, explore) assert them and keep no
// private copies.
//
//	WithStepInto  Step into a buffer the driver reuses (bully, the ring core, RSDP)
//	WithEpoch     the election epoch of a ring machine (the ring core), for explore's reduction
//	WithLate      the late messages a synchronizer counted (the synchronizers), for explore's report
//	Reactor       what a message on its way may make the machine send (bully), for explore's
//	NewsReactor   partial-order reduction on a mesh

// WithStepInto is a machine that can append its effects to a buffer the driver reuses: the driver
// carries the effects out before its next call, and spares an allocation per input. Step must be
// StepInto(nil, in).
type WithStepInto interface {
	StepInto(dst []Effect, in Input) []Effect
}

// WithEpoch is a ring machine that tells the election epoch it is in: 0 before any, -1 for a
// restarted node that has not learnt it yet. While every node and every message in flight is in one
// epoch, no message can arrive stale; the explorer's reduction leans on it (explore.oneEpoch).
type WithEpoch interface {
	Epoch() int
}

// WithLate is a synchronizer that counts the algorithm messages that arrived after their receiver
// had started the pulse that should have taken them (they were not given to the algorithm); the
// explorer reports the nodes where it is not zero.
type WithLate interface {
	Late() int
}

// Reaction is what handling a message may make a machine send (see Reactor).
type Reaction uint8

const (
	// ReactAny: anything, to anyone.
	ReactAny Reaction = iota
	// ReactAnswer: messages back to the message's sender alone, which the sender handles without
	// sending anything (ReactNone).
	ReactAnswer
	// ReactNone: nothing.
	ReactNone
)

// String is the constant's name, as the explorer's messages give it.
func (r Reaction) String() string {
	switch r {
	case ReactAny:
		return "ReactAny"
	case ReactAnswer:
		return "ReactAnswer"
	case ReactNone:
		return "ReactNone"
	}
	return fmt.Sprintf("Reaction(%d)", uint8(r))
}

// Reactor is a machine that tells what a message on its way to it may make it send: in the state
// it is in, and in every state it may reach before the message arrives. The explorer's partial-order
// reduction on a mesh rests on it (it tells who may send to whom), and the explorer holds every
// send it makes to it, against the declaration read as the message is delivered, and every
// declaration for a message still on its way to not grow across a step (Bully's do not: rounds
// only grow).
type Reactor interface {
	Reaction(from int, m Message) Reaction
}

// NewsReactor is a Reactor that also tells what the news that peer p is gone (InSuspect from p,
// as a broken connection brings it: behind what p sent before it) may make it send, once the
// messages ahead of the news on p's connection, ahead, have been handled: ReactNone or ReactAny.
// Like Reaction, it must hold in the state the machine is in and in every state it may reach
// before the news arrives, no other news arriving meanwhile; the explorer holds it to both, and
// the reduction on a mesh leans on it after the last crash (the news of a crash reaches every
// node, and a node that may do anything on it holds the reduction up until it has read it).
type NewsReactor interface {
	Reactor
	SuspectReaction(p int, ahead []Message) Reaction
}

var (
	_ WithStepInto = (*bully)(nil)
	_ WithStepInto = (*ringCore)(nil)
	_ WithStepInto = (*rsdp)(nil)
	_ WithEpoch    = (*ringCore)(nil)
	_ WithLate     = (*pulser)(nil)
	_ NewsReactor  = (*bully)(nil)
)
