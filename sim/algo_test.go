package sim

import (
	"slices"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

// ringMax is a test-only ring algorithm (Chang-Roberts without its refinements): every initiator
// sends its ID to its successor; a node forwards a candidate higher than itself and swallows a lower
// one; the node that gets its own ID back has the highest and sends "elected" around. It has no
// StepInto, so the simulator's plain Step path runs, on a ring.
type ringMax struct {
	self, succ, leader int
	initiator, sent    bool
}

func init() {
	election.Register(election.Algorithm{
		Name:       "sim-test-ringmax",
		Topologies: []string{"ring", "biring"},
		Kinds:      []string{"cand"},
		Announce:   []string{"elected"},
		New: func(c election.Config) (election.Machine, error) {
			i := slices.Index(c.Ring, c.Self)
			return &ringMax{self: c.Self, succ: c.Ring[(i+1)%len(c.Ring)], initiator: c.Initiator}, nil
		},
	})
}

func (r *ringMax) Leader() int       { return r.leader }
func (r *ringMax) Participant() bool { return r.sent && r.leader == 0 }

func (r *ringMax) Step(in election.Input) []election.Effect {
	send := func(kind string, cand int) election.Effect {
		return election.Effect{Kind: election.EffSend, To: r.succ, Msg: election.Message{Kind: kind, Cand: cand}}
	}
	switch {
	case in.Kind == election.InStart && r.initiator:
		r.sent = true
		return []election.Effect{{Kind: election.EffElect}, send("cand", r.self)}
	case in.Kind != election.InRecv:
	case in.Msg.Kind == "cand" && in.Msg.Cand > r.self:
		r.sent = true
		return []election.Effect{send("cand", in.Msg.Cand)}
	case in.Msg.Kind == "cand" && in.Msg.Cand == r.self:
		r.leader = r.self
		return []election.Effect{{Kind: election.EffLeader, Leader: r.self}, send("elected", r.self)}
	case in.Msg.Kind == "elected" && in.Msg.Cand != r.self:
		r.leader = in.Msg.Cand
		return []election.Effect{{Kind: election.EffLeader, Leader: r.leader}, send("elected", r.leader)}
	}
	return nil
}

func TestAnotherAlgorithmOnARing(t *testing.T) {
	order := []int{3, 1, 4, 5, 2}
	s := mustNew(t, Config{Algo: "sim-test-ringmax", N: 5, Order: order, Seed: 9})
	run := s.Run()
	if l, ok := s.Converged(); !ok || l != 5 {
		t.Fatalf("leader %d (agreement %v), want 5", l, ok)
	}
	// Candidates: 3 goes 3->1->4 (2), 1 goes 1->4 (1), 4 goes 4->5 (1), 2 goes 2->3 (1), and 5 goes
	// all the way round (5). Then "elected" from 5 to 2, 3, 1, 4 and back to 5 (5).
	if c, e := s.Sent("cand"), s.Sent("elected"); c != 10 || e != 5 {
		t.Errorf("sent %d cand and %d elected, want 10 and 5", c, e)
	}
	succ := map[int]int{3: 1, 1: 4, 4: 5, 5: 2, 2: 3}
	for id, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Ev == "send" && e.To != succ[id] {
				t.Errorf("node %d sent to %d, not to its successor %d", id, e.To, succ[id])
			}
		}
	}
	if run.Cluster.Topology != "ring" || !slices.Equal(run.Cluster.Ring, order) || run.Cluster.Placement != "3,1,4,5,2" {
		t.Errorf("cluster: topology %s ring %v placement %s", run.Cluster.Topology, run.Cluster.Ring, run.Cluster.Placement)
	}
	if got := s.links[1]; !slices.Equal(got, []int{4, 5, 2, 3}) {
		t.Errorf("node 1 links to %v, want its ring successors in order", got)
	}
	bi := mustNew(t, Config{Algo: "sim-test-ringmax", N: 5, Order: order, Topology: "biring"})
	if got := bi.links[1]; !slices.Equal(got, []int{4, 3, 5, 2}) {
		t.Errorf("on a two-way ring node 1 links to %v, want 4, 3, 5, 2 (outwards)", got)
	}
}
