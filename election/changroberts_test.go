package election_test

// The ring algorithms' tests live in the external test package, because whole elections run in the
// simulator (sim imports election). This file holds what the ring tests share — the handler tables'
// runner and effect constructors, and the clean-election sweep through the simulator — and
// Chang-Roberts's own tests, the reference ring algorithm's.

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// The handler tables run node 3 of the ring 1 -> 2 -> 3 -> 4 -> 5 -> 1 (successor 4, predecessor
// 2), or the lone node of a ring of one. The stall timer is max(3 × T1, 5ms × n): 900ms.
var owRing = []int{1, 2, 3, 4, 5}

const (
	owT1         = 300 * time.Millisecond
	owStallAfter = 3 * owT1
)

// owNode builds node self of ring for algo.
func owNode(t *testing.T, algo string, ring []int, self int, initiator bool, inc int) election.Machine {
	t.Helper()
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(slices.Values(ring))
	m, err := a.New(election.Config{Self: self, IDs: ids, Ring: ring, Topology: "ring", Initiator: initiator,
		Incarnation: inc, ElectionTimeout: owT1 / 3, CoordinatorTimeout: owT1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Effects and inputs, to keep the tables readable. A message's fields are given as a Message literal
// without Round; the constructors add the epoch.
func owElect(epoch int) election.Effect {
	return election.Effect{Kind: election.EffElect, Round: epoch}
}
func owLeader(l int) election.Effect { return election.Effect{Kind: election.EffLeader, Leader: l} }
func owStall(after time.Duration) election.Effect {
	return election.Effect{Kind: election.EffSetTimer, Timer: "stall", After: after}
}
func owCancel() election.Effect {
	return election.Effect{Kind: election.EffCancelTimer, Timer: "stall"}
}
func owPlan(nb ...int) election.Effect {
	return election.Effect{Kind: election.EffHeartbeat, HeartbeatTo: nb, Watch: nb}
}

// owPlanTo: heartbeats to `to` (the live neighbours, then the ring's own neighbours when suspected),
// watching the live neighbours.
func owPlanTo(to []int, watch ...int) election.Effect {
	return election.Effect{Kind: election.EffHeartbeat, HeartbeatTo: to, Watch: watch}
}
func owSend(to, epoch int, m election.Message) election.Effect {
	m.Round = epoch
	return election.Effect{Kind: election.EffSend, To: to, Msg: m}
}
func owRecv(from, epoch int, m election.Message) election.Input {
	m.Round = epoch
	return election.Input{Kind: election.InRecv, From: from, Msg: m}
}
func owStart() election.Input                       { return election.Input{Kind: election.InStart} }
func owSuspect(p int) election.Input                { return election.Input{Kind: election.InSuspect, From: p} }
func owTrust(p int) election.Input                  { return election.Input{Kind: election.InTrust, From: p} }
func owTimer(name string) election.Input            { return election.Input{Kind: election.InTimer, Timer: name} }
func owEffs(e ...election.Effect) []election.Effect { return e }

// owCase is one row of a handler table: a node, the inputs that bring it to the state the row
// starts from, the inputs of the row (the effects of the last are checked), and the node's leader
// and participant flag after them.
type owCase struct {
	name        string
	self        int
	initiator   bool
	inc         int // 0: 1
	ring        []int
	setup, in   []election.Input
	want        []election.Effect
	leader      int
	participant bool
}

func runOwCases(t *testing.T, algo string, cases []owCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ring, inc := c.ring, c.inc
			if ring == nil {
				ring = owRing
			}
			if inc == 0 {
				inc = 1
			}
			m := owNode(t, algo, ring, c.self, c.initiator, inc)
			for _, in := range c.setup {
				m.Step(in)
			}
			var got []election.Effect
			for _, in := range c.in {
				got = m.Step(in)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("\n got  %s\n want %s", fmtOwEffects(got), fmtOwEffects(c.want))
			}
			if m.Leader() != c.leader || m.Participant() != c.participant {
				t.Errorf("leader %d participant %v, want %d %v", m.Leader(), m.Participant(), c.leader, c.participant)
			}
		})
	}
}

