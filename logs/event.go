package logs

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// Event is one line of a node's event log (DESIGN.md, "The event log"). Field names and meanings are
// the contract; zero values are omitted, which is safe because node IDs start at 1.
type Event struct {
	TS int64 `json:"ts"` // Unix nanoseconds, true time (the host's clock)
	// PT is the time the node perceived, Unix ns, while a clock fault (chaos "clock") bends its
	// clock; absent otherwise. The checker judges by TS alone.
	PT   int64  `json:"pt,omitempty"`
	Node int    `json:"node"` // the node that wrote the line
	Inc  int    `json:"inc"`  // its incarnation, from 1
	LC   uint64 `json:"lc"`   // its Lamport clock after the event
	Ev   string `json:"ev"`   // start, send, recv, drop, suspect, trust, elect, leader, pulse, stop, stats

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
	Pulse  int               `json:"pulse,omitempty"`  // pulse: the synchronizer's pulse, from 1
	Stats  *Stats            `json:"stats,omitempty"`  // stats

	// VC is the node's vector clock after the event, when the run has vector clocks (cluster.json
	// options.vclock "on"); nil otherwise. It is written last on the line because it is long.
	VC VClock `json:"vc,omitempty"`
}

// VClock is a vector clock: for each host — a node incarnation, named "n<node>.<inc>", because a
// restarted node's clock starts again — how many of that host's events happened before this one or
// are this one. Hosts with no such event are left out. In JSON it is an object in (node, inc)
// order: {"n1.1":3,"n2.1":5,"n10.1":1}.
//
// A node counts its own events other than stats (counters, not happenings, which carry the clock
// unchanged), so the own entry of an incarnation's events runs 1, 2, 3, ...; a send's clock travels
// with the message and a recv takes the element-wise maximum of the two before counting itself.
type VClock []Tick

// Tick is one host's entry of a VClock.
type Tick struct {
	Node, Inc int
	N         uint64
}

// HostName names a node incarnation as vector clocks and exports do: "n3.2".
func HostName(node, inc int) string {
	return "n" + strconv.Itoa(node) + "." + strconv.Itoa(inc)
}

// Get is host (node, inc)'s count, 0 when absent.
func (c VClock) Get(node, inc int) uint64 {
	i, ok := slices.BinarySearchFunc(c, Tick{Node: node, Inc: inc}, cmpHost)
	if !ok {
		return 0
	}
	return c[i].N
}

func cmpHost(a, b Tick) int {
	if a.Node != b.Node {
		return cmp.Compare(a.Node, b.Node)
	}
	return cmp.Compare(a.Inc, b.Inc)
}

// MarshalJSON writes the object with hosts in the clock's order.
func (c VClock) MarshalJSON() ([]byte, error) {
	if c == nil {
		return []byte("null"), nil
	}
	return c.appendJSON(make([]byte, 0, 2+14*len(c))), nil
}

// appendJSON appends the object MarshalJSON writes.
func (c VClock) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, t := range c {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"', 'n')
		b = strconv.AppendInt(b, int64(t.Node), 10)
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(t.Inc), 10)
		b = append(b, '"', ':')
		b = strconv.AppendUint(b, t.N, 10)
	}
	return append(b, '}')
}

// UnmarshalJSON reads the object; hosts must be named n<node>.<inc> with positive numbers and have
// positive counts. The result is in (node, inc) order whatever the object's order.
func (c *VClock) UnmarshalJSON(b []byte) error {
	var m map[string]uint64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("vc: %w", err)
	}
	if m == nil {
		*c = nil
		return nil
	}
	out := make(VClock, 0, len(m))
	for host, n := range m {
		node, inc, ok := parseHost(host)
		if !ok || n == 0 || n > maxCount {
			return fmt.Errorf("vc: entry %q: %d (want \"n<node>.<inc>\": a count in 1..2^53-1)", host, n)
		}
		out = append(out, Tick{Node: node, Inc: inc, N: n})
	}
	slices.SortFunc(out, cmpHost)
	*c = out
	return nil
}

// maxCount bounds a count: exact in every JSON reader (JavaScript's doubles), as on the wire.
const maxCount = 1<<53 - 1

