package election_test

// The tests of the two-way ring algorithms live outside the package so that they can run whole
// elections in the simulator (sim imports election). The helpers of this file — a ring node built
// through the registry, effect constructors, the election sweep and the crash checks — serve
// franklin_test.go as well. Their names start with bi (two-way ring) so as not to meet the one-way
// ring tests' helpers in the same package.

import (
	"fmt"
	"math/rand"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

const biT1 = 300 * time.Millisecond // CoordinatorTimeout: the stall timer is 3 × T1

// biRing5 is the ring of the handler tables: node 3's predecessor is 2, its successor 4.
var biRing5 = []int{1, 2, 3, 4, 5}

// biNode builds node self of a two-way ring of the IDs 1..len(ring) through the registry; a nil
// ring is biRing5.
func biNode(t *testing.T, algo string, ring []int, self int, initiator bool, inc int) election.Machine {
	t.Helper()
	if ring == nil {
		ring = biRing5
	}
	ids := slices.Sorted(slices.Values(ring))
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	m, err := a.New(election.Config{Self: self, IDs: ids, Ring: ring, Topology: "biring",
		Initiator: initiator, Incarnation: inc, ElectionTimeout: biT1 / 3, CoordinatorTimeout: biT1})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Effects and inputs, to keep the tables readable. Messages are biMsg(kind, epoch, cand) with
// withHops(h), withDir(d) and withPhase(k) added where the kind uses them.
func biMsg(kind string, epoch, cand int) election.Message {
	return election.Message{Kind: kind, Round: epoch, Cand: cand}
}
func withHops(m election.Message, h int) election.Message  { m.Hops = h; return m }
func withDir(m election.Message, d int) election.Message   { m.Dir = d; return m }
func withPhase(m election.Message, k int) election.Message { m.Phase = k; return m }

func biSend(to int, m election.Message) election.Effect {
	return election.Effect{Kind: election.EffSend, To: to, Msg: m}
}

// The ring effects are the one-way ring tests' (changroberts_test.go), under this file's prefix.
var (
	biElect      = owElect
	biLeader     = owLeader
	biStallAfter = owStall
	biUnstall    = owCancel
	biPlan       = owPlan
	biPlanTo     = owPlanTo
)

func biStall() election.Effect                      { return owStall(3 * biT1) }
func biEffs(e ...election.Effect) []election.Effect { return e }

func biStart() election.Input { return election.Input{Kind: election.InStart} }
func biRecv(from int, m election.Message) election.Input {
	return election.Input{Kind: election.InRecv, From: from, Msg: m}
}
func biSuspect(p int) election.Input { return election.Input{Kind: election.InSuspect, From: p} }

// biStalled is the stall timer firing a full stall period after the election began at time 0.
func biStalled() election.Input {
	return election.Input{Kind: election.InTimer, Timer: "stall", Now: 3 * biT1}
}

// ringState is where a table case starts: a fresh node fed the setup inputs.
type biState struct {
	ring      []int // nil: biRing5
	self      int
	initiator bool
	setup     []election.Input
	doc       string
}

type biCase struct {
	name string
	from biState
	in   []election.Input // the effects of the last one are checked
	want []election.Effect
	// leader and participant after the case.
	leader      int
	participant bool
}

func runBiCases(t *testing.T, algo string, cases []biCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := biNode(t, algo, c.from.ring, c.from.self, c.from.initiator, 1)
			for _, in := range c.from.setup {
				m.Step(in)
			}
			var got []election.Effect
			for _, in := range c.in {
				got = m.Step(in)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("from %q:\n got  %s\n want %s", c.from.doc, fmtBiEffects(got), fmtBiEffects(c.want))
			}
			if m.Leader() != c.leader || m.Participant() != c.participant {
				t.Errorf("leader %d participant %v, want %d %v", m.Leader(), m.Participant(), c.leader, c.participant)
			}
		})
	}
}

