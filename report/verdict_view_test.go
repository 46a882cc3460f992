package report

// The report shows what the verdict says: split-brain windows, each component's leader during a
// partition, kills at the kill, the run's orderly stop, ring order, and a first view worth seeing.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/sim"
)

// simRunDir makes a simulated run (`leaderlab run --sim`) of the config as changed by set and writes it
// as a run directory with its verdict.json.
func simRunDir(t testing.TB, set func(*launcher.Config)) (string, *logs.Run, *check.Verdict) {
	t.Helper()
	cfg := launcher.DefaultConfig()
	cfg.Seed, cfg.SeedSet = 7, true
	cfg.Duration = 5 * time.Second
	set(&cfg)
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return writeViewDir(t, s.Run)
}

func writeViewDir(t testing.TB, run *logs.Run) (string, *logs.Run, *check.Verdict) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := sim.WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	v := check.Check(run, check.Options{})
	if err := v.WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	return dir, run, v
}

// partitionRun is the user's reproduction: 6 nodes, halves from 1s, healed at 2.5s, seed 7.
func partitionRun(t testing.TB) (string, *logs.Run, *check.Verdict) {
	return simRunDir(t, func(c *launcher.Config) {
		c.Nodes = 6
		c.Chaos = "at 1s partition halves; at 2.5s heal"
	})
}

// Every split-brain window of the verdict is in the data (for the diagram's shading) and in the
// split-brain table, with its start, length and leaders; the caption does not call the split-brain
// time "beyond the grace".
func TestReportShowsSplitBrainWindows(t *testing.T) {
	dir, _, v := partitionRun(t)
	if len(v.Metrics.SplitBrain) == 0 {
		t.Fatalf("the verdict has no split-brain window: %+v", v.Metrics)
	}
	html, d := pageData(t, dir)
	if len(d.SplitBrain) != len(v.Metrics.SplitBrain) {
		t.Fatalf("%d split-brain windows in the data, want the verdict's %d", len(d.SplitBrain), len(v.Metrics.SplitBrain))
	}
	rows := regexp.MustCompile(`<tr data-a="(-?\d+)" data-b="(-?\d+)" data-lanes="[\d,]*" class="split"><td>split brain</td><td>([^<]*)</td><td>([^<]*)</td><td>leaders ([^<]*)</td>`).FindAllStringSubmatch(html, -1)
	if len(rows) != len(v.Metrics.SplitBrain) {
		t.Fatalf("%d split-brain rows in the table, want %d", len(rows), len(v.Metrics.SplitBrain))
	}
	for i, w := range v.Metrics.SplitBrain {
		got := d.SplitBrain[i]
		from := int64(w.AtMS * 1000)
		if got.From != from || got.To != from+int64(w.MS*1000) || !slices.Equal(got.Leaders, w.Leaders) {
			t.Errorf("window %d: %+v, want the verdict's %+v", i, got, w)
		}
		if len(got.Lanes) != len(w.Leaders) {
			t.Errorf("window %d: lanes %v for leaders %v", i, got.Lanes, w.Leaders)
		}
		r := rows[i]
		if r[1] != fmt.Sprint(from) || r[3] != trimFloat(w.AtMS)+" ms" || r[4] != trimFloat(w.MS)+" ms" || r[5] != joinInts(w.Leaders, ", ") {
			t.Errorf("row %d %q, want at %d µs, %g ms, leaders %v", i, r[0], from, w.MS, w.Leaders)
		}
	}
	if !slices.Equal(d.SplitBrain[0].Leaders, []int{3, 6}) || d.SplitBrain[0].To-d.SplitBrain[0].From < 1000*ms {
		t.Errorf("the window %+v, want leaders 3 and 6 for over a second", d.SplitBrain[0])
	}
	if strings.Contains(html, "Total beyond the grace") {
		t.Error("the caption still calls the split-brain time the total beyond the grace")
	}
	if !strings.Contains(html, fmt.Sprintf("Split-brain time: %v ms (%d split-brain window(s)", v.Metrics.SplitBrainMS, len(v.Metrics.SplitBrain))) {
		t.Error("the caption does not say what the split-brain time is made of")
	}
}