func fmtOwEffects(es []election.Effect) string {
	var parts []string
	for _, e := range es {
		switch e.Kind {
		case election.EffSend:
			m := e.Msg
			s := fmt.Sprintf("send(%d,%s,r%d,c%d", e.To, m.Kind, m.Round, m.Cand)
			if m.Hops != 0 {
				s += fmt.Sprintf(",h%d", m.Hops)
			}
			if m.Phase != 0 {
				s += fmt.Sprintf(",p%d", m.Phase)
			}
			if m.Dir != 0 || m.Origin != 0 || len(m.IDs) > 0 {
				s += fmt.Sprintf(",d%d,o%d,ids%v", m.Dir, m.Origin, m.IDs)
			}
			parts = append(parts, s+")")
		case election.EffSetTimer:
			parts = append(parts, fmt.Sprintf("set(%s,%v)", e.Timer, e.After))
		case election.EffCancelTimer:
			parts = append(parts, fmt.Sprintf("cancel(%s)", e.Timer))
		case election.EffElect:
			parts = append(parts, fmt.Sprintf("elect(r%d)", e.Round))
		case election.EffLeader:
			parts = append(parts, fmt.Sprintf("leader(%d)", e.Leader))
		case election.EffHeartbeat:
			parts = append(parts, fmt.Sprintf("plan(to%v,watch%v)", e.HeartbeatTo, e.Watch))
		default:
			parts = append(parts, e.Kind.String())
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func crElection(c int) election.Message { return election.Message{Kind: election.CRElection, Cand: c} }
func crElected(c int) election.Message  { return election.Message{Kind: election.CRElected, Cand: c} }

func TestChangRobertsHandlers(t *testing.T) {
	start := owStart()
	runOwCases(t, "chang-roberts", []owCase{
		{name: "an initiator sends its ID to its successor", self: 3, initiator: true, in: []election.Input{start},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, crElection(3)), owPlan(4, 2)), participant: true},
		{name: "a non-initiator sleeps", self: 3, in: []election.Input{start}, want: owEffs(owPlan(4, 2))},
		{name: "a sleeping node woken by a smaller ID sends its own instead", self: 3, setup: []election.Input{start},
			in:   []election.Input{owRecv(2, 1, crElection(1))},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, crElection(3))), participant: true},
		{name: "a sleeping node woken by a larger ID forwards it", self: 3, setup: []election.Input{start},
			in:   []election.Input{owRecv(2, 1, crElection(5))},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, crElection(5))), participant: true},
		{name: "a participant swallows a smaller ID", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, crElection(1))}, want: nil, participant: true},
		{name: "a participant forwards a larger ID", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, crElection(4))}, want: owEffs(owSend(4, 1, crElection(4))), participant: true},
		{name: "a node that forwarded a larger ID swallows smaller ones, its own too", self: 3, setup: []election.Input{start, owRecv(2, 1, crElection(5))},
			in: []election.Input{owRecv(2, 1, crElection(2))}, want: nil, participant: true},
		{name: "its own ID home: it leads and announces", self: 3, initiator: true, setup: []election.Input{start},
			in:   []election.Input{owRecv(2, 1, crElection(3))},
			want: owEffs(owLeader(3), owCancel(), owSend(4, 1, crElected(3))), leader: 3},
		{name: "elected is followed and passed on", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, crElected(5))}, want: owEffs(owLeader(5), owCancel(), owSend(4, 1, crElected(5))), leader: 5},
		{name: "elected home: the round ends", self: 3, initiator: true, setup: []election.Input{start, owRecv(2, 1, crElection(3))},
			in: []election.Input{owRecv(2, 1, crElected(3))}, want: nil, leader: 3},
		{name: "the ID of a node suspected during the epoch is dropped", self: 3, setup: []election.Input{start, owRecv(2, 1, crElection(4)), owSuspect(5)},
			in: []election.Input{owRecv(2, 1, crElection(5))}, want: nil, participant: true},
		{name: "a suspicion from before the epoch is forgotten when it begins (the node may be back)", self: 3, setup: []election.Input{start, owSuspect(5)},
			in: []election.Input{owRecv(2, 1, crElection(5))}, want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, crElection(5))), participant: true},
		{name: "an initiator that a message woke before its own start does not open an epoch over it", self: 3, initiator: true,
			setup: []election.Input{owRecv(2, 1, crElection(5))}, in: []election.Input{start}, want: nil, participant: true},
		{name: "a stale epoch is ignored", self: 3, setup: []election.Input{start, owRecv(2, 2, crElection(5))},
			in: []election.Input{owRecv(2, 1, crElection(4))}, want: nil, participant: true},
		{name: "a newer epoch: a follower takes part again", self: 3, setup: []election.Input{start, owRecv(2, 1, crElected(5))},
			in:   []election.Input{owRecv(2, 2, crElection(1))},
			want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, crElection(3))), participant: true},
		{name: "a restarted node elects in epoch 0", self: 3, inc: 2, in: []election.Input{start},
			want: owEffs(owElect(0), owStall(owStallAfter), owSend(4, 0, crElection(3)), owPlan(4, 2)), participant: true},
		{name: "a restarted node's epoch-0 election opens a new epoch", self: 3, setup: []election.Input{start, owRecv(2, 1, crElected(5))},
			in:   []election.Input{owRecv(2, 0, crElection(2))},
			want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, crElection(3))), participant: true},
		{name: "a restarted node learns the epoch from any message", self: 3, inc: 2, setup: []election.Input{start},
			in:   []election.Input{owRecv(2, 4, crElection(5))},
			want: owEffs(owElect(4), owStall(owStallAfter), owSend(4, 4, crElection(5))), participant: true},
		{name: "the leader suspected: a new epoch", self: 3, setup: []election.Input{start, owRecv(2, 1, crElected(5))},
			in: []election.Input{owSuspect(5)}, want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, crElection(3))), participant: true},
		{name: "a participant suspects anyone: a new epoch, around it", self: 3, initiator: true, setup: []election.Input{start},
			in:   []election.Input{owSuspect(4)},
			want: owEffs(owElect(2), owStall(owStallAfter), owSend(5, 2, crElection(3)), owPlanTo([]int{5, 2, 4}, 5, 2)), participant: true},
		{name: "a follower suspects its successor: the ring closes over it (heartbeats still go to 4)", self: 3, setup: []election.Input{start, owRecv(2, 1, crElected(5))},
			in: []election.Input{owSuspect(4)}, want: owEffs(owPlanTo([]int{5, 2, 4}, 5, 2)), leader: 5},
		{name: "a node above the leader is trusted again: a new epoch", self: 3, setup: []election.Input{start, owSuspect(5), owRecv(2, 1, crElected(4))},
			in: []election.Input{owTrust(5)}, want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, crElection(3))), participant: true},
		{name: "the stall timer: a new epoch, with twice the patience", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{{Kind: election.InTimer, Timer: "stall", Now: owStallAfter}}, want: owEffs(owElect(2), owStall(2*owStallAfter), owSend(4, 2, crElection(3))), participant: true},
		{name: "the stall timer after progress: wait for the rest of the quiet spell", self: 3, initiator: true,
			setup: []election.Input{start, {Kind: election.InRecv, From: 2, Msg: crElection(5), Now: owStallAfter / 2}},
			in:    []election.Input{{Kind: election.InTimer, Timer: "stall", Now: owStallAfter}}, want: owEffs(owStall(owStallAfter / 2)), participant: true},
		{name: "a ring of one elects itself", self: 1, initiator: true, ring: []int{1}, setup: []election.Input{start},
			in: []election.Input{owRecv(1, 1, crElection(1))}, want: owEffs(owLeader(1), owCancel(), owSend(1, 1, crElected(1))), leader: 1},
		{name: "an unknown kind is ignored", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, election.Message{Kind: "probe", Cand: 9})}, want: nil, participant: true},
	})
}

