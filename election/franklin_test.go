package election_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/sim"
)

// The helpers (biNode, the effect constructors, biSweep, biUnorderedSweep, biCrash, biLastNode)
// are in hirschberg_sinclair_test.go.

func frIDMsg(epoch, cand, round, d int) election.Message {
	return withDir(withPhase(biMsg(election.FranklinID, epoch, cand), round), d)
}
func frElectedMsg(epoch, l int) election.Message { return biMsg(election.FranklinElected, epoch, l) }

// frRingAhead is a ring in which node 5 wins round 0 while 4, across the passive 1, wins it too and
// is a round ahead of 5 before 5 has heard from its successor 2.
var frRingAhead = []int{4, 1, 5, 2, 3}

var (
	// frSleeper3: node 3 is not an initiator and has heard nothing.
	frSleeper3 = biState{self: 3, setup: []election.Input{biStart()}, doc: "3 sleeps"}
	// frActive3: node 3 initiated: its round-0 IDs are out.
	frActive3 = biState{self: 3, initiator: true, setup: []election.Input{biStart()}, doc: "3 active, round 0"}
	// frHalf3: node 3 has the round-0 ID of its predecessor 2.
	frHalf3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(), biRecv(2, frIDMsg(1, 2, 0, +1))},
		doc: "3 has 2's ID, round 0"}
	// frPassive3: node 3 lost round 0 to 4.
	frPassive3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(), biRecv(2, frIDMsg(1, 2, 0, +1)), biRecv(4, frIDMsg(1, 4, 0, -1))},
		doc: "3 passive"}
	// frLast3: node 3 is in round 2 (the last a ring of 5 can have).
	frLast3 = biState{self: 3, initiator: true, setup: []election.Input{biStart(),
		biRecv(2, frIDMsg(1, 2, 0, +1)), biRecv(4, frIDMsg(1, 1, 0, -1)), biRecv(2, frIDMsg(1, 1, 1, +1)), biRecv(4, frIDMsg(1, 2, 1, -1))},
		doc: "3 active, round 2"}
	// frLeader3: node 3's own ID came home.
	frLeader3 = biState{self: 3, initiator: true, setup: append(append([]election.Input(nil), frLast3.setup...), biRecv(2, frIDMsg(1, 3, 2, +1))),
		doc: "3 leads"}
	// frAhead5: in frRingAhead, node 5 has 1's round-0 ID and 4's round-1 ID, both from its
	// predecessor's side, and waits for 2's round-0 ID.
	frAhead5 = biState{ring: frRingAhead, self: 5, initiator: true, setup: []election.Input{biStart(), biRecv(1, frIDMsg(1, 1, 0, +1)), biRecv(1, frIDMsg(1, 4, 1, +1))},
		doc: "5 holds 4's round-1 ID"}
)