// While the network is split, the leader timeline says what each component followed, and no two
// stretches with different texts are merged.
func TestLeaderTimelinePerComponent(t *testing.T) {
	dir, _, _ := partitionRun(t)
	_, d := pageData(t, dir)
	var split *LeaderSeg
	for i := range d.Leaders {
		s := &d.Leaders[i]
		if s.Text == "1,2,3 → 3 | 4,5,6 → 6" {
			split = s
		}
		if i > 0 && d.Leaders[i-1].Text == s.Text && d.Leaders[i-1].Leader == s.Leader {
			t.Errorf("stretches %d and %d have the same state %q and were not merged", i-1, i, s.Text)
		}
		if i > 0 && d.Leaders[i-1].To != s.From {
			t.Errorf("a gap between stretches %d and %d", i-1, i)
		}
	}
	if split == nil {
		var texts []string
		for _, s := range d.Leaders {
			texts = append(texts, s.Text)
		}
		t.Fatalf("no stretch \"1,2,3 → 3 | 4,5,6 → 6\" in the leader timeline:\n%s", strings.Join(texts, "\n"))
	}
	if split.To-split.From < 1000*ms || split.Leader != 0 {
		t.Errorf("the split stretch %+v: want over a second, with no one cluster-wide leader", split)
	}
	want := []Part{{IDs: []int{1, 2, 3}, Leader: 3}, {IDs: []int{4, 5, 6}, Leader: 6}}
	if fmt.Sprint(split.Parts) != fmt.Sprint(want) {
		t.Errorf("parts %+v, want %+v", split.Parts, want)
	}
	// The merging rule on its own: two leaderless states are two stretches.
	b := &builder{d: &Data{Lanes: []Lane{{ID: 1}, {ID: 2}}}, lane: map[int]int{1: 0, 2: 1}}
	_, t1, _ := b.agreement([]laneState{{alive: true, belief: 0}, {alive: true, belief: 2}}, nil)
	_, t2, _ := b.agreement([]laneState{{alive: true, belief: 1}, {alive: true, belief: 2}}, nil)
	if t1 == t2 {
		t.Errorf("two different leaderless states read the same: %q", t1)
	}
}

// A kill ends its incarnation at the kill's record, even when the launcher reaped the process much
// later: the node is dead, and follows no one, from the kill.
func TestKilledNodeDiesAtTheKill(t *testing.T) {
	run := fixtureRun(t)
	var kill logs.ChaosRecord
	for _, r := range run.Chaos {
		if r.Op == logs.OpKill {
			kill = r
		}
	}
	reaped := false
	for i, r := range run.Launcher {
		if r.Ev == logs.LaunchExited && r.Node == 5 && r.Inc == 1 {
			run.Launcher[i].TS = kill.TS + int64(300*time.Millisecond) // a slow reap
			reaped = true
		}
	}
	if !reaped || kill.TS == 0 {
		t.Fatal("the fixture has no kill of n5 with its exited record")
	}
	dir, _, _ := writeViewDir(t, run)
	_, d := pageData(t, dir)
	at := (kill.TS - d.Origin) / 1000
	l := slices.IndexFunc(d.Lanes, func(x Lane) bool { return x.ID == 5 })
	var inc *Inc
	for i := range d.Incs {
		if d.Incs[i].Lane == l && d.Incs[i].Inc == 1 {
			inc = &d.Incs[i]
		}
	}
	if inc == nil || inc.To != at || inc.End != "killed" {
		t.Fatalf("n5's first incarnation %+v, want it killed at %d µs", inc, at)
	}
	dead := false
	for _, s := range d.Dead {
		if s.Lane == l && s.From == at {
			dead = true
		}
	}
	if !dead {
		t.Errorf("n5 is not drawn dead from the kill at %d µs: %+v", at, d.Dead)
	}
	for _, x := range d.Beliefs {
		if x.Lane == l && x.From < at && x.To > at {
			t.Errorf("n5 believes in n%d past its kill: %+v", x.Leader, x)
		}
	}
	for _, s := range d.Leaders {
		if s.From < at+100*ms && s.To > at+100*ms && s.Leader == 5 {
			t.Errorf("100 ms after the kill the timeline says %q", s.Text)
		}
	}
}

// The launcher's stop at the end is the run's stop, not a row of deaths: no lane is dead after it,
// the leader timeline ends with one stop stretch, and the leaders table says so.
func TestRunStopIsNotDeath(t *testing.T) {
	dir, _ := writeFixture(t)
	html, d := pageData(t, dir)
	if d.Stop == nil || d.Stop.From != d.End || d.Stop.To != d.To || d.End >= d.To {
		t.Fatalf("stop %+v, want from the end %d to %d", d.Stop, d.End, d.To)
	}
	for _, s := range d.Dead {
		if s.To > d.End {
			t.Errorf("lane %d drawn dead from %d µs, after the run's stop began", s.Lane, s.From)
		}
	}
	stopped := 0
	for _, x := range d.Incs {
		if x.To > d.End {
			if !x.RunStop {
				t.Errorf("incarnation %+v ends after the stop but is not the run's stop", x)
			}
			stopped++
		}
	}
	if stopped != 5 {
		t.Errorf("%d incarnations end in the run's stop, want the 5 live nodes", stopped)
	}
	last := d.Leaders[len(d.Leaders)-1]
	if !last.Stop || last.From != d.End || !strings.HasPrefix(last.Text, "the run's stop") {
		t.Errorf("the last stretch %+v, want the run's stop from the end", last)
	}
	for _, s := range d.Leaders[:len(d.Leaders)-1] {
		if s.Stop || s.To > d.End || strings.Contains(s.Text, "dead") && s.From >= d.End {
			t.Errorf("stretch %+v after the end", s)
		}
	}
	if !strings.Contains(html, `class="stop"><td>`) {
		t.Error("the leaders table has no stop row")
	}
}

