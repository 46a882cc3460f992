package election_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/sim"
)

// Peterson's messages: the first and second of round k as a red node sends them (one link
// crossed), and the announcement; hops sets the links crossed.
func pt1(alias, k int) election.Message {
	return election.Message{Kind: election.PetersonAlias1, Cand: alias, Phase: k, Hops: 1}
}
func pt2(alias, k int) election.Message {
	return election.Message{Kind: election.PetersonAlias2, Cand: alias, Phase: k, Hops: 1}
}
func hops(m election.Message, h int) election.Message { m.Hops = h; return m }
func ptLeader(l int) election.Message {
	return election.Message{Kind: election.PetersonLeader, Cand: l}
}

func TestPetersonHandlers(t *testing.T) {
	start := owStart()
	in := func(ins ...election.Input) []election.Input { return ins }
	recv := func(m election.Message) election.Input { return owRecv(2, 1, m) }
	// States of node 3 (successor 4, predecessor 2) in epoch 1.
	var (
		red1   = in(start)                                                    // red, round 1, alias 3
		red2   = in(start, recv(pt1(5, 1)), recv(pt2(1, 1)))                  // red, round 2, alias 5
		black  = in(start, recv(pt1(2, 1)), recv(pt2(1, 1)))                  // black after round 1
		winner = in(start, recv(pt1(5, 1)), recv(pt2(1, 1)), recv(pt1(5, 2))) // its alias 5 came home
	)
	runOwCases(t, "peterson", []owCase{
		{name: "an initiator begins round 1 with its own ID", self: 3, initiator: true, in: in(start),
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, pt1(3, 1)), owPlan(4, 2)), participant: true},
		{name: "a non-initiator sleeps", self: 3, in: in(start), want: owEffs(owPlan(4, 2))},
		{name: "an alias wakes a node: it begins round 1, then passes the alias on", self: 3, setup: in(start),
			in:   in(recv(pt1(2, 1))),
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, pt1(3, 1)), owSend(4, 1, pt2(2, 1))), participant: true},
		{name: "a red node passes its first alias on", self: 3, initiator: true, setup: red1,
			in: in(recv(pt1(5, 1))), want: owEffs(owSend(4, 1, pt2(5, 1))), participant: true},
		{name: "a local maximum: it stays red with that alias and begins round 2", self: 3, initiator: true, setup: in(start, recv(pt1(5, 1))),
			in: in(recv(pt2(1, 1))), want: owEffs(owSend(4, 1, pt1(5, 2))), participant: true},
		{name: "the first alias below its own: it turns black", self: 3, initiator: true, setup: in(start, recv(pt1(2, 1))),
			in: in(recv(pt2(1, 1))), want: nil, participant: true},
		{name: "the first alias below the second: it turns black", self: 3, initiator: true, setup: in(start, recv(pt1(4, 1))),
			in: in(recv(pt2(5, 1))), want: nil, participant: true},
		{name: "a black node relays both kinds unchanged, but for one more link crossed", self: 3, initiator: true, setup: append(black, recv(pt1(5, 2))),
			in: in(recv(pt2(4, 2))), want: owEffs(owSend(4, 1, hops(pt2(4, 2), 2))), participant: true},
		{name: "an alias that went round through relays only: no red node is left to take it, a new epoch", self: 3, initiator: true, setup: black,
			// node 3 opens the next epoch of its own above 1 (≡ its ring position 2 mod 5): 2
			in: in(recv(hops(pt1(4, 2), 5))), want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, pt1(3, 1))), participant: true},
		{name: "its own alias comes home: it announces that ID", self: 3, initiator: true, setup: red2,
			in: in(recv(pt1(5, 2))), want: owEffs(owLeader(5), owCancel(), owSend(4, 1, ptLeader(5))), leader: 5},
		{name: "the announcement comes home: it stops", self: 3, initiator: true, setup: winner,
			in: in(recv(ptLeader(5))), want: nil, leader: 5},
		{name: "a black node follows the announcement and passes it on", self: 3, initiator: true, setup: black,
			in: in(recv(ptLeader(5))), want: owEffs(owLeader(5), owCancel(), owSend(4, 1, ptLeader(5))), leader: 5},
		{name: "without FIFO: a second alias that comes first waits", self: 3, initiator: true, setup: red1,
			in: in(recv(pt2(1, 1))), want: nil, participant: true},
		{name: "...and is taken up after the first", self: 3, initiator: true, setup: append(red1, recv(pt2(1, 1))),
			in: in(recv(pt1(5, 1))), want: owEffs(owSend(4, 1, pt2(5, 1)), owSend(4, 1, pt1(5, 2))), participant: true},
		{name: "a later round's alias waits, and is relayed when the node turns black", self: 3, initiator: true,
			setup: in(start, recv(pt1(5, 2)), recv(pt1(2, 1))),
			in:    in(recv(pt2(1, 1))), want: owEffs(owSend(4, 1, hops(pt1(5, 2), 2))), participant: true},
		{name: "...or taken up when the node reaches that round", self: 3, initiator: true,
			setup: in(start, recv(pt1(4, 2)), recv(pt1(5, 1))),
			in:    in(recv(pt2(1, 1))), want: owEffs(owSend(4, 1, pt1(5, 2)), owSend(4, 1, pt2(4, 2))), participant: true},
		{name: "an earlier round's alias is ignored", self: 3, initiator: true, setup: red2,
			in: in(recv(pt1(4, 1))), want: nil, participant: true},
		{name: "a suspected largest alias is not announced: the election waits for a new epoch", self: 3,
			setup: in(start, recv(pt1(5, 1)), owSuspect(5), recv(pt2(1, 1))),
			in:    in(recv(pt1(5, 2))), want: nil, participant: true},
		{name: "a suspected leader is not followed", self: 3, setup: in(start, recv(pt1(2, 1)), owSuspect(5), recv(pt2(1, 1))),
			in: in(recv(ptLeader(5))), want: nil, participant: true},
		{name: "the announcement wakes a node it outranks: elect again", self: 3, inc: 2, setup: in(start),
			in: in(owRecv(2, 4, ptLeader(2))),
			// node 3 opens the next epoch of its own above 4 (≡ its ring position 2 mod 5): 7
			want: owEffs(owElect(4), owStall(owStallAfter), owElect(7), owStall(owStallAfter), owSend(4, 7, pt1(3, 1))), participant: true},
		{name: "the announcement of a higher node wakes a node: it follows", self: 3, inc: 2, setup: in(start),
			in: in(owRecv(2, 4, ptLeader(5))), want: owEffs(owElect(4), owStall(owStallAfter), owLeader(5), owCancel(), owSend(4, 4, ptLeader(5))), leader: 5},
		{name: "a restarted node begins round 1 in epoch 0", self: 3, inc: 2, in: in(start),
			want: owEffs(owElect(0), owStall(owStallAfter), owSend(4, 0, pt1(3, 1)), owPlan(4, 2)), participant: true},
		{name: "a newer epoch: a black node is red again, in round 1", self: 3, initiator: true, setup: black,
			in:   in(owRecv(2, 2, pt1(4, 1))),
			want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, pt1(3, 1)), owSend(4, 2, pt2(4, 1))), participant: true},
		{name: "the leader suspected: a new epoch", self: 3, initiator: true, setup: append(black, recv(ptLeader(5))),
			in: in(owSuspect(5)), want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, pt1(3, 1))), participant: true},
		{name: "a ring of one: its alias comes home at once", self: 1, initiator: true, ring: []int{1}, setup: in(start),
			in: in(owRecv(1, 1, pt1(1, 1))), want: owEffs(owLeader(1), owCancel(), owSend(1, 1, ptLeader(1))), leader: 1},
		{name: "a ring of one: the announcement comes home", self: 1, initiator: true, ring: []int{1}, setup: in(start, owRecv(1, 1, pt1(1, 1))),
			in: in(owRecv(1, 1, ptLeader(1))), want: nil, leader: 1},
	})
}

