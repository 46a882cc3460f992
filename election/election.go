// Package election holds the leader-election algorithms as pure state machines.
//
// An algorithm gets its inputs one at a time through Step — the start of the node, a message from a
// peer, a timer that fired, a peer suspected or trusted again by the failure detector, a heartbeat
// from a peer — and answers with effects: messages to send, timers to set or cancel, "I am now a
// participant" (Elect) and "my leader is L" (Leader), and the heartbeat plan it wants the driver's
// failure detector to follow. It owns no goroutine, reads no clock and draws no randomness of its own:
// time arrives as Input.Now, randomness as Config.Rand. Three drivers run the same code: the node
// process (node/, real sockets and wall-clock timers; sim.Cluster runs it in virtual time), the bare
// machines' simulator (sim.Sim) and the model checker (explore/). What a machine may offer beyond
// Machine — a step into a reused buffer, its epoch, the late messages it counted, what a message
// may make it send — is declared once, as small optional interfaces (optional.go) the drivers
// assert.
//
// Usage:
//
//	alg, _ := election.Lookup("bully")
//	m, _ := alg.New(election.Config{Self: 3, IDs: []int{1, 2, 3, 4, 5}, Initiator: true, ...})
//	for _, eff := range m.Step(election.Input{Kind: election.InStart}) { /* carry it out */ }
package election

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/topology"
)

// Message is what algorithms exchange. One struct serves every algorithm so that the wire codec and
// the event log need no per-algorithm types; each algorithm documents which fields its kinds use.
// Fields are append-only: the msgpack keys are part of the wire format.
type Message struct {
	// ID is unique in the run ("node.inc.seq"); the driver sets it, algorithms leave it empty.
	ID   string `msgpack:"id" json:"id"`
	Kind string `msgpack:"k" json:"kind"`
	// Cand is the ID a message carries: a candidate, an alias, the elected leader.
	Cand int `msgpack:"c,omitempty" json:"cand,omitempty"`
	// Round is an election round, phase or epoch number.
	Round int `msgpack:"r,omitempty" json:"round,omitempty"`
	// Hops counts the distance a message has travelled (Hirschberg-Sinclair probes).
	Hops int `msgpack:"h,omitempty" json:"hops,omitempty"`
	// Dir is a direction on a two-way ring: +1 towards the successor, -1 towards the predecessor.
	Dir int `msgpack:"d,omitempty" json:"dir,omitempty"`
	// Origin is the node that created a message a ring relays.
	Origin int `msgpack:"o,omitempty" json:"origin,omitempty"`
	// IDs carries a set of node IDs (members lists, LeLann's collected IDs).
	IDs []int `msgpack:"ids,omitempty" json:"ids,omitempty"`
	// Phase is an algorithm's own phase or round inside one election (Hirschberg-Sinclair's k,
	// Franklin's and Peterson's rounds); Round stays the ring core's epoch.
	Phase int `msgpack:"p,omitempty" json:"phase,omitempty"`
}

// InputKind says what happened to a state machine.
type InputKind int

const (
	// InStart: the node begins (after a restart too: Config.Incarnation > 1 tells which).
	InStart InputKind = iota + 1
	// InRecv: Msg arrived from From.
	InRecv
	// InTimer: the timer named Timer fired.
	InTimer
	// InSuspect: the failure detector suspects From (heartbeats stopped, or its link broke and a
	// re-dial was refused).
	InSuspect
	// InTrust: a suspected From was heard from again.
	InTrust
	// InHeartbeat: a heartbeat arrived from From; Claim is the sender's leader belief (0 for ⊥).
	InHeartbeat
	// InStop: the node is shutting down in an orderly way (SIGTERM); its last chance to send (RSDP's
	// CLOSE). Algorithms with nothing to say ignore it.
	InStop
)

