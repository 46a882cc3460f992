// Package explore is the model checker: it explores, breadth-first, every order of what can happen
// to a small cluster — deliveries, timer firings, the failure detector's news, heartbeat claims,
// crashes, restarts, a partition and its heal — over package election's machines, the code the
// node processes run, and judges each state by the properties (properties.go). A violation's
// shortest trace is replayed by sim.Sim in scripted mode into a run directory the checker reads
// (trace.go). docs/explorer.md is the user's chapter.
//
// Model and checker, apart, as stateright separates its Model from its checker. Package checker
// (explore/checker) is the search: breadth-first by levels, the fingerprints of the states seen,
// the graph walked and its topological sort, the depth-first search for a cycle that fairness does
// not break, and the paths to what it found. It knows the cluster only through checker.Model, which
// this package's model implements (checked.go):
//
//	model.go        the model (type model: the configuration and what it keeps across states) and
//	                a state (state, nodeState): every node's machine, its timers as deadlines, its
//	                detector's view (suspects, the heartbeat plan), every directed link as a FIFO
//	                queue of what is on its way
//	clone.go        the machines copied and fingerprinted by their types; configuration shared
//	transitions.go  the enabled transitions, in a fixed order, and the successor each makes
//	step.go         a node's step: an input to a copy of its machine, its effects carried out
//	heartbeat.go    the detector's heartbeat rounds
//	reduction.go    partial-order reduction: the persistent sets (which transitions commute is
//	                the model's knowledge of links, routes and the machines' declarations), and
//	                the sends held to what it assumes
//	properties.go   what each state is judged by
//	fingerprint.go  a state's fingerprint, updated by the components a transition changes
//	stow.go         the compact forms of states and transitions in the checker's levels and records
//	counterexample.go, trace.go  a path replayed into a trace, and into a run directory
//
// explore.go is what callers use: Config, New, and Explorer.Run, which runs checker.Run over the
// model and reports its Result (result.go, output.go).
//
// Why the explorer carries out a machine's effects itself (step.go) instead of through package
// node's step: a step here is a function from a state to a successor, not an action on a running
// process. A send is appended to the link's queue in the successor (the queues are forked with the
// state, copy-on-write, and a delivery is a transition the search chooses, not a socket's doing); a
// timer is a deadline in the node's state that the timer transition fires; the heartbeat plan is
// the node's watch sets, read by the detector transitions; elect, leader and pulse write no log (the
// properties read the machines). Machines are copied before they step (clone.go) so that the state
// they came from stays intact, and a step's outcome is cached by the node's fingerprint and the
// input's. The node's interpreter writes to sockets and timers that cannot be forked, and the bare
// simulator's (sim.Sim) schedules deliveries at drawn times on one timeline: neither can enumerate
// the other orders.
package explore
