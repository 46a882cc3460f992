package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s = %.12g, want %.12g", what, got, want)
	}
}

// TestRSDPFormulas holds the formula functions to values worked out by hand.
func TestRSDPFormulas(t *testing.T) {
	// eq. 3: d = 100µs, t_p = 20µs, n = 5: 3(100 + 20·4) = 540µs
	near(t, "eq3", rsdpEq3ConsensusTime(100, 20, 5), 540)
	near(t, "eq3 n=1", rsdpEq3ConsensusTime(7, 1000, 1), 21)
	// eq. 6: (1-0.05)^6
	near(t, "eq6", rsdpEq6ReplicaSuccess(0.05, 0, 3), 0.735091890625)
	// eq. 8: 1 - 0.95^18; 1 - (0.99·0.9^3)^2 = 1 - 0.72171^2
	near(t, "eq8", rsdpEq8LastStateFailure(0.05, 0, 3), 0.6027856815417818)
	near(t, "eq8 pf", rsdpEq8LastStateFailure(0.1, 0.01, 2), 1-0.72171*0.72171)
	near(t, "eq8 no loss", rsdpEq8LastStateFailure(0, 0, 9), 0)
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
	near(t, "eq11 n=3", rsdpEq11VoteFailure(0.5, 3), 0.5)
	// n=4, P=0.9, q=2: P(0) + P(1) = 0.0001 + 4·0.9·0.001 = 0.0037
	near(t, "eq11 n=4", rsdpEq11VoteFailure(0.9, 4), 0.0037)
	// n=5, P=0.8, q=3: 1 - (10·0.512·0.04 + 5·0.4096·0.2 + 0.32768) = 1 - 0.94208
	near(t, "eq11 n=5", rsdpEq11VoteFailure(0.8, 5), 0.05792)
	near(t, "eq11 P=1", rsdpEq11VoteFailure(1, 7), 0)
	near(t, "eq11 P=0", rsdpEq11VoteFailure(0, 7), 1)
	for n, k := range map[int]int{5: 2, 6: 3, 33: 17} {
		want := map[[2]int]float64{{5, 2}: 10, {6, 3}: 20, {33, 17}: 1166803110}[[2]int{n, k}]
		near(t, "C(n,k)", rsdpBinomial(n, k), want)
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
	near(t, "eq17 total", rsdpEq17TotalMessages(2500*time.Millisecond, 50*time.Millisecond, 20, 60), 1060)
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

// rsdpFixture builds a logs.Run of three RSDP nodes by hand.
type rsdpFixture struct {
	run *logs.Run
	seq map[int]int
}

const fixBase = int64(1_700_000_000_000_000_000)

func us(x int64) int64 { return fixBase + x*1000 }

func newRSDPFixture() *rsdpFixture {
	f := &rsdpFixture{seq: map[int]int{}, run: &logs.Run{
		Cluster: rundir.Cluster{Algo: "rsdp", Nodes: []rundir.Node{{ID: 1}, {ID: 2}, {ID: 3}}},
		Nodes:   map[int]*logs.NodeLog{1: {Node: 1}, 2: {Node: 2}, 3: {Node: 3}},
	}}
	return f
}

func (f *rsdpFixture) add(node int, e logs.Event) {
	e.Node, e.Inc = node, 1
	f.run.Nodes[node].Events = append(f.run.Nodes[node].Events, e)
}

// msg sends one message at ts and, unless lost, delivers it delay µs later; a lost one is dropped by
// the receiver's loss rule.
func (f *rsdpFixture) msg(from, to int, kind string, round int, ts, delay int64, lost bool) {
	f.seq[from]++
	m := election.Message{ID: strings.Join([]string{strconv.Itoa(from), "1", strconv.Itoa(f.seq[from])}, "."), Kind: kind, Round: round}
	f.add(from, logs.Event{TS: us(ts), Ev: logs.EvSend, To: to, Msg: &m})
	if lost {
		f.add(to, logs.Event{TS: us(ts + delay), Ev: logs.EvDrop, From: from, Msg: &m, Reason: "loss 5%: at 0s link"})
		return
	}
	f.add(to, logs.Event{TS: us(ts + delay), Ev: logs.EvRecv, From: from, Msg: &m})
}

// session writes one session of round r from start (µs): node i says hello at start+10(i-1), each
// hello arrives 100µs later and is answered with a status 5µs after that, the status arriving 100µs
// later; every node shares at start+500 (arriving at +600). lost names the messages lost as
// "kind from->to"; a lost hello is never answered.
func (f *rsdpFixture) session(r int, start int64, lost ...string) {
	gone := func(kind string, a, b int) bool {
		return slices.Contains(lost, kind+" "+strconv.Itoa(a)+"->"+strconv.Itoa(b))
	}
	for i := 1; i <= 3; i++ {
		for j := 1; j <= 3; j++ {
			if i == j {
				continue
			}
			at := start + 10*int64(i-1)
			l := gone("hello", i, j)
			f.msg(i, j, election.RSDPHello, r, at, 100, l)
			if !l {
				f.msg(j, i, election.RSDPStatus, r, at+105, 100, gone("status", j, i))
			}
		}
	}
	for i := 1; i <= 3; i++ {
		for j := 1; j <= 3; j++ {
			if i != j {
				f.msg(i, j, election.RSDPShare, r, start+500, 100, gone("share", i, j))
			}
		}
	}
}

// done sorts every log by time (stable: the order of equal times is the order written).
func (f *rsdpFixture) done() *logs.Run {
	for _, nl := range f.run.Nodes {
		slices.SortStableFunc(nl.Events, func(a, b logs.Event) int { return int(a.TS - b.TS) })
	}
	return f.run
}

func TestRSDPConsensusAnalysis(t *testing.T) {
	f := newRSDPFixture()
	f.session(1, 0)
	// one slow message (300µs): the median delay stays 100µs
	m := election.Message{ID: "1.1.99", Kind: election.RSDPClose}
	f.add(1, logs.Event{TS: us(5000), Ev: logs.EvSend, To: 2, Msg: &m})
	f.add(2, logs.Event{TS: us(5300), Ev: logs.EvRecv, From: 1, Msg: &m})
	run := f.done()

	c := analyzeRSDPConsensus(run)
	if !c.OK {
		t.Fatalf("session 1 not found: %+v", c)
	}
	// first hello sent at 0, last share received at 600µs
	if c.TimeNS != 600_000 {
		t.Errorf("consensus time %dns, want 600000", c.TimeNS)
	}
	// node i enters at 10(i-1)µs: the last at 20µs, 580µs before the last share
	if c.SkewNS != 20_000 || c.TailNS != 580_000 {
		t.Errorf("skew %dns tail %dns, want 20000 and 580000", c.SkewNS, c.TailNS)
	}
	if c.D1Max != 100_000 || c.TP1Max != 5_000 {
		t.Errorf("session 1's largest delay %v and turnaround %v, want 100000 and 5000", c.D1Max, c.TP1Max)
	}
	if c.D1 != 100_000 {
		t.Errorf("session 1's median delay %v, want 100000ns (the slow close is not of session 1)", c.D1)
	}
	if c.Sends != 18 {
		t.Errorf("sends %d, want 3·3·2 = 18", c.Sends)
	}
	if c.D != 100_000 || c.ND != 19 {
		t.Errorf("d = %v over %d messages, want 100000ns over 19", c.D, c.ND)
	}
	if c.TP != 5_000 || c.NTP != 6 {
		t.Errorf("t_p = %v over %d hellos, want 5000ns over 6", c.TP, c.NTP)
	}
	// eq. 3 with these: 3(100 + 5·2) = 330µs
	near(t, "eq3 of the fixture", rsdpEq3ConsensusTime(c.D, c.TP, 3), 330_000)

	if got := rsdpMedian([]int64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("median of 1..4 = %v, want 2.5", got)
	}
	if got := rsdpMedian(nil); !math.IsNaN(got) {
		t.Errorf("median of nothing = %v, want NaN", got)
	}
}

// TestRSDPHelloTurnaroundMatch: the status answering a hello is the next one to its sender with
// its round, not the first send after it.
func TestRSDPHelloTurnaroundMatch(t *testing.T) {
	f := newRSDPFixture()
	h1 := election.Message{ID: "1.1.1", Kind: election.RSDPHello, Round: 4}
	h3 := election.Message{ID: "3.1.1", Kind: election.RSDPHello, Round: 4}
	f.add(2, logs.Event{TS: us(100), Ev: logs.EvRecv, From: 1, Msg: &h1})
	f.add(2, logs.Event{TS: us(101), Ev: logs.EvRecv, From: 3, Msg: &h3})
	f.add(2, logs.Event{TS: us(102), Ev: logs.EvSend, To: 3, Msg: &election.Message{ID: "2.1.1", Kind: election.RSDPStatus, Round: 4}})
	f.add(2, logs.Event{TS: us(103), Ev: logs.EvSend, To: 1, Msg: &election.Message{ID: "2.1.2", Kind: election.RSDPStatus, Round: 3}})
	f.add(2, logs.Event{TS: us(110), Ev: logs.EvSend, To: 1, Msg: &election.Message{ID: "2.1.3", Kind: election.RSDPStatus, Round: 4}})
	run := f.done()
	got := rsdpHelloTurnarounds(run, 0)
	if want := []int64{10_000, 1_000}; !slices.Equal(got, want) {
		t.Errorf("turnarounds %v, want %v", got, want)
	}
	if got := rsdpHelloTurnarounds(run, 3); len(got) != 0 {
		t.Errorf("turnarounds of round 3 %v, want none", got)
	}
}

func TestRSDPLossAnalysis(t *testing.T) {
	f := newRSDPFixture()
	f.session(1, 0)                     // before the rules: not counted
	f.session(2, 10_000, "hello 1->2")  // 1 misses 2's status, 2 misses 1's hello: only 3 completes
	f.session(3, 20_000, "share 3->1")  // 1 misses a share: 2 of 3 complete
	f.session(4, 30_000)                // all complete
	f.session(5, 40_000, "status 2->3") // 3 misses a status: 2 of 3
	f.session(6, 90_000, "hello 2->1")  // after the window: not counted
	f.run.Chaos = []logs.ChaosRecord{
		{TS: us(8_000), Op: logs.OpLink, Targets: []int{2}, From: 1, To: 2, Acks: map[string]int64{"2": us(9_000)}},
		{TS: us(8_500), Op: logs.OpLink, Targets: []int{1}, From: 2, To: 1},
		{TS: us(9_500), Op: logs.OpLink, Targets: []int{3}, From: 1, To: 3, Error: "not carried out"},
	}
	run := f.done()
	if got := rsdpLinkRules(run); got != 2 {
		t.Errorf("link rules applied: %d, want 2 (the third failed)", got)
	}
	from := rsdpLossFrom(run)
	if from != us(9_000) {
		t.Fatalf("loss from %d, want the latest ack %d", from, us(9_000))
	}
	st := analyzeRSDPLoss(run, from, us(50_000))
	if !slices.Equal(st.Rounds, []int{2, 3, 4, 5}) {
		t.Errorf("rounds %v, want 2..5", st.Rounds)
	}
	if st.Sessions != 4 || st.FailAll != 3 || st.FailVote != 1 || st.Short != 1 {
		t.Errorf("sessions %d failAll %d failVote %d short %d, want 4 3 1 1", st.Sessions, st.FailAll, st.FailVote, st.Short)
	}
	// completed replicas: 1 + 2 + 3 + 2 of 12
	if st.ReplicaOK != 8 || st.Replicas != 12 {
		t.Errorf("replicas %d of %d, want 8 of 12", st.ReplicaOK, st.Replicas)
	}
	// frames from 9ms on (sessions 2..6): 17+18+18+18+17 = 88 sent, one lost in each of 2, 3, 5
	// and 6: 4 lost, 84 delivered
	if st.Lost != 4 || st.Delivered != 84 {
		t.Errorf("lost %d delivered %d, want 4 and 84", st.Lost, st.Delivered)
	}
	s := rsdpSessions(run)[2]
	if s.received(1, election.RSDPStatus) != 1 || s.received(2, election.RSDPHello) != 1 || !s.succeeded(3, []int{1, 2, 3}) {
		t.Errorf("session 2: node 1 got %d statuses, node 2 %d hellos, node 3 completed %v",
			s.received(1, election.RSDPStatus), s.received(2, election.RSDPHello), s.succeeded(3, []int{1, 2, 3}))
	}
}

func TestRSDPHealthAnalysis(t *testing.T) {
	begin := us(0)
	stop := begin + int64(2500*time.Millisecond)
	kill := begin + int64(time.Second)
	f := newRSDPFixture()
	stats := func(node int, at, hb int64) {
		f.add(node, logs.Event{TS: at, Ev: logs.EvStats, Stats: &logs.Stats{HeartbeatsSent: hb}})
	}
	stats(1, begin+int64(950*time.Millisecond), 38)
	stats(1, stop, 100)
	stats(2, begin+int64(950*time.Millisecond), 38)
	stats(2, stop, 100)
	stats(3, begin+int64(950*time.Millisecond), 40)
	f.run.Launcher = []logs.LaunchRecord{{TS: begin - 5, Ev: logs.LaunchReady, Node: 1}, {TS: begin, Ev: logs.LaunchBegin}, {TS: stop, Ev: logs.LaunchStopping}, {TS: stop + 9, Ev: logs.LaunchEnd}}
	f.run.Chaos = []logs.ChaosRecord{{TS: kill, Op: logs.OpKill, Targets: []int{3}, At: int64(990 * time.Millisecond)}}
	run := f.done()

	b, s, ok := rsdpRunWindow(run)
	if !ok || b != begin || s != stop {
		t.Fatalf("window %d..%d (%v), want %d..%d", b, s, ok, begin, stop)
	}
	if late, ok := rsdpKillLate(run); !ok || late != 10*time.Millisecond {
		t.Errorf("kill late by %v (%v), want 10ms", late, ok)
	}
	perH, total := rsdpProbesPerInterval(run.Nodes, b, s, 50*time.Millisecond)
	// 240 probes over 2.5s / 50ms = 50 intervals
	if total != 240 {
		t.Errorf("total %d, want 240", total)
	}
	near(t, "probes per h", perH, 4.8)
	// node 3: 2 peers for 0.95s = 38; nodes 1, 2: 2 peers for 1s + 1 peer for 1.5s = 70 each; 178 / 50
	e, ok := rsdpMutualExpectation(run, 50*time.Millisecond)
	if !ok {
		t.Fatal("no expectation")
	}
	near(t, "mutual expectation", e, 3.56)

	about := func(cand int) *election.Message { return &election.Message{Kind: "suspect", Cand: cand} }
	f.run.Observers = map[int]*logs.NodeLog{100001: {Node: 100001, Events: []logs.Event{
		{Ev: logs.EvSend, To: 100002, Msg: about(3)}, {Ev: logs.EvSend, To: 100003, Msg: about(2)}, {Ev: logs.EvRecv, From: 100002, Msg: about(3)},
		{Ev: logs.EvStats, Stats: &logs.Stats{HeartbeatsSent: 150}},
	}}, 100002: {Node: 100002, Events: []logs.Event{{Ev: logs.EvRecv, From: 100001, Msg: about(3)}, {Ev: logs.EvSend, To: 100001, Msg: about(3)}}}}
	// suspicions: node 1 of 3 before the kill (false), of 3 after it (true), of 2 (false); an
	// observer's of 2 (false)
	f.add(1, logs.Event{TS: kill - 1, Ev: logs.EvSuspect, Peer: 3})
	f.add(1, logs.Event{TS: kill + 1, Ev: logs.EvSuspect, Peer: 3})
	f.add(2, logs.Event{TS: kill + 2, Ev: logs.EvSuspect, Peer: 1})
	f.run.Observers[100002].Events = append(f.run.Observers[100002].Events, logs.Event{TS: kill + 3, Ev: logs.EvSuspect, Peer: 2})
	if got := rsdpFalseSuspicions(run, 3, kill); got != 3 {
		t.Errorf("false suspicions %d, want 3", got)
	}
	if ts, node, ok := rsdpFirstKill(run); !ok || ts != kill || node != 3 {
		t.Errorf("first kill %d of %d (%v), want %d of 3", ts, node, ok, kill)
	}
	if got := rsdpObserverMessages(run, 0); got != 3 {
		t.Errorf("observer messages %d, want 3", got)
	}
	if got := rsdpObserverMessages(run, 3); got != 2 {
		t.Errorf("observer messages about node 3: %d, want 2", got)
	}
	if perH, _ := rsdpProbesPerInterval(run.Observers, b, s, 50*time.Millisecond); perH != 3 {
		t.Errorf("observer probes per h %v, want 150/50 = 3", perH)
	}
}

func TestRSDPBenchFlags(t *testing.T) {
	ns, err := parseRSDPNs("9, 3,5,3")
	if err != nil || !slices.Equal(ns, []int{3, 5, 9}) {
		t.Errorf("parseRSDPNs = %v, %v; want [3 5 9]", ns, err)
	}
	for _, bad := range []string{"0", "1", "65", "x", "3-5", ""} {
		if _, err := parseRSDPNs(bad); err == nil || !strings.HasPrefix(err.Error(), "--n") || !strings.Contains(err.Error(), "2..64") {
			t.Errorf("parseRSDPNs(%q) = %v, want an error naming --n and 2..64", bad, err)
		}
	}
	good := rsdpBenchConfig{Ns: []int{3}, Modes: election.RSDPModes, Detectors: rsdpBenchDetectors, Observers: 3, Trials: 1, Health: 50 * time.Millisecond, Loss: 0.05}
	if err := good.validate(); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	for name, c := range map[string]struct {
		mod  func(*rsdpBenchConfig)
		want []string
	}{
		"mode":      {func(c *rsdpBenchConfig) { c.Modes = []string{"latest", "bogus"} }, []string{"--modes", "bogus", "latest, popular, ranked"}},
		"no modes":  {func(c *rsdpBenchConfig) { c.Modes = nil }, []string{"--modes", "latest, popular, ranked"}},
		"detector":  {func(c *rsdpBenchConfig) { c.Detectors = []string{"heartbeat"} }, []string{"--detectors", "heartbeat", "mutual, observer, observers"}},
		"trials":    {func(c *rsdpBenchConfig) { c.Trials = 0 }, []string{"--trials", "at least 1"}},
		"loss 1":    {func(c *rsdpBenchConfig) { c.Loss = 1 }, []string{"--loss", "0 <= p < 1"}},
		"loss neg":  {func(c *rsdpBenchConfig) { c.Loss = -0.1 }, []string{"--loss", "0 <= p < 1"}},
		"loss NaN":  {func(c *rsdpBenchConfig) { c.Loss = math.NaN() }, []string{"--loss"}},
		"observers": {func(c *rsdpBenchConfig) { c.Observers = 0 }, []string{"--observers", "1..64"}},
		"health":    {func(c *rsdpBenchConfig) { c.Health = 0 }, []string{"--health-interval"}},
		"n":         {func(c *rsdpBenchConfig) { c.Ns = []int{100} }, []string{"--n", "2..64"}},
	} {
		cfg := good
		c.mod(&cfg)
		err := cfg.validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", name, err, w)
			}
		}
	}
}

