package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Sweeps over hosts: bench chaos --sim and run --sim --count spread their seeds over the namespace
// lab's SSH hosts (a `leaderlab sweep-worker` on each) and must print what the same command prints
// here: the same rows, counts and failing seeds, the failing runs' directories written here.

// tableLines keeps the lines of a bench chaos or run --count output that say what was measured:
// rows, failing runs and their replay commands, the summary; the run directory's root is written
// OUT so that two sweeps into two directories compare.
func tableLines(out, dir string) []string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "bench chaos: "), strings.HasPrefix(l, "chaos: "), strings.HasPrefix(l, "hosts: "),
			strings.HasPrefix(l, "runs per host: "), strings.HasPrefix(l, "page: "), strings.TrimSpace(l) == "":
			continue // progress, the header (it names the directory), the hosts
		}
		l = strings.ReplaceAll(l, dir, "OUT")
		l = regexp.MustCompile(`, about \d+s to go$`).ReplaceAllString(l, "")
		// run --count: a run that passed on a host is not written here
		l = regexp.MustCompile(`\(made on h\d; not written here\)`).ReplaceAllString(l, "DIR")
		l = regexp.MustCompile(`OUT/run-\d+$`).ReplaceAllString(l, "DIR")
		keep = append(keep, l)
	}
	return keep
}

// runsPerHost reads "runs per host: h1 7, h2 5" into its total and the hosts named.
func runsPerHost(t *testing.T, out string) (int, []string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^runs per host: (.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"runs per host\" line in:\n%s", out)
	}
	total, hosts := 0, []string(nil)
	for _, p := range strings.Split(m[1], ", ") {
		f := strings.Fields(p)
		n, _ := strconv.Atoi(f[1])
		total += n
		hosts = append(hosts, f[0])
	}
	return total, hosts
}

// sweepWorkersLeft lists the sweep workers still running in the lab's namespaces.
func sweepWorkersLeft() []string {
	var left []string
	for k := 1; k <= 3; k++ {
		out, _ := exec.Command("ip", "netns", "pids", "ll-h"+strconv.Itoa(k)).Output()
		for _, pid := range strings.Fields(string(out)) {
			b, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if strings.Contains(string(b), "sweep-worker") {
				left = append(left, pid)
			}
		}
	}
	return left
}

