package main

// End-to-end tests: the leaderlab binary, built once, starts real node processes over real sockets,
// as a user would from the command line. Each run takes a few seconds; -short skips them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/bench"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "leaderlab-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binary = filepath.Join(dir, "leaderlab")
	// LEADERLAB_E2E_BINARY runs the tests against a binary built elsewhere (on a machine without
	// Go, such as a VM with a kernel of its own: the netem tests).
	if b := os.Getenv("LEADERLAB_E2E_BINARY"); b != "" {
		binary = b
	} else if out, err := staticBuild(binary).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// staticBuild builds leaderlab without cgo, as README.md says to: its nodes start with a quarter
// less CPU, which the tests' hundreds of real runs on two cores feel. The acceptance checks and
// `go run` use the default (dynamic) build; the code is the same.
func staticBuild(binary string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-o", binary, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// leaderlab runs the binary and returns its exit code and combined output.
func leaderlab(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("leaderlab %v: %v", args, err)
	}
	return code, out.String()
}

type verdict struct {
	OK         bool `json:"ok"`
	Leader     *int `json:"leader"`
	Properties []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
	} `json:"properties"`
	Metrics struct {
		Failovers []struct {
			Fault string   `json:"fault"`
			MS    *float64 `json:"ms"`
		} `json:"failovers"`
	} `json:"metrics"`
}

func readVerdictT(t *testing.T, dir string) verdict {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	var v verdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	return v
}

// runCluster makes a run and checks its exit code and final leader.
func runCluster(t *testing.T, wantLeader int, args ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out := leaderlab(t, append([]string{"run", "--out", dir}, args...)...)
	if code != 0 {
		t.Fatalf("run %v exited %d, want 0:\n%s", args, code, out)
	}
	v := readVerdictT(t, dir)
	if v.Leader == nil || *v.Leader != wantLeader {
		t.Fatalf("run %v: leader %v, want %d:\n%s", args, v.Leader, wantLeader, out)
	}
	return dir
}

func TestRunDefaultsKillLeader(t *testing.T) {
	dir := runCluster(t, 4, "--duration", "3s")
	v := readVerdictT(t, dir)
	if len(v.Metrics.Failovers) != 1 || v.Metrics.Failovers[0].MS == nil {
		t.Fatalf("want one measured failover, got %+v", v.Metrics.Failovers)
	}
	// The run directory is a contract: cluster.json holds the secret and must be private.
	st, err := os.Stat(filepath.Join(dir, "cluster.json"))
	if err != nil || st.Mode().Perm()&0o077 != 0 {
		t.Fatalf("cluster.json mode %v, err %v: want 0600", st.Mode(), err)
	}
	for _, f := range []string{"chaos.jsonl", "launcher.jsonl", "nodes/1.jsonl", "nodes/5.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory lacks %s", f)
		}
	}
}

func TestRunPausedLeaderTakesOverAgain(t *testing.T) {
	runCluster(t, 5, "--duration", "4s", "--chaos", "at 1s pause leader for 1s")
}

func TestRunRestartedLeaderWins(t *testing.T) {
	runCluster(t, 5, "--duration", "4s", "--chaos", "at 1s kill leader; at 2s restart 5")
}

// TestRunStoppedLeaderRestarts: a stopped (SIGTERM) process exits promptly after its stop event, so
// that a restart a second later finds it gone and brings it back; it leads again. (The node's
// transport used to wait 5s for a control handler that waited on a loop that had returned.)
func TestRunStoppedLeaderRestarts(t *testing.T) {
	dir := runCluster(t, 5, "--duration", "4s", "--chaos", "at 1s stop leader; at 2s restart 5")
	var stopTS, exitTS int64
	for _, f := range []struct {
		file string
		want func(map[string]any) bool
		ts   *int64
	}{
		{"nodes/5.jsonl", func(e map[string]any) bool { return e["ev"] == "stop" && e["inc"] == 1.0 }, &stopTS},
		{"launcher.jsonl", func(e map[string]any) bool { return e["ev"] == "exited" && e["node"] == 5.0 && e["inc"] == 1.0 }, &exitTS},
	} {
		b, err := os.ReadFile(filepath.Join(dir, f.file))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && f.want(e) {
				*f.ts = int64(e["ts"].(float64))
			}
		}
	}
	if stopTS == 0 || exitTS == 0 || exitTS-stopTS > int64(100*time.Millisecond) {
		t.Errorf("node 5's first incarnation: stop event at %d, exited at %d: want its exit within 100ms of its stop event", stopTS, exitTS)
	}
}