func fmtBiEffects(es []election.Effect) string {
	var parts []string
	for _, e := range es {
		switch e.Kind {
		case election.EffSend:
			m := e.Msg
			parts = append(parts, fmt.Sprintf("send(%d,%s,e%d,c%d,p%d,h%d,d%+d)", e.To, m.Kind, m.Round, m.Cand, m.Phase, m.Hops, m.Dir))
		case election.EffSetTimer:
			parts = append(parts, fmt.Sprintf("set(%s,%v)", e.Timer, e.After))
		case election.EffCancelTimer:
			parts = append(parts, fmt.Sprintf("cancel(%s)", e.Timer))
		case election.EffElect:
			parts = append(parts, fmt.Sprintf("elect(e%d)", e.Round))
		case election.EffLeader:
			parts = append(parts, fmt.Sprintf("leader(%d)", e.Leader))
		case election.EffHeartbeat:
			parts = append(parts, fmt.Sprintf("plan(to%v,watch%v)", e.HeartbeatTo, e.Watch))
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func probeMsg(epoch, cand, k, h, d int) election.Message {
	return withPhase(withDir(withHops(biMsg(election.HSProbe, epoch, cand), h), d), k)
}
func replyMsg(epoch, cand, k, d int) election.Message {
	return withPhase(withDir(biMsg(election.HSReply, epoch, cand), d), k)
}
func hsElectedMsg(epoch, l int) election.Message { return biMsg(election.HSElected, epoch, l) }

var (
	// hsSleeper3: node 3 is not an initiator and has heard nothing.
	hsSleeper3 = biState{self: 3, setup: []election.Input{biStart()}, doc: "3 sleeps"}
	// hsCandidate3: node 3 initiated: its phase-0 probes are out.
	hsCandidate3 = biState{self: 3, initiator: true, setup: []election.Input{biStart()}, doc: "3 probes, phase 0"}
	// hsHalf3: the reply to node 3's phase-0 probe towards its successor came back.
	hsHalf3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(), biRecv(4, replyMsg(1, 3, 0, -1))},
		doc: "3 has the reply from 4's side, phase 0"}
	// hsRelay3: node 3 probed, then passed on 5's probe: it cannot win any more.
	hsRelay3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(), biRecv(4, probeMsg(1, 5, 1, 1, -1)), biRecv(4, replyMsg(1, 3, 0, -1))},
		doc: "3 passed 5's probe on and has the reply from 4's side"}
	// hsLeader3: node 3's phase-3 probe came home: it leads.
	hsLeader3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(), biRecv(2, probeMsg(1, 3, 3, 5, 1))}, doc: "3 leads"}
)