func TestNetnsSweepOverHosts(t *testing.T) {
	lab := netnsLab(t)
	tmp := t.TempDir()
	hosts := filepath.Join(tmp, "hosts")
	if err := os.WriteFile(hosts, []byte("h1\nh2 # two of the lab's three\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onHosts := []string{"--hosts", hosts, "--ssh-config", filepath.Join(lab, "ssh-config")}

	// bench chaos: franklin with 8 nodes fails seed 33 under a declared limit, which the sweep
	// over hosts must make again here and write; --check-determinism makes each seed twice on its
	// host.
	grid := []string{"bench", "chaos", "--sim", "--algos", "bully,chang-roberts,franklin", "-n", "4,8", "--runs", "6", "--seed", "30", "--duration", "4s"}
	for _, extra := range [][]string{nil, {"--check-determinism"}} {
		here, there := filepath.Join(tmp, "here"), filepath.Join(tmp, "there")
		os.RemoveAll(here)
		os.RemoveAll(there)
		args := append(append([]string{}, grid...), extra...)
		codeHere, outHere := leaderlab(t, append(args, "--out", here)...)
		codeThere, outThere := leaderlab(t, append(append(args, "--out", there), onHosts...)...)
		if codeHere != codeThere {
			t.Errorf("%v: exit %d here, %d over hosts:\n%s", extra, codeHere, codeThere, outThere)
		}
		a, b := tableLines(outHere, here), tableLines(outThere, there)
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%v: the table over hosts differs from the one here.\nhere:\n%s\nover hosts:\n%s", extra, strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		if !strings.Contains(outThere, "hosts: h1 (") || !strings.Contains(outThere, "h2 (") || strings.Contains(outThere, "h3 (") {
			t.Errorf("%v: want hosts h1 and h2 named with their cores:\n%s", extra, outThere)
		}
		if total, named := runsPerHost(t, outThere); total != 36 || strings.Join(named, ",") != "h1,h2" {
			t.Errorf("%v: runs per host %v, %d in all: want h1 and h2, 36 runs", extra, named, total)
		}
		if !strings.Contains(outHere, "LIMIT seed 33") {
			t.Errorf("no failing seed in the grid: the test no longer checks the runs made again here:\n%s", outHere)
		}
		if _, err := os.Stat(filepath.Join(there, "franklin-n8-seed33", "verdict.json")); err != nil {
			t.Errorf("%v: the failing run was not written here: %v", extra, err)
		}
	}

	// run --count: the same lines, summary and failing seeds; the failing run written here.
	series := []string{"run", "--sim", "-a", "franklin", "-n", "8", "--duration", "4s", "--nemesis", "kill,pause,restart,partition,link,stop,clock",
		"--nemesis-interval", "500ms", "--nemesis-restart", "--seed", "28", "--count", "8"}
	here, there := filepath.Join(tmp, "count-here"), filepath.Join(tmp, "count-there")
	codeHere, outHere := leaderlab(t, append(series, "--out", here)...)
	codeThere, outThere := leaderlab(t, append(append(series, "--out", there), onHosts...)...)
	if codeHere != 1 || codeThere != codeHere {
		t.Errorf("run --count: exit %d here, %d over hosts; want 1 (seed 33 fails)\n%s", codeHere, codeThere, outThere)
	}
	a, b := tableLines(outHere, here), tableLines(outThere, there)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("run --count over hosts differs from here.\nhere:\n%s\nover hosts:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if !strings.Contains(outThere, "failing seeds: 33\nreplay the first: leaderlab run --replay "+filepath.Join(there, "run-006")) {
		t.Errorf("run --count over hosts: want seed 33 failing, written in run-006:\n%s", outThere)
	}
	if _, err := os.Stat(filepath.Join(there, "run-006", "verdict.json")); err != nil {
		t.Errorf("the failing run was not written here: %v", err)
	}
	if total, _ := runsPerHost(t, outThere); total != 8 {
		t.Errorf("runs per host: %d in all, want 8", total)
	}
	if left := sweepWorkersLeft(); len(left) > 0 {
		t.Errorf("sweep workers left on the hosts: pids %v", left)
	}
}

// Bad inputs of a sweep over hosts are refused before anything is made, naming the flag.
func TestSweepOverHostsBadInputs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary; skipped with -short")
	}
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	os.WriteFile(empty, []byte("# nobody\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "chaos", "--hosts", empty, "--out", filepath.Join(tmp, "a")}, "--hosts: bench chaos spreads only simulated runs over SSH hosts: give --sim too"},
		{[]string{"bench", "chaos", "--sim", "--hosts", empty, "--out", filepath.Join(tmp, "b")}, "--hosts " + empty + " lists no host"},
		{[]string{"bench", "chaos", "--sim", "--insecure-ignore-host-key", "--out", filepath.Join(tmp, "c")}, "--insecure-ignore-host-key: it skips the host key check of SSH hosts: it needs --hosts or --ssh-config"},
		{[]string{"run", "--sim", "--count", "3", "--hosts", empty, "--out", filepath.Join(tmp, "d")}, "--hosts " + empty + " lists no host"},
		{[]string{"run", "--sim", "--count", "3", "--hosts", empty, "--topology", "@" + empty}, "--topology @" + empty + ": a sweep over hosts cannot read"},
		{[]string{"run", "--sim", "--count", "3", "--hosts", empty, "-n", "0"}, "--nodes 0: want 1..4096"},
	} {
		code, out := leaderlab(t, tc.args...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("leaderlab %s: exit %d, %q; want exit 2 and %q", strings.Join(tc.args, " "), code, out, tc.want)
		}
	}
	for _, d := range []string{"a", "b", "c", "d"} {
		if _, err := os.Stat(filepath.Join(tmp, d)); err == nil {
			t.Errorf("--out %s was made by a refused sweep", d)
		}
	}
}
