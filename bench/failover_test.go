package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
)

// TestFailoverConfigValidate: a bad configuration is refused with the field it names (for the CLI
// to map to its flag) and what would be accepted.
func TestFailoverConfigValidate(t *testing.T) {
	good := DefaultFailoverConfig()
	if err := good.Validate(); err != nil {
		t.Fatalf("the default configuration refused: %v", err)
	}
	bad := good
	bad.Trials = 0
	wantRefused(t, "trials", bad.Validate(), "FailoverConfig.Trials: want at least 1")
	bad = good
	bad.Algo = "nope"
	wantRefused(t, "algo", bad.Validate(), `FailoverConfig.Algo: unknown algorithm "nope"`, "bully")
	bad = good
	bad.Faults = []string{"kill", "bogus"}
	wantRefused(t, "faults", bad.Validate(), `FailoverConfig.Faults: unknown fault "bogus" (accepted: kill, pause, stop)`)
	bad = good
	bad.Faults = []string{""}
	wantRefused(t, "no fault", bad.Validate(), `FailoverConfig.Faults: unknown fault ""`)
	bad = good
	bad.Algo, bad.RSDPMode = "rsdp", "bad"
	wantRefused(t, "rsdp mode", bad.Validate(), `FailoverConfig.RSDPMode "bad" (accepted: latest, popular, ranked)`)
	ok := good
	ok.Algo, ok.RSDPMode = "rsdp", "popular"
	if err := ok.Validate(); err != nil {
		t.Errorf("rsdp popular refused: %v", err)
	}
}

// TestFailoverTrialConfig: trial i's fault falls at 500 ms plus the (i+½)/trials fraction of the
// detector's period (the probes' when there are probes), a pause lasts four timeouts, and each
// trial has its own directory.
func TestFailoverTrialConfig(t *testing.T) {
	c := DefaultFailoverConfig()
	c.Trials, c.Out = 4, "out"
	var got []string
	for i := range 4 {
		got = append(got, c.trialConfig("kill", i, 40*time.Millisecond, 200*time.Millisecond).Chaos)
	}
	if want := "at 505ms kill leader|at 515ms kill leader|at 525ms kill leader|at 535ms kill leader"; strings.Join(got, "|") != want {
		t.Errorf("kill schedules %q, want %q", got, want)
	}
	lc := c.trialConfig("pause", 1, 40*time.Millisecond, 300*time.Millisecond)
	if lc.Chaos != "at 515ms pause leader for 1.2s" || lc.Out != filepath.Join("out", "pause-01") || lc.Duration != 1500*time.Millisecond+1200*time.Millisecond ||
		lc.Heartbeat != 40*time.Millisecond || lc.Timeout != 300*time.Millisecond {
		t.Errorf("pause trial: chaos %q, out %q, duration %v, detector %v/%v", lc.Chaos, lc.Out, lc.Duration, lc.Heartbeat, lc.Timeout)
	}
	c.HealthInterval = 400 * time.Millisecond
	if lc := c.trialConfig("stop", 0, 40*time.Millisecond, 200*time.Millisecond); lc.Chaos != "at 550ms stop leader" {
		t.Errorf("with probes every 400ms: %q, want the fault spread over their period", lc.Chaos)
	}
}

// TestFailoverTrial: a trial counts as measured only when the run passed and the checker measured
// its failover; otherwise it says why.
func TestFailoverTrial(t *testing.T) {
	ms := 12.5
	measured := check.Metrics{Failovers: []check.Failover{{Fault: "kill 5 at 500ms", MS: &ms}}}
	never := check.Metrics{Failovers: []check.Failover{{Fault: "kill 5 at 500ms"}}}
	cases := []struct {
		name string
		r    launcher.Result
		ok   bool
		has  bool
		why  string
	}{
		{"passed", launcher.Result{Code: 0, Verdict: &check.Verdict{OK: true, Metrics: measured}}, true, true, ""},
		{"no verdict", launcher.Result{Code: 2}, false, false, "no verdict"},
		{"no failover", launcher.Result{Code: 0, Verdict: &check.Verdict{OK: true}}, false, false, "no failover measured (the fault took no leader away)"},
		{"never agreed", launcher.Result{Code: 1, Verdict: &check.Verdict{Metrics: never}}, false, false, "the live nodes never agreed again: kill 5 at 500ms"},
		{"violation", launcher.Result{Code: 1, Verdict: &check.Verdict{Metrics: measured, Properties: []check.Property{
			{Name: "termination", OK: true}, {Name: "agreement", Detail: "2 leaders"}, {Name: "uniqueness", Detail: "later"}}}},
			false, true, "agreement: 2 leaders"},
		{"exit only", launcher.Result{Code: 1, Verdict: &check.Verdict{Metrics: measured}}, false, true, "exit 1"},
	}
	for _, c := range cases {
		c.r.Dir = "runs/kill-03"
		tr := failoverTrial("kill", 3, c.r)
		if tr.OK != c.ok || tr.Has != c.has || !strings.HasPrefix(tr.Why, c.why) || (c.why == "" && tr.Why != "") ||
			tr.Fault != "kill" || tr.Trial != 3 || tr.Dir != "runs/kill-03" || (c.has && tr.MS != ms) {
			t.Errorf("%s: %+v, want ok %v, measured %v, why %q", c.name, tr, c.ok, c.has, c.why)
		}
	}
}