// TestOneWayRingsRegistered: each ring algorithm's metadata and bounds.
func TestOneWayRingsRegistered(t *testing.T) {
	for _, c := range []struct {
		algo       string
		kinds, ann []string
		fifo       bool
		bounds     [][3]int // n, initiators, bound
	}{
		{"chang-roberts", []string{election.CRElection}, []string{election.CRElected}, false,
			[][3]int{{1, 1, 2}, {5, 1, 14}, {5, 5, 20}, {8, 8, 44}, {8, 2, 44}, {8, 0, 0}}},
		{"lelann", []string{election.LeLannElect}, []string{}, false,
			[][3]int{{1, 1, 1}, {5, 1, 25}, {5, 5, 25}, {12, 3, 144}, {8, 0, 0}}},
		{"peterson", []string{election.PetersonAlias1, election.PetersonAlias2}, []string{election.PetersonLeader}, false,
			// 2n⌊log₂ n⌋ + 2n
			[][3]int{{1, 1, 2}, {2, 2, 8}, {3, 1, 12}, {4, 4, 24}, {7, 2, 42}, {8, 8, 64}, {12, 5, 96}, {8, 0, 0}}},
	} {
		a, err := election.Lookup(c.algo)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Kinds, c.kinds) || !slices.Equal(a.Announce, c.ann) || a.FIFO != c.fifo {
			t.Errorf("%s: kinds %v announce %v fifo %v; want %v %v %v", c.algo, a.Kinds, a.Announce, a.FIFO, c.kinds, c.ann, c.fifo)
		}
		if !slices.Equal(a.Topologies, []string{"ring"}) {
			t.Errorf("%s: should run on a one-way ring only (topologies %v)", c.algo, a.Topologies)
		}
		for _, b := range c.bounds {
			if got, ok := a.Bound(b[0], b[1]); !ok || got != b[2] {
				t.Errorf("%s: Bound(%d, %d) = %d, %v; want %d", c.algo, b[0], b[1], got, ok, b[2])
			}
		}
		if _, err := a.New(election.Config{Self: 1, IDs: []int{1, 2}, Ring: []int{1, 2}, Topology: "mesh", Incarnation: 1}); err == nil {
			t.Errorf("%s: built on a mesh", c.algo)
		}
		if _, err := a.New(election.Config{Self: 3, IDs: []int{1, 2}, Ring: []int{1, 2}, Topology: "ring", Incarnation: 1}); err == nil {
			t.Errorf("%s: built for a node that is not on the ring", c.algo)
		}
	}
}