func TestHirschbergSinclairHandlers(t *testing.T) {
	runBiCases(t, "hirschberg-sinclair", []biCase{
		{"an initiator starts phase 0: probes to 1 hop both ways", biState{self: 3, initiator: true}, []election.Input{biStart()},
			biEffs(biElect(1), biStall(), biSend(4, probeMsg(1, 3, 0, 1, +1)), biSend(2, probeMsg(1, 3, 0, 1, -1)), biPlan(4, 2)), 0, true},
		{"a non-initiator sleeps, watching its neighbours", biState{self: 3}, []election.Input{biStart()},
			biEffs(biPlan(4, 2)), 0, false},
		{"a sleeper woken by a smaller ID swallows it and starts phase 0", hsSleeper3, []election.Input{biRecv(2, probeMsg(1, 2, 0, 1, +1))},
			biEffs(biElect(1), biStall(), biSend(4, probeMsg(1, 3, 0, 1, +1)), biSend(2, probeMsg(1, 3, 0, 1, -1))), 0, true},
		{"a sleeper woken by a larger ID relays it and never probes", hsSleeper3, []election.Input{biRecv(4, probeMsg(1, 4, 1, 1, -1))},
			biEffs(biElect(1), biStall(), biSend(2, probeMsg(1, 4, 1, 2, -1))), 0, true},
		{"...and a later smaller ID does not wake it: it is swallowed", hsSleeper3, []election.Input{biRecv(4, probeMsg(1, 4, 1, 1, -1)), biRecv(2, probeMsg(1, 1, 0, 1, +1))},
			nil, 0, true},
		{"a larger ID at the edge of its neighbourhood is answered", hsCandidate3, []election.Input{biRecv(4, probeMsg(1, 4, 0, 1, -1))},
			biEffs(biSend(4, replyMsg(1, 4, 0, +1))), 0, true},
		{"...also at 2^k hops", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 2, 4, +1))},
			biEffs(biSend(2, replyMsg(1, 5, 2, -1))), 0, true},
		{"a larger ID within its neighbourhood goes on, one hop further", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 2, 3, +1))},
			biEffs(biSend(4, probeMsg(1, 5, 2, 4, +1))), 0, true},
		{"a smaller ID is swallowed", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 1, 1, 2, +1))}, nil, 0, true},
		{"a probe past its neighbourhood is malformed", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 1, 3, +1))}, nil, 0, true},
		{"a probe that has travelled no hop is malformed", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 1, 0, +1))}, nil, 0, true},
		{"a probe of a negative phase is malformed", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, -1, 1, +1))}, nil, 0, true},
		{"a probe beyond the last phase of a ring of 5 is dropped", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 4, 1, +1))}, nil, 0, true},
		{"a probe without a direction is malformed", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 5, 1, 1, 0))}, nil, 0, true},
		{"another's reply is passed on towards it", hsCandidate3, []election.Input{biRecv(4, replyMsg(1, 5, 1, -1))},
			biEffs(biSend(2, replyMsg(1, 5, 1, -1))), 0, true},
		{"one reply: the candidate waits for the other side", hsCandidate3, []election.Input{biRecv(2, replyMsg(1, 3, 0, +1))}, nil, 0, true},
		{"the same side twice: still waiting", hsHalf3, []election.Input{biRecv(4, replyMsg(1, 3, 0, -1))}, nil, 0, true},
		{"both replies: phase 1, probes to 2 hops", hsHalf3, []election.Input{biRecv(2, replyMsg(1, 3, 0, +1))},
			biEffs(biSend(4, probeMsg(1, 3, 1, 1, +1)), biSend(2, probeMsg(1, 3, 1, 1, -1))), 0, true},
		{"a reply of another phase is not for the probes out", hsHalf3, []election.Input{biRecv(2, replyMsg(1, 3, 1, +1))}, nil, 0, true},
		{"a candidate a larger ID has passed does not go on", hsRelay3, []election.Input{biRecv(2, replyMsg(1, 3, 0, +1))}, nil, 0, true},
		{"its own probe home: it leads and announces towards its successor", hsCandidate3, []election.Input{biRecv(2, probeMsg(1, 3, 3, 5, +1))},
			biEffs(biLeader(3), biUnstall(), biSend(4, hsElectedMsg(1, 3))), 3, false},
		{"the copy from the other side announces nothing more", hsLeader3, []election.Input{biRecv(4, probeMsg(1, 3, 3, 5, -1))}, nil, 3, false},
		{"its own announcement home: the end", hsLeader3, []election.Input{biRecv(2, hsElectedMsg(1, 3))}, nil, 3, false},
		{"elected: follow and pass on", hsCandidate3, []election.Input{biRecv(2, hsElectedMsg(1, 5))},
			biEffs(biLeader(5), biUnstall(), biSend(4, hsElectedMsg(1, 5))), 5, false},
		{"a sleeper woken by elected follows", hsSleeper3, []election.Input{biRecv(2, hsElectedMsg(1, 5))},
			biEffs(biElect(1), biStall(), biLeader(5), biUnstall(), biSend(4, hsElectedMsg(1, 5))), 5, false},
		{"a late probe after the result is still relayed", hsFollower3(5), []election.Input{biRecv(4, probeMsg(1, 5, 3, 2, -1))},
			biEffs(biSend(2, probeMsg(1, 5, 3, 3, -1))), 5, false},
		{"an ID above the leader after the result: the election missed it; a new epoch", hsFollower3(4), []election.Input{biRecv(4, probeMsg(1, 5, 3, 2, -1))},
			biEffs(biElect(2), biStall(), biSend(4, probeMsg(2, 3, 0, 1, +1)), biSend(2, probeMsg(2, 3, 0, 1, -1))), 0, true},
		{"elected below this node: the election missed it; a new epoch", hsCandidate3, []election.Input{biRecv(2, hsElectedMsg(1, 2))},
			biEffs(biElect(2), biStall(), biSend(4, probeMsg(2, 3, 0, 1, +1)), biSend(2, probeMsg(2, 3, 0, 1, -1))), 0, true},
		{"a probe of a suspected ID is dropped (its epoch opened already: a node no election reached yet opens one when a neighbour dies)", biState{self: 3, setup: []election.Input{biStart(), biSuspect(4)}},
			[]election.Input{biRecv(5, probeMsg(1, 4, 1, 2, -1))}, nil, 0, true},
		{"an announcement of a suspected ID is not followed", biState{self: 3, setup: []election.Input{biStart(), biSuspect(4)}},
			[]election.Input{biRecv(2, hsElectedMsg(1, 4))}, nil, 0, true},
		{"a candidate suspecting its predecessor starts a new epoch round it", hsCandidate3, []election.Input{biSuspect(2)},
			biEffs(biElect(2), biStall(), biSend(4, probeMsg(2, 3, 0, 1, +1)), biSend(1, probeMsg(2, 3, 0, 1, -1)), biPlanTo([]int{4, 1, 2}, 4, 1)), 0, true},
		{"...whose messages are the only ones that count", biState{self: 3, initiator: true, setup: []election.Input{biStart(), biSuspect(2)}},
			[]election.Input{biRecv(1, replyMsg(1, 3, 0, +1)), biRecv(4, replyMsg(1, 3, 0, -1))}, nil, 0, true},
		{"a neighbour suspected: the ring closes over it", hsCandidate3, []election.Input{biSuspect(4)},
			biEffs(biElect(2), biStall(), biSend(5, probeMsg(2, 3, 0, 1, +1)), biSend(2, probeMsg(2, 3, 0, 1, -1)), biPlanTo([]int{5, 2, 4}, 5, 2)), 0, true},
		{"a stalled election starts again", hsCandidate3, []election.Input{biStalled()},
			biEffs(biElect(2), biStallAfter(2*3*biT1), biSend(4, probeMsg(2, 3, 0, 1, +1)), biSend(2, probeMsg(2, 3, 0, 1, -1))), 0, true},
		{"a newer epoch wakes a candidate afresh", hsCandidate3, []election.Input{biRecv(4, probeMsg(4, 4, 0, 1, -1))},
			biEffs(biElect(4), biStall(), biSend(4, replyMsg(4, 4, 0, +1))), 0, true},
		{"an unknown kind is ignored", hsCandidate3, []election.Input{biRecv(2, biMsg("id", 1, 2))}, nil, 0, true},
	})
}

