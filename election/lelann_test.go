package election_test

import (
	"fmt"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/sim"
)

// llElect is elect(c) after h hops.
func llElect(c, h int) election.Message {
	return election.Message{Kind: election.LeLannElect, Cand: c, Hops: h}
}

// On the ring 1 -> 2 -> 3 -> 4 -> 5, node 3 gets the IDs 2, 1, 5, 4 after 1, 2, 3, 4 hops, and its
// own after 5.
func llHeardAll(epoch int) []election.Input {
	return []election.Input{owRecv(2, epoch, llElect(2, 1)), owRecv(2, epoch, llElect(1, 2)),
		owRecv(2, epoch, llElect(5, 3)), owRecv(2, epoch, llElect(4, 4))}
}

func TestLeLannHandlers(t *testing.T) {
	start := owStart()
	decided := append(append([]election.Input{start}, llHeardAll(1)...), owRecv(2, 1, llElect(3, 5)))
	runOwCases(t, "lelann", []owCase{
		{name: "an initiator sends elect(i)", self: 3, initiator: true, in: []election.Input{start},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, llElect(3, 1)), owPlan(4, 2)), participant: true},
		{name: "a non-initiator sleeps", self: 3, in: []election.Input{start}, want: owEffs(owPlan(4, 2))},
		{name: "the first elect wakes a node: its own ID first, then the one that woke it", self: 3, setup: []election.Input{start},
			in:   []election.Input{owRecv(2, 1, llElect(1, 2))},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, llElect(3, 1)), owSend(4, 1, llElect(1, 3))), participant: true},
		{name: "a participant notes every other ID and forwards it, smaller ones too", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, llElect(2, 1))}, want: owEffs(owSend(4, 1, llElect(2, 2))), participant: true},
		{name: "its own ID home after all the others: the largest leads", self: 3, initiator: true, setup: append([]election.Input{start}, llHeardAll(1)...),
			in: []election.Input{owRecv(2, 1, llElect(3, 5))}, want: owEffs(owLeader(5), owCancel()), leader: 5},
		{name: "the largest decides for itself the same way", self: 5, initiator: true,
			setup: []election.Input{start, owRecv(4, 1, llElect(4, 1)), owRecv(4, 1, llElect(3, 2)), owRecv(4, 1, llElect(2, 3)), owRecv(4, 1, llElect(1, 4))},
			in:    []election.Input{owRecv(4, 1, llElect(5, 5))}, want: owEffs(owLeader(5), owCancel()), leader: 5},
		{name: "without FIFO: its own ID home early waits for the IDs still on their way", self: 3, initiator: true,
			setup: []election.Input{start, owRecv(2, 1, llElect(2, 1)), owRecv(2, 1, llElect(5, 3))},
			in:    []election.Input{owRecv(2, 1, llElect(3, 5))}, want: nil, participant: true},
		{name: "...and the last of them decides", self: 3, initiator: true,
			setup: []election.Input{start, owRecv(2, 1, llElect(2, 1)), owRecv(2, 1, llElect(5, 3)), owRecv(2, 1, llElect(3, 5)), owRecv(2, 1, llElect(1, 2))},
			in:    []election.Input{owRecv(2, 1, llElect(4, 4))}, want: owEffs(owSend(4, 1, llElect(4, 5)), owLeader(5), owCancel()), leader: 5},
		{name: "a larger ID after the decision (a node back in the ring) becomes the leader", self: 3, initiator: true,
			setup: []election.Input{start, owRecv(2, 1, llElect(2, 1)), owRecv(2, 1, llElect(1, 2)), owRecv(2, 1, llElect(4, 3)), owRecv(2, 1, llElect(3, 4))},
			in:    []election.Input{owRecv(2, 1, llElect(5, 3))}, want: owEffs(owSend(4, 1, llElect(5, 4)), owLeader(5), owCancel()), leader: 5},
		{name: "a suspected node's ID is forwarded all the same (the suspicion may be stale)", self: 3, setup: []election.Input{start, owSuspect(5)},
			in:   []election.Input{owRecv(2, 1, llElect(5, 3))},
			want: owEffs(owElect(1), owStall(owStallAfter), owSend(4, 1, llElect(3, 1)), owSend(4, 1, llElect(5, 4))), participant: true},
		{name: "...but never leads", self: 3, setup: append(append([]election.Input{start}, llHeardAll(1)...), owSuspect(5)),
			in: []election.Input{owRecv(2, 1, llElect(3, 5))}, want: owEffs(owLeader(4), owCancel()), leader: 4},
		{name: "an ID round the ring and not home is dropped: its node is gone", self: 3, initiator: true, setup: []election.Input{start},
			in: []election.Input{owRecv(2, 1, llElect(4, 5))}, want: nil, participant: true},
		{name: "a newer epoch: the list starts again", self: 3, setup: decided,
			in:   []election.Input{owRecv(2, 2, llElect(4, 4))},
			want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, llElect(3, 1)), owSend(4, 2, llElect(4, 5))), participant: true},
		{name: "...so its own ID home with IDs missing decides nothing", self: 3, setup: append(decided, owRecv(2, 2, llElect(4, 4))),
			in: []election.Input{owRecv(2, 2, llElect(3, 5))}, want: nil, participant: true},
		{name: "a stale epoch is ignored", self: 3, setup: []election.Input{start, owRecv(2, 2, llElect(2, 1))},
			in: []election.Input{owRecv(2, 1, llElect(5, 3))}, want: nil, participant: true},
		{name: "the leader suspected: a new epoch", self: 3, setup: decided,
			in: []election.Input{owSuspect(5)}, want: owEffs(owElect(2), owStall(owStallAfter), owSend(4, 2, llElect(3, 1))), participant: true},
		{name: "a restarted node sends its ID in epoch 0", self: 3, inc: 2, in: []election.Input{start},
			want: owEffs(owElect(0), owStall(owStallAfter), owSend(4, 0, llElect(3, 1)), owPlan(4, 2)), participant: true},
		{name: "a ring of one: its own ID home at once", self: 1, initiator: true, ring: []int{1}, setup: []election.Input{start},
			in: []election.Input{owRecv(1, 1, llElect(1, 1))}, want: owEffs(owLeader(1), owCancel()), leader: 1},
	})
}