// The clean-election sweep: every ring algorithm runs N = 1..12 under every placement (ascending,
// descending = worst, and two drawn rings), with every node, the lowest alone (the launcher's "one")
// and a random set (drawn per seed) initiating, each under 200 seeded delay schedules (links of
// 0..maxDelay, maxDelay drawn from 1..20ms; the simulator keeps each link FIFO). Each run must end
// with every node following N and not a participant, nothing but the algorithm's kinds sent,
// messages + announce within Bound, nothing more sent afterwards, and what check adds.

const owSeeds = 200

// owSeedStep is 1, or 10 under the race detector, which makes the simulator about ten times slower:
// the sweeps then take every tenth seed (20 delay schedules per combination), so that `go test
// -race` of the package stays within 20s on two cores. The race detector watches goroutines
// sharing memory; each simulated run has one goroutine of its own, so more seeds would not find
// more races. Plain `go test` runs all 200.
var owSeedStep = func() int64 {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return 10
			}
		}
	}
	return 1
}()

// owRun is one run of the sweep.
type owRun struct {
	algo       string
	n          int
	placement  string
	order      []int
	initiators []int // nil: every node
	form       string
	seed       int64
	minDelay   time.Duration
	maxDelay   time.Duration
}

// is tells whether the run's ring is the named placement (names of the same ring are joined by
// "=", e.g. "descending=worst").
func (r owRun) is(placement string) bool {
	return slices.Contains(strings.Split(r.placement, "="), placement)
}