// hsFollower3 is node 3 woken by l's announcement.
func hsFollower3(l int) biState {
	return biState{self: 3, setup: []election.Input{biStart(), biRecv(2, hsElectedMsg(1, l))}, doc: fmt.Sprintf("3 follows %d", l)}
}

// TestHirschbergSinclairRingOfOne: a node whose every peer is suspected probes itself, and its
// probe comes home at once.
func TestHirschbergSinclairRingOfOne(t *testing.T) {
	m := biNode(t, "hirschberg-sinclair", nil, 3, true, 1)
	for _, p := range []int{2, 4, 1, 5} { // neighbours first: the ring closes over each in turn
		m.Step(biSuspect(p))
	}
	got := m.Step(biStart())
	want := biEffs(biElect(1), biStall(), biSend(3, probeMsg(1, 3, 0, 1, +1)), biSend(3, probeMsg(1, 3, 0, 1, -1)))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("start:\n got  %s\n want %s", fmtBiEffects(got), fmtBiEffects(want))
	}
	got = m.Step(biRecv(3, probeMsg(1, 3, 0, 1, +1)))
	if want := biEffs(biLeader(3), biUnstall(), biSend(3, hsElectedMsg(1, 3))); !reflect.DeepEqual(got, want) {
		t.Fatalf("own probe:\n got  %s\n want %s", fmtBiEffects(got), fmtBiEffects(want))
	}
	for _, in := range []election.Input{biRecv(3, probeMsg(1, 3, 0, 1, -1)), biRecv(3, hsElectedMsg(1, 3))} {
		if got := m.Step(in); got != nil {
			t.Errorf("%v: %s, want nothing", in.Msg.Kind, fmtBiEffects(got))
		}
	}
	if m.Leader() != 3 || m.Participant() {
		t.Errorf("leader %d participant %v, want 3 false", m.Leader(), m.Participant())
	}
}