// TestFailoverSimulated makes a small bench in the simulator: the header, a row per fault, the
// progress, a directory per trial and the page; a cluster of one never agrees on a new leader,
// so its trial fails.
func TestFailoverSimulated(t *testing.T) {
	c := DefaultFailoverConfig()
	c.Sim, c.Trials, c.Faults, c.Out = true, 2, []string{"kill", "stop"}, t.TempDir()
	c.Given = []KV{{Key: "--hosts", Value: "inventory.txt"}}
	var out, prog bytes.Buffer
	res, err := Failover(context.Background(), c, &out, &prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) != 4 || res.Failed != 0 || res.Page != filepath.Join(c.Out, "index.html") {
		t.Fatalf("%d trials, %d failed, page %q", len(res.Trials), res.Failed, res.Page)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 || lines[0] != "failover: bully, 5 nodes, heartbeat 50ms, timeout 200ms, 2 trials per fault, simulated (runs in "+c.Out+")" ||
		!strings.HasPrefix(lines[2], "kill        2 ") || !strings.HasPrefix(lines[3], "stop        2 ") || len(strings.Fields(lines[3])) != 8 || strings.Fields(lines[3])[5] != "0" ||
		!strings.HasSuffix(lines[1], "failed   notice p50   elect p50") ||
		lines[4] != "page: "+res.Page {
		t.Errorf("output:\n%s", out.String())
	}
	if n := strings.Count(prog.String(), "bench failover: "); n != 4 || !strings.Contains(prog.String(), "4/4 runs (stop trial 2)") {
		t.Errorf("progress:\n%s", prog.String())
	}
	page, err := os.ReadFile(res.Page)
	if err != nil || !bytes.Contains(page, []byte("inventory.txt")) || !bytes.Contains(page, []byte(`href="kill-01/`)) {
		t.Errorf("page (%v) lacks the given options or a trial's link", err)
	}
	for _, tr := range res.Trials {
		if _, err := os.Stat(filepath.Join(tr.Dir, "verdict.json")); err != nil || !tr.OK {
			t.Errorf("trial %+v: %v", tr, err)
		}
		// The death is noticed after the fault and before the new leader (a survivor suspects
		// the leader before it elects; in the simulator links take at least 0.1 ms).
		if !tr.HasNotice || tr.NoticeMS < 0.1 || tr.NoticeMS >= tr.MS {
			t.Errorf("trial %s-%d: notice %v after %.3f ms of a %.3f ms failover", tr.Fault, tr.Trial, tr.HasNotice, tr.NoticeMS, tr.MS)
		}
	}

	one := c
	one.Nodes, one.Trials, one.Faults, one.Out = 1, 1, []string{"kill"}, t.TempDir()
	res, err = Failover(context.Background(), one, &out, &prog)
	if err != nil || res.Failed != 1 || !strings.HasPrefix(res.Trials[0].Why, "the live nodes never agreed again: kill 1 at ") {
		t.Errorf("one node: %+v, %v; want a failed trial that never agreed again", res, err)
	}
}

// TestFailoverUnmade: a run the launcher refuses stops the bench with the trial named.
func TestFailoverUnmade(t *testing.T) {
	c := DefaultFailoverConfig()
	c.Sim, c.Trials, c.Nodes, c.Out = true, 1, 0, t.TempDir()
	var out bytes.Buffer
	_, err := Failover(context.Background(), c, &out, &out)
	wantRefused(t, "no nodes", err, "trial kill 0: ", "Config.Nodes")
	if strings.Contains(out.String(), "page: ") {
		t.Errorf("a page after an unmade run:\n%s", out.String())
	}
}