func (r owRun) String() string {
	return fmt.Sprintf("%s n=%d ids=%s %v initiators=%s %v links %v..%v seed %d",
		r.algo, r.n, r.placement, r.order, r.form, r.initiators, r.minDelay, r.maxDelay, r.seed)
}

// owPlacements are the distinct rings of n among the named placements and two drawn ones. A ring
// has no start, so rotations are the same ring and run once, under the first name that gives it:
// worst is descending (topology.Place), and for small n the drawn rings repeat the named ones.
func owPlacements(t *testing.T, n int) (names []string, orders [][]int) {
	seen := map[string]int{}
	add := func(name string, o []int) bool {
		at := slices.Index(o, n)
		key := fmt.Sprint(append(slices.Clone(o[at:]), o[:at]...))
		if i, dup := seen[key]; dup {
			if !strings.HasPrefix(name, "random") {
				names[i] += "=" + name
			}
			return false
		}
		seen[key] = len(orders)
		names, orders = append(names, name), append(orders, o)
		return true
	}
	for _, p := range []string{topology.Ascending, topology.Descending, topology.Worst} {
		o, err := topology.Place(n, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		add(p, o)
	}
	for k, drawn := int64(1), 0; k <= 20 && drawn < 2; k++ {
		o, err := topology.Place(n, topology.Random, 1000*int64(n)+k)
		if err != nil {
			t.Fatal(err)
		}
		if add(fmt.Sprintf("random(seed %d)", 1000*int64(n)+k), o) {
			drawn++
		}
	}
	return names, orders
}

// owResult is what a run sent, by the algorithm's accounting.
type owResult struct {
	msgs, announce int
	byKind         []sim.KindCount
}

// owSweep runs every combination for algo, checks the common properties, and hands each run
// to check for the algorithm's own (nil: none). It stops after a few failures.
func owSweep(t *testing.T, algo string, check func(r owRun, res owResult) string) {
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	var failed atomic.Int32
	for n := 1; n <= 12; n++ {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			t.Parallel()
			names, orders := owPlacements(t, n)
			for pi, order := range orders {
				for _, form := range []string{"all", "one", "some"} {
					for seed := int64(0); seed < owSeeds; seed += owSeedStep {
						if failed.Load() >= 5 {
							return
						}
						r := owRun{algo: algo, n: n, placement: names[pi], order: order, form: form,
							seed: seed + 7919*int64(n) + 104729*int64(pi)}
						rng := rand.New(rand.NewSource(r.seed))
						switch form {
						case "one":
							r.initiators = []int{1}
						case "some":
							for id := 1; id <= n; id++ {
								if rng.Intn(2) == 0 {
									r.initiators = append(r.initiators, id)
								}
							}
							if r.initiators == nil {
								r.initiators = []int{1 + rng.Intn(n)}
							}
						}
						r.maxDelay = time.Duration(1+rng.Intn(20)) * time.Millisecond
						r.minDelay = time.Duration(rng.Int63n(int64(r.maxDelay) + 1))
						if problem := owCleanRun(a, r, check); problem != "" {
							failed.Add(1)
							t.Errorf("%s: %s", r, problem)
						}
					}
				}
			}
		})
	}
}