func TestHirschbergSinclairRegistered(t *testing.T) {
	a, err := election.Lookup("hirschberg-sinclair")
	if err != nil {
		t.Fatal(err)
	}
	if a.Accepts("biring") != nil || a.Accepts("ring") == nil || a.Accepts("mesh") == nil || a.Topologies[0] != "biring" {
		t.Errorf("topologies %v, want biring only", a.Topologies)
	}
	if !a.IsElection(election.HSProbe) || !a.IsElection(election.HSReply) || !a.IsAnnounce(election.HSElected) || a.IsElection(election.HSElected) {
		t.Errorf("kinds %v, announce %v", a.Kinds, a.Announce)
	}
	for _, c := range []struct{ n, init, want int }{
		{1, 1, 9}, {2, 2, 34}, {3, 1, 75}, {4, 4, 100}, {5, 2, 165}, {8, 8, 264}, {12, 3, 492}, {5, 0, 0},
	} {
		if got, ok := a.Bound(c.n, c.init); !ok || got != c.want {
			t.Errorf("Bound(%d, %d) = %d, %v; want %d", c.n, c.init, got, ok, c.want)
		}
	}
	_, err = a.New(election.Config{Self: 1, IDs: []int{1, 2}, Ring: []int{1, 2}, Topology: "ring", Incarnation: 1})
	if err == nil || !strings.Contains(err.Error(), "biring") {
		t.Errorf("a one-way ring: error %v, want one naming biring", err)
	}
}

// TestHirschbergSinclairStories: whole elections whose cost is worked out by hand.
func TestHirschbergSinclairStories(t *testing.T) {
	for _, c := range []struct {
		doc        string
		order      []int
		initiators []int
		probes     int
		replies    int
	}{
		// Its probes both come home: 2, then elected to itself.
		{"one node", []int{1}, nil, 2, 0},
		// Phase 0: 2 probes each way; 1 answers 2's twice, 2 swallows 1's. Phase 1: 2's probes
		// go to 1 and back home (4).
		{"two nodes, both initiate", []int{1, 2}, nil, 8, 2},
		// 1 wakes 2 with a smaller ID: the same as above.
		{"two nodes, the smaller initiates", []int{1, 2}, []int{1}, 8, 2},
		// 1 wakes on a larger ID and only answers: 2 + 4 probes.
		{"two nodes, the larger initiates", []int{1, 2}, []int{2}, 6, 2},
		// Phase 0: 8 probes; 1 answers 4 and 2, 2 answers 3, 3 answers 4 (4 replies); only 4 has
		// both. Phase 1: 4 probes 2 hops both ways and is answered by 2 (4 + 4). Phase 2: its
		// probes come home after 4 hops each (8).
		{"four ascending, all initiate", []int{1, 2, 3, 4}, nil, 20, 8},
		{"four descending, all initiate", []int{4, 3, 2, 1}, nil, 20, 8},
	} {
		t.Run(c.doc, func(t *testing.T) {
			n := len(c.order)
			for seed := range int64(20) {
				s, err := sim.New(sim.Config{Algo: "hirschberg-sinclair", N: n, Order: c.order, Initiators: c.initiators, Seed: seed, NoEvents: true})
				if err != nil {
					t.Fatal(err)
				}
				s.Run()
				if l, ok := s.Converged(); !ok || l != n {
					t.Fatalf("seed %d: leader %d, agreement %v", seed, l, ok)
				}
				p, r, e := s.Sent(election.HSProbe), s.Sent(election.HSReply), s.Sent(election.HSElected)
				if p != c.probes || r != c.replies || e != n {
					t.Fatalf("seed %d: %d probes, %d replies, %d elected; want %d, %d, %d", seed, p, r, e, c.probes, c.replies, n)
				}
			}
		})
	}
}

func TestHirschbergSinclairElections(t *testing.T) { biSweep(t, "hirschberg-sinclair", nil) }

// TestHirschbergSinclairWithoutFIFO: the algorithm declares no need of FIFO links; messages
// delivered in any order at all still elect N within the bound.
func TestHirschbergSinclairWithoutFIFO(t *testing.T) {
	biUnorderedSweep(t, "hirschberg-sinclair", 20, nil)
}

func TestHirschbergSinclairCrash(t *testing.T) { biCrash(t, "hirschberg-sinclair") }

func TestHirschbergSinclairLastNode(t *testing.T) { biLastNode(t, "hirschberg-sinclair") }

