package sim

import (
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// The seed stories as scripts in the manual mode (the detector off: only the suspicions the story
// names reach a machine), with exact outcomes and message counts. T = 200ms, T1 = 600ms, links
// 1..5ms.

// storySim builds a cluster of n in which the highest ID was the only initiator: it announced
// itself at once (n-1 coordinators), and every other node woke on that announcement.
func storySim(t *testing.T, n int) *Sim {
	t.Helper()
	s, err := New(Config{Algo: "bully", N: n, Seed: 1, Initiators: []int{n}})
	if err != nil {
		t.Fatal(err)
	}
	s.RunFor(50 * time.Millisecond)
	for id := 1; id <= n; id++ {
		if got := s.Leader(id); got != n {
			t.Fatalf("setup: node %d follows %d, want %d", id, got, n)
		}
	}
	if got := s.Sent("coordinator"); got != n-1 {
		t.Fatalf("setup: %d coordinators, want %d", got, n-1)
	}
	s.ResetCounts()
	return s
}

type counts struct{ sent, delivered, dropped int }

func wantCounts(t *testing.T, s *Sim, phase string, want map[string]counts) {
	t.Helper()
	for _, k := range []string{"election", "ok", "coordinator"} {
		got := counts{s.Sent(k), s.Delivered(k), s.Dropped(k)}
		if got != want[k] {
			t.Errorf("%s: %s sent/delivered/dropped = %v, want %v", phase, k, got, want[k])
		}
	}
}

func wantLeaders(t *testing.T, s *Sim, phase string, want map[int]int) {
	t.Helper()
	for id, l := range want {
		if got := s.Leader(id); got != l {
			t.Errorf("%s: node %d follows %d, want %d", phase, id, got, l)
		}
		if s.Participant(id) {
			t.Errorf("%s: node %d is still a participant", phase, id)
		}
	}
}

// Seed 000, Fig. 2, renumbered 0..7 -> 1..8: coordinator 8 has crashed; 5 notices first and sends
// election to 6, 7 and 8; 6 and 7 answer ok; 6 and 7 hold elections of their own; 8 stays silent,
// so after T, 7 wins and announces itself.
func TestStorySeed000EightNodes(t *testing.T) {
	s := storySim(t, 8)
	if err := s.Crash(8); err != nil {
		t.Fatal(err)
	}
	if err := s.Inject(5, election.Input{Kind: election.InSuspect, From: 8}); err != nil {
		t.Fatal(err)
	}
	if !s.Participant(5) || s.Leader(5) != 0 {
		t.Fatalf("5 did not start an election")
	}
	s.RunFor(20 * time.Millisecond)
	// 6 and 7 answered 5 and hold elections; nobody has won (T = 200ms).
	for _, id := range []int{5, 6, 7} {
		if !s.Participant(id) {
			t.Errorf("after 20ms: node %d is not a participant", id)
		}
	}
	s.RunFor(time.Second)
	wantLeaders(t, s, "end", map[int]int{1: 7, 2: 7, 3: 7, 4: 7, 5: 7, 6: 7, 7: 7})
	// 7 won exactly T after it began its election: nobody above it answered.
	var elect, won int64
	for _, e := range s.Log().Nodes[7].Events {
		switch {
		case e.Ev == "elect":
			elect = e.TS
		case e.Ev == "leader" && e.Leader == 7:
			won = e.TS
		}
	}
	if d := time.Duration(won - elect); d != s.Config().ElectionTimeout {
		t.Errorf("7 won %v after its elect, want T = %v", d, s.Config().ElectionTimeout)
	}
	wantCounts(t, s, "failover", map[string]counts{
		// 5 -> 6, 7, 8; 6 -> 7, 8; 7 -> 8: 6 sent; the 3 to the dead 8 are refused (send, then drop).
		"election": {6, 3, 3},
		// 6 -> 5 and 7 -> 5 (5 waits for T1 after the first), 7 -> 6.
		"ok": {3, 3, 0},
		// 7 wins after T (8 never answered) and announces itself to 1..6.
		"coordinator": {6, 6, 0},
	})
	if p := judge(s, s.Finish()); len(p) > 0 {
		t.Error(p)
	}
}

// Seed 001, the P1..P4 example, step by step.
func TestStorySeed001FourProcesses(t *testing.T) {
	// 1. Four active processes; P4 is the coordinator.
	s := storySim(t, 4)
	// 2. P1 and P4 fail. P2 gets no answer from P4 within T (it suspects P4) and sends its election
	// (to P3, and to P4, refused).
	if err := s.Crash(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Crash(4); err != nil {
		t.Fatal(err)
	}
	if err := s.Inject(2, election.Input{Kind: election.InSuspect, From: 4}); err != nil {
		t.Fatal(err)
	}
	// 3. P3 answers P2 with ok (a reject) and sends its own election to P4.
	// 4. P2 got the reject and waits T1 for P3's coordinator.
	s.RunFor(20 * time.Millisecond)
	if !s.Participant(2) || !s.Participant(3) {
		t.Fatalf("after 20ms: P2 and P3 should both be in the election")
	}
	// 5. P4 stays silent for T; P3 declares itself coordinator and tells everyone (P1 is down).
	s.RunFor(time.Second)
	wantLeaders(t, s, "step 5", map[int]int{2: 3, 3: 3})
	wantCounts(t, s, "steps 2-5", map[string]counts{
		"election":    {3, 1, 2}, // P2 -> P3, P4; P3 -> P4; both to P4 refused
		"ok":          {1, 1, 0}, // P3 -> P2
		"coordinator": {2, 1, 1}, // P3 -> P1 (down: refused), P2
	})
	s.ResetCounts()

	// 6. P1 recovers and sends its election to P2, P3 and P4.
	if err := s.Restart(1); err != nil {
		t.Fatal(err)
	}
	// 7. P2 and P3 answer with ok and start their own elections; P3 wins again the same way (P4
	// silent for T).
	s.RunFor(20 * time.Millisecond)
	for _, id := range []int{1, 2, 3} {
		if !s.Participant(id) {
			t.Errorf("step 7: P%d should be in the election", id)
		}
	}
	s.RunFor(time.Second)
	wantLeaders(t, s, "step 7", map[int]int{1: 3, 2: 3, 3: 3})
	wantCounts(t, s, "steps 6-7", map[string]counts{
		// P1 -> P2, P3, P4; P2 -> P3, P4; P3 -> P4: the three to P4 refused.
		"election": {6, 3, 3},
		// P2 -> P1, P3 -> P1, P3 -> P2.
		"ok": {3, 3, 0},
		// P3 -> P1, P2.
		"coordinator": {2, 2, 0},
	})
	s.ResetCounts()

	// 8. P4 recovers: the highest ID announces itself to P1, P2, P3 without an election.
	if err := s.Restart(4); err != nil {
		t.Fatal(err)
	}
	s.RunFor(20 * time.Millisecond)
	wantLeaders(t, s, "step 8", map[int]int{1: 4, 2: 4, 3: 4, 4: 4})
	wantCounts(t, s, "step 8", map[string]counts{
		"election":    {0, 0, 0},
		"ok":          {0, 0, 0},
		"coordinator": {3, 3, 0},
	})
	if p := judge(s, s.Finish()); len(p) > 0 {
		t.Error(p)
	}
}
