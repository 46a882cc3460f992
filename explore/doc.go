// Package explore is the model checker: it explores, breadth-first, every order of what can happen
// to a small cluster — deliveries, timer firings, the failure detector's news, heartbeat claims,
// crashes, restarts, a partition and its heal — over package election's machines, the code the
// node processes run, and judges each state by the properties (properties.go). A violation's
// shortest trace is replayed by sim.Sim in scripted mode into a run directory the checker reads
// (trace.go). docs/explorer.md is the user's chapter.
//
// The model: a state (state, nodeState) holds every node's machine, its timers as deadlines, its
// detector's view (suspects, the heartbeat plan), and every directed link as a FIFO queue of what is
// on its way; the transitions (transitions.go) are the enabled events in a fixed order, each making
// a successor. The checker: search.go (breadth-first, by levels: level.go), seen.go (the
// fingerprints of states seen), reduction.go (partial-order reduction: which transitions need not
// be interleaved), cycle.go (whether the reduced graph has a cycle: ElectionWillEnd).
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