// A ring's lanes follow cluster.json's ring order; a mesh's are by ID.
func TestRingLanesInRingOrder(t *testing.T) {
	dir, run, _ := simRunDir(t, func(c *launcher.Config) {
		c.Algo, c.Nodes, c.IDs = "chang-roberts", 7, "random"
		c.Chaos = "at 1s kill highest"
	})
	html, d := pageData(t, dir)
	var ids []int
	for _, l := range d.Lanes {
		ids = append(ids, l.ID)
		if l.Label != fmt.Sprintf("n%d", l.ID) {
			t.Errorf("lane %+v: its label does not name its ID", l)
		}
	}
	if d.Order != "ring" || !slices.Equal(ids, run.Cluster.Ring) || slices.IsSorted(ids) {
		t.Errorf("lanes %v (%s), want the ring order %v", ids, d.Order, run.Cluster.Ring)
	}
	if !strings.Contains(html, "Lanes in ring order (cluster.json&#39;s ring)") {
		t.Error("the page does not say the lanes are in ring order")
	}
	_, d = pageData(t, firstOf(writeFixture(t)))
	if d.Order != "id" || !slices.IsSortedFunc(d.Lanes, func(a, b Lane) int { return a.ID - b.ID }) {
		t.Errorf("a mesh's lanes %+v (%s), want by ID", d.Lanes, d.Order)
	}
}

func firstOf[T, U any](v T, _ U) T { return v }

// The diagram opens on the first election, with few enough arrows to see each one: inside the run,
// narrower than it, holding the election's start and some of its messages.
func TestInitialViewIsTheFirstElection(t *testing.T) {
	check := func(name, dir string) {
		_, d := pageData(t, dir)
		in, _ := Load(dir)
		w := d.Initial
		if len(in.Verdict.Metrics.Elections) == 0 {
			t.Fatalf("%s: no election", name)
		}
		e := d.Elections[0]
		if w.Label != "election #1" || w.From > e.From || w.To <= e.From || w.From < d.From || w.To > d.To || w.To-w.From >= (d.To-d.From)/10 {
			t.Errorf("%s: the first view %+v, want election #1 (%+v) within [%d, %d] and a small part of it", name, w, e, d.From, d.To)
		}
		n := 0
		for _, s := range d.Msgs.S {
			if s >= w.From && s <= w.To {
				n++
			}
		}
		if n == 0 || n > openArrows {
			t.Errorf("%s: %d arrows in the first view, want some and at most %d", name, n, openArrows)
		}
	}
	dir, _ := writeFixture(t)
	check("fixture", dir)
	synth := filepath.Join(t.TempDir(), "synth")
	writeSynth(t, synth, 16, 20000)
	check("20,000 messages", synth)
}

// The resource charts' time labels stay inside the chart: the last one ("5000 ms") was centred on
// its tick, 12 units from the edge, and cut to "5000 m".
func TestChartTimeLabelsInside(t *testing.T) {
	dir, _ := writeFixture(t)
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := BuildData(in.Run, in.Verdict, "fixture")
	html, _ := resourceCharts(in.Resources, d)
	width := regexp.MustCompile(`<svg class="chart" viewBox="0 0 (\d+) `).FindStringSubmatch(string(html))
	labels := regexp.MustCompile(`<text x="([\d.]+)" y="\d+" class="tick" text-anchor="(\w+)">([^<]* ms)</text>`).FindAllStringSubmatch(string(html), -1)
	if width == nil || len(labels) < 4 {
		t.Fatalf("no chart or no time labels in %.300s", html)
	}
	var w float64
	fmt.Sscan(width[1], &w)
	last := ""
	for _, m := range labels {
		var x float64
		fmt.Sscan(m[1], &x)
		n := float64(len(m[3])) * 6 // about 5.6 units a character at 10 px
		left := map[string]float64{"start": x, "middle": x - n/2, "end": x - n}[m[2]]
		if left < 0 || left+n > w {
			t.Errorf("the label %q spans %.1f..%.1f, outside the chart's 0..%.0f", m[3], left, left+n, w)
		}
		last = m[3]
	}
	if last != "5000 ms" {
		t.Errorf("the last time label is %q, want 5000 ms", last)
	}
}
