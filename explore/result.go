package explore

import "time"

// Result is what a search found.
type Result struct {
	Config Config
	// Distinct states found, transitions taken (edges, including those to states seen before),
	// the depth of the deepest state (the diameter, from the initial state), the quiescent states,
	// and the most messages in flight in one state.
	Distinct    int
	Transitions int64
	Depth       int
	Quiescent   int
	MaxInFlight int
	// Complete: every reachable state was explored; false when MaxStates stopped the search (or a
	// violation did).
	Complete bool
	// StoppedBy says what stopped an incomplete search that found no violation: "max-states",
	// "max-depth" (a state at Config.MaxDepth had transitions), "memory" (what does not spill
	// outgrew Config.MaxMemory; with CycleCheck "memory", every state was explored and judged but
	// the search for a fair cycle, which holds every state in memory, would not fit),
	// "interrupted" (Config.Stop; with CycleCheck "interrupted" too when every state was explored
	// but the cycle search was not done), "broken" (see Broken), "disk" (a spill file failed:
	// SpillError), or "bitstate" (a bitstate search ran to its end: partial by its nature).
	StoppedBy string
	// CycleCheck tells how ElectionWillEnd's cycles were ruled out: "acyclic" (every transition led
	// deeper, so there is no cycle), "reduced" (the reduced graph has none at all, which proves the
	// full graph has none: see checker.FindCycle; a topological sort of the graph the search walked tells,
	// and when that graph has a cycle, a depth-first search of the reduced graph looks for a fair
	// one), "searched" (a depth-first search over every interleaving), "memory" (not judged:
	// see StoppedBy), or "" (not judged: an incomplete or bitstate search).
	CycleCheck string
	// sorted is what the topological sort of the graph walked said, when it ran: "acyclic",
	// "cyclic" (the depth-first search decided), or "not kept".
	sorted string
	// Bound is the algorithm's bound for the configuration (HasBound false: none stated);
	// MostMessages the most messages a fault-free path sent by a quiescent state.
	Bound    int
	HasBound bool
	// Synchronous: the algorithm runs over a synchronizer, and PulseSafety is judged.
	Synchronous  bool
	MostMessages int
	Elapsed      time.Duration
	HeapBytes    uint64
	// Workers is how many goroutines expanded the levels. SpillPeak is the most bytes the search
	// had on disk at once (0: nothing spilled), SpillError the error that stopped it (StoppedBy
	// "disk").
	Workers    int
	SpillPeak  int64
	SpillError string
	// A bitstate search (Config.Bitstate): the share of the bit array's bits set at the end, the
	// chance then that a state never seen is taken as seen and not explored (Omission), and
	// about how many states were lost so (Lost; with what only they lead to).
	BitsSet  float64
	Omission float64
	Lost     float64
	// Violations are the properties found broken, the first (a shortest) trace of each. The
	// search stops at one the algorithm promises; one it does not promise under this
	// configuration (Violation.Limit) is kept and the search goes on, for the others.
	Violations []*Violation
	// Deepest is, for a search stopped by a bound, the path to one of the deepest states found
	// (Property "deepest"): where an unending state space goes.
	Deepest *Violation
	// Broken, when not empty, says that a machine broke an assumption of the partial-order
	// reduction (a ring node sent off its routes): the search stopped, and its counts are not to
	// be trusted. BrokenAt is the path to that send.
	Broken   string
	BrokenAt *Violation
	// NotPromised lists the properties the algorithm does not promise under this configuration,
	// with why (from its declaration).
	NotPromised map[string]string
}

// Violation is a property broken, with the shortest trace to it.
type Violation struct {
	Property string
	Detail   string
	// Limit is non-empty when the algorithm does not promise the property under this
	// configuration: why (its declaration's words).
	Limit string
	// Trace is the path from the initial state; for a cycle, the transitions from CycleAt on lead
	// back to the state at CycleAt (-1: no cycle).
	Trace   []Step
	CycleAt int
	ev      []event
}

// Step is one transition of a trace, as people read it.
type Step struct {
	Event string
	Now   time.Duration
	// Beliefs after it, by ID-1: the leader, 0 for ⊥, -1 for a crashed node.
	Beliefs []int
	ev      event
}

// has tells whether a violation of prop was found.
func (r *Result) has(prop string) bool {
	for _, v := range r.Violations {
		if v.Property == prop {
			return true
		}
	}
	return false
}

// Violation is the first violation of a property the algorithm promises, or nil.
func (r *Result) Violation() *Violation {
	for _, v := range r.Violations {
		if v.Limit == "" {
			return v
		}
	}
	return nil
}