func (k InputKind) String() string {
	switch k {
	case InStart:
		return "start"
	case InRecv:
		return "recv"
	case InTimer:
		return "timer"
	case InSuspect:
		return "suspect"
	case InTrust:
		return "trust"
	case InHeartbeat:
		return "heartbeat"
	case InStop:
		return "stop"
	}
	return fmt.Sprintf("input(%d)", int(k))
}

// Input is one thing that happened to a node.
type Input struct {
	Kind InputKind
	// Now is the driver's clock (time since an arbitrary origin). Algorithms may compare it, never read
	// a clock themselves.
	Now   time.Duration
	From  int
	Msg   Message
	Timer string
	Claim int
}

// EffectKind says what a state machine asks its driver to do.
type EffectKind int

const (
	// EffSend: send Msg to To.
	EffSend EffectKind = iota + 1
	// EffSetTimer: (re)arm the timer named Timer to fire After from now. Setting a timer that is
	// armed re-arms it.
	EffSetTimer
	// EffCancelTimer: disarm the timer named Timer (no-op when it is not armed).
	EffCancelTimer
	// EffElect: the node became a participant; its leader is now unknown (⊥). Round is optional.
	EffElect
	// EffLeader: the node's leader is now Leader (itself when it won).
	EffLeader
	// EffHeartbeat: the failure-detector plan: send heartbeats to HeartbeatTo, watch Watch (suspect a
	// watched peer whose heartbeats stop). Replaces the previous plan.
	EffHeartbeat // EffPulse: a synchronizer starts pulse Round (1, 2, ...) of the synchronous algorithm it
	// carries; the driver logs a pulse event.
	EffPulse
)

func (k EffectKind) String() string {
	switch k {
	case EffSend:
		return "send"
	case EffSetTimer:
		return "set-timer"
	case EffCancelTimer:
		return "cancel-timer"
	case EffElect:
		return "elect"
	case EffLeader:
		return "leader"
	case EffHeartbeat:
		return "heartbeat"
	case EffPulse:
		return "pulse"
	}
	return fmt.Sprintf("effect(%d)", int(k))
}

// Effect is one thing a state machine asks for. Effects are carried out in order.
type Effect struct {
	Kind        EffectKind
	To          int
	Msg         Message
	Timer       string
	After       time.Duration
	Round       int
	Leader      int
	HeartbeatTo []int
	Watch       []int
}

// Machine is one node's election state machine.
type Machine interface {
	// Step feeds one input and returns the effects it caused, in order.
	Step(in Input) []Effect
	// Leader is the node's current belief: the leader's ID, or 0 for ⊥.
	Leader() int
	// Participant tells whether an election is under way at this node.
	Participant() bool
}

// Fixed marks a struct as a machine's configuration: what New works out from Config (its ID, its
// neighbours, its timeouts, the ring order) and the machine only reads after. A machine keeps it
// apart from its state, in a struct whose first field is `_ Fixed` (a mark on the type, as
// structs.HostLayout is), held by pointer and embedded so that its handlers read b.self as before.
// Every copy of a machine may then share it, and what tells one state of a machine from another
// leaves it out: the explorer leans on both (explore/clone.go), and its tests hold every Fixed
// struct to never changing after New.
type Fixed struct{}

