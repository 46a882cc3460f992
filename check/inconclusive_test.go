package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// electing: five nodes, heartbeat 50ms and timeout 200ms (the window is 200ms), elect at 2ms.
func electing(algo string) *story {
	s := newStory(algo, 5)
	s.run.Cluster.Heartbeat = rundir.Duration(50 * time.Millisecond)
	s.run.Cluster.Timeout = rundir.Duration(200 * time.Millisecond)
	for id := 1; id <= 5; id++ {
		s.elect(id, 2)
	}
	return s
}

// slowRing: five nodes elect at 2ms and pass election messages one hop at a time, each taking
// 200ms from send to receipt (a starved machine), every 300ms from 100ms until `until`; when lost,
// one more is sent at `until` and never received. Nobody has a leader when the run stops at
// `stop`. Heartbeat 50ms, timeout 200ms: the window is 200ms.
func slowRing(algo string, until, stop float64, lost bool) *story {
	s := electing(algo)
	from := 1
	for t := 100.0; ; t += 300 {
		to := from%5 + 1
		if t >= until {
			if lost {
				s.send(from, to, until, "election")
			}
			break
		}
		m := s.send(from, to, t, "election")
		s.recv(to, from, t+200, m)
		from = to
	}
	s.stop(stop)
	return s
}