func TestRSDPRowFields(t *testing.T) {
	r := rsdpRow{Metric: "detect_ms", N: 5, Mode: "latest", Detector: "mutual", Measured: 10, Formula: 4, Trials: "1/2",
		Note: "eq.12; 1 of 2 runs FAILED: RUN: node 2 exited; its stderr ends:\nleaderlab: bind: address already in use\n"}
	want := []string{"detect_ms", "5", "latest", "mutual", "10.000", "4.000", "2.500", "1/2",
		"eq.12; 1 of 2 runs FAILED: RUN: node 2 exited; its stderr ends: / leaderlab: bind: address already in use"}
	if got := r.fields(); !slices.Equal(got, want) {
		t.Errorf("fields\n%q\nwant\n%q", got, want)
	}
	r.Measured, r.Formula = math.NaN(), 1234.5
	if got := r.fields(); got[4] != "-" || got[5] != "1234.5" || got[6] != "-" {
		t.Errorf("nothing measured: %q", got[4:7])
	}
}

func TestRSDPPlans(t *testing.T) {
	for _, c := range []struct {
		n      int
		det    string
		h, pt  time.Duration
		scaled bool
	}{
		{5, rundir.DetectorMutual, 50 * time.Millisecond, 25 * time.Millisecond, false},
		{13, rundir.DetectorMutual, 50 * time.Millisecond, 25 * time.Millisecond, false},
		{17, rundir.DetectorMutual, 90 * time.Millisecond, 67500 * time.Microsecond, true},
		{33, rundir.DetectorMutual, 320 * time.Millisecond, 240 * time.Millisecond, true},
		{33, rundir.DetectorObservers, 50 * time.Millisecond, 50 * time.Millisecond, false},
		{9, rundir.DetectorObserver, 50 * time.Millisecond, 25 * time.Millisecond, false},
	} {
		p := rsdpGridPlan(c.n, c.det, 50*time.Millisecond)
		if p.H != c.h || p.PT != c.pt || p.HScaled != c.scaled {
			t.Errorf("plan(%d, %s) = h %v pt %v scaled %v, want %v %v %v", c.n, c.det, p.H, p.PT, p.HScaled, c.h, c.pt, c.scaled)
		}
		if p.Duration < rsdpKillAt+time.Second || (c.det == rundir.DetectorMutual && p.PT >= p.H) {
			t.Errorf("plan(%d, %s): duration %v leaves no settle after the kill, or the mutual probe timeout %v >= h %v", c.n, c.det, p.Duration, p.PT, p.H)
		}
	}
	for _, c := range []struct {
		i, k int
		u    float64
		want time.Duration
	}{{0, 3, 0, time.Second}, {1, 3, 0.5, 1025 * time.Millisecond}, {2, 3, 0.999999, 1050 * time.Millisecond}, {0, 1, 0.25, 1012500 * time.Microsecond}} {
		if got := rsdpKillTime(50*time.Millisecond, c.i, c.k, c.u); got != c.want {
			t.Errorf("kill time of trial %d of %d, u=%v: %v, want %v", c.i, c.k, c.u, got, c.want)
		}
	}
	if p := rsdpGridPlan(3, rundir.DetectorObserver, 2*time.Second); p.Duration < rsdpKillAt+p.H+time.Second {
		t.Errorf("h=2s: duration %v leaves no settle after a kill as late as %v", p.Duration, rsdpKillAt+p.H)
	}
	text := rsdpLossChaos(3, 0.05)
	if want := "at 0s link 1->2 loss 5%; at 0s link 1->3 loss 5%; at 0s link 2->1 loss 5%; at 0s link 2->3 loss 5%; at 0s link 3->1 loss 5%; at 0s link 3->2 loss 5%"; text != want {
		t.Errorf("loss chaos\n%s\nwant\n%s", text, want)
	}
	for _, n := range []int{3, 9} {
		s, err := chaos.Parse(rsdpLossChaos(n, 0.123), n)
		if err != nil {
			t.Fatalf("loss chaos for %d nodes does not parse: %v", n, err)
		}
		if len(s.Steps) != n*(n-1) || s.Steps[0].Link == nil || math.Abs(s.Steps[0].Link.Percent-12.3) > 1e-9 {
			t.Errorf("loss chaos for %d nodes: %d steps, first %+v", n, len(s.Steps), s.Steps[0])
		}
	}
	lp := rsdpLossPlan(33)
	if lp.Resync != 330*time.Millisecond || lp.StatusTimeout >= lp.Resync || lp.Duration != 33*32*30*time.Millisecond+25*lp.Resync+time.Second {
		t.Errorf("loss plan for 33: %+v", lp)
	}
}