// Config is what a machine is built from. Every driver fills it from cluster.json.
type Config struct {
	// Self is this node's ID (1..N).
	Self int
	// IDs lists every node ID of the cluster, in ascending order.
	IDs []int
	// Ring is the ring order (each node's successor follows it, the last wraps to the first); empty
	// for a mesh.
	Ring []int
	// Topology is "mesh", "ring" (one-way), "biring" (two-way), or a general graph's --topology
	// value (grid:4x4, random:3, @FILE: topology.IsGraph).
	Topology string
	// Edges are a general graph's links, each once with the smaller ID first, sorted (cluster.json's
	// edges); nil for mesh and rings, whose links follow from Topology and Ring (a mesh of a
	// thousand nodes would be half a million pairs in every process). Graph gives them for every
	// kind.
	Edges [][2]int
	// Initiator: this node starts an election at InStart; a non-initiator waits for a message.
	Initiator bool
	// Incarnation counts the node's starts from 1; above 1 the node restarted after a crash.
	Incarnation int
	// ElectionTimeout is Bully's T: how long to wait for an answer from a higher node.
	ElectionTimeout time.Duration
	// CoordinatorTimeout is Bully's T1: how long to wait for a coordinator after an answer.
	CoordinatorTimeout time.Duration
	// Rand is the only randomness an algorithm may use (seeded by the driver). May be nil for
	// algorithms that use none.
	Rand *rand.Rand
	// Options holds algorithm-specific settings by name (e.g. "rsdp-mode").
	Options map[string]string
}

// Graph is the network's links for any topology, each once with the smaller ID first, sorted: Edges
// for a general graph, every pair of a mesh, the ring's neighbours of a ring. The synchronizers send
// along it and nowhere else.
func (c Config) Graph() ([][2]int, error) {
	if topology.IsGraph(c.Topology) || c.Edges != nil {
		t, err := topology.NewGraph(c.Topology, c.IDs, c.Edges)
		if err != nil {
			return nil, err
		}
		return t.Edges(), nil
	}
	order := c.Ring
	if len(order) == 0 {
		order = c.IDs
	}
	kind := c.Topology
	if kind == "" {
		kind = topology.Mesh
	}
	t, err := topology.New(kind, order)
	if err != nil {
		return nil, err
	}
	return t.Edges(), nil
}

// Algorithm describes one algorithm: how to build it and what the checker needs to know about it.
type Algorithm struct {
	Name string
	// Topologies the algorithm runs on; the first is its default.
	Topologies []string
	// New builds the state machine of one node.
	New func(Config) (Machine, error)
	// Kinds are the message kinds of the election itself; Announce the kinds that spread the result.
	Kinds    []string
	Announce []string
	// Bound is the worst-case count of messages + announcements of one election among n nodes with
	// the given number of initiators; ok is false when the algorithm states none.
	Bound func(n, initiators int) (bound int, ok bool)
	// EdgeBound, when set, is the bound of an algorithm whose cost depends on the graph rather than
	// on n alone (FloodMax: rounds × 2|E|); the checker prefers it to Bound. edges as Config.Edges.
	EdgeBound func(ids []int, edges [][2]int, options map[string]string) (bound int, ok bool)
	// FIFO tells whether the algorithm needs per-link FIFO delivery.
	FIFO bool
	// Synchronous tells that the algorithm acts in pulses and runs over a synchronizer chosen by
	// Options["sync"] (abd, alpha, beta, gamma; `run --sync`).
	Synchronous bool
	// AnswerWaits tells that its timeouts wait for answers to messages sent to every other node at
	// once (Bully's T, RSDP's status timeout): an election is a burst of O(n²) messages that a
	// loaded host delivers in time proportional to it, and a timeout shorter than that burst takes
	// live nodes for dead. So run's default pace for it grows with the square of the nodes per host
	// (launcher.DetectorScale; docs/running.md, "Large clusters", has the measurement).
	AnswerWaits bool
	// Limits declares the properties the algorithm does not promise under given faults, for the
	// options of a run (nil: it promises every property under every fault). The checker still
	// fails a run that breaks one, and says that it is the algorithm's documented limit.
	Limits func(options map[string]string) []Limit
	// Clocks declares the clock faults the algorithm's timing assumptions allow, for the options and
	// timings of a run (nil: the failure detector's, DetectorClocks). Within them it promises what
	// it promises without clock faults; its Limits name the kind "clock" for what a fault beyond
	// them may break.
	Clocks func(options map[string]string, tm Timing) ClockBounds
	// Options are the keys of Config.Options the algorithm reads (cluster.json's options; `run`
	// sets each by the flag of the same name), and CheckOptions, when set, checks their values for
	// a cluster of n nodes, each error naming its option ("option sync=...").
	Options      []string
	CheckOptions func(options map[string]string, n int) error
	// Doc is one line for --help.
	Doc string
}