func owCleanRun(a election.Algorithm, r owRun, check func(owRun, owResult) string) string {
	s, err := sim.New(sim.Config{Algo: a.Name, N: r.n, Order: r.order, Topology: "ring", Initiators: r.initiators,
		Seed: r.seed, MinDelay: r.minDelay, MaxDelay: r.maxDelay, Duration: 3 * time.Second, NoEvents: true})
	if err != nil {
		return err.Error()
	}
	// An election here takes at most a few trips round 12 nodes over 20ms links (Peterson's longest,
	// about 840ms), and must be over before the first stall timer could fire (1.8s); after the
	// run's 3s, nothing else may have happened.
	s.RunFor(1500 * time.Millisecond)
	res := owResult{byKind: s.Counts()}
	for _, k := range a.Kinds {
		res.msgs += s.Sent(k)
	}
	for _, k := range a.Announce {
		res.announce += s.Sent(k)
	}
	inits := r.n
	if r.initiators != nil {
		inits = len(r.initiators)
	}
	bound, _ := a.Bound(r.n, inits)
	if l, ok := s.Converged(); !ok || l != r.n {
		var beliefs []string
		for id := 1; id <= r.n; id++ {
			beliefs = append(beliefs, fmt.Sprintf("%d->%d", id, s.Leader(id)))
		}
		return fmt.Sprintf("no agreement on %d after 1.5s: %s", r.n, strings.Join(beliefs, " "))
	}
	if total := s.Messages(); total != res.msgs+res.announce {
		return fmt.Sprintf("kinds the algorithm does not declare were sent: %v", res.byKind)
	}
	if res.msgs+res.announce > bound {
		return fmt.Sprintf("%d + %d messages, over the bound %d: %v", res.msgs, res.announce, bound, res.byKind)
	}
	if check != nil {
		if p := check(r, res); p != "" {
			return p
		}
	}
	s.Run()
	if s.Messages() != res.msgs+res.announce {
		return fmt.Sprintf("the ring did not stay quiet: %d messages after the election's %d", s.Messages(), res.msgs+res.announce)
	}
	if l, ok := s.Converged(); !ok || l != r.n {
		return "the agreement did not last"
	}
	return ""
}

// TestChangRobertsElections: the sweep, with Staudek's counts: exactly n(n+1)/2 + n at --ids worst
// with every node initiating (ID i travels i hops whatever the delays, then n elected), and at most
// 3n-1 with one initiator, whatever the placement.
func TestChangRobertsElections(t *testing.T) {
	owSweep(t, "chang-roberts", func(r owRun, res owResult) string {
		total := res.msgs + res.announce
		if res.announce != r.n {
			return fmt.Sprintf("%d elected messages, want n = %d", res.announce, r.n)
		}
		if r.is(topology.Worst) && r.initiators == nil && total != r.n*(r.n+1)/2+r.n {
			return fmt.Sprintf("%d messages at the worst placement, want exactly n(n+1)/2 + n = %d", total, r.n*(r.n+1)/2+r.n)
		}
		if len(r.initiators) == 1 && total > 3*r.n-1 {
			return fmt.Sprintf("%d messages with one initiator, over 3n-1 = %d", total, 3*r.n-1)
		}
		return ""
	})
}

// TestChangRobertsWorstCounts: Staudek's examples, told as stories: 20 messages for n = 5 and 44
// for n = 8 at the worst placement, every node initiating; the lowest alone at the ascending
// placement (the launcher's default) is the single-initiator worst case, 3n-1.
func TestChangRobertsWorstCounts(t *testing.T) {
	for _, c := range []struct {
		n          int
		placement  string
		initiators []int
		want       int
	}{{5, topology.Worst, nil, 20}, {8, topology.Worst, nil, 44}, {5, topology.Ascending, []int{1}, 14}, {12, topology.Ascending, []int{1}, 35}} {
		order, _ := topology.Place(c.n, c.placement, 0)
		s, err := sim.New(sim.Config{Algo: "chang-roberts", N: c.n, Order: order, Initiators: c.initiators, Seed: 1, NoEvents: true})
		if err != nil {
			t.Fatal(err)
		}
		s.Run()
		if l, ok := s.Converged(); !ok || l != c.n || s.Messages() != c.want {
			t.Errorf("n=%d %s initiators %v: leader %d (agreed %v), %d messages %v; want %d, %d messages",
				c.n, c.placement, c.initiators, l, ok, s.Messages(), s.Counts(), c.n, c.want)
		}
	}
}

