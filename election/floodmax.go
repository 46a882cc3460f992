package election

// FloodMax (Lynch, Distributed Algorithms §4.1.2), a synchronous algorithm run over a synchronizer
// (Options["sync"], sync.go): every node floods the largest ID it has seen, for R rounds. Pulse 1:
// max = its own ID, sent on every edge; pulses 2..R: max = the largest of max and what arrived, sent
// on every edge; pulse R+1: the same maximum, which is the leader, and nothing sent. After R ≥
// diameter rounds every ID has reached every node, so each node's maximum is the largest ID: one
// leader, agreed by all. R = Options["rounds"], else the graph's diameter.
//
// Message kinds and the Message fields each uses (Round and Hops are the synchronizer's):
//
//	flood  Cand: the largest ID the sender has seen.
//
// Cost: exactly R·2|E| flood messages (one per edge and direction per round), whatever the
// synchronizer; the synchronizer's own messages come on top (SyncControl).

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/topology"
)

const (
	// FloodMaxFlood is FloodMax's one kind.
	FloodMaxFlood = "flood"
	// OptRounds is FloodMax's number of rounds, a whole number of at least 1; default the graph's
	// diameter.
	OptRounds = "rounds"
)

func init() {
	Register(Algorithm{
		Name:         "floodmax",
		Topologies:   []string{topology.Mesh, topology.BiRing, topology.Graph},
		New:          newFloodMaxMachine,
		Kinds:        []string{FloodMaxFlood},
		EdgeBound:    floodMaxBound,
		FIFO:         true,
		Synchronous:  true,
		Limits:       floodMaxLimits,
		Clocks:       floodMaxClocks,
		Options:      []string{OptSync, OptRounds, OptDelta, OptClusters},
		CheckOptions: floodMaxOptions,
		Doc:          "FloodMax (Lynch 1996) over a synchronizer (--sync abd, alpha, beta, gamma): the largest ID flooded for diameter rounds; rounds × 2|E| messages",
	})
}

// newFloodMaxMachine is FloodMax at c.Self inside the synchronizer Options["sync"] chooses.
func newFloodMaxMachine(c Config) (Machine, error) {
	edges, err := c.Graph()
	if err != nil {
		return nil, err
	}
	rounds, err := floodMaxRounds(c.IDs, edges, c.Options)
	if err != nil {
		return nil, err
	}
	return newSynchronizer(c.Options[OptSync], c, edges, newFloodMax(c.Self, neighboursOf(c.Self, edges), rounds))
}

// floodMaxRounds is R: the option, else the graph's diameter.
func floodMaxRounds(ids []int, edges [][2]int, options map[string]string) (int, error) {
	if v, ok := options[OptRounds]; ok {
		return parseRounds(v)
	}
	return diameter(ids, edges)
}

func parseRounds(v string) (int, error) {
	r, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || r < 1 {
		return 0, &field.Error{Field: "option " + OptRounds, Value: fmt.Sprintf("%q", v), Want: "want a whole number of rounds of at least 1 (default: the graph's diameter)"}
	}
	return r, nil
}

// floodMaxOptions checks FloodMax's options for n nodes: the synchronizer, the rounds, and each
// synchronizer's own setting given only with that synchronizer.
func floodMaxOptions(options map[string]string, n int) error {
	sync, err := syncKind(options[OptSync])
	if err != nil {
		return err
	}
	if v, ok := options[OptRounds]; ok {
		if _, err := parseRounds(v); err != nil {
			return err
		}
	}
	if _, ok := options[OptDelta]; ok && sync != "abd" {
		return fmt.Errorf("option %s is synchronizer abd's delay bound; option %s is %s", OptDelta, OptSync, sync)
	}
	if _, ok := options[OptClusters]; ok && sync != "gamma" {
		return fmt.Errorf("option %s is synchronizer gamma's; option %s is %s", OptClusters, OptSync, sync)
	}
	o, err := parseSyncOptions(options)
	if err != nil {
		return err
	}
	if o.k > n {
		return &field.Error{Field: "option " + OptClusters, Value: o.k, Want: fmt.Sprintf("want 1..%d (at most one cluster per node)", n)}
	}
	return nil
}