// biSweepSeeds is the number of delay schedules the sweep runs per cell: 200, or 20 with -short
// and under the race detector. A run is one goroutine's pure computation, so the race detector has
// nothing to find in the 72 000 runs of the two sweeps that it would not find in a tenth of them,
// and it makes each five times slower (the whole sweep would pass 40 s on two cores).
func biSweepSeeds() int64 {
	if testing.Short() {
		return 20
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" && s.Value == "true" {
				return 20
			}
		}
	}
	return 200
}

// biSweep runs whole elections of algo for N = 1..12: every placement (ascending, descending —
// --ids worst — and three random orders per N), with every node, one node (drawn per run) or a
// random set of nodes initiating, under biSweepSeeds delay schedules each (links of 1ms up to a
// maximum drawn per run from 1..20ms). Every run must end with every node following N and no
// node a participant, having sent only the algorithm's kinds, no more of them than its bound.
// exact, when set, is the cost of a run in which every node initiates, which must then be met
// exactly. The worst cost seen for each N is logged (go test -v).
func biSweep(t *testing.T, algo string, exact func(order []int) int) {
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	seeds := biSweepSeeds()
	var mu sync.Mutex
	worst := make(map[int][2]int) // by N: the worst cost seen and the bound with every node initiating
	t.Cleanup(func() {
		var b strings.Builder
		for n := 1; n <= 12; n++ {
			fmt.Fprintf(&b, " n%d:%d/%d", n, worst[n][0], worst[n][1])
		}
		t.Logf("%d schedules per cell; worst messages+announce/bound:%s", seeds, b.String())
	})
	for n := 1; n <= 12; n++ {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			t.Parallel()
			names := []string{"ascending", "descending", "random#1", "random#2", "random#3"}
			orders := [][]int{biOrder(nil, n), make([]int, n)}
			for i := range n {
				orders[1][i] = n - i
			}
			pr := rand.New(rand.NewSource(int64(n)))
			for range 3 {
				o := pr.Perm(n)
				for i := range o {
					o[i]++
				}
				orders = append(orders, o)
			}
			top, failures := 0, 0
			for pi, order := range orders {
				for _, form := range []string{"all", "one", "some"} {
					for seed := range seeds {
						if failures > 3 {
							return // enough to go on with
						}
						r := rand.New(rand.NewSource(seed*131 + int64(n)))
						var inits []int
						switch form {
						case "one":
							inits = []int{1 + r.Intn(n)}
						case "some":
							for id := 1; id <= n; id++ {
								if r.Intn(2) == 0 {
									inits = append(inits, id)
								}
							}
							if inits == nil {
								inits = []int{1 + r.Intn(n)}
							}
						}
						s, err := sim.New(sim.Config{Algo: algo, N: n, Order: order, Initiators: inits, Seed: seed, NoEvents: true,
							MinDelay: time.Millisecond, MaxDelay: time.Duration(1+r.Intn(20)) * time.Millisecond,
							Duration: 2 * time.Second})
						if err != nil {
							t.Fatal(err)
						}
						s.Run()
						k := n
						if inits != nil {
							k = len(inits)
						}
						bound, _ := a.Bound(n, k)
						used := s.Messages()
						top = max(top, used)
						var bad []string
						if l, ok := s.Converged(); !ok || l != n {
							var beliefs []string
							for id := 1; id <= n; id++ {
								beliefs = append(beliefs, fmt.Sprintf("%d->%d", id, s.Leader(id)))
							}
							bad = append(bad, fmt.Sprintf("no agreement on %d: %s", n, strings.Join(beliefs, " ")))
						}
						if used > bound {
							bad = append(bad, fmt.Sprintf("%d messages, bound %d", used, bound))
						}
						if exact != nil && form == "all" && used != exact(order) {
							bad = append(bad, fmt.Sprintf("%d messages, want exactly %d", used, exact(order)))
						}
						for _, c := range s.Counts() {
							if !a.IsElection(c.Kind) && !a.IsAnnounce(c.Kind) {
								bad = append(bad, "a message of kind "+c.Kind)
							}
						}
						if len(bad) > 0 {
							failures++
							t.Errorf("n=%d %s %v, initiators %s %v, seed %d: %s (%v)", n, names[pi], order, form, inits, seed, strings.Join(bad, "; "), s.Counts())
						}
					}
				}
			}
			bound, _ := a.Bound(n, n)
			mu.Lock()
			worst[n] = [2]int{top, bound}
			mu.Unlock()
		})
	}
}

