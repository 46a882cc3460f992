package main

// End-to-end tests of network chaos (issue 4) with real processes: partitions that heal into one
// highest leader, a split-brain window reported per side, the iptables backend, a link rule's drops
// in the receiver's log, and a nemesis run whose replay applies the same schedule.

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// chaosVerdict is the part of verdict.json about partitions.
type chaosVerdict struct {
	Metrics struct {
		SplitBrain []splitWindow `json:"split_brain"`
		Heals      []struct {
			AtMS        float64  `json:"at_ms"`
			ConvergedMS *float64 `json:"converged_ms"`
			Leader      *int     `json:"leader"`
		} `json:"heals"`
	} `json:"metrics"`
}

// splitWindow is one of verdict.json's split-brain windows.
type splitWindow struct {
	AtMS    float64 `json:"at_ms"`
	MS      float64 `json:"ms"`
	Leaders []int   `json:"leaders"`
}

func readChaosVerdict(t *testing.T, dir string) chaosVerdict {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	var v chaosVerdict
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("verdict.json: %v", err)
	}
	return v
}

// TestChaosIsolateLeaderHeals: the leader cut off from everyone, then healed: the cluster ends on 7
// and the checker measured the convergence after the heal.
func TestChaosIsolateLeaderHeals(t *testing.T) {
	dir := runCluster(t, 7, "-n", "7", "--duration", "5s", "--chaos", "at 1s partition isolate leader; at 2.5s heal")
	v := readChaosVerdict(t, dir)
	if len(v.Metrics.Heals) == 0 || v.Metrics.Heals[0].ConvergedMS == nil {
		t.Fatalf("want the heal's convergence measured, got heals %+v", v.Metrics.Heals)
	}
}

// TestChaosHalvesSplitBrain: Bully elects one leader per side of 1-3|4-6, which the checker reports
// as a split-brain window (not a violation), and 6 after the heal.
func TestChaosHalvesSplitBrain(t *testing.T) {
	halves(t)
}

// TestChaosHalvesIPTables is the same with the kernel dropping the packets; it needs root and a
// working iptables, and skips saying which is missing.
func TestChaosHalvesIPTables(t *testing.T) {
	if err := iptablesUsable(); err != nil {
		t.Skip(err)
	}
	halves(t, "--net-backend", "iptables")
}

func halves(t *testing.T, extra ...string) {
	t.Helper()
	args := append([]string{"-n", "6", "--duration", "5s", "--chaos", "at 1s partition halves; at 2.5s heal"}, extra...)
	dir := runCluster(t, 6, args...)
	v := readChaosVerdict(t, dir)
	if len(v.Metrics.SplitBrain) == 0 {
		t.Fatalf("no split-brain window reported for a halves partition")
	}
	if !slices.ContainsFunc(v.Metrics.SplitBrain, func(w splitWindow) bool { return slices.Equal(w.Leaders, []int{3, 6}) }) {
		t.Fatalf("want a split-brain window with leaders 3 and 6 (one per side), got %+v", v.Metrics.SplitBrain)
	}
}

// iptablesUsable says why the iptables backend cannot run here, or nil.
func iptablesUsable() error {
	if os.Geteuid() != 0 {
		return errors.New("the iptables backend needs root")
	}
	for _, b := range []string{"iptables", "iptables-restore"} {
		if _, err := exec.LookPath(b); err != nil {
			return errors.New("the iptables backend needs " + b + " in PATH")
		}
	}
	if out, err := exec.Command("iptables", "-w", "-S", "INPUT").CombinedOutput(); err != nil {
		return errors.New("iptables does not work here: " + strings.TrimSpace(string(out)))
	}
	return nil
}

// TestChaosLinkDropLogged: node 1 discards what 5 sends it while the rule holds, and logs each
// discarded message as a drop naming the step.
func TestChaosLinkDropLogged(t *testing.T) {
	const step = "at 1s link 5->1 drop"
	dir := runCluster(t, 5, "-n", "5", "--duration", "4s", "--chaos", step+"; at 2s heal")
	f, err := os.Open(filepath.Join(dir, "nodes", "1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	drops := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e struct {
			Ev     string `json:"ev"`
			From   int    `json:"from"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Ev != "drop" {
			continue
		}
		if e.From != 5 || !strings.Contains(e.Reason, step) {
			t.Errorf("node 1 dropped a message from %d with reason %q; want only drops from 5 naming %q", e.From, e.Reason, step)
		}
		drops++
	}
	if drops == 0 {
		t.Fatalf("node 1 logged no drop while %q held", step)
	}
}

// TestChaosNemesisReplay: a nemesis run passes, and its replay applies the same schedule: the same
// chaos.jsonl records, op by op and target by target, times and acknowledgements aside.
func TestChaosNemesisReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	tmp := t.TempDir()
	first, again := filepath.Join(tmp, "n1"), filepath.Join(tmp, "n2")
	code, out := leaderlab(t, "run", "-n", "5", "--nemesis", "kill,pause,partition", "--nemesis-interval", "500ms",
		"--seed", "7", "--duration", "6s", "--out", first)
	if code != 0 {
		t.Fatalf("nemesis run (seed 7) exited %d, want 0:\n%s", code, out)
	}
	if code, out := leaderlab(t, "run", "--replay", first, "--out", again); code != 0 {
		t.Fatalf("replay exited %d, want 0:\n%s", code, out)
	}
	a, b := chaosOps(t, first), chaosOps(t, again)
	if len(a) == 0 {
		t.Fatalf("the nemesis run applied no fault:\n%s", out)
	}
	if !slices.Equal(a, b) {
		t.Fatalf("the replay applied another schedule:\nrun:    %s\nreplay: %s", strings.Join(a, "\n        "), strings.Join(b, "\n        "))
	}
}

// chaosOps reads chaos.jsonl as one canonical JSON text per record, without its times and
// acknowledgements (which no two runs share).
func chaosOps(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "chaos.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		for _, k := range []string{"ts", "ack", "acks", "applied"} {
			delete(rec, k)
		}
		s, _ := json.Marshal(rec) // map keys come out sorted
		out = append(out, string(s))
	}
	return out
}
