package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// logClocks gives every event of run (but stats) the vector clock a node with vector clocks on
// would have logged, taken from a ShiViz export of the run; stats lines get the clock of the event
// before them, as the nodes write them.
func logClocks(t *testing.T, run *logs.Run) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := WriteShiViz(&buf, run); err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^(\S+) ({.*})\n`)
	byHost := map[string][]logs.VClock{}
	for _, m := range re.FindAllStringSubmatch(buf.String(), -1) {
		var vc logs.VClock
		if err := json.Unmarshal([]byte(m[2]), &vc); err != nil {
			t.Fatal(err)
		}
		byHost[m[1]] = append(byHost[m[1]], vc)
	}
	for _, nl := range run.Nodes {
		next := map[string]int{}
		var last logs.VClock
		for i := range nl.Events {
			e := &nl.Events[i]
			h := logs.HostName(e.Node, e.Inc)
			if e.Ev == logs.EvStats {
				e.VC = last
				continue
			}
			e.VC = byHost[h][next[h]]
			next[h]++
			last = e.VC
		}
	}
}

func TestShiVizSaysClocksAreComputed(t *testing.T) {
	run := fixtureRun(t) // the simulator logs no vc
	var buf bytes.Buffer
	st, err := WriteShiViz(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st.LoggedClocks != 0 || !strings.HasPrefix(st.Clocks, "clocks computed from send/recv matching") {
		t.Errorf("stats %+v", st)
	}
	run.Cluster.Options = map[string]string{"vclock": "off"}
	st, _ = WriteShiViz(&bytes.Buffer{}, run)
	if !strings.Contains(st.Clocks, "vector clocks were off") || !strings.Contains(st.Clocks, "above "+strconv.Itoa(wire.AutoClockNodes)+" nodes") {
		t.Errorf("a run with --vclock off: %q", st.Clocks)
	}
}

// Logged clocks that follow the rules are used as they are; one that differs is counted and named,
// and the export falls back to the computed clocks, which still pass ShiViz's rules.
func TestShiVizChecksLoggedClocks(t *testing.T) {
	run := fixtureRun(t)
	var plain bytes.Buffer
	if _, err := WriteShiViz(&plain, run); err != nil {
		t.Fatal(err)
	}
	logClocks(t, run)
	var buf bytes.Buffer
	st, err := WriteShiViz(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st.LoggedClocks != st.Events || st.ClockMismatches != 0 || !strings.HasPrefix(st.Clocks, "vector clocks from the logs") {
		t.Fatalf("stats %+v", st)
	}
	if buf.String() != plain.String() {
		t.Error("the export with logged clocks differs from the computed one")
	}

	// Node 2's fourth event claims to have seen one more event of node 1 than it had.
	e := &run.Nodes[2].Events[3]
	bad := append(logs.VClock(nil), e.VC...)
	for i := range bad {
		if bad[i].Node == 1 {
			bad[i].N++
		}
	}
	if len(bad) == len(e.VC) && bad.Get(1, 1) == e.VC.Get(1, 1) {
		bad = append(logs.VClock{{Node: 1, Inc: 1, N: 1}}, bad...)
	}
	e.VC = bad
	buf.Reset()
	st, err = WriteShiViz(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st.ClockMismatches != 1 || !strings.HasPrefix(st.FirstMismatch, "n2.1 event 4 (") || !strings.Contains(st.Clocks, "1 logged vector clocks differ") {
		t.Errorf("stats %+v", st)
	}
	if buf.String() != plain.String() {
		t.Error("a bad logged clock reached the export")
	}
	checkShiViz(t, buf.String())

	// A line without vc among lines with one.
	run.Nodes[3].Events[2].VC = nil
	st, _ = WriteShiViz(&bytes.Buffer{}, run)
	if st.LoggedClocks != st.Events-1 || !strings.Contains(st.Clocks, "1 of "+strconv.Itoa(st.Events)+" events have no vc") {
		t.Errorf("stats %+v", st)
	}
}

func TestPerfettoSaysWhatClocksItHas(t *testing.T) {
	run := fixtureRun(t)
	other := func() (map[string]any, []map[string]any, ExportStats) {
		var buf bytes.Buffer
		st, err := WritePerfetto(&buf, run)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			OtherData   map[string]any   `json:"otherData"`
			TraceEvents []map[string]any `json:"traceEvents"`
		}
		if err := json.Unmarshal(buf.Bytes(), &tr); err != nil {
			t.Fatal(err)
		}
		return tr.OtherData, tr.TraceEvents, st
	}
	od, evs, st := other()
	if !strings.HasPrefix(st.Clocks, "Lamport clocks only") || od["clocks"] != st.Clocks {
		t.Errorf("without vc: stats %q, otherData %q", st.Clocks, od["clocks"])
	}
	for _, e := range evs {
		if args, _ := e["args"].(map[string]any); args != nil && args["vc"] != nil {
			t.Fatalf("a vc in %v", e)
		}
	}
	logClocks(t, run)
	od, evs, st = other()
	if !strings.Contains(st.Clocks, "vector clocks (args.vc)") || od["clocks"] != st.Clocks {
		t.Errorf("with vc: stats %q, otherData %q", st.Clocks, od["clocks"])
	}
	with := 0
	for _, e := range evs {
		if args, _ := e["args"].(map[string]any); e["ph"] == "X" && e["cat"] != "belief" && args != nil {
			if vc, ok := args["vc"].(map[string]any); ok && len(vc) > 0 {
				with++
			}
		}
	}
	if with != st.Events || st.LoggedClocks != st.Events {
		t.Errorf("%d event slices with a vc, %d events (stats %+v)", with, st.Events, st)
	}
}

// A real run (5 processes, no faults, 2 s) with --report: every event line has a vc, the report is
// rendered, and the ShiViz export of the run follows ShiViz's clock rules with the logged clocks,
// each of which agrees with send/recv matching.
func TestRealRunClocks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := runCLI(t, "run", "--duration", "2s", "--chaos", "", "--out", dir, "--report")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "report: "+filepath.Join(dir, "report.html")+"\n") {
		t.Errorf("run --report printed no report path:\n%s", stdout)
	}
	if st, err := os.Stat(filepath.Join(dir, "report.html")); err != nil || st.Size() == 0 {
		t.Errorf("no report.html: %v", err)
	}
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if run.Cluster.Options["vclock"] != "on" {
		t.Errorf("cluster.json options %v, want vclock on", run.Cluster.Options)
	}
	lines := 0
	for id, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.VC.Get(id, e.Inc) == 0 {
				t.Fatalf("node %d: a line without its own clock entry: %+v", id, e)
			}
			lines++
		}
	}
	shiviz := filepath.Join(t.TempDir(), "run.shiviz")
	_, stderr, code = runCLI(t, "report", dir, "--shiviz", shiviz)
	if code != 0 || !strings.Contains(stderr, "vector clocks from the logs (vc), each equal to the one send/recv matching gives") {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(shiviz)
	events, recvs, _ := checkShiViz(t, string(b))
	if events == 0 || recvs == 0 || lines < events {
		t.Errorf("%d lines, %d events, %d recvs", lines, events, recvs)
	}
}
