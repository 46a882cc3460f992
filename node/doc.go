// Package node is one node process of a leaderlab cluster (`leaderlab node --run DIR --id K`).
//
// It reads DIR/cluster.json, opens its links (wire.TCP: one TCP connection per directed edge, UDP for
// heartbeats) and drives an election state machine from a single event-loop goroutine: every input —
// a frame from a peer, a heartbeat, a timer, a link that broke, a control request — is funnelled into
// the loop as a closure, fed to the machine, and the machine's effects are carried out in order
// (send, timers, elect/leader, the heartbeat plan). Every event is appended to DIR/nodes/<id>.jsonl
// with one write per line before its effect happens (a send is logged before its frame is queued),
// so a SIGKILL loses at most a torn last line.
//
// Effects (effects.go) are carried out here for the process that ships: a send is logged and
// written to the transport (a socket, or the simulator's in-memory one: sim.Cluster runs this very
// code), a timer is the World's, elect/leader/pulse are log events, and the heartbeat plan goes to
// the failure detector. The two other interpreters of election's effects differ for reasons of their
// own, stated in their package comments: sim.Sim drives the bare machines without a node around them
// (no detector, no links), and the explorer turns a step into a successor state it can fork (links
// as FIFO queues in the state, timers as deadlines, no log).
//
// Clocks: every line carries the incarnation's Lamport clock (lc); when cluster.json's
// options.vclock is "on" (the launcher's --vclock), it also carries the vector clock (vc), which
// travels in every message's envelope (vclock.go has the rules).
//
// Start-up: the node links to its topology neighbours, prints "ready <id> <inc>" on stdout and, in
// its first incarnation, waits for the launcher's "begin" control request so that every initiator
// starts together; a restarted incarnation begins at once, as a recovered process does.
//
// The failure detector follows the machine's plan: heartbeats to the peers it names every
// heartbeat interval; a watched peer silent for the timeout is suspected, and so is a peer whose link
// broke and whose re-dial was refused (a SIGKILLed process's sockets close at once).
//
// Link rules (the chaos agent's "rules" control request) hold what arrives, as Maelstrom does:
// every frame and heartbeat from a peer passes that peer's rules on the loop before it is delivered
// — blocked or lost (a drop event for a frame, a counter for a heartbeat), delayed in order (or not,
// with reorder), duplicated — drawn from random streams seeded by the run's seed (netem.go).
package node
