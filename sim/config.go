package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// Config describes one simulated run. Zero durations take the defaults of DefaultConfig (except
// where a field says otherwise), so a literal Config{Algo: "bully", N: 5, Seed: 1} is a usable run
// with the failure detector off.
type Config struct {
	// Algo is a registered algorithm (election.Names()).
	Algo string
	// N is the number of nodes; their IDs are 1..N.
	N int
	// Order is the ring placement of the IDs, a permutation of 1..N; nil means ascending.
	Order []int
	// Placement is how Order was chosen, as written into cluster.json; "" means "ascending" for a nil
	// Order and the list itself otherwise.
	Placement string
	// Topology is mesh, ring or biring; "" means the algorithm's own.
	Topology string
	// Initiators start the first election. nil means every node; an empty, non-nil slice means none.
	Initiators []int
	// Seed seeds every random choice: delays, the nemesis's picks, the machines' Config.Rand.
	Seed int64

	// MinDelay and MaxDelay bound a message's delay, drawn uniformly (default 1ms..5ms). A link
	// never reorders: a message never overtakes an earlier one on the same link. Timeout-based
	// algorithms assume MaxDelay small against their timeouts (Bully: 2 × MaxDelay < T, and
	// Heartbeat + MaxDelay < Timeout); beyond that, false suspicions never stop.
	MinDelay, MaxDelay time.Duration
	// Heartbeat is the failure detector's interval and Timeout the silence after which a watched peer
	// is suspected (default 50ms and 200ms).
	Heartbeat, Timeout time.Duration
	// ElectionTimeout (Bully's T) and CoordinatorTimeout (T1); zero derives them from Timeout as the
	// launcher does: T = Timeout, T1 = 3 × Timeout.
	ElectionTimeout, CoordinatorTimeout time.Duration

	// Duration is how long Run runs (default 5s of virtual time).
	Duration time.Duration
	// Settle, Grace and TerminationBound are written into cluster.json for the checker (defaults:
	// 1s; Timeout; max(2s, 5 × (T + T1)), as the launcher derives them).
	Settle, Grace, TerminationBound time.Duration
	// StatsEvery is the interval of the periodic stats events (default 1s); every live node also
	// writes one at its stop.
	StatsEvery time.Duration

	// Faults are applied at their times, in order.
	Faults []Fault
	// Detector turns the failure detector on: heartbeats along the machines' plans, suspicion after
	// Timeout, and the suspicion of a crashed peer whose link broke (the TCP reset) after a link
	// delay. Off, no input reaches a machine that the test does not Inject, besides messages, timers
	// and InStart: the seed stories' "node 5 notices" is Inject(5, InSuspect of the leader).
	Detector bool

	// NoEvents keeps no event log: the machines' states, the message counters and the chaos and
	// launcher records are all there is. For sweeps that judge by state and for measurements of
	// message complexity, where the log's memory is most of the cost.
	NoEvents bool

	// Options are the algorithm's settings by name (Config.Options of every machine).
	Options map[string]string
	// Base is the Unix time in nanoseconds of virtual time 0 (default 2024-01-01T00:00:00Z).
	Base int64
}

// DefaultBase is the Unix time of virtual time 0 when Config.Base is zero: 2024-01-01T00:00:00Z.
const DefaultBase = int64(1704067200) * int64(time.Second)

// DefaultConfig is a run of algo among n nodes, every node an initiator, with the failure detector
// on and the launcher's default timings: 1..5ms links, heartbeats every 50ms, suspicion after
// 200ms, 5s long.
func DefaultConfig(algo string, n int) Config {
	return Config{
		Algo:       algo,
		N:          n,
		MinDelay:   time.Millisecond,     // a loaded loopback or a LAN
		MaxDelay:   5 * time.Millisecond, //
		Heartbeat:  50 * time.Millisecond,
		Timeout:    200 * time.Millisecond,
		Duration:   5 * time.Second,
		Settle:     time.Second,
		StatsEvery: time.Second,
		Detector:   true,
	}
}

// MaxNodes is the largest simulated cluster, as large as the launcher's. Beyond a few hundred nodes
// the machines' own state (a ring node knows the whole ring order) is most of the memory: about
// 1 GiB at 4096 nodes.
const MaxNodes = 4096