// owUnordered runs a whole election among pure machines with no FIFO order at all: every start and
// every message in flight waits in one pool, and each step delivers one drawn at random, so a
// message overtakes any other, on the same link too; only a node's start comes before what reaches
// it. No time passes (the stall timer never fires).
// It returns the machines and the messages sent by kind.
func owUnordered(t *testing.T, algo string, order, initiators []int, seed int64) ([]election.Machine, map[string]int) {
	t.Helper()
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	n := len(order)
	ids := slices.Sorted(slices.Values(order))
	ms := make([]election.Machine, n+1)
	for _, id := range ids {
		ms[id], err = a.New(election.Config{Self: id, IDs: ids, Ring: order, Topology: "ring",
			Initiator: initiators == nil || slices.Contains(initiators, id), Incarnation: 1, CoordinatorTimeout: owT1})
		if err != nil {
			t.Fatal(err)
		}
	}
	type item struct {
		to   int
		from int // 0: the node's start
		m    election.Message
	}
	var pool []item
	for _, id := range ids {
		pool = append(pool, item{to: id})
	}
	sent := map[string]int{}
	started := make([]bool, n+1)
	r := rand.New(rand.NewSource(seed))
	for steps := 0; len(pool) > 0; steps++ {
		if steps > 100*n*n+100 {
			t.Fatalf("%s %v initiators %v seed %d: still %d messages in flight after %d steps", algo, order, initiators, seed, len(pool), steps)
		}
		i := r.Intn(len(pool))
		if it := pool[i]; it.from != 0 && !started[it.to] {
			// A node starts before anything reaches it: deliver its start instead.
			i = slices.IndexFunc(pool, func(x item) bool { return x.to == it.to && x.from == 0 })
		}
		it := pool[i]
		if it.from == 0 {
			started[it.to] = true
		}
		pool[i] = pool[len(pool)-1]
		pool = pool[:len(pool)-1]
		in := election.Input{Kind: election.InStart}
		if it.from != 0 {
			in = election.Input{Kind: election.InRecv, From: it.from, Msg: it.m}
		}
		for _, e := range ms[it.to].Step(in) {
			if e.Kind == election.EffSend {
				sent[e.Msg.Kind]++
				pool = append(pool, item{to: e.To, from: it.to, m: e.Msg})
			}
		}
	}
	return ms, sent
}

// owUnorderedSweep runs owUnordered for N = 1..12, every placement, every initiator form, seeds
// runs each (a tenth of them under the race detector, see owSeedStep), and requires what the FIFO
// sweep does: every node follows N, within the bound, and what check adds about the total count.
func owUnorderedSweep(t *testing.T, algo string, seeds int, check func(n, total int) string) {
	a, _ := election.Lookup(algo)
	for n := 1; n <= 12; n++ {
		names, orders := owPlacements(t, n)
		for pi, order := range orders {
			for fi, form := range []string{"all", "one", "some"} {
				for seed := int64(0); seed < int64(seeds); seed += owSeedStep {
					var inits []int
					switch form {
					case "one":
						inits = []int{1}
					case "some":
						r := rand.New(rand.NewSource(seed))
						for id := 1; id <= n; id++ {
							if r.Intn(2) == 0 {
								inits = append(inits, id)
							}
						}
						if inits == nil {
							inits = []int{n}
						}
					}
					s := seed*31 + int64(100*n+10*pi+fi)
					ms, sent := owUnordered(t, algo, order, inits, s)
					k := n
					if inits != nil {
						k = len(inits)
					}
					bound, _ := a.Bound(n, k)
					total := 0
					for _, c := range sent {
						total += c
					}
					problem := ""
					for id := 1; id <= n && problem == ""; id++ {
						if ms[id].Leader() != n || ms[id].Participant() {
							problem = fmt.Sprintf("node %d follows %d (participant %v), want %d", id, ms[id].Leader(), ms[id].Participant(), n)
						}
					}
					if problem == "" && total > bound {
						problem = fmt.Sprintf("%d messages %v, over the bound %d", total, sent, bound)
					}
					if problem == "" && check != nil {
						problem = check(n, total)
					}
					if problem != "" {
						t.Fatalf("%s without FIFO, n=%d ids=%s %v initiators=%s %v seed %d: %s", algo, n, names[pi], order, form, inits, s, problem)
					}
				}
			}
		}
	}
}