func TestFranklinHandlers(t *testing.T) {
	runBiCases(t, "franklin", []biCase{
		{"an initiator starts round 0: its ID both ways", biState{self: 3, initiator: true}, []election.Input{biStart()},
			biEffs(biElect(1), biStall(), biSend(4, frIDMsg(1, 3, 0, +1)), biSend(2, frIDMsg(1, 3, 0, -1)), biPlan(4, 2)), 0, true},
		{"a non-initiator sleeps, watching its neighbours", biState{self: 3}, []election.Input{biStart()}, biEffs(biPlan(4, 2)), 0, false},
		{"a sleeper woken by a smaller ID is active in round 0, and keeps that ID", frSleeper3, []election.Input{biRecv(2, frIDMsg(1, 2, 0, +1))},
			biEffs(biElect(1), biStall(), biSend(4, frIDMsg(1, 3, 0, +1)), biSend(2, frIDMsg(1, 3, 0, -1))), 0, true},
		{"...which counts: the other side's smaller ID ends its round 0", frSleeper3, []election.Input{biRecv(2, frIDMsg(1, 2, 0, +1)), biRecv(4, frIDMsg(1, 1, 0, -1))},
			biEffs(biSend(4, frIDMsg(1, 3, 1, +1)), biSend(2, frIDMsg(1, 3, 1, -1))), 0, true},
		{"a sleeper woken by a larger ID turns passive and relays it", frSleeper3, []election.Input{biRecv(4, frIDMsg(1, 4, 0, -1))},
			biEffs(biElect(1), biStall(), biSend(2, frIDMsg(1, 4, 0, -1))), 0, true},
		{"a sleeper woken by a later round turns passive", frSleeper3, []election.Input{biRecv(2, frIDMsg(1, 1, 1, +1))},
			biEffs(biElect(1), biStall(), biSend(4, frIDMsg(1, 1, 1, +1))), 0, true},
		{"one ID of the round: wait for the other side", frActive3, []election.Input{biRecv(4, frIDMsg(1, 1, 0, -1))}, nil, 0, true},
		{"a second ID from the same side in a round: a ring that did not close; a new epoch", frHalf3, []election.Input{biRecv(2, frIDMsg(1, 1, 0, +1))},
			biEffs(biElect(2), biStall(), biSend(4, frIDMsg(2, 3, 0, +1)), biSend(2, frIDMsg(2, 3, 0, -1))), 0, true},
		{"larger than both: a local maximum, round 1", frHalf3, []election.Input{biRecv(4, frIDMsg(1, 1, 0, -1))},
			biEffs(biSend(4, frIDMsg(1, 3, 1, +1)), biSend(2, frIDMsg(1, 3, 1, -1))), 0, true},
		{"a larger ID on one side: passive, and that ID goes no further", frHalf3, []election.Input{biRecv(4, frIDMsg(1, 4, 0, -1))}, nil, 0, true},
		{"a passive node relays either way", frPassive3, []election.Input{biRecv(4, frIDMsg(1, 5, 1, -1)), biRecv(2, frIDMsg(1, 1, 2, +1))},
			biEffs(biSend(4, frIDMsg(1, 1, 2, +1))), 0, true},
		{"a passive node drops its own ID (a ring that does not close)", frPassive3, []election.Input{biRecv(2, frIDMsg(1, 3, 1, +1))}, nil, 0, true},
		{"an ID of a later round is kept", frHalf3, []election.Input{biRecv(4, frIDMsg(1, 5, 1, -1))}, nil, 0, true},
		{"...and relayed, in order, when the node turns passive", frHalf3,
			[]election.Input{biRecv(4, frIDMsg(1, 5, 1, -1)), biRecv(4, frIDMsg(1, 5, 2, -1)), biRecv(4, frIDMsg(1, 4, 0, -1))},
			biEffs(biSend(2, frIDMsg(1, 5, 1, -1)), biSend(2, frIDMsg(1, 5, 2, -1))), 0, true},
		{"...or counted when the node catches up with it", frAhead5, []election.Input{biRecv(2, frIDMsg(1, 2, 0, -1))},
			biEffs(biSend(2, frIDMsg(1, 5, 1, +1)), biSend(1, frIDMsg(1, 5, 1, -1))), 0, true},
		{"...so that the next ID ends that round too", frAhead5, []election.Input{biRecv(2, frIDMsg(1, 2, 0, -1)), biRecv(2, frIDMsg(1, 4, 1, -1))},
			biEffs(biSend(2, frIDMsg(1, 5, 2, +1)), biSend(1, frIDMsg(1, 5, 2, -1))), 0, true},
		{"its own ID home: the only active node left leads", frLast3, []election.Input{biRecv(2, frIDMsg(1, 3, 2, +1))},
			biEffs(biLeader(3), biUnstall(), biSend(4, frElectedMsg(1, 3))), 3, false},
		{"...from either side", frLast3, []election.Input{biRecv(4, frIDMsg(1, 3, 2, -1))},
			biEffs(biLeader(3), biUnstall(), biSend(4, frElectedMsg(1, 3))), 3, false},
		{"the copy from the other side announces nothing more", frLeader3, []election.Input{biRecv(4, frIDMsg(1, 3, 2, -1))}, nil, 3, false},
		{"its own announcement home: the end", frLeader3, []election.Input{biRecv(2, frElectedMsg(1, 3))}, nil, 3, false},
		{"elected: follow and pass on", frPassive3, []election.Input{biRecv(2, frElectedMsg(1, 5))},
			biEffs(biLeader(5), biUnstall(), biSend(4, frElectedMsg(1, 5))), 5, false},
		{"elected below this node: the election missed it; a new epoch", frPassive3, []election.Input{biRecv(2, frElectedMsg(1, 2))},
			biEffs(biElect(2), biStall(), biSend(4, frIDMsg(2, 3, 0, +1)), biSend(2, frIDMsg(2, 3, 0, -1))), 0, true},
		{"an ID above the leader after the result: the election missed it; a new epoch",
			biState{self: 3, setup: []election.Input{biStart(), biRecv(2, frElectedMsg(1, 4))}}, []election.Input{biRecv(4, frIDMsg(1, 5, 0, -1))},
			biEffs(biElect(2), biStall(), biSend(4, frIDMsg(2, 3, 0, +1)), biSend(2, frIDMsg(2, 3, 0, -1))), 0, true},
		{"a round later than a ring of 5 can have is dropped", frLast3, []election.Input{biRecv(2, frIDMsg(1, 1, 3, +1))}, nil, 0, true},
		{"an ID without a direction is dropped", frHalf3, []election.Input{biRecv(4, frIDMsg(1, 1, 0, 0))}, nil, 0, true},
		{"an ID of a suspected node is dropped (its epoch opened already: a node no election reached yet opens one when a neighbour dies)", biState{self: 3, setup: []election.Input{biStart(), biSuspect(4)}},
			[]election.Input{biRecv(5, frIDMsg(1, 4, 0, -1))}, nil, 0, true},
		{"an announcement of a suspected ID is not followed", biState{self: 3, setup: []election.Input{biStart(), biSuspect(4)}},
			[]election.Input{biRecv(2, frElectedMsg(1, 4))}, nil, 0, true},
		{"a participant suspecting its successor starts a new epoch round it", frPassive3, []election.Input{biSuspect(4)},
			biEffs(biElect(2), biStall(), biSend(5, frIDMsg(2, 3, 0, +1)), biSend(2, frIDMsg(2, 3, 0, -1)), biPlanTo([]int{5, 2, 4}, 5, 2)), 0, true},
		{"...after which the old epoch's IDs count for nothing", biState{self: 3, initiator: true, setup: []election.Input{biStart(), biSuspect(4)}},
			[]election.Input{biRecv(2, frIDMsg(1, 2, 0, +1)), biRecv(5, frIDMsg(1, 1, 0, -1))}, nil, 0, true},
		{"a stalled election starts again", frHalf3, []election.Input{biStalled()},
			biEffs(biElect(2), biStallAfter(2*3*biT1), biSend(4, frIDMsg(2, 3, 0, +1)), biSend(2, frIDMsg(2, 3, 0, -1))), 0, true},
		{"a newer epoch wakes an active node afresh", frHalf3, []election.Input{biRecv(4, frIDMsg(3, 4, 0, -1))},
			biEffs(biElect(3), biStall(), biSend(2, frIDMsg(3, 4, 0, -1))), 0, true},
		{"an unknown kind is ignored", frActive3, []election.Input{biRecv(2, biMsg(election.HSProbe, 1, 2))}, nil, 0, true},
	})
}