// biUnordered runs one election of algo on the ring order without the simulator and without FIFO
// links: every message sent waits in one bag, and the next to arrive is drawn from the whole bag,
// so that messages overtake each other on a link too. Timers never fire (a stalled election shows
// as a node left a participant). It returns the machines by ID and the number of messages sent.
func biUnordered(t *testing.T, algo string, order, inits []int, seed int64) ([]election.Machine, int) {
	t.Helper()
	n := len(order)
	a, err := election.Lookup(algo)
	if err != nil {
		t.Fatal(err)
	}
	ids := biOrder(nil, n)
	init := make([]bool, n+1)
	for _, id := range inits {
		init[id] = true
	}
	type envelope struct {
		from, to int
		m        election.Message
	}
	var bag []envelope
	ms := make([]election.Machine, n+1)
	sent := 0
	post := func(from int, effs []election.Effect) {
		for _, e := range effs {
			if e.Kind == election.EffSend {
				bag = append(bag, envelope{from, e.To, e.Msg})
				sent++
			}
		}
	}
	for _, id := range ids {
		m, err := a.New(election.Config{Self: id, IDs: ids, Ring: order, Topology: "biring", Initiator: inits == nil || init[id],
			Incarnation: 1, ElectionTimeout: biT1 / 3, CoordinatorTimeout: biT1})
		if err != nil {
			t.Fatal(err)
		}
		ms[id] = m
	}
	r := rand.New(rand.NewSource(seed))
	for _, id := range r.Perm(n) {
		post(id+1, ms[id+1].Step(biStart()))
	}
	for len(bag) > 0 && sent < 100*n*n {
		i := r.Intn(len(bag))
		env := bag[i]
		bag[i] = bag[len(bag)-1]
		bag = bag[:len(bag)-1]
		post(env.to, ms[env.to].Step(biRecv(env.from, env.m)))
	}
	return ms, sent
}

// biUnorderedSweep runs biUnordered for N = 1..12 on the sweep's placements, with every node, one
// or a random set initiating, seeds times each: every election must end with every node following
// N, within the algorithm's bound (and at exactly exact's count, when set, with every node
// initiating).
func biUnorderedSweep(t *testing.T, algo string, seeds int64, exact func(order []int) int) {
	a, _ := election.Lookup(algo)
	for n := 1; n <= 12; n++ {
		orders := [][]int{biOrder(nil, n), make([]int, n)}
		for i := range n {
			orders[1][i] = n - i
		}
		pr := rand.New(rand.NewSource(int64(n)))
		for range 3 {
			o := pr.Perm(n)
			for i := range o {
				o[i]++
			}
			orders = append(orders, o)
		}
		for _, order := range orders {
			for _, form := range []string{"all", "one", "some"} {
				for seed := range seeds {
					r := rand.New(rand.NewSource(seed*131 + int64(n)))
					var inits []int
					switch form {
					case "one":
						inits = []int{1 + r.Intn(n)}
					case "some":
						for id := 1; id <= n; id++ {
							if r.Intn(2) == 0 {
								inits = append(inits, id)
							}
						}
						if inits == nil {
							inits = []int{1 + r.Intn(n)}
						}
					}
					ms, sent := biUnordered(t, algo, order, inits, seed)
					k := n
					if inits != nil {
						k = len(inits)
					}
					bound, _ := a.Bound(n, k)
					problem := ""
					for id := 1; id <= n && problem == ""; id++ {
						if ms[id].Leader() != n || ms[id].Participant() {
							problem = fmt.Sprintf("node %d follows %d (participant %v), want %d", id, ms[id].Leader(), ms[id].Participant(), n)
						}
					}
					switch {
					case problem != "":
					case sent > bound:
						problem = fmt.Sprintf("%d messages, over the bound %d", sent, bound)
					case exact != nil && form == "all" && sent != exact(order):
						problem = fmt.Sprintf("%d messages, want exactly %d", sent, exact(order))
					}
					if problem != "" {
						t.Fatalf("%s without FIFO, n=%d %v, initiators %s %v, seed %d: %s", algo, n, order, form, inits, seed, problem)
					}
				}
			}
		}
	}
}