// TestPetersonElections: the sweep, within 2n⌊log₂ n⌋ + 2n, with one announcement of n messages.
func TestPetersonElections(t *testing.T) {
	owSweep(t, "peterson", func(r owRun, res owResult) string {
		if res.announce != r.n {
			return fmt.Sprintf("%d leader messages, want n = %d", res.announce, r.n)
		}
		return ""
	})
}

// TestPetersonWithoutFIFO: messages in any order at all; the early ones wait at the red node they
// are for.
func TestPetersonWithoutFIFO(t *testing.T) { owUnorderedSweep(t, "peterson", 20, nil) }

// TestPetersonStories: rings worked by hand, with the node that announces (the last red node,
// whose alias is the largest ID: not the largest ID itself).
//   - 4, 1, 3, 2: round 1 leaves 1 (alias 4) and 2 (alias 3) red, round 2 leaves 2 with alias 4,
//     which goes round alone: 4+4 + 4+4 + 4, then 4 leader = 24, the bound for n = 4. The same with
//     a single initiator: every node joins round 1 when it wakes.
//   - ascending 1..6: only 1 stays red after round 1 (its red predecessor 6 is a local maximum),
//     with alias 6: 6+6 + 6 + 6 = 24 = 4n.
//   - descending 6..1: only 5 stays red (6 precedes it): 4n again, announced by 5.
func TestPetersonStories(t *testing.T) {
	for _, c := range []struct {
		order            []int
		initiators       []int
		alias1, alias2   int
		announcer, total int
	}{
		{[]int{4, 1, 3, 2}, nil, 12, 8, 2, 24},
		{[]int{4, 1, 3, 2}, []int{3}, 12, 8, 2, 24},
		{[]int{1, 2, 3, 4, 5, 6}, nil, 12, 6, 1, 24},
		{[]int{6, 5, 4, 3, 2, 1}, []int{1}, 12, 6, 5, 24},
	} {
		n := len(c.order)
		s, err := sim.New(sim.Config{Algo: "peterson", N: n, Order: c.order, Initiators: c.initiators, Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		run := s.Run()
		// The announcer sends a leader message before it receives one.
		var announcers []int
		for id := 1; id <= n; id++ {
			for _, e := range run.Nodes[id].Events {
				if e.Msg != nil && e.Msg.Kind == election.PetersonLeader {
					if e.Ev == "send" {
						announcers = append(announcers, id)
					}
					break
				}
			}
		}
		got := [3]int{s.Sent(election.PetersonAlias1), s.Sent(election.PetersonAlias2), s.Sent(election.PetersonLeader)}
		want := [3]int{c.alias1, c.alias2, n}
		if l, ok := s.Converged(); !ok || l != n || got != want || s.Messages() != c.total || !slices.Equal(announcers, []int{c.announcer}) {
			t.Errorf("ring %v initiators %v: leader %d (agreed %v), alias1/alias2/leader %v, announced by %v; want %d, %v, %d",
				c.order, c.initiators, l, ok, got, announcers, n, want, c.announcer)
		}
	}
}

// TestPetersonBoundIsTight: over every ring of n = 1..7 nodes, the largest count is the bound
// 2n⌊log₂ n⌋ + 2n exactly: some ring halves the red nodes in every round, for every n, not only for
// powers of two (n = 5: 5, 2, 1 red nodes, 10 + 10 + 5 + 5 = 30). The count depends neither on the
// delays nor on the initiators (every node is red in round 1), so one unordered run per ring tells it.
func TestPetersonBoundIsTight(t *testing.T) {
	a, _ := election.Lookup("peterson")
	for n := 1; n <= 7; n++ {
		worst := 0
		var worstRing []int
		// Rings are rotations of each other: fix ID n first and permute the rest.
		rest := make([]int, n-1)
		for i := range rest {
			rest[i] = i + 1
		}
		permuteInts(rest, func(p []int) {
			order := append([]int{n}, p...)
			_, sent := owUnordered(t, "peterson", order, nil, int64(len(p)))
			total := sent[election.PetersonAlias1] + sent[election.PetersonAlias2] + sent[election.PetersonLeader]
			if total > worst {
				worst, worstRing = total, slices.Clone(order)
			}
		})
		bound, _ := a.Bound(n, n)
		if worst != bound {
			t.Errorf("n=%d: the worst ring %v costs %d, bound %d", n, worstRing, worst, bound)
		}
		t.Logf("n=%d: worst %d on %v, bound %d", n, worst, worstRing, bound)
	}
}

// permuteInts calls visit with every permutation of a (Heap's algorithm; a is reordered).
func permuteInts(a []int, visit func([]int)) {
	var gen func(k int)
	gen = func(k int) {
		if k <= 1 {
			visit(a)
			return
		}
		for i := 0; i < k-1; i++ {
			gen(k - 1)
			if k%2 == 0 {
				a[i], a[k-1] = a[k-1], a[i]
			} else {
				a[0], a[k-1] = a[k-1], a[0]
			}
		}
		gen(k - 1)
	}
	gen(len(a))
}