// TestFranklinRingOfOne: a node whose every peer is suspected sends its ID to itself, and wins.
func TestFranklinRingOfOne(t *testing.T) {
	m := biNode(t, "franklin", nil, 3, true, 1)
	for _, p := range []int{2, 4, 1, 5} { // neighbours first: the ring closes over each in turn
		m.Step(biSuspect(p))
	}
	got := m.Step(biStart())
	want := biEffs(biElect(1), biStall(), biSend(3, frIDMsg(1, 3, 0, +1)), biSend(3, frIDMsg(1, 3, 0, -1)))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("start:\n got  %s\n want %s", fmtBiEffects(got), fmtBiEffects(want))
	}
	got = m.Step(biRecv(3, frIDMsg(1, 3, 0, -1)))
	if want := biEffs(biLeader(3), biUnstall(), biSend(3, frElectedMsg(1, 3))); !reflect.DeepEqual(got, want) {
		t.Fatalf("own ID:\n got  %s\n want %s", fmtBiEffects(got), fmtBiEffects(want))
	}
	for _, in := range []election.Input{biRecv(3, frIDMsg(1, 3, 0, +1)), biRecv(3, frElectedMsg(1, 3))} {
		if got := m.Step(in); got != nil {
			t.Errorf("%v: %s, want nothing", in.Msg.Kind, fmtBiEffects(got))
		}
	}
	if m.Leader() != 3 || m.Participant() {
		t.Errorf("leader %d participant %v, want 3 false", m.Leader(), m.Participant())
	}
}