// fill replaces zero values by their defaults.
func (c *Config) fill(alg election.Algorithm) {
	d := DefaultConfig(c.Algo, c.N)
	if c.MinDelay == 0 && c.MaxDelay == 0 {
		c.MinDelay, c.MaxDelay = d.MinDelay, d.MaxDelay
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = d.Heartbeat
	}
	if c.Timeout == 0 {
		c.Timeout = d.Timeout
	}
	if c.Duration == 0 {
		c.Duration = d.Duration
	}
	if c.Settle == 0 {
		c.Settle = d.Settle
	}
	t := rundir.Timings{ElectionTimeout: c.ElectionTimeout, CoordinatorTimeout: c.CoordinatorTimeout, Grace: c.Grace, TerminationBound: c.TerminationBound}
	t.Derive(c.Timeout)
	c.ElectionTimeout, c.CoordinatorTimeout, c.Grace, c.TerminationBound = t.ElectionTimeout, t.CoordinatorTimeout, t.Grace, t.TerminationBound
	if c.StatsEvery == 0 {
		c.StatsEvery = d.StatsEvery
	}
	if c.Topology == "" && len(alg.Topologies) > 0 {
		c.Topology = alg.Topologies[0]
	}
	if c.Base == 0 {
		c.Base = DefaultBase
	}
}

// validate names the first bad value and what would be accepted.
func (c *Config) validate(alg election.Algorithm) error {
	switch {
	case c.N < 1 || c.N > MaxNodes:
		return fmt.Errorf("sim: N %d: want 1..%d", c.N, MaxNodes)
	case c.MinDelay < 0 || c.MaxDelay < c.MinDelay:
		return fmt.Errorf("sim: delays %v..%v: want 0 <= MinDelay <= MaxDelay", c.MinDelay, c.MaxDelay)
	case c.Heartbeat <= 0:
		return fmt.Errorf("sim: Heartbeat %v: want a positive interval", c.Heartbeat)
	case c.Timeout <= c.Heartbeat:
		return fmt.Errorf("sim: Timeout %v must be longer than Heartbeat %v", c.Timeout, c.Heartbeat)
	case c.ElectionTimeout < 0 || c.CoordinatorTimeout < 0:
		return fmt.Errorf("sim: ElectionTimeout %v, CoordinatorTimeout %v: want positive durations", c.ElectionTimeout, c.CoordinatorTimeout)
	case c.Duration <= 0:
		return fmt.Errorf("sim: Duration %v: want a positive duration", c.Duration)
	case c.StatsEvery < 0:
		return fmt.Errorf("sim: StatsEvery %v: want 0 or more", c.StatsEvery)
	}
	if err := alg.Accepts(c.Topology); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	if c.Order != nil {
		if len(c.Order) != c.N {
			return fmt.Errorf("sim: Order %v: want a permutation of 1..%d", c.Order, c.N)
		}
		seen := make([]bool, c.N+1)
		for _, id := range c.Order {
			if id < 1 || id > c.N || seen[id] {
				return fmt.Errorf("sim: Order %v: want a permutation of 1..%d", c.Order, c.N)
			}
			seen[id] = true
		}
	}
	for _, id := range c.Initiators {
		if id < 1 || id > c.N {
			return fmt.Errorf("sim: initiator %d: want an ID in 1..%d", id, c.N)
		}
	}
	for i, f := range c.Faults {
		if err := f.validate(c.N); err != nil {
			return fmt.Errorf("sim: fault %d (%s): %w", i, f, err)
		}
	}
	return nil
}

// Op is a fault's action, named as in the chaos language and chaos.jsonl.
type Op string

// The faults the simulator applies.
const (
	// Kill: the node's process dies (SIGKILL): its state is lost, its incarnation ends, messages to it
	// are lost, and with the detector on its peers suspect it after a link delay (the TCP reset).
	Kill Op = "kill"
	// Restart: a killed node starts again as a new incarnation (a new machine, InStart).
	Restart Op = "restart"
	// Pause: SIGSTOP. Nothing runs at the node: no input, no timer, no heartbeat; what arrives is kept
	// and handed over, in order, when it resumes.
	Pause Op = "pause"
	// Resume: SIGCONT.
	Resume Op = "resume"
	// Partition splits the network into sides (Fault.Groups, or a chaos shape in Fault.Shape), as
	// the chaos agent's rules do: every node refuses what comes from a node it does not share a side
	// with. It replaces the partition in force; link rules stay.
	Partition Op = "partition"
	// Link adds a one-way rule (Fault.Rule) on the messages Fault.From sends Fault.To, held by To. It
	// adds to the rules in force, replacing an earlier rule of the same kind on the same link.
	Link Op = "link"
	// Heal removes the partition and every link rule.
	Heal Op = "heal"
)