// TestLeLannElections: the sweep; exactly n² messages, whoever initiates, and no announcement.
func TestLeLannElections(t *testing.T) {
	owSweep(t, "lelann", func(r owRun, res owResult) string {
		if res.msgs != r.n*r.n || res.announce != 0 {
			return fmt.Sprintf("%d + %d messages, want exactly n² = %d + 0", res.msgs, res.announce, r.n*r.n)
		}
		return ""
	})
}

// TestLeLannWithoutFIFO: messages delivered in any order at all, even on one link: the hop count
// makes a node whose own ID came home early wait for the rest; still n² messages.
func TestLeLannWithoutFIFO(t *testing.T) {
	owUnorderedSweep(t, "lelann", 20, func(n, total int) string {
		if total != n*n {
			return fmt.Sprintf("%d messages, want exactly n² = %d", total, n*n)
		}
		return ""
	})
}

// TestLeLannStory: Staudek's ring of five with every node initiating: 25 elect messages, five per
// node, and every node finds 5 on its own list.
func TestLeLannStory(t *testing.T) {
	s, err := sim.New(sim.Config{Algo: "lelann", N: 5, Order: []int{3, 1, 4, 5, 2}, Seed: 3, NoEvents: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Run()
	if l, ok := s.Converged(); !ok || l != 5 || s.Sent(election.LeLannElect) != 25 || s.Messages() != 25 {
		t.Errorf("leader %d (agreed %v), %v; want 5 and 25 elect", l, ok, s.Counts())
	}
}