func TestFranklinRegistered(t *testing.T) {
	a, err := election.Lookup("franklin")
	if err != nil {
		t.Fatal(err)
	}
	if a.Accepts("biring") != nil || a.Accepts("ring") == nil || a.Accepts("mesh") == nil || a.Topologies[0] != "biring" {
		t.Errorf("topologies %v, want biring only", a.Topologies)
	}
	if !a.IsElection(election.FranklinID) || !a.IsAnnounce(election.FranklinElected) || a.IsElection(election.FranklinElected) {
		t.Errorf("kinds %v, announce %v", a.Kinds, a.Announce)
	}
	for _, c := range []struct{ n, init, want int }{
		{1, 1, 3}, {2, 2, 10}, {3, 1, 15}, {4, 4, 28}, {7, 2, 49}, {8, 8, 72}, {12, 3, 108}, {5, 0, 0},
	} {
		if got, ok := a.Bound(c.n, c.init); !ok || got != c.want {
			t.Errorf("Bound(%d, %d) = %d, %v; want %d", c.n, c.init, got, ok, c.want)
		}
	}
	_, err = a.New(election.Config{Self: 1, IDs: []int{1, 2}, Ring: []int{1, 2}, Topology: "mesh", Incarnation: 1})
	if err == nil || !strings.Contains(err.Error(), "biring") {
		t.Errorf("a mesh: error %v, want one naming biring", err)
	}
}

// franklinCost is what an election costs when every node initiates: 2n per round, a round for each
// set of local maxima until one is left, and a last round for its ID to come home; then n elected.
func franklinCost(order []int) int {
	n := len(order)
	active, rounds := order, 1
	for len(active) > 1 {
		var next []int
		for i, id := range active {
			l, r := active[(i+len(active)-1)%len(active)], active[(i+1)%len(active)]
			if id > l && id > r {
				next = append(next, id)
			}
		}
		active = next
		rounds++
	}
	return 2*n*rounds + n
}

// TestFranklinStories: whole elections with the cost counted by hand.
func TestFranklinStories(t *testing.T) {
	for _, c := range []struct {
		doc        string
		order      []int
		initiators []int
		ids        int
	}{
		{"one node: its IDs come home at once", []int{1}, nil, 2},
		// 4 and 3 survive round 0, 4 round 1, and 4's IDs go round in round 2: the bound, 28.
		{"four, halving every round", []int{4, 1, 3, 2}, nil, 24},
		// 8, 5, 7, 6; then 8, 7; then 8; then 8's IDs come home: the bound, 72.
		{"eight, halving every round", []int{8, 1, 5, 2, 7, 3, 6, 4}, nil, 64},
		// Only the largest is a local maximum: 2 rounds.
		{"eight descending", []int{8, 7, 6, 5, 4, 3, 2, 1}, nil, 32},
		// The largest alone initiates: everybody else wakes on its ID and relays: one round.
		{"eight, the largest alone initiates", []int{8, 1, 5, 2, 7, 3, 6, 4}, []int{8}, 16},
	} {
		t.Run(c.doc, func(t *testing.T) {
			n := len(c.order)
			for seed := range int64(20) {
				s, err := sim.New(sim.Config{Algo: "franklin", N: n, Order: c.order, Initiators: c.initiators, Seed: seed, NoEvents: true})
				if err != nil {
					t.Fatal(err)
				}
				s.Run()
				if l, ok := s.Converged(); !ok || l != n {
					t.Fatalf("seed %d: leader %d, agreement %v", seed, l, ok)
				}
				if got, e := s.Sent(election.FranklinID), s.Sent(election.FranklinElected); got != c.ids || e != n {
					t.Fatalf("seed %d: %d IDs and %d elected, want %d and %d", seed, got, e, c.ids, n)
				}
			}
		})
	}
}

func TestFranklinElections(t *testing.T) { biSweep(t, "franklin", franklinCost) }

// TestFranklinWithoutFIFO: the algorithm declares no need of FIFO links; messages delivered in any
// order at all — a round ahead, IDs overtaking each other — still elect N, at exactly the same
// cost when every node initiates.
func TestFranklinWithoutFIFO(t *testing.T) { biUnorderedSweep(t, "franklin", 20, franklinCost) }

func TestFranklinCrash(t *testing.T) { biCrash(t, "franklin") }

func TestFranklinLastNode(t *testing.T) { biLastNode(t, "franklin") }