func TestInconclusiveWhenTheRunEndsWhileElecting(t *testing.T) {
	s := slowRing(algoTest, 990, 1000, true)
	for i := range s.run.Launcher {
		if r := &s.run.Launcher[i]; r.Ev == logs.LaunchExited {
			r.CPUMS = 300
		}
	}
	v := Check(s.run, Options{})
	if v.OK || v.Outcome != OutcomeInconclusive || v.Inconclusive == nil {
		t.Fatalf("ok=%v outcome=%q, want not ok and inconclusive:\n%s", v.OK, v.Outcome, summary(v))
	}
	in := v.Inconclusive
	if in.Messages != 4 || in.Bound != 25 || in.InFlight != 1 || in.SentInWindow != 1 || in.Undecided != 5 || in.Live != 5 {
		t.Errorf("figures %+v, want 4 messages of 25, 1 in flight, 1 sent in the window, 5 of 5 at ⊥", *in)
	}
	if in.DeliveryP50MS == nil || *in.DeliveryP50MS != 200 {
		t.Errorf("delivery %v, want 200ms (the receipt at 900ms of the send at 700ms)", in.DeliveryP50MS)
	}
	if in.CPUMS != 1500 || in.SpanMS != 1030 {
		t.Errorf("cpu %gms over %gms, want 1500ms over 1030ms", in.CPUMS, in.SpanMS)
	}
	want := "inconclusive: still electing when the run ended; the machine fell behind: the election open since 2ms had sent 4+0 messages of its bound 25, 1 in flight and 1 sent in the last 200ms; 5 of 5 live nodes at ⊥; a message took 200ms (median), 200ms (p99), 200ms (most) from send to receipt in that window; the nodes used 1.5s of CPU in 1.03s (1.46 cores)"
	if v.Reason != want {
		t.Errorf("reason:\n%s\nwant:\n%s", v.Reason, want)
	}
	var x bytes.Buffer
	if err := WriteJUnit(&x, []JUnitRun{{Dir: "run", Verdict: v}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(x.String(), `<testsuite name="run" tests="5" failures="0" errors="0" skipped="1"`) ||
		!strings.Contains(x.String(), `<skipped message="inconclusive: still electing`) {
		t.Errorf("JUnit: the open property is not a skipped case:\n%s", x.String())
	}
	var out bytes.Buffer
	v.Print(&out)
	for _, line := range []string{"verdict: INCONCLUSIVE (" + algoTest + ", 5 nodes)", "  " + want, "  OPEN  agreement", "  PASS  termination"} {
		if !strings.Contains(out.String(), line+"\n") && !strings.Contains(out.String(), line+" ") {
			t.Errorf("the printed verdict has no line %q:\n%s", line, out.String())
		}
	}
}

// An extension that ran out: the elects are older than the termination bound, but the election
// still moves: inconclusive too, the termination property open with agreement.
func TestInconclusiveWhenTheExtensionRanOut(t *testing.T) {
	s := slowRing(algoTest, 1590, 1600, true)
	for i := range s.run.Launcher {
		if r := &s.run.Launcher[i]; r.Ev == logs.LaunchStopping {
			r.Detail = "extended by 1s, the termination bound: nodes were still electing"
		}
	}
	v := Check(s.run, Options{})
	if v.Outcome != OutcomeInconclusive {
		t.Fatalf("outcome %q, want inconclusive:\n%s", v.Outcome, summary(v))
	}
	open := openProps(v)
	if strings.Join(open, ",") != "agreement,termination" {
		t.Errorf("open properties %v, want agreement and termination", open)
	}
	if !strings.Contains(v.Reason, "(extended by 1s, the termination bound: nodes were still electing)") {
		t.Errorf("the reason does not say the run was extended: %s", v.Reason)
	}
}

// A stall: the election's last message was received at 600ms, nothing is in flight and nothing
// was sent for 400ms when the run ends. That is a failure, however slow the machine.
func TestStallWithNothingInFlightFails(t *testing.T) {
	s := slowRing(algoTest, 600, 1000, false) // every message received; the last at 600ms
	v := Check(s.run, Options{})
	if v.Outcome != OutcomeFail || v.Inconclusive != nil || v.Reason != "" {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
	var out bytes.Buffer
	v.Print(&out)
	if !strings.HasPrefix(out.String(), "verdict: FAIL") || !strings.Contains(out.String(), "FAIL  agreement") {
		t.Errorf("printed:\n%s", out.String())
	}
}

// A simulated run's time is virtual: its machine cannot fall behind, and a run it cut short fails
// as it always did.
func TestSimulatedRunIsNeverInconclusive(t *testing.T) {
	s := slowRing(algoTest, 990, 1000, true)
	s.run.Cluster.World = rundir.WorldSim
	if v := Check(s.run, Options{}); v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// A message in flight since long ago, and nothing else for longer than the window: a stall too
// (a lost message), not a slow machine.
func TestOldMessageInFlightIsAStall(t *testing.T) {
	s := slowRing(algoTest, 400, 1000, true)
	if v := Check(s.run, Options{}); v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// Past the algorithm's bound the election is a livelock, not a slow machine.
func TestElectionPastItsBoundFails(t *testing.T) {
	s := slowRing(algoTight, 2590, 2600, true) // 9 messages, bound 6
	v := Check(s.run, Options{})
	if v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
	// and with no bound stated, a livelock cannot be told from a slow machine
	if v := Check(slowRing(algoNoBound, 990, 1000, true).run, Options{}); v.Outcome != OutcomeFail {
		t.Fatalf("no bound: outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// Two leaders beyond the grace while the election moves: a violation.
func TestTwoLeadersWhileElectingFails(t *testing.T) {
	s := electing(algoTest)
	s.leader(4, 10, 4)
	s.leader(5, 10, 5)
	m := s.send(1, 2, 700, "election")
	s.recv(2, 1, 900, m)
	s.send(2, 3, 950, "election")
	s.stop(1000)
	v := Check(s.run, Options{})
	if v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// A wrong leader at the end is a failure: every live node follows 4, though 5 runs.
func TestWrongLeaderWhileMessagesFlowFails(t *testing.T) {
	s := electing(algoTest)
	for id := 1; id <= 5; id++ {
		s.leader(id, 10, 4)
	}
	s.send(1, 2, 950, "election")
	s.stop(1000)
	if v := Check(s.run, Options{}); v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// check of a run directory gives the same outcome as the verdict made in memory, and an older
// verdict.json without outcome reads by its ok.
func TestInconclusiveVerdictFile(t *testing.T) {
	dir := writeRun(t, slowRing(algoTest, 990, 1000, true).run, nil)
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := Check(run, Options{})
	if err := v.WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadVerdict(dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Result() != OutcomeInconclusive || back.OK || back.Reason == "" || back.Inconclusive == nil {
		t.Errorf("verdict.json read back: ok=%v outcome=%q reason=%q", back.OK, back.Outcome, back.Reason)
	}
	if (&Verdict{OK: true}).Result() != OutcomePass || (&Verdict{}).Result() != OutcomeFail {
		t.Error("a verdict without outcome does not read by its ok")
	}
}

// notUp: five nodes up and ready, Bully elects 5; node 2 is killed at 300ms and restarted at 400ms,
// and its new incarnation has not reported ready when the run stops at 1500ms.
func notUp(ready2 bool) *story {
	s := newStory("bully", 5)
	for id := 1; id <= 5; id++ {
		s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: id, Inc: 1}, -10)
	}
	s.bully(2, []int{1, 2, 3, 4, 5})
	s.kill(2, 300)
	s.restart(2, 400)
	if ready2 {
		s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: 2, Inc: 2}, 410)
	}
	s.stop(1500)
	return s
}

// A restarted incarnation that never came up: whether it would have joined the others' agreement
// is unknown, not false (a starved machine brings a restart up late).
func TestInconclusiveWhenARestartIsNotUp(t *testing.T) {
	v := Check(notUp(false).run, Options{})
	if v.Outcome != OutcomeInconclusive || v.Inconclusive == nil || len(v.Inconclusive.NotReady) != 1 {
		t.Fatalf("outcome %q, want inconclusive with node 2 not ready:\n%s", v.Outcome, summary(v))
	}
	want := "inconclusive: a restarted node was not up when the run ended; the machine fell behind: node 2 (incarnation 2, spawned at 400ms) never reported ready; the other 4 live nodes agree"
	if !strings.HasPrefix(v.Reason, want) {
		t.Errorf("reason:\n%s\nwant it to begin:\n%s", v.Reason, want)
	}
}

// The same node, ready but still at ⊥ a second later: that is a failure of agreement.
func TestARestartUpButUndecidedFails(t *testing.T) {
	v := Check(notUp(true).run, Options{})
	if v.Outcome != OutcomeFail {
		t.Fatalf("outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
}

// lateRing: five nodes elect at 2ms and pass election messages one hop at a time, each taking
// 200ms from send to receipt, every 300ms from 100ms until `until` (skipping the sends due in
// [pauseFrom, pauseTo)); at until+100 node 5 announces itself, and every node follows it 50ms
// later: past the termination bound of 1s. Heartbeat 50ms, timeout 200ms: the window is 200ms.
func lateRing(until, pauseFrom, pauseTo float64) *story {
	s := electing(algoTest)
	from := 1
	for t := 100.0; t < until; t += 300 {
		if t >= pauseFrom && t < pauseTo {
			continue
		}
		to := from%5 + 1
		m := s.send(from, to, t, "election")
		s.recv(to, from, t+200, m)
		from = to
	}
	s.leader(5, until+100, 5)
	for id := 1; id <= 4; id++ {
		m := s.send(5, id, until+100, "coordinator")
		s.recv(id, 5, until+150, m)
		s.leader(id, until+150, 5)
	}
	s.stop(until + 600)
	return s
}

// An election that ended, in agreement and within its bound, but past the termination bound, and
// that never stood still for a window: the machine was slow, the algorithm did what it must.
func TestInconclusiveWhenTheElectionEndedLate(t *testing.T) {
	v := Check(lateRing(1400, 0, 0).run, Options{})
	if v.Outcome != OutcomeInconclusive || v.Inconclusive == nil || v.Inconclusive.EndedMS == nil {
		t.Fatalf("outcome %q, want inconclusive with the election's end:\n%s", v.Outcome, summary(v))
	}
	in := v.Inconclusive
	if *in.EndedMS != 1550 || *in.MaxGapMS != 200 || *in.SlowestMS != 1548 || in.Messages != 5 || in.Announce != 4 || in.Bound != 25 || in.Undecided != 0 {
		t.Errorf("figures %+v (ended %g, gap %g, slowest %g), want ended 1550, gap 200, slowest 1548, 5+4 of 25, none at ⊥",
			*in, *in.EndedMS, *in.MaxGapMS, *in.SlowestMS)
	}
	want := "inconclusive: the election ended, but later than the termination bound; the machine fell behind: the election from 2ms to 1550ms sent 5+4 messages of its bound 25 and never stood still for 200ms (its longest pause: 200ms); its slowest elect took 1.548s of running time"
	if !strings.HasPrefix(v.Reason, want) {
		t.Errorf("reason:\n%s\nwant it to begin:\n%s", v.Reason, want)
	}
	open := openProps(v)
	if strings.Join(open, ",") != "termination" {
		t.Errorf("open properties %v, want termination alone", open)
	}

	// The same election with a stall of 500ms in the middle (no message from 700ms to 1200ms): it
	// stood still for more than a window, and a late end after a stall is a failure.
	v = Check(lateRing(1400, 650, 1000).run, Options{})
	if v.Outcome != OutcomeFail || v.Inconclusive != nil {
		t.Errorf("with a stall: outcome %q, want fail:\n%s", v.Outcome, summary(v))
	}
	// In the simulator the machine cannot fall behind.
	s := lateRing(1400, 0, 0)
	s.run.Cluster.World = rundir.WorldSim
	if v = Check(s.run, Options{}); v.Outcome != OutcomeFail {
		t.Errorf("simulated: outcome %q, want fail", v.Outcome)
	}
}

// openProps names the properties of v that did not hold, in its order.
func openProps(v *Verdict) []string {
	var open []string
	for _, p := range v.Properties {
		if !p.OK {
			open = append(open, p.Name)
		}
	}
	return open
}
