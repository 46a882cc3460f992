package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

var dataRe = regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)

// pageData renders the report of dir and returns the page and the data embedded in it.
func pageData(t *testing.T, dir string) (string, *Data) {
	t.Helper()
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	path, err := WriteFile(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, rundir.ReportFile) {
		t.Fatalf("report written to %s, want RUN/report.html", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := dataRe.FindSubmatch(b)
	if m == nil {
		t.Fatal("report.html has no embedded report-data")
	}
	var d Data
	if err := json.Unmarshal(m[1], &d); err != nil {
		t.Fatalf("embedded data is not JSON: %v", err)
	}
	return string(b), &d
}

const ms = int64(time.Millisecond / time.Microsecond)

// near tells whether a time in µs is within 10 ms of want.
func near(got int64, want time.Duration) bool {
	d := got - int64(want/time.Microsecond)
	return d > -10*ms && d < 10*ms
}

func TestReportOfFixture(t *testing.T) {
	dir, run := writeFixture(t)
	html, d := pageData(t, dir)
	evs := countEvents(run)

	// A lane per node, and the incarnations: n5 twice.
	if len(d.Lanes) != 5 {
		t.Fatalf("%d lanes, want 5", len(d.Lanes))
	}
	incs := map[int]int{}
	for _, x := range d.Incs {
		incs[d.Lanes[x.Lane].ID]++
	}
	if incs[5] != 2 || incs[1] != 1 || len(d.Incs) != 6 {
		t.Errorf("incarnations %v (%d), want n5 twice and the others once", incs, len(d.Incs))
	}
	// Dead: n5 from its kill at 1s to its restart at 2s, and nothing else (the run's stop at the
	// end is not a death).
	dead := d.Dead
	if len(dead) != 1 || d.Lanes[dead[0].Lane].ID != 5 || !near(dead[0].From, time.Second) || !near(dead[0].To, 2*time.Second) {
		t.Errorf("dead stretches %+v, want n5 from 1s to 2s", dead)
	}
	if len(d.Paused) != 1 || d.Lanes[d.Paused[0].Lane].ID != 3 || !near(d.Paused[0].From, 2500*time.Millisecond) || !near(d.Paused[0].To, 2800*time.Millisecond) {
		t.Errorf("paused stretches %+v, want n3 from 2.5s to 2.8s", d.Paused)
	}
	if len(d.Partitions) != 1 || !near(d.Partitions[0].From, fixturePartAt) || !near(d.Partitions[0].To, fixtureHealAt) || d.Partitions[0].Label != "partition 1,2 | 3,4,5" {
		t.Errorf("partitions %+v, want 1,2 | 3,4,5 from 3.2s to 3.5s", d.Partitions)
	}
	if len(d.Faults) != len(run.Chaos) {
		t.Errorf("%d fault markers, want one per chaos record (%d)", len(d.Faults), len(run.Chaos))
	}

	// An arrow per message: every send, ended by its recv or its drop.
	if len(d.Msgs.S) != evs[logs.EvSend] {
		t.Errorf("%d arrows, want one per send (%d)", len(d.Msgs.S), evs[logs.EvSend])
	}
	byG := map[int]int{}
	for _, g := range d.Msgs.G {
		byG[g]++
	}
	if byG[msgDelivered] != evs[logs.EvRecv] {
		t.Errorf("%d delivered arrows, want one per recv (%d)", byG[msgDelivered], evs[logs.EvRecv])
	}
	for i := 1; i < len(d.Msgs.S); i++ {
		if d.Msgs.S[i] < d.Msgs.S[i-1] {
			t.Fatalf("arrows not sorted by send time at %d", i)
		}
	}
	marks := map[string]int{}
	for _, y := range d.Marks.Y {
		marks[d.Types[y]]++
	}
	for _, ev := range []string{logs.EvDrop, logs.EvElect, logs.EvLeader, logs.EvSuspect, logs.EvTrust, logs.EvStart, logs.EvStop} {
		if marks[ev] != evs[ev] {
			t.Errorf("%d %s marks, want %d", marks[ev], ev, evs[ev])
		}
	}
	if marks["orphan"] != 0 {
		t.Errorf("%d recvs without a send in a clean run", marks["orphan"])
	}
	for _, k := range d.Kinds {
		if k.Role == "other" {
			t.Errorf("kind %s has no role; Bully's kinds are election or announce", k.Name)
		}
	}

	// Beliefs: each lane is banded from its start, and at the end every lane follows n5.
	for l := range d.Lanes {
		var last *Belief
		for i := range d.Beliefs {
			if d.Beliefs[i].Lane == l {
				last = &d.Beliefs[i]
			}
		}
		if last == nil || last.Leader != 5 {
			t.Errorf("lane %d's last belief %+v, want n5", l, last)
		}
	}
	// The leader timeline: 5, then 4 after the kill, then 5 again after the restart.
	var leaders []int
	for _, s := range d.Leaders {
		if s.Leader != 0 && (len(leaders) == 0 || leaders[len(leaders)-1] != s.Leader) {
			leaders = append(leaders, s.Leader)
		}
	}
	if want := []int{5, 4, 5}; !equalInts(leaders, want) {
		t.Errorf("leader timeline %v, want %v", leaders, want)
	}

	// The page: a diagram, nothing loaded from the network, the verdict and its tables.
	if !strings.Contains(html, `<svg id="diagram"`) {
		t.Error("no diagram SVG")
	}
	if regexp.MustCompile(`(?i)https?://[^"]*\.(js|css)`).MatchString(html) || regexp.MustCompile(`(?i)<(script|link)[^>]+(src|href)=`).MatchString(html) {
		t.Error("the page loads something from elsewhere")
	}
	if !strings.Contains(html, ">PASS</span>") {
		t.Error("the verdict PASS is not at the top")
	}
	in, _ := Load(dir)
	if got, want := strings.Count(html, `<tr data-a=`), len(in.Verdict.Metrics.Elections)+len(in.Verdict.Metrics.Failovers)+len(in.Verdict.Metrics.Overlaps)+
		len(in.Verdict.Metrics.SplitBrain)+len(d.Leaders); got != want {
		t.Errorf("%d clickable rows, want one per election, failover, overlap, split-brain window and leader stretch (%d)", got, want)
	}
	if got := strings.Count(html, `<polyline class="series"`); got != 12 {
		t.Errorf("%d resource lines, want 12 (CPU and RSS of 6 incarnations)", got)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A recv whose send no log holds fails integrity; the first violation links to it.
func TestReportLinksFirstViolation(t *testing.T) {
	run := fixtureRun(t)
	nl := run.Nodes[2]
	at := nl.Events[len(nl.Events)-1].TS - int64(500*time.Millisecond)
	i := 0
	for i < len(nl.Events) && nl.Events[i].TS <= at {
		i++
	}
	orphan := logs.Event{TS: at, Node: 2, Inc: 1, LC: nl.Events[i-1].LC, Ev: logs.EvRecv, From: 4, Msg: &election.Message{ID: "4.1.999", Kind: "ok"}}
	nl.Events = append(nl.Events[:i], append([]logs.Event{orphan}, nl.Events[i:]...)...)
	dir := filepath.Join(t.TempDir(), "bad-run")
	if err := sim.WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	html, d := pageData(t, dir)
	if !strings.Contains(html, ">FAIL</span>") {
		t.Fatal("the verdict FAIL is not at the top")
	}
	if len(d.Violations) == 0 || d.Violations[0].Property != check.PropIntegrity {
		t.Fatalf("violations %+v, want integrity", d.Violations)
	}
	want := (at - d.Origin) / 1000
	m := regexp.MustCompile(`class="jump" data-a="(-?\d+)" data-b="-?\d+" data-lanes="(\d+)" id="first-violation"`).FindStringSubmatch(html)
	if m == nil {
		t.Fatal("no link from the first violation to the diagram")
	}
	if m[1] != strconv.FormatInt(want, 10) || m[2] != "1" {
		t.Errorf("first violation links to %s µs on lane %s, want %d µs on lane 1 (n2)", m[1], m[2], want)
	}
}

func TestLoadRefusesNotARun(t *testing.T) {
	_, err := Load(t.TempDir())
	if !errors.Is(err, rundir.ErrNotRun) {
		t.Fatalf("Load of an empty directory: %v, want rundir.ErrNotRun", err)
	}
}

// Without verdict.json the run is checked on the spot, and the page says so.
func TestReportChecksWhenNoVerdict(t *testing.T) {
	dir, _ := writeFixture(t)
	if err := os.Remove(filepath.Join(dir, rundir.VerdictFile)); err != nil {
		t.Fatal(err)
	}
	html, _ := pageData(t, dir)
	if !strings.Contains(html, "verdict from checked now") {
		t.Error("the page does not say that the verdict was computed now")
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.VerdictFile)); err == nil {
		t.Error("report wrote verdict.json; only check does")
	}
}

// A large run: the data still holds every message (the page bundles them when drawing, not here).
func TestReportKeepsEveryMessage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "synth")
	run := writeSynth(t, dir, 16, 20000)
	_, d := pageData(t, dir)
	if got, want := len(d.Msgs.S), countEvents(run)[logs.EvSend]; got != want || got != 20000 {
		t.Errorf("%d arrows, want %d", got, want)
	}
	total := 0
	for _, c := range d.Density {
		total += c
	}
	if total != 20000 {
		t.Errorf("density sums to %d, want every message", total)
	}
}

func TestResourceChartsDownsample(t *testing.T) {
	var ss []Sample
	for i := range 5000 {
		ss = append(ss, Sample{TS: int64(i) * 1e6, Node: 1, Inc: 1, RSS: uint64(i) << 10, CPU: float64(i % 100)})
	}
	html, rows := resourceCharts(ss, &Data{From: 0, To: 5000 * 1000})
	if len(rows) != 1 || rows[0].Samples != 5000 {
		t.Fatalf("rows %+v", rows)
	}
	pts := regexp.MustCompile(`points="([^"]*)"`).FindAllStringSubmatch(string(html), -1)
	if len(pts) != 2 {
		t.Fatalf("%d lines, want 2", len(pts))
	}
	for _, p := range pts {
		if n := len(strings.Fields(p[1])); n > chartPoints {
			t.Errorf("a line of %d points, want at most %d", n, chartPoints)
		}
	}
	if !bytes.Contains([]byte(html), []byte("<svg")) {
		t.Error("no SVG")
	}
}