// biOrder is order, or the ascending ring of n for nil.
func biOrder(order []int, n int) []int {
	if order != nil {
		return order
	}
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// biCrash is a quick crash check of the whole node in the simulator (its own failure detector,
// links and lifecycle): 200 runs of 2..12 nodes on a random ring, every node or one initiating, one
// node killed — a random one, or the highest in a third of the runs — at a random time in the first
// 100ms (mostly while the first election runs), and in a third of the runs restarted within the
// next 500ms. The checker's agreement must hold at the end, and no node may ever have followed an ID
// it suspected at that moment.
func biCrash(t *testing.T, algo string) {
	runs := int64(200)
	if testing.Short() {
		runs = 40
	}
	for seed := range runs {
		r := rand.New(rand.NewSource(seed))
		n := 2 + r.Intn(11)
		cfg := launcher.DefaultConfig()
		cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = algo, n, seed, true
		cfg.Duration = 4 * time.Second
		cfg.IDs = topology.Random
		if r.Intn(2) == 0 {
			cfg.Initiators = strconv.Itoa(1 + r.Intn(n))
		}
		target := "random"
		if r.Intn(3) == 0 {
			target = "highest"
		}
		at := time.Duration(r.Int63n(int64(100 * time.Millisecond))).Round(time.Microsecond)
		cfg.Chaos = fmt.Sprintf("at %v kill %s", at, target)
		if r.Intn(3) == 0 {
			cfg.Chaos += fmt.Sprintf("; at %v restart random", at+time.Duration(r.Int63n(int64(500*time.Millisecond))).Round(time.Microsecond))
		}
		biJudge(t, cfg)
	}
}

// biJudge simulates cfg and requires the checker's agreement and no leader that its node suspected.
func biJudge(t *testing.T, cfg launcher.Config) {
	t.Helper()
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	bad := biFollowedSuspects(s.Run)
	for _, p := range s.Verdict.Properties {
		if p.Name == check.PropAgreement && !p.OK {
			bad = append(bad, p.Detail)
		}
	}
	if len(bad) > 0 {
		t.Errorf("seed %d: n=%d ring %v initiators %v, %q: %s\n\treplay: leaderlab run --sim -a %s -n %d --ids %s --initiators %s --seed %d --duration %v --chaos %q",
			cfg.Seed, cfg.Nodes, s.Run.Cluster.Ring, s.Run.Cluster.Initiators, cfg.Chaos, strings.Join(bad, "; "),
			cfg.Algo, cfg.Nodes, cfg.IDs, cfg.Initiators, cfg.Seed, cfg.Duration, cfg.Chaos)
	}
}

// biLastNode: the nodes of a ring die one by one, the highest first, a second apart; the last one
// left, alone on its ring, elects itself.
func biLastNode(t *testing.T, algo string) {
	for n := 2; n <= 5; n++ {
		cfg := launcher.DefaultConfig()
		cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = algo, n, int64(n), true
		cfg.Duration = time.Duration(n+3) * time.Second
		cfg.IDs = topology.Ascending
		if n == 5 {
			cfg.IDs = "2,1,3,5,4"
		}
		var steps []string
		for k := 1; k < n; k++ {
			steps = append(steps, fmt.Sprintf("at %ds kill highest", k))
		}
		cfg.Chaos = strings.Join(steps, "; ")
		biJudge(t, cfg)
	}
}

// followedSuspects lists every leader event naming an ID its node suspected then.
func biFollowedSuspects(run *logs.Run) []string {
	var bad []string
	for id, nl := range run.Nodes {
		suspected := map[int]bool{}
		inc := 0
		for _, e := range nl.Events {
			if e.Inc != inc {
				inc, suspected = e.Inc, map[int]bool{}
			}
			switch e.Ev {
			case logs.EvSuspect:
				suspected[e.Peer] = true
			case logs.EvTrust:
				delete(suspected, e.Peer)
			case logs.EvLeader:
				if suspected[e.Leader] {
					bad = append(bad, fmt.Sprintf("node %d followed %d, which it suspected", id, e.Leader))
				}
			}
		}
	}
	return bad
}
