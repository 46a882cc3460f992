package logs

import (
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// Event is one line of a node's event log (DESIGN.md, "The event log"). Field names and meanings are
// the contract; zero values are omitted, which is safe because node IDs start at 1.
type Event struct {
	TS   int64  `json:"ts"`   // Unix nanoseconds
	Node int    `json:"node"` // the node that wrote the line
	Inc  int    `json:"inc"`  // its incarnation, from 1
	LC   uint64 `json:"lc"`   // its Lamport clock after the event
	Ev   string `json:"ev"`   // start, send, recv, drop, suspect, trust, elect, leader, stop, stats

	Algo   string            `json:"algo,omitempty"`   // start
	Peers  []int             `json:"peers,omitempty"`  // start: the peers it links to
	Pid    int               `json:"pid,omitempty"`    // start
	To     int               `json:"to,omitempty"`     // send, drop
	From   int               `json:"from,omitempty"`   // recv, drop
	Msg    *election.Message `json:"msg,omitempty"`    // send, recv, drop
	Reason string            `json:"reason,omitempty"` // drop, stop
	Peer   int               `json:"peer,omitempty"`   // suspect, trust
	Round  int               `json:"round,omitempty"`  // elect (optional)
	Leader int               `json:"leader,omitempty"` // leader
	Stats  *Stats            `json:"stats,omitempty"`  // stats
}

// The values of Event.Ev.
const (
	EvStart   = "start"
	EvSend    = "send"
	EvRecv    = "recv"
	EvDrop    = "drop"
	EvSuspect = "suspect"
	EvTrust   = "trust"
	EvElect   = "elect"
	EvLeader  = "leader"
	EvStop    = "stop"
	EvStats   = "stats"
)

// Stats are a node's counters, carried by periodic `stats` events and one at `stop`. Heartbeats are
// counted here instead of being logged one by one.
type Stats struct {
	HeartbeatsSent int64 `json:"hb_sent"`
	HeartbeatsRecv int64 `json:"hb_recv"`
	MsgsSent       int64 `json:"msgs_sent"`
	MsgsRecv       int64 `json:"msgs_recv"`
	Drops          int64 `json:"drops"`
}

// ChaosRecord is one line of chaos.jsonl: a fault as it was applied.
type ChaosRecord struct {
	TS      int64  `json:"ts"`              // when it was applied (Unix ns)
	Op      string `json:"op"`              // kill, restart, pause, resume, partition, heal, link
	Targets []int  `json:"targets"`         // resolved node IDs
	Step    string `json:"step,omitempty"`  // the schedule step it came from, as written
	At      int64  `json:"at_ns"`           // the step's offset from the cluster's begin, ns
	Error   string `json:"error,omitempty"` // set when the action could not be carried out
	// Groups is a partition's sides (partition only).
	Groups [][]int `json:"groups,omitempty"`
}

// LaunchRecord is one line of launcher.jsonl: the life of the processes the launcher started.
type LaunchRecord struct {
	TS     int64  `json:"ts"`
	Ev     string `json:"ev"`               // spawned, ready, begin, exited, stopping, end, error
	Node   int    `json:"node,omitempty"`   // spawned, ready, exited
	Inc    int    `json:"inc,omitempty"`    // spawned, ready, exited
	Pid    int    `json:"pid,omitempty"`    // spawned, exited
	Code   *int   `json:"code,omitempty"`   // exited normally with this code
	Signal string `json:"signal,omitempty"` // exited on this signal (e.g. "killed")
	Detail string `json:"detail,omitempty"`
}

// The values of LaunchRecord.Ev.
const (
	LaunchSpawned  = "spawned"  // a node process was started
	LaunchReady    = "ready"    // it reported that it is up and linked
	LaunchBegin    = "begin"    // every node was told to begin: the run's time origin
	LaunchExited   = "exited"   // a node process ended
	LaunchStopping = "stopping" // the launcher began the orderly stop: the end of the observed run
	LaunchEnd      = "end"      // every process is accounted for
	LaunchError    = "error"    // the launcher gave up (the run is not valid)
)

// NodeLog is one node's event log, every incarnation in file order.
type NodeLog struct {
	Node   int
	Events []Event
	// Line[i] is the 1-based line number of Events[i] in the file; nil for a log built in memory.
	Line []int
	// Torn lists the torn lines the reader accepted: the last line of a killed incarnation.
	Torn []TornLine
}

// TornLine is a line cut short by a SIGKILL.
type TornLine struct {
	Line int // 1-based line number in the file
	Inc  int // the incarnation it ended
}

// Run is everything the checker reads: loaded from a run directory, or built in memory by the
// simulator.
type Run struct {
	Dir      string
	Cluster  rundir.Cluster
	Nodes    map[int]*NodeLog
	Chaos    []ChaosRecord
	Launcher []LaunchRecord
}