// ValidOptions checks the options a run gives the algorithm: an option of another algorithm is
// refused, and the algorithm's own are checked by its CheckOptions. A key that no algorithm reads
// (the transport's, such as the vector clock's) is not the algorithm's business.
func (a Algorithm) ValidOptions(options map[string]string, n int) error {
	keys := slices.Sorted(maps.Keys(options))
	for _, k := range keys {
		if slices.Contains(a.Options, k) {
			continue
		}
		var takers []string
		for _, name := range Names() {
			if slices.Contains(registry[name].Options, k) {
				takers = append(takers, name)
			}
		}
		if len(takers) > 0 {
			return fmt.Errorf("option %s applies to %s only (the algorithm is %s)", k, strings.Join(takers, ", "), a.Name)
		}
	}
	if a.CheckOptions != nil {
		return a.CheckOptions(options, n)
	}
	return nil
}

// Limit is a property an algorithm does not promise while one of the given faults is in force.
type Limit struct {
	// Property is the checker's property: "uniqueness", "agreement", "complexity" or "pulses" (a
	// synchronizer's pulse safety).
	Property string
	// Faults are the fault kinds in force under which it is not promised, as the chaos language
	// names them: "partition", "link drop", "link loss", "link delay", "link dup", "link reorder";
	// and "partial partition": a partition that leaves two live nodes of one component unable to
	// hear each other (majorities-ring, a bridge), which the checker judges as one network; and
	// "crash" (agreement only): a node killed or stopped at any time of the run, restarted or not.
	Faults []string
	// Why says why, for the verdict and docs/checker.md ("Declared limits").
	Why string
	// Recovery is how long after such a fault is gone the algorithm promises the property again,
	// from the cluster's size and timings. For "agreement" (nil: at once, when the settle window
	// begins), a failure is the limit only if such a fault was in force less than Recovery before
	// the end of the run. For "uniqueness" (nil: the grace), an overlap is the limit only if it
	// ended within the longer of the grace and Recovery after the fault was gone.
	Recovery func(Timing) time.Duration
}

// Timing is what a Limit's Recovery is computed from: the cluster's size and its timings.
type Timing struct {
	N         int
	Heartbeat time.Duration // the detector's heartbeat interval
	Timeout   time.Duration // the detector's timeout
	T, T1     time.Duration // the election and coordinator timeouts
}

// RingStall is the ring core's stall timer: the longest a ring election waits in silence before it
// starts again (a message lost, or lost with a node that died holding it).
func RingStall(n int, t, t1 time.Duration) time.Duration {
	return max(3*t1, time.Duration(n)*t/20)
}