// diameter is the graph's diameter. A mesh (1) and a ring (n/2) are recognised by their edges, so
// that a thousand nodes do not each run a thousand breadth-first searches to learn it.
func diameter(ids []int, edges [][2]int) (int, error) {
	g, err := topology.NewGraph("", ids, edges)
	if err != nil {
		return 0, err
	}
	n := len(ids)
	switch {
	case n == 1:
		return 0, nil
	case len(edges) == n*(n-1)/2:
		return 1, nil
	case len(edges) == n && n >= 3 && everyDegreeTwo(ids, g):
		return n / 2, nil // a connected graph with every degree 2 is one cycle
	}
	return g.Diameter(), nil
}

func everyDegreeTwo(ids []int, g *topology.Topology) bool {
	for _, id := range ids {
		if len(g.Neighbours(id)) != 2 {
			return false
		}
	}
	return true
}

// floodMaxBound is R × 2|E|: FloodMax's exact count.
func floodMaxBound(ids []int, edges [][2]int, options map[string]string) (int, bool) {
	r, err := floodMaxRounds(ids, edges, options)
	if err != nil {
		return 0, false
	}
	return r * 2 * len(edges), true
}

// floodMaxLimits: a synchronizer is not fault-tolerant. α, β and γ wait for every neighbour in every
// pulse and send nothing twice, so a message lost to a partition or a dropping or lossy link stalls
// the pulses for ever (as a crash does; a pause for as long as it lasts): the waiting nodes never
// decide, and no later heal helps. ABD waits for nobody: it trusts δ, and a message lost or later
// than δ (a slow link, reordering behind a delay, a paused node, a timer that fires early) is left
// out of its pulse; the nodes then decide on different views, and two of them may each take itself
// for the largest.
func floodMaxLimits(options map[string]string) []Limit {
	never := func(Timing) time.Duration { return math.MaxInt64 }
	if options[OptSync] == "abd" {
		why := "ABD trusts every message to arrive within δ and waits for none: a message lost, or later than δ, is left out of its pulse, and the nodes decide on different views"
		faults := []string{"crash", "partition", "link drop", "link loss", "link delay", "link reorder", "async timers", "clock"}
		return []Limit{
			{Property: "agreement", Faults: faults, Why: why, Recovery: never},
			{Property: "uniqueness", Faults: append(faults, "pause"), Why: why, Recovery: never},
			{Property: "pulses", Faults: []string{"link delay", "link reorder", "pause", "async timers", "clock"}, Why: why},
		}
	}
	return []Limit{{Property: "agreement", Faults: []string{"crash", "partition", "link drop", "link loss"},
		Why:      "a synchronizer waits for every neighbour in every pulse and sends nothing twice: a message lost to a partition or a dropping or lossy link stalls the pulses for ever, as a crash does (a pause, for as long as it lasts), and the waiting nodes never decide",
		Recovery: never}}
}

// floodMax is FloodMax's SyncAlgorithm at one node.
type floodMax struct {
	self, rounds int
	nb           []int
	max, leader  int
}

func newFloodMax(self int, neighbours []int, rounds int) *floodMax {
	return &floodMax{self: self, rounds: rounds, nb: neighbours, max: self}
}

func (f *floodMax) Pulses() int { return f.rounds + 1 }
func (f *floodMax) Leader() int { return f.leader }

func (f *floodMax) Pulse(i int, inbox []SyncIn) []SyncOut {
	for _, in := range inbox {
		f.max = max(f.max, in.Msg.Cand)
	}
	if i > f.rounds {
		f.leader = f.max
		return nil
	}
	out := make([]SyncOut, len(f.nb))
	for j, q := range f.nb {
		out[j] = SyncOut{To: q, Msg: Message{Kind: FloodMaxFlood, Cand: f.max}}
	}
	return out
}
