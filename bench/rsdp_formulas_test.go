package bench

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

func rsdpNear(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// TestRSDPFormulas holds the formula functions to values worked out by hand.
func TestRSDPFormulas(t *testing.T) {
	// eq. 3: d = 100µs, t_p = 20µs, n = 5: 3(100 + 20·4) = 540µs
	rsdpNear(t, "eq3", rsdpEq3ConsensusTime(100, 20, 5), 540)
	rsdpNear(t, "eq3 n=1", rsdpEq3ConsensusTime(7, 1000, 1), 21)
	// eq. 6: (1-0.05)^6
	rsdpNear(t, "eq6", rsdpEq6ReplicaSuccess(0.05, 0, 3), 0.735091890625)
	// eq. 8: 1 - 0.95^18; 1 - (0.99·0.9^3)^2 = 1 - 0.72171^2
	rsdpNear(t, "eq8", rsdpEq8LastStateFailure(0.05, 0, 3), 0.6027856815417818)
	rsdpNear(t, "eq8 pf", rsdpEq8LastStateFailure(0.1, 0.01, 2), 1-0.72171*0.72171)
	rsdpNear(t, "eq8 no loss", rsdpEq8LastStateFailure(0, 0, 9), 0)
	// eq. 9
	for n, q := range map[int]int{1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 3, 33: 17} {
		if got := rsdpEq9Quorum(n); got != q {
			t.Errorf("eq9 q(%d) = %d, want %d", n, got, q)
		}
		if got := election.QuorumOf(n); got != q {
			t.Errorf("election.QuorumOf(%d) = %d, the reducer's quorum differs from eq. 9's %d", n, got, q)
		}
	}
	// eq. 10-11: n=3, P=0.5, q=2: 1 - (3·0.25·0.5 + 0.125) = 0.5
	rsdpNear(t, "eq11 n=3", rsdpEq11VoteFailure(0.5, 3), 0.5)
	// n=4, P=0.9, q=2: P(0) + P(1) = 0.0001 + 4·0.9·0.001 = 0.0037
	rsdpNear(t, "eq11 n=4", rsdpEq11VoteFailure(0.9, 4), 0.0037)
	// n=5, P=0.8, q=3: 1 - (10·0.512·0.04 + 5·0.4096·0.2 + 0.32768) = 1 - 0.94208
	rsdpNear(t, "eq11 n=5", rsdpEq11VoteFailure(0.8, 5), 0.05792)
	rsdpNear(t, "eq11 P=1", rsdpEq11VoteFailure(1, 7), 0)
	rsdpNear(t, "eq11 P=0", rsdpEq11VoteFailure(0, 7), 1)
	for n, k := range map[int]int{5: 2, 6: 3, 33: 17} {
		want := map[[2]int]float64{{5, 2}: 10, {6, 3}: 20, {33, 17}: 1166803110}[[2]int{n, k}]
		rsdpNear(t, "C(n,k)", rsdpBinomial(n, k), want)
	}
	// eq. 12: 50ms / 10 = 5ms; our staggering 50·7/50 = 7ms
	if got := rsdpEq12MutualDetection(50*time.Millisecond, 5); got != 5*time.Millisecond {
		t.Errorf("eq12 = %v, want 5ms", got)
	}
	if got := rsdpStaggeredDetection(50*time.Millisecond, 5); got != 7*time.Millisecond {
		t.Errorf("staggered = %v, want 7ms", got)
	}
	// N=3: gaps h/3 and 2h/3 over h: ((h/3)² + (2h/3)²)/2h = 5h/18; h(N+2)/2N² = 5h/18
	if got, want := rsdpStaggeredDetection(90*time.Millisecond, 3), 25*time.Millisecond; got != want {
		t.Errorf("staggered N=3 = %v, want %v", got, want)
	}
	// eq. 16, 29
	if got := rsdpEq16ConsensusMessages(5); got != 60 {
		t.Errorf("eq16 = %d, want 60", got)
	}
	if got := rsdpEq16ConsensusMessages(5); got != election.RSDPSessionMessages(5) {
		t.Errorf("eq16 = %d, the election package says %d", got, election.RSDPSessionMessages(5))
	}
	if got := rsdpEq29ObserverConsensus(3); got != 18 {
		t.Errorf("eq29 = %d, want 18", got)
	}
	// eq. 17: M_health = 20 for N=5; 2.5s / 50ms · 20 + 60 = 1060
	if got := rsdpEq17MutualHealth(5); got != 20 {
		t.Errorf("eq17 M_health = %d, want 20", got)
	}
	rsdpNear(t, "eq17 total", rsdpEq17TotalMessages(2500*time.Millisecond, 50*time.Millisecond, 20, 60), 1060)
	// eq. 19, 22, 25, 28
	if got := rsdpEq19ObserverDetection(50 * time.Millisecond); got != 25*time.Millisecond {
		t.Errorf("eq19 = %v, want 25ms", got)
	}
	if got := rsdpEq22ObserverHealth(9); got != 9 {
		t.Errorf("eq22 = %d, want 9", got)
	}
	if got := rsdpEq25ObserversDetection(60*time.Millisecond, 3); got != 10*time.Millisecond {
		t.Errorf("eq25 = %v, want 10ms", got)
	}
	if got := rsdpEq28ObserversHealth(3, 5); got != 15 {
		t.Errorf("eq28 = %d, want 15", got)
	}
}

// TestRSDPProtocolLoss checks the Monte Carlo against n=2 worked by hand: replica 1 needs 2's
// hello, its own hello to 2, 2's status and 2's share (4 deliveries), replica 2 the mirror; together
// all 6 messages. With p=0.1, q=1: P(all) = 0.9^6, P(one) = 0.9^4, P(neither) = 1 - 2·0.9^4 + 0.9^6.
func TestRSDPProtocolLoss(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all, vote, rep := rsdpProtocolLoss(2, 0.1, 200000, rng)
	for _, c := range []struct {
		what      string
		got, want float64
	}{
		{"fail all", all, 1 - math.Pow(0.9, 6)},
		{"fail vote", vote, 1 - 2*math.Pow(0.9, 4) + math.Pow(0.9, 6)},
		{"replica", rep, math.Pow(0.9, 4)},
	} {
		if math.Abs(c.got-c.want) > 0.005 {
			t.Errorf("n=2 p=0.1 %s = %.4f, want %.4f", c.what, c.got, c.want)
		}
	}
	// fail-all is eq. 8 whatever the dependency: every message must arrive
	all, _, _ = rsdpProtocolLoss(4, 0.02, 100000, rng)
	if want := rsdpEq8LastStateFailure(0.02, 0, 4); math.Abs(all-want) > 0.01 {
		t.Errorf("n=4 p=0.02 fail all = %.4f, eq. 8 says %.4f", all, want)
	}
	if all, vote, rep := rsdpProtocolLoss(5, 0, 100, rng); all != 0 || vote != 0 || rep != 1 {
		t.Errorf("no loss: %v %v %v, want 0 0 1", all, vote, rep)
	}
}