// TestRunGoesOnUntilElected: without --duration, a run whose nodes still follow a dead leader at
// 5s (a leader paused at 3.5s keeps its connections: a 2.5s timeout finds it only around 6s) goes on until they follow the new
// one, says by how much in its stopping record, and passes; with --duration 5s it stops on time and
// the checker finds no agreement.
func TestRunGoesOnUntilElected(t *testing.T) {
	args := []string{"-n", "4", "--heartbeat", "200ms", "--timeout", "2500ms", "--settle", "1s", "--chaos", "at 3.5s pause leader"}
	dir := runCluster(t, 3, args...)
	b, err := os.ReadFile(filepath.Join(dir, "launcher.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"ev":"stopping","detail":"extended by `) {
		t.Errorf("launcher.jsonl has no extended stopping record:\n%s", b)
	}
	dir = filepath.Join(t.TempDir(), "on-time")
	code, out := leaderlab(t, append([]string{"run", "--out", dir, "--duration", "5s"}, args...)...)
	if v := readVerdictT(t, dir); code != 1 || v.OK || v.Properties[0].Name != "agreement" || v.Properties[0].OK {
		t.Fatalf("--duration 5s: exit %d, want 1 with agreement failed:\n%s", code, out)
	}
}

func TestCheckDoctoredRunFails(t *testing.T) {
	dir := runCluster(t, 5, "--duration", "2s", "--chaos", "")
	// Node 3's last leader event now says it won: it believes in itself until the end, beside 5, so
	// agreement (and uniqueness) must fail.
	path := filepath.Join(dir, "nodes", "3.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	doctored := false
	for i := len(lines) - 1; i >= 0 && !doctored; i-- {
		if strings.Contains(lines[i], `"ev":"leader"`) {
			lines[i] = strings.Replace(lines[i], `"leader":5`, `"leader":3`, 1)
			doctored = true
		}
	}
	if !doctored {
		t.Fatalf("node 3 logged no leader event:\n%s", b)
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := leaderlab(t, "check", dir)
	if code != 1 {
		t.Fatalf("check of a doctored run exited %d, want 1:\n%s", code, out)
	}
	if v := readVerdictT(t, dir); v.OK {
		t.Fatalf("doctored run judged ok")
	}
}

func TestCheckNotARun(t *testing.T) {
	for _, dir := range []string{filepath.Join(t.TempDir(), "nowhere"), t.TempDir()} {
		if code, out := leaderlab(t, "check", dir); code != 2 {
			t.Errorf("check %s exited %d, want 2:\n%s", dir, code, out)
		}
	}
}

func TestBadFlagsExit2(t *testing.T) {
	cases := [][]string{
		{"run", "--nodes", "0"},
		{"run", "--algo", "nope"},
		{"run", "--ids", "1,1,2"},
		{"run", "--chaos", "at 1s explode 3"},
		{"run", "--chaos", "at 1s partition 1-3|4-9"},
		{"run", "--duration", "banana"},
		{"run", "--chaos", "at 4.5s kill 1", "--duration", "5s"},
		{"run", "--no-such-flag"},
		{"check"},
	}
	for _, args := range cases {
		code, out := leaderlab(t, args...)
		if code != 2 {
			t.Errorf("leaderlab %v exited %d, want 2:\n%s", args, code, out)
		}
		if strings.TrimSpace(out) == "" {
			t.Errorf("leaderlab %v exited 2 without saying why", args)
		}
	}
}

// TestNoOrphansAfterLauncherKilled SIGKILLs the launcher mid-run: the parent-death signal must take
// every node with it.
func TestNoOrphansAfterLauncherKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(binary, "run", "--out", dir, "--duration", "30s", "--chaos", "")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(bench.OrphanNodes(dir)) < 5 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := len(bench.OrphanNodes(dir)); n < 5 {
		cmd.Process.Kill()
		t.Fatalf("only %d node processes came up", n)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for len(bench.OrphanNodes(dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pids := bench.OrphanNodes(dir); len(pids) > 0 {
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("node processes %v outlived the SIGKILLed launcher", pids)
	}
}