// Targets a Fault may name instead of an ID, resolved when the fault is applied (as in the chaos
// language).
const (
	// TargetLeader is the node most running (not paused) nodes follow (ties: the highest such
	// ID); for restart and resume, the node a kill or pause of the leader took, while it is still
	// dead or paused.
	TargetLeader = -1 - iota
	// TargetHighest is the highest ID the op applies to: live for kill and pause, killed for restart,
	// paused for resume.
	TargetHighest
	// TargetLowest is the lowest such ID.
	TargetLowest
	// TargetRandom is a seeded random pick among them.
	TargetRandom
)

// Fault is one step of a fault schedule. Kill, restart, pause and resume name a Node; a partition
// gives Groups or a Shape (with Node for isolate); a link gives From, To and Rule; heal nothing.
type Fault struct {
	// At is the virtual time of the step.
	At time.Duration
	Op Op
	// Node is an ID or one of the Target constants: the node of kill, restart, pause and resume, and
	// the node a partition of Shape "isolate" cuts off.
	Node int
	// For, with Pause, resumes the node after this long (0: it stays paused until a Resume).
	For time.Duration

	// Groups are a partition's sides, disjoint IDs; the nodes they leave out form one more side, as
	// in the chaos language ("1-2|3" among five nodes is 1-2|3|4-5).
	Groups [][]int
	// Shape, when Groups is nil, is a partition drawn when the step fires: one of chaos.Shapes
	// (halves, random-halves, isolate, bridge, majorities-ring), cut along the ring order (the ID
	// placement on a mesh) with the run's seeded source, as chaos.Shape does for a real run.
	Shape string

	// From and To are a link's ends: IDs or Target constants, resolved among the live nodes.
	From, To int
	// Rule is a link's rule: DropRule, DelayRule, LossRule, DupRule or ReorderRule.
	Rule LinkRule
}

func (f Fault) validate(n int) error {
	switch f.Op {
	case Kill, Restart, Pause, Resume:
	case Partition, Link, Heal:
		return f.validateNet(n)
	default:
		return fmt.Errorf("op %q: want kill, restart, pause, resume, partition, link or heal", f.Op)
	}
	switch {
	case f.At < 0:
		return fmt.Errorf("time %v: want 0 or later", f.At)
	case f.Node > n || f.Node == 0 || f.Node < TargetRandom:
		return fmt.Errorf("node %d: want an ID in 1..%d or a Target constant", f.Node, n)
	case f.For < 0 || (f.For > 0 && f.Op != Pause):
		return fmt.Errorf("for %v: only a pause takes a positive duration", f.For)
	case f.Groups != nil || f.Shape != "" || f.From != 0 || f.To != 0 || f.Rule != (LinkRule{}):
		return fmt.Errorf("groups, shape, from, to and rule belong to partition and link steps, not to %s", f.Op)
	}
	return nil
}

// String renders the step in the chaos language ("at 1s kill leader", "at 2s partition isolate
// leader", "at 3s link 1->2 delay 20ms±5ms", "at 4s heal"); chaos.Parse reads it back.
func (f Fault) String() string {
	switch f.Op {
	case Partition, Link, Heal:
		return f.netString()
	}
	s := fmt.Sprintf("at %v %s %s", f.At, f.Op, targetName(f.Node))
	if f.For > 0 {
		s += fmt.Sprintf(" for %v", f.For)
	}
	return s
}

func targetName(t int) string {
	switch t {
	case TargetLeader:
		return "leader"
	case TargetHighest:
		return "highest"
	case TargetLowest:
		return "lowest"
	case TargetRandom:
		return "random"
	}
	return fmt.Sprint(t)
}

// initiatorSet resolves Config.Initiators.
func (c *Config) initiatorSet() (ids []int, spec string) {
	if c.Initiators == nil {
		ids = make([]int, c.N)
		for i := range ids {
			ids[i] = i + 1
		}
		return ids, "all"
	}
	ids = slices.Clone(c.Initiators)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	return ids, joinInts(ids)
}
