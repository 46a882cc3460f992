package check

// Edge cases of the checker, one property or metric at a time.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
)

func TestCheckTerminationCountsRunningTimeOnly(t *testing.T) {
	s := cleanElection(algoTest)
	s.elect(1, 200)
	s.chaos("pause", 300, 1)
	s.chaos("resume", 1150, 1)
	s.leader(1, 1200, 3) // 1000ms after its elect, but 850ms of it paused
	s.stop(2000)
	v := Check(s.run, Options{})
	if p := v.Properties[2]; !p.OK || p.Detail != "4 elects ended in a leader within the bound of 1s (slowest: 150ms of running time)" {
		t.Errorf("termination: %+v", p)
	}
	if !v.OK {
		t.Errorf("verdict:\n%s", summary(v))
	}
}

func TestCheckRecvWithoutSend(t *testing.T) {
	s := cleanElection(algoTest)
	s.event(1, 100, logs.Event{Ev: logs.EvRecv, From: 2, Msg: &electionMsg{ID: "9.9.9", Kind: "ok"}})
	s.stop(1000)
	v := Check(s.run, Options{})
	want := "1 problem: 1 recv has no send with the same msg.id (first: nodes/1.jsonl event 9, msg 9.9.9 (ok) from 2)"
	if p := v.Properties[3]; p.OK || p.Detail != want || v.OK {
		t.Errorf("integrity: %+v\nwant: %s", p, want)
	}
}

func TestCheckSpawnedNeverExited(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000, 2)
	v := Check(s.run, Options{})
	want := "1 problem: node 2 incarnation 1 (pid 1002, spawned at -20ms) has no exited record: left running?"
	if p := v.Properties[3]; p.OK || p.Detail != want || v.OK {
		t.Errorf("integrity: %+v\nwant: %s", p, want)
	}
}

func TestCheckComplexityOverBound(t *testing.T) {
	s := cleanElection(algoTight)
	s.stop(1000)
	expect(t, Check(s.run, Options{}), `ok=false leader=3`+cleanProps+`FAIL complexity: 1 election over the bound: election 1 at 2ms: 6+2 = 8 messages, bound 6, with no fault in its window
election 2ms..23ms 6+2/6 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
split=0ms messages=8 drops=0
`)
}

func TestCheckComplexityOverBoundWithFault(t *testing.T) {
	s := cleanElection(algoTight)
	s.chaos("pause", 10, 1) // a short pause of 1 while the election runs
	s.chaos("resume", 12, 1)
	s.stop(1000)
	expect(t, Check(s.run, Options{}), `ok=true leader=3`+cleanProps+`PASS complexity: election 1 at 2ms: 6+2 = 8 messages, bound 6, over but not judged: 2 faults in its window
election 2ms..23ms 6+2/6 initiators=3 faults=2 leader=3 map[coordinator:2 election:3 ok:3]
split=0ms messages=8 drops=0
`)
}

func TestCheckNoBoundStated(t *testing.T) {
	s := cleanElection(algoNoBound)
	s.stop(1000)
	v := Check(s.run, Options{})
	if p := v.Properties[4]; !p.OK || p.Detail != "no bound stated for "+algoNoBound {
		t.Errorf("complexity: %+v", p)
	}
	if e := v.Metrics.Elections; len(e) != 1 || e[0].Bound != nil || e[0].Messages != 6 || e[0].Announce != 2 {
		t.Errorf("elections: %+v", e)
	}
}

func TestCheckTooShortToJudge(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(1, 800) // not the leader: the others still agree, but the run ends 200ms later
	s.stop(1000)
	v := Check(s.run, Options{})
	want := "the run was too short to judge: its last fault (kill 1 at 800ms) left 200ms before the end, and settle is 500ms; " +
		"at the end (1000ms) all 2 live nodes follow 3, the highest live ID"
	if p := v.Properties[0]; p.OK || p.Detail != want || v.OK {
		t.Errorf("agreement: %+v\nwant: %s", p, want)
	}
	if v.Leader == nil || *v.Leader != 3 {
		t.Errorf("leader %v, want 3 (agreed, though not judged)", v.Leader)
	}
}

func TestCheckFailoverNeverAgreed(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(3, 300)
	s.elect(1, 500)
	s.elect(2, 500)
	s.stop(1000)
	v := Check(s.run, Options{})
	if f := v.Metrics.Failovers; len(f) != 1 || f[0].MS != nil || f[0].Fault != "kill 3 at 300ms" {
		t.Errorf("failovers: %+v", f)
	}
	if v.Leader != nil || v.Properties[0].OK {
		t.Errorf("verdict:\n%s", summary(v))
	}
}

// A kill's chaos record is written after the signal, so the exited record may come first: the
// failover still counts from the death, and the leader was still agreed on just before it.
func TestCheckKillRecordAfterExit(t *testing.T) {
	s := cleanElection(algoTest)
	s.exited(3, 299.5, "killed")
	s.chaos("kill", 300, 3)
	s.bully(500, []int{1, 2}, 3)
	s.stop(1000)
	v := Check(s.run, Options{})
	if f := v.Metrics.Failovers; len(f) != 1 || f[0].Fault != "kill 3 at 299.5ms" || *f[0].MS != 221.5 {
		t.Errorf("failovers: %+v", f)
	}
}

