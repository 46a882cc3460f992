package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Issue 12's end-to-end tests: large clusters of real processes. Each takes tens of seconds of a
// two-core machine, so -short skips them; a machine whose limits are too low for the cluster skips
// them with the limit named.

// needMachine skips the test when this machine cannot hold n node processes: memory (15 MiB a node,
// the bound), open files (the launcher holds a pipe per node), processes and threads.
func needMachine(t *testing.T, n int) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%d real processes; skipped with -short", n)
	}
	if avail, err := memAvailable(); err == nil && avail < uint64(n)*15<<20 {
		t.Skipf("MemAvailable is %d MiB, under the %d MiB that %d nodes of 15 MiB may take", avail>>20, n*15, n)
	}
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) == nil && lim.Max < uint64(2*n+256) {
		t.Skipf("the hard open-file limit (RLIMIT_NOFILE) is %d, under the %d the launcher needs for %d nodes", lim.Max, 2*n+256, n)
	}
	if pm, err := readProcInt("/proc/sys/kernel/pid_max"); err == nil && pm < 4*n+1000 {
		t.Skipf("kernel.pid_max is %d, too few for %d node processes and their threads", pm, n)
	}
	if tm, err := readProcInt("/proc/sys/kernel/threads-max"); err == nil && tm < 8*n+1000 {
		t.Skipf("kernel.threads-max is %d, too few for %d Go processes of ~8 threads", tm, n)
	}
}

func memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/meminfo has no MemAvailable")
}

func readProcInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// suspicionsOf reads verdict.json's metrics.suspicions.
func suspicionsOf(t *testing.T, dir string) (total, false_, early int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Metrics struct {
			Suspicions struct {
				Total, False, Early int
			} `json:"suspicions"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	s := v.Metrics.Suspicions
	return s.Total, s.False, s.Early
}

// A 300-node Chang-Roberts ring elects 300; killed, 299 takes over, and the verdict passes.
func TestScaleRingOf300KillLeader(t *testing.T) {
	needMachine(t, 300)
	dir := runCluster(t, 299, "-a", "chang-roberts", "-n", "300", "--ids", "random", "--seed", "12",
		"--chaos", "at 3s kill leader", "--duration", "8s")
	total, f, early := suspicionsOf(t, dir)
	t.Logf("suspicions: %d (%d false, %d early)", total, f, early)
}

// The launcher starts 1000 nodes, and every one of them begins (its log starts with a start event):
// the begin fan-out reaches them all.
func TestScaleLaunch1000AllBegin(t *testing.T) {
	const n = 1000
	needMachine(t, n)
	dir := filepath.Join(t.TempDir(), "run")
	code, out := leaderlab(t, "run", "--out", dir, "-a", "chang-roberts", "-n", strconv.Itoa(n), "--initiators", "one",
		"--chaos", "", "--duration", "3s")
	if code == 2 {
		t.Fatalf("the run could not be made (exit 2):\n%s", tail(out, 20))
	}
	var notBegun []int
	for id := 1; id <= n; id++ {
		f, err := os.Open(filepath.Join(dir, "nodes", fmt.Sprintf("%d.jsonl", id)))
		if err != nil {
			notBegun = append(notBegun, id)
			continue
		}
		sc := bufio.NewScanner(f)
		begun := false
		for sc.Scan() && !begun {
			begun = strings.Contains(sc.Text(), `"ev":"start"`)
		}
		f.Close()
		if !begun {
			notBegun = append(notBegun, id)
		}
	}
	if len(notBegun) > 0 {
		t.Errorf("%d of %d nodes never began (first: %v); exit %d:\n%s", len(notBegun), n, notBegun[:min(10, len(notBegun))], code, tail(out, 20))
	}
}

// Short pauses, each under the detector's timeout, spread over many nodes of a 64-node ring (the
// scheduler's doing on a loaded machine, made by SIGSTOP): no suspicion the checker would count as
// false. A paused node's neighbours may suspect it (a true suspicion: it did not run); the paused
// node, once it runs again, must not suspect its neighbours (its own stall is not their silence).
func TestScaleShortPausesNoFalseSuspicions(t *testing.T) {
	needMachine(t, 64)
	var steps []string
	for i := range 20 {
		steps = append(steps, fmt.Sprintf("at %dms pause %d for 190ms", 1000+150*i, 3+3*i))
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out := leaderlab(t, "run", "--out", dir, "-a", "chang-roberts", "-n", "64", "--ids", "random", "--seed", "5",
		"--chaos", strings.Join(steps, "; "), "--duration", "6s")
	if code == 2 {
		t.Fatalf("the run could not be made (exit 2):\n%s", tail(out, 20))
	}
	total, f, early := suspicionsOf(t, dir)
	if f > 0 {
		t.Errorf("%d false suspicions (of %d; %d early) under pauses shorter than the timeout:\n%s", f, total, early, tail(out, 30))
	}
	t.Logf("suspicions: %d (%d false, %d early), exit %d", total, f, early, code)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
