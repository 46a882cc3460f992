package main

// End-to-end tests of bench failover and bench chaos through the binary: simulated runs (a second
// or so each), what they print, the files they write, their exit codes, and errors that name the
// flags rather than bench's fields.

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBenchFailoverSim(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "f")
	out := leaderlabOK(t, "bench", "failover", "--sim", "--trials", "2", "--faults", "kill,stop", "--out", dir)
	outputHas(t, out,
		"failover: bully, 5 nodes, heartbeat 50ms, timeout 200ms, 2 trials per fault, simulated (runs in "+dir+")\n",
		"fault  trials    p50 ms    p90 ms    max ms   failed   notice p50   elect p50\n",
		"bench failover: 4/4 runs (stop trial 2)",
		"page: "+filepath.Join(dir, "index.html")+"\n")
	for _, fault := range []string{"kill", "stop"} {
		if !regexp.MustCompile(`(?m)^` + fault + ` +2( +[0-9]+\.[0-9]{2}){3} +0( +[0-9]+\.[0-9]{2}){2}$`).MatchString(out) {
			t.Errorf("no row of 2 measured %s trials, none failed, with its notice and elect:\n%s", fault, out)
		}
	}
	for _, f := range []string{"index.html", "kill-00/verdict.json", "kill-01/verdict.json", "stop-00/verdict.json", "stop-01/verdict.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// leaderlabOK runs the binary, stops the test unless it exits 0, and returns its output.
func leaderlabOK(t *testing.T, args ...string) string {
	t.Helper()
	code, out := leaderlab(t, args...)
	if code != 0 {
		t.Fatalf("leaderlab %q: exit %d:\n%s", args, code, out)
	}
	return out
}

// outputHas fails the test for each of wants that out lacks.
func outputHas(t *testing.T, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestBenchFailoverFails: a cluster of one has no failover to measure, so its kill trial fails
// and the bench exits 1.
func TestBenchFailoverFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "f")
	code, out := leaderlab(t, "bench", "failover", "--sim", "-n", "1", "--trials", "1", "--faults", "kill", "--out", dir)
	if code != 1 || !strings.Contains(out, "1 trials did not pass (their directories are in "+dir+"; leaderlab check DIR says why)") {
		t.Errorf("exit %d, want 1 and the failed trial counted:\n%s", code, out)
	}
}

func TestBenchChaosSim(t *testing.T) {
	root := t.TempDir()
	dir, csvPath := filepath.Join(root, "c"), filepath.Join(root, "c.csv")
	out := leaderlabOK(t, "bench", "chaos", "--sim", "--runs", "3", "-n", "5,6", "--algos", "bully,lelann", "--seed", "7",
		"--csv", csvPath, "--out", dir)
	outputHas(t, out,
		"chaos: bully,lelann; n [5 6]; 3 runs each of 6s; --nemesis kill,pause,restart,partition,link,stop,clock --nemesis-interval 500ms --nemesis-restart; seeds 7..9; runs in "+dir+"\n",
		"algo                   n  runs violations  expected  inconclusive  split-brain ms     max ms  lost orphans warnings  failed properties\n",
		// The simulator is deterministic, so these seeds always give these counts: the LIMITs are
		// one-way link drops and clock faults, faults Bully and LeLann do not promise uniqueness under.
		"bully                  5     3          0         1             0 ",
		"lelann                 6     3          0         2             0 ",
		"total                       12          0         6             0 ",
		"bench chaos: 12/12 runs (lelann n=6 done)\n",
		"page: "+filepath.Join(dir, "index.html")+"\n")
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 5 || rows[0][0] != "algo" || rows[0][11] != "failing_runs" || rows[4][0] != "lelann" || rows[4][1] != "6" || rows[4][2] != "3" {
		t.Errorf("CSV %q, %v: want the header and a row per cell", rows, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index.html")); err != nil {
		t.Error(err)
	}
}

// TestBenchErrorsNameFlags: bench's configuration errors reach the user in the flags' names,
// exit 2, and bench chaos's leave no --out directory behind.
func TestBenchErrorsNameFlags(t *testing.T) {
	root := t.TempDir()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"failover", "--trials", "0"}, "--trials: want at least 1"},
		{[]string{"failover", "--sim", "--algo", "nope"}, `--algo: unknown algorithm "nope"`},
		{[]string{"failover", "--sim", "--faults", "kill,bogus"}, `--faults: unknown fault "bogus" (accepted: kill, pause, stop)`},
		{[]string{"failover", "--sim", "--algo", "rsdp", "--rsdp-mode", "bad"}, `--rsdp-mode "bad" (accepted: latest, popular, ranked)`},
		{[]string{"chaos", "--runs", "0"}, "--runs 0: want at least 1"},
		{[]string{"chaos", "-n", "1"}, "--n 1: want 2.."},
		{[]string{"chaos", "-n", "x"}, `--n: "x" is not a cluster size or a range`},
		{[]string{"chaos", "-n", ""}, "--n: no cluster size given"},
		{[]string{"chaos", "--algos", ","}, "--algos: no algorithm given"},
		{[]string{"chaos", "--nemesis", "bogus"}, `--nemesis: unknown fault kind "bogus"`},
		{[]string{"chaos", "--nemesis-interval", "0"}, "--nemesis-interval 0s: want a positive duration"},
		{[]string{"chaos", "--duration", "-1s"}, "--duration -1s: want a positive duration"},
		{[]string{"chaos", "--sim", "--runs", "1", "-n", "5", "--algos", "bully", "--csv", filepath.Join(root, "none", "x.csv")}, "--csv: open "},
	}
	for i, c := range cases {
		out := filepath.Join(root, "out", c.args[0]+string(rune('a'+i)))
		code, got := leaderlab(t, append(append([]string{"bench"}, c.args...), "--out", out)...)
		if code != 2 || !strings.Contains(got, c.want) || strings.Contains(got, "Config.") {
			t.Errorf("bench %q: exit %d, want 2 and %q:\n%s", c.args, code, c.want, got)
		}
		if _, err := os.Stat(out); c.args[0] == "chaos" && !strings.HasPrefix(c.want, "--csv") && err == nil {
			t.Errorf("bench %q left %s behind", c.args, out)
		}
	}
}
