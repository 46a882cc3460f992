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
