package report

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// The scripts of scripts/ run on run directories made by the in-memory driver; CI installs jq and
// python3, a machine without them skips.

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s: the script that needs it is not run", name)
	}
	return p
}

func script(name string) string { return filepath.Join("..", "scripts", name) }

func runScript(t *testing.T, interp, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(interp, append([]string{script(name)}, args...)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// simDir simulates a run (the whole node, `leaderlab run --sim`) of 3s with the chaos schedule,
// writes it, checked, into parent/name and returns its directory and verdict.
func simDir(t *testing.T, parent, algo string, n int, seed int64, chaos string) (string, *logs.Verdict) {
	t.Helper()
	cfg := launcher.DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = algo, n, seed, true
	cfg.Duration = 3 * time.Second
	cfg.Chaos = chaos
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, fmt.Sprintf("%s-n%d-s%d", algo, n, seed))
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir, s.Verdict
}

const killLeader = "at 1s kill leader"

func TestScriptElections(t *testing.T) {
	needTool(t, "jq")
	bash := needTool(t, "bash")
	parent := t.TempDir()
	a, va := simDir(t, parent, "bully", 5, 1, killLeader)
	_, vb := simDir(t, parent, "bully", 4, 2, "")

	stdout, stderr, code := runScript(t, bash, "elections.sh", a)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(lines[0], "run\talgo\tnodes\telection\tstart_ms") {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines)-1 != len(va.Metrics.Elections) || len(va.Metrics.Elections) < 2 {
		t.Fatalf("%d rows, want one per election (%d)", len(lines)-1, len(va.Metrics.Elections))
	}
	for i, e := range va.Metrics.Elections {
		f := strings.Split(lines[i+1], "\t")
		byKind := make([]string, 0, len(e.ByKind))
		for k, n := range e.ByKind {
			byKind = append(byKind, fmt.Sprintf("%s=%d", k, n))
		}
		sort.Strings(byKind)
		want := []string{a, "bully", "5", strconv.Itoa(i + 1)}
		if f[0] != want[0] || f[1] != want[1] || f[2] != want[2] || f[3] != want[3] ||
			f[6] != strconv.Itoa(e.Messages) || f[7] != strconv.Itoa(e.Announce) || f[9] != strconv.Itoa(*e.Bound) ||
			f[11] != strconv.Itoa(e.Faults) || f[13] != strings.Join(byKind, ",") {
			t.Errorf("row %d: %q; want election %+v", i+1, f, e)
		}
		start, _ := strconv.ParseFloat(f[4], 64)
		if math.Abs(start-float64(e.StartNS-va.BeginNS)/1e6) > 0.01 {
			t.Errorf("row %d starts at %s ms, want %v", i+1, f[4], float64(e.StartNS-va.BeginNS)/1e6)
		}
	}

	// A directory of runs stands for all of them.
	stdout, _, code = runScript(t, bash, "elections.sh", parent)
	if rows := strings.Count(stdout, "\n") - 1; code != 0 || rows != len(va.Metrics.Elections)+len(vb.Metrics.Elections) {
		t.Errorf("directory of runs: exit %d, %d rows", code, rows)
	}
	if _, stderr, code := runScript(t, bash, "elections.sh", t.TempDir()); code != 2 || !strings.Contains(stderr, "neither a checked run") {
		t.Errorf("not a run: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runScript(t, bash, "elections.sh"); code != 2 || !strings.Contains(stderr, "Usage: elections.sh") {
		t.Errorf("no argument: exit %d, %q", code, stderr)
	}
}

func TestScriptFailover(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	var ms []float64
	for seed := int64(1); seed <= 4; seed++ {
		_, v := simDir(t, parent, "bully", 5, seed, killLeader)
		for _, f := range v.Metrics.Failovers {
			ms = append(ms, *f.MS)
		}
	}
	pause := "at 1s pause leader for 600ms"
	_, v := simDir(t, parent, "bully", 5, 9, pause)
	if len(ms) != 4 || len(v.Metrics.Failovers) != 1 {
		t.Fatalf("the runs have %d kill and %d pause failovers, want 4 and 1", len(ms), len(v.Metrics.Failovers))
	}
	csvPath := filepath.Join(t.TempDir(), "failovers.csv")
	stdout, stderr, code := runScript(t, py, "failover.py", "--csv", csvPath, parent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sort.Float64s(ms)
	rank := func(q float64) float64 { return ms[max(0, int(math.Ceil(q*float64(len(ms))))-1)] }
	rows := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 7 {
			rows[f[1]] = strings.Join(f, " ")
		}
	}
	if want := fmt.Sprintf("bully kill 4 %.3f %.3f %.3f 0", rank(0.5), rank(0.9), ms[len(ms)-1]); rows["kill"] != want {
		t.Errorf("kill row %q, want %q:\n%s", rows["kill"], want, stdout)
	}
	if !strings.HasPrefix(rows["all"], "bully all 5 ") || !strings.HasPrefix(rows["pause"], "bully pause 1 ") {
		t.Errorf("pause and all rows %q, %q:\n%s", rows["pause"], rows["all"], stdout)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || strings.Join(recs[0], ",") != "run,algo,nodes,fault,at_ms,ms,leader,what" {
		t.Errorf("csv: %d rows, header %v; want a header and 5 failovers", len(recs), recs[0])
	}
	if _, stderr, code := runScript(t, py, "failover.py", t.TempDir()); code != 2 || !strings.Contains(stderr, "neither a checked run") {
		t.Errorf("not a run: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runScript(t, py, "failover.py"); code != 2 || !strings.Contains(stderr, "usage: failover.py") {
		t.Errorf("no argument: exit %d, %q", code, stderr)
	}
}

func TestScriptCompare(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	type cell struct{ sum, n, bound int }
	want := map[string]map[int]*cell{}
	for _, algo := range []string{"bully", "chang-roberts"} {
		want[algo] = map[int]*cell{}
		for _, n := range []int{3, 5, 8} {
			for seed := int64(1); seed <= 2; seed++ {
				_, v := simDir(t, parent, algo, n, seed, "")
				for _, e := range v.Metrics.Elections {
					if e.Faults == 0 {
						c := want[algo][n]
						if c == nil {
							c = &cell{}
							want[algo][n] = c
						}
						c.sum += e.Messages + e.Announce
						c.n++
						c.bound = max(c.bound, *e.Bound)
					}
				}
			}
		}
	}
	svg := filepath.Join(t.TempDir(), "compare.svg")
	stdout, stderr, code := runScript(t, py, "compare.py", "--svg", svg, parent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], "bully") || !strings.Contains(lines[1], "chang-roberts") {
		t.Fatalf("want a title, a header naming both algorithms and a row per N:\n%s", stdout)
	}
	for i, n := range []int{3, 5, 8} {
		row := lines[i+2]
		if !strings.HasPrefix(row, strconv.Itoa(n)+" ") {
			t.Errorf("row %q, want N=%d", row, n)
		}
		for _, algo := range []string{"bully", "chang-roberts"} {
			c := want[algo][n]
			if s := fmt.Sprintf("%.1f [", float64(c.sum)/float64(c.n)); !strings.Contains(row, s) || !strings.Contains(row, fmt.Sprintf("/ %d (%d)", c.bound, c.n)) {
				t.Errorf("N=%d %s: row %q lacks mean %s and bound %d over %d elections", n, algo, row, s, c.bound, c.n)
			}
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Polylines []struct {
			Class string `xml:"class,attr"`
		} `xml:"polyline"`
		Circles []struct{} `xml:"circle"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the SVG is not XML: %v", err)
	}
	series := 0
	for _, p := range doc.Polylines {
		if p.Class == "series" {
			series++
		}
	}
	if series != 2 || len(doc.Circles) != 6 {
		t.Errorf("SVG: %d series and %d points, want 2 and 6", series, len(doc.Circles))
	}
}