// A partition recorded as the first versions of chaos.jsonl wrote it (groups, no acks, the targets
// empty) is judged per side: 2 leading its side while 3 leads the other is a split-brain window,
// not an overlap.
func TestCheckPartitionRecordWithoutAcks(t *testing.T) {
	s := cleanElection(algoTest)
	s.run.Chaos = append(s.run.Chaos, logs.ChaosRecord{TS: ms(300), Op: "partition", Targets: []int{}, Groups: [][]int{{1, 2}, {3}}})
	s.leader(2, 400, 2) // 2 leads its side
	s.chaos("heal", 600)
	s.leader(2, 650, 3)
	s.stop(1500)
	v := Check(s.run, Options{})
	want := "1 overlap of self-believing nodes, all within the grace of 100ms (longest: nodes 2,3 for 50ms from 600ms); " +
		"judged per component while the network was split (300ms); " +
		"1 split-brain window across components, not violations (200ms in all; longest: leaders 2,3 for 200ms from 400ms)"
	if p := v.Properties[1]; !p.OK || p.Detail != want {
		t.Errorf("uniqueness: %+v\nwant: %s", p, want)
	}
	if v.Metrics.SplitBrainMS != 200 || v.Metrics.PartitionedMS != 300 {
		t.Errorf("split brain %gms, partitioned %gms; want 200ms and 300ms", v.Metrics.SplitBrainMS, v.Metrics.PartitionedMS)
	}
}

func TestCheckDefaultsWarned(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	s.run.Cluster.Grace, s.run.Cluster.TerminationBound = 0, 0
	v := Check(s.run, Options{Settle: 200 * 1e6})
	if v.GraceMS != 500 || v.TerminationBoundMS != 2000 || v.SettleMS != 200 {
		t.Errorf("limits: grace %v termination %v settle %v", v.GraceMS, v.TerminationBoundMS, v.SettleMS)
	}
	want := []string{"cluster.json states no grace: using 500ms", "cluster.json states no termination bound: using 2s"}
	if !slices.Equal(v.Warnings, want) {
		t.Errorf("warnings %q, want %q", v.Warnings, want)
	}
}

func TestWriteFile(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	v := Check(s.run, Options{})
	dir := t.TempDir()
	if err := v.WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	e := back["metrics"].(map[string]any)["elections"].([]any)[0].(map[string]any)
	if back["leader"] != 3.0 || e["messages"] != 6.0 || e["announce"] != 2.0 || e["bound"] != 9.0 {
		t.Errorf("verdict.json: leader %v, election %v", back["leader"], e)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("the directory holds %d entries, want verdict.json alone", len(ents))
	}
}

// Nodes may act before the launcher's begin record (it is written after the nodes were told): an
// overlap that starts before it is judged whole.
func TestCheckOverlapBeforeBegin(t *testing.T) {
	s := cleanElection(algoTest)
	s.leader(2, 400, 2)
	s.leader(2, 600, 3)
	s.stop(1000)
	for i := range s.run.Launcher {
		if s.run.Launcher[i].Ev == logs.LaunchBegin {
			s.run.Launcher[i].TS = ms(500)
		}
	}
	v := Check(s.run, Options{})
	want := "1 overlap longer than the grace of 100ms: nodes 2,3 for 200ms from -100ms"
	if p := v.Properties[1]; p.OK || p.Detail != want {
		t.Errorf("uniqueness: %+v\nwant: %s", p, want)
	}
}

// An agreement that a node leaves for another leader while the agreed one runs, with no fault
// since, was not the election's end: the election runs on to the next agreement, and what the
// nodes send until then is its (swarm seed 20271787, launcher/swarm_seeds_test.go, in full). After
// a fault, the same is the fault's doing, and the election stays ended.
func TestCheckAgreementLeftReopensItsElection(t *testing.T) {
	story := func(fault bool) *story {
		s := cleanElection(algoTest)
		if fault {
			s.chaos("pause", 60, 1)
			s.chaos("resume", 70, 1)
		}
		m := s.send(2, 1, 100, "coordinator") // a stale claim of 2's, after the nodes agreed on 3
		s.recv(1, 2, 100.5, m)
		s.leader(1, 100.5, 2)
		m = s.send(3, 1, 150, "coordinator")
		s.recv(1, 3, 150.5, m)
		s.leader(1, 150.5, 3)
		s.stop(1000)
		return s
	}
	props := strings.Replace(cleanProps, "8 recvs", "10 recvs", 1)
	expect(t, Check(story(false).run, Options{}), `ok=false leader=3`+props+`FAIL complexity: 1 election over the bound: election 1 at 2ms: 6+4 = 10 messages, bound 9, with no fault in its window
election 2ms..150.5ms 6+4/9 initiators=3 faults=0 leader=3 map[coordinator:4 election:3 ok:3]
split=0ms messages=10 drops=0
`)
	expect(t, Check(story(true).run, Options{}), `ok=true leader=3`+props+`PASS complexity: 2 elections within the bound (9/9, 1/9)
election 2ms..23ms 6+3/9 initiators=3 faults=0 leader=3 map[coordinator:3 election:3 ok:3]
election 150ms..150.5ms 0+1/9 initiators=1 faults=2 leader=3 map[coordinator:1]
split=0ms messages=10 drops=0
`)
}
