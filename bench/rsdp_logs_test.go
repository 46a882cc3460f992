package bench

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// rsdpFixture builds a logs.Run of three RSDP nodes by hand.
type rsdpFixture struct {
	run *logs.Run
	seq map[int]int
}

const rsdpFixBase = int64(1_700_000_000_000_000_000)

func rsdpUS(x int64) int64 { return rsdpFixBase + x*1000 }

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
	f.add(from, logs.Event{TS: rsdpUS(ts), Ev: logs.EvSend, To: to, Msg: &m})
	if lost {
		f.add(to, logs.Event{TS: rsdpUS(ts + delay), Ev: logs.EvDrop, From: from, Msg: &m, Reason: "loss 5%: at 0s link"})
		return
	}
	f.add(to, logs.Event{TS: rsdpUS(ts + delay), Ev: logs.EvRecv, From: from, Msg: &m})
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
	f.add(1, logs.Event{TS: rsdpUS(5000), Ev: logs.EvSend, To: 2, Msg: &m})
	f.add(2, logs.Event{TS: rsdpUS(5300), Ev: logs.EvRecv, From: 1, Msg: &m})
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
	rsdpNear(t, "eq3 of the fixture", rsdpEq3ConsensusTime(c.D, c.TP, 3), 330_000)

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
	f.add(2, logs.Event{TS: rsdpUS(100), Ev: logs.EvRecv, From: 1, Msg: &h1})
	f.add(2, logs.Event{TS: rsdpUS(101), Ev: logs.EvRecv, From: 3, Msg: &h3})
	f.add(2, logs.Event{TS: rsdpUS(102), Ev: logs.EvSend, To: 3, Msg: &election.Message{ID: "2.1.1", Kind: election.RSDPStatus, Round: 4}})
	f.add(2, logs.Event{TS: rsdpUS(103), Ev: logs.EvSend, To: 1, Msg: &election.Message{ID: "2.1.2", Kind: election.RSDPStatus, Round: 3}})
	f.add(2, logs.Event{TS: rsdpUS(110), Ev: logs.EvSend, To: 1, Msg: &election.Message{ID: "2.1.3", Kind: election.RSDPStatus, Round: 4}})
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
		{TS: rsdpUS(8_000), Op: logs.OpLink, Targets: []int{2}, From: 1, To: 2, Acks: map[string]int64{"2": rsdpUS(9_000)}},
		{TS: rsdpUS(8_500), Op: logs.OpLink, Targets: []int{1}, From: 2, To: 1},
		{TS: rsdpUS(9_500), Op: logs.OpLink, Targets: []int{3}, From: 1, To: 3, Error: "not carried out"},
	}
	run := f.done()
	if got := rsdpLinkRules(run); got != 2 {
		t.Errorf("link rules applied: %d, want 2 (the third failed)", got)
	}
	from := rsdpLossFrom(run)
	if from != rsdpUS(9_000) {
		t.Fatalf("loss from %d, want the latest ack %d", from, rsdpUS(9_000))
	}
	st := analyzeRSDPLoss(run, from, rsdpUS(50_000))
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
	begin := rsdpUS(0)
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
	rsdpNear(t, "probes per h", perH, 4.8)
	// node 3: 2 peers for 0.95s = 38; nodes 1, 2: 2 peers for 1s + 1 peer for 1.5s = 70 each; 178 / 50
	e, ok := rsdpMutualExpectation(run, 50*time.Millisecond)
	if !ok {
		t.Fatal("no expectation")
	}
	rsdpNear(t, "mutual expectation", e, 3.56)

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
