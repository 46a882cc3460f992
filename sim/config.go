package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// Config describes one simulated run. Zero durations take the defaults of DefaultConfig (except
// where a field says otherwise), so a literal Config{Algo: "bully", N: 5, Seed: 1} is a usable run
// with the failure detector off.
type Config struct {
	// Algo is a registered algorithm (election.Names()).
	Algo string
	// Algorithm, when set, runs instead of Algo's registered one, under Algo's name (an algorithm
	// made beside a test: explore's mutants).
	Algorithm *election.Algorithm
	// N is the number of nodes; their IDs are 1..N.
	N int
	// Order is the ring placement of the IDs, a permutation of 1..N; nil means ascending.
	Order []int
	// Placement is how Order was chosen, as written into cluster.json; "" means "ascending" for a nil
	// Order and the list itself otherwise.
	Placement string
	// Topology is mesh, ring, biring or a general graph's spec (grid:4x4, random:3, ...; see
	// topology.IsGraph), whose links are Edges; "" means the algorithm's own.
	Topology string
	// Edges are a general graph's links between IDs (topology.Generate and OnIDs make them); nil
	// for mesh and rings.
	Edges [][2]int
	// Initiators start the first election. nil means every node; an empty, non-nil slice means none.
	Initiators []int
	// Seed seeds every random choice: the delays and the machines' Config.Rand.
	Seed int64

	// MinDelay and MaxDelay bound a message's delay, drawn uniformly (default 1ms..5ms). A link
	// never reorders: a message never overtakes an earlier one on the same link. Timeout-based
	// algorithms assume MaxDelay small against their timeouts (Bully: 2 × MaxDelay < T).
	MinDelay, MaxDelay time.Duration
	// Heartbeat and Timeout are the failure detector's timings as cluster.json records them
	// (default 50ms and 200ms); the bare machines have no detector, but their timeouts derive from
	// Timeout as the launcher derives them.
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

	// Scripted: nothing happens by itself. Messages wait on their links and timers stay armed until
	// the script says which happens next (Begin, Deliver, Fire, AdvanceTo; see script.go): the
	// explorer's counterexamples are replayed so, one chosen interleaving. No periodic stats.
	Scripted bool

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

// DefaultConfig is a run of algo among n nodes, every node an initiator, with the launcher's default
// timings (1..5ms links, a 200ms timeout from which T and T1 derive), 5s long.
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
	return nil
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