// parseHost reads "n<node>.<inc>", written as HostName writes it (so one host has one name).
func parseHost(s string) (node, inc int, ok bool) {
	rest, found := strings.CutPrefix(s, "n")
	a, b, dot := strings.Cut(rest, ".")
	if !found || !dot {
		return 0, 0, false
	}
	n, err1 := strconv.ParseInt(a, 10, 32)
	i, err2 := strconv.ParseInt(b, 10, 32)
	if err1 != nil || err2 != nil || n < 1 || i < 1 || HostName(int(n), int(i)) != s {
		return 0, 0, false
	}
	return int(n), int(i), true
}

// The values of Event.Ev.
const (
	EvStart   = "start"
	EvSend    = "send"
	EvRecv    = "recv"
	EvDrop    = "drop"
	EvSuspect = "suspect"
	// EvVerdict is written by observer processes only (observers/<id>.jsonl): a verdict given to
	// the cluster; peer is the node, reason "down" or "up".
	EvVerdict = "verdict"
	EvTrust   = "trust"
	EvElect   = "elect"
	EvLeader  = "leader"
	// EvPulse: a synchronizer starts pulse Pulse (1, 2, ...) of the synchronous algorithm it carries.
	EvPulse = "pulse"
	EvStop  = "stop"
	EvStats = "stats"
)

// Stats are a node's counters, carried by periodic `stats` events and one at `stop`. Heartbeats are
// counted here instead of being logged one by one.
type Stats struct {
	HeartbeatsSent int64 `json:"hb_sent"`
	HeartbeatsRecv int64 `json:"hb_recv"`
	MsgsSent       int64 `json:"msgs_sent"`
	MsgsRecv       int64 `json:"msgs_recv"`
	Drops          int64 `json:"drops"`
	// HeartbeatDrops counts heartbeats discarded by link rules (they are not logged one by one).
	HeartbeatDrops int64 `json:"hb_drops"`
}