// RingLimits are the ring algorithms' limits: the detector's, and agreement under message loss. The
// ring algorithms assume reliable channels (LeLann, Chang-Roberts and the rest send each message
// once); a message a lossy link loses stalls the election until the ring's stall timer restarts it,
// which may come after the settle window (3 × T1 = 1.8 s by default, against a settle of 1 s).
// A partition loses messages too. After its heal the nodes that trust each other again open a new
// epoch, which usually ends the election within the settle window; but a node that was paused when
// the heal came applies it only once it runs again, and drops what reaches it meanwhile. When that
// is the new epoch's first message (LeLann, run --sim seed 7312164: node 1's epoch 105 lost at
// node 2, which then discarded epoch 102's messages as stale), only the stall timer ends it.
// A one-way drop loses messages the same way. When it lasts past the timeout the node behind it
// suspects its predecessor and opens a new epoch when it trusts it again, but that epoch is only
// the next of its own above the highest it has seen: if the dropped messages carried a newer one, the ring's nodes ahead
// take the reopened epoch for one they have left, and only the stall timer ends it (Chang-Roberts,
// bench chaos --sim seed 911509 -n 5: link 2->3 dropped epoch 9, 3 reopened epoch 8).
//
// And the stall timer's own assumption: an election's quiet spell is shorter than the stall time.
// Where a timer may fire at any moment (`leaderlab explore --timers async`), the stall timer may
// restart a live election again and again: each restart costs another election's messages, and
// nothing bounds how often it happens.
func RingLimits(options map[string]string) []Limit {
	async := "the stall timer assumes an election's quiet spell is shorter than the stall time: where timers fire at any moment (asynchronous timing), it restarts live elections without end"
	return append(DetectorLimits(options),
		Limit{Property: "agreement", Faults: []string{"link drop", "link loss", "partition"},
			Why:      "the ring algorithms send each message once: one lost to a lossy or dropping link, or across a partition (a node that learns of the heal late, having been paused, still drops what reaches it), stalls the election until the ring's stall timer (max(3·T1, N·T/20)) starts it again",
			Recovery: func(tm Timing) time.Duration { return RingStall(tm.N, tm.T, tm.T1) + tm.T }},
		Limit{Property: "agreement", Faults: []string{"async timers"}, Why: async},
		Limit{Property: "complexity", Faults: []string{"async timers"}, Why: async})
}

// DetectorLimits are the limits of every algorithm that judges its peers by heartbeats: a one-way
// link fault that drops or loses a live node's heartbeats to a peer that watches it makes the peer
// suspect it, and the peer's side elects a leader of its own while the node still leads, until
// the fault is healed and the heartbeats trust it again. No election without quorums or leases
// can tell that silence from a crash (the network is one component: the others still hear both).
func DetectorLimits(map[string]string) []Limit {
	return []Limit{{Property: "uniqueness", Faults: []string{"link drop", "link loss", "link delay"},
		Why: "a one-way link fault that hides a live leader's heartbeats from a peer (or delays them to the detector's timeout) looks like its crash to that peer"},
		{Property: "uniqueness", Faults: []string{"clock"}, Why: clockWhy},
		{Property: "agreement", Faults: []string{"clock"}, Why: clockWhy}}
}

var registry = map[string]Algorithm{}

// Register adds an algorithm; each algorithm's file calls it from init. Registering a name twice is
// a programming error.
func Register(a Algorithm) {
	if _, dup := registry[a.Name]; dup {
		panic("election: algorithm registered twice: " + a.Name)
	}
	registry[a.Name] = a
}

// Names lists the registered algorithms, sorted.
func Names() []string {
	out := make([]string, 0, len(registry))
	for n := range registry {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup finds an algorithm by name; the error lists the accepted names.
func Lookup(name string) (Algorithm, error) {
	a, ok := registry[name]
	if !ok {
		return Algorithm{}, fmt.Errorf("unknown algorithm %q (accepted: %s)", name, strings.Join(Names(), ", "))
	}
	return a, nil
}

// IsAnnounce tells whether kind is one of a's announcement kinds.
func (a Algorithm) IsAnnounce(kind string) bool {
	for _, k := range a.Announce {
		if k == kind {
			return true
		}
	}
	return false
}

// IsElection tells whether kind is one of a's election kinds (not announcements).
func (a Algorithm) IsElection(kind string) bool {
	for _, k := range a.Kinds {
		if k == kind {
			return true
		}
	}
	return false
}

// Accepts tells whether the algorithm runs on topology t (a general graph's spec counts as
// topology.Graph); the error names the accepted ones.
func (a Algorithm) Accepts(t string) error {
	for _, x := range a.Topologies {
		if x == topology.Family(t) {
			return nil
		}
	}
	return fmt.Errorf("algorithm %s cannot run on topology %q (accepted: %s)", a.Name, t, strings.Join(a.Topologies, ", "))
}