// ChaosRecord is one line of chaos.jsonl: a fault as it was applied. The launcher (and the
// simulator) write it; the checker reads it. Every record has ts, op, targets, at_ns, and step
// when it came from a schedule; error marks a record whose action was not carried out (the checker
// ignores it, with a warning). Per op:
//
//	{"ts":…,"op":"kill","targets":[5],"step":"at 1s kill leader","at_ns":1000000000}
//	{"ts":…,"op":"pause","targets":[3],…}  {"ts":…,"op":"resume","targets":[3],…}
//	{"ts":…,"op":"restart","targets":[5],…}
//	{"ts":…,"op":"partition","targets":[1,2,3,4,5],"step":"at 1s partition halves","at_ns":1000000000,
//	 "groups":[[1,2],[3,4,5]],"acks":{"1":1700000001000350000,"2":…,"3":…,"4":…,"5":…}}
//	{"ts":…,"op":"partition","targets":[1,2,3,4,5],"step":"at 1s partition majorities-ring",…,
//	 "reach":{"1":[2,5],"2":[1,3],"3":[2,4],"4":[3,5],"5":[1,4]},"acks":{…}}
//	{"ts":…,"op":"link","targets":[2],"step":"at 1s link 1->2 delay 20ms±5ms",…,
//	 "from":1,"to":2,"rule":"delay 20ms±5ms","acks":{"2":…}}
//	{"ts":…,"op":"heal","targets":[1,2,3,4,5],"step":"at 2s heal",…,"acks":{…}}
//
// What the checker makes of them (the launcher must carry them out so):
//
//   - Rules live at the receiver, as the node transport applies them: a node drops what comes from a
//     sender its rules refuse. A rule a node holds is in force from the time in acks under the
//     node's ID (when it acknowledged the control request), or from ts when acks has no entry for
//     it (a record without acks: every rule from ts). A node that restarts while rules are in force
//     is taken to hold its rules again: the launcher re-sends them before the new incarnation
//     begins (its peers' rules refuse it meanwhile in any case).
//   - partition: replaces the partition rules of every node of the cluster (link rules stay).
//     Exactly one of groups and reach is set (reach wins if both are). groups are the sides, each
//     ascending; they may overlap (bridge: the bridge node is in both), and a node hears the other
//     members of every group it is in. reach maps a node ID (a decimal string key, as JSON writes
//     an int-keyed map) to the ascending list of peers whose messages it accepts; the relation need
//     not be symmetric. Write every node of the cluster (chaos.Shape over all IDs, not only the
//     live ones): a node in no group and not a key of reach holds no partition rule, so it accepts
//     everyone while everyone with a rule refuses it. targets lists the nodes that were sent their
//     rule set: every running or paused node (a paused one acknowledges after it resumes, so it
//     has no ack here; a dead one is sent its rules when it restarts).
//   - link: one rule on the messages from `from` to `to`, held by `to` (targets: [to]). rule is
//     the rule as chaos.LinkRule.String renders it after "<a>-><b> ": "drop", "delay 20ms",
//     "delay 20ms±5ms", "delay 50ms jitter 10ms normal corr 25%", "loss 10%", "loss 10% corr 50%",
//     "burst 1% 25%", "rate 20000", "corrupt 5%", "dup 5%", "reorder", "slowclose 1s", "reset",
//     "reset after 500ms" (DESIGN.md, "The chaos language"). A link rule adds to the rules in force;
//     it replaces an earlier rule of the same kind (its first word) on the same from->to. Only
//     drop blocks the link; the others slow or thin it.
//   - heal: removes every partition and link rule from every node (targets: the nodes told).
//   - acks: node ID (decimal string) -> Unix ns when the node acknowledged its rules. A target
//     that was running (not paused) and has no entry did not acknowledge: the checker warns and
//     takes ts.
type ChaosRecord struct {
	TS      int64  `json:"ts"`              // when it was applied (Unix ns)
	Op      string `json:"op"`              // kill, restart, pause, resume, partition, heal, link
	Targets []int  `json:"targets"`         // resolved node IDs (see above for partition, link, heal)
	Step    string `json:"step,omitempty"`  // the schedule step it came from, as written
	At      int64  `json:"at_ns"`           // the step's offset from the cluster's begin, ns
	Error   string `json:"error,omitempty"` // set when the action could not be carried out
	// Groups is a partition's sides (partition only); they may overlap (bridge).
	Groups [][]int `json:"groups,omitempty"`
	// Reach maps each node to the peers it accepts messages from (partition only, for shapes that
	// groups cannot express: majorities-ring). JSON keys are the IDs as decimal strings.
	Reach map[int][]int `json:"reach,omitempty"`
	// From, To and Rule are a link record's one-way rule: the messages From sends To.
	From int    `json:"from,omitempty"`
	To   int    `json:"to,omitempty"`
	Rule string `json:"rule,omitempty"`
	// Clock is a clock record's fault as the language writes it after "clock <t> ": "rate 3",
	// "bump -300ms", "strobe +200ms every 10ms for 500ms", "reset" (clock only).
	Clock string `json:"clock,omitempty"`
	// Acks maps a node ID (decimal string) to the Unix ns at which it acknowledged its rules
	// (partition, link, heal).
	Acks map[string]int64 `json:"acks,omitempty"`
}

// AgentLost starts the detail of an exited record the launcher writes for a node whose agent it lost
// in a multi-host run: the node counts as crashed from that moment.
const AgentLost = "agent lost:"

// The values of ChaosRecord.Op.
const (
	OpKill      = "kill"
	OpStop      = "stop" // SIGTERM
	OpRestart   = "restart"
	OpPause     = "pause"
	OpResume    = "resume"
	OpPartition = "partition"
	OpHeal      = "heal"
	OpLink      = "link"
	OpClock     = "clock"
)

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
	// CPUMS is an exited local process's CPU time (user + system, ms, from its rusage: exact, where
	// the resource samples are periodic). MaxRSSKB is its peak resident set (KiB, /proc's VmHWM as
	// the launcher signalled its end; absent for a process that ended by itself: the rusage's
	// ru_maxrss of a child forked with CLONE_VM holds the parent's peak). On the end record they
	// are the launcher's own, from its rusage.
	CPUMS    float64 `json:"cpu_ms,omitempty"`
	MaxRSSKB int64   `json:"max_rss_kb,omitempty"`
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
	// Observers are the observer processes' logs (cluster.json's observers), by ID.
	Observers map[int]*NodeLog
}
