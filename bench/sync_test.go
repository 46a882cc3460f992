package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestGraphSpec(t *testing.T) {
	for fam, want := range map[string]string{"grid": "grid:4x4", "torus": "torus:4x4", "tree:2": "tree:2", "random:3": "random:3"} {
		if got, err := GraphSpec(fam, 16); err != nil || got != want {
			t.Errorf("GraphSpec(%q, 16) = %q, %v; want %q", fam, got, err, want)
		}
	}
	if got, _ := GraphSpec("grid", 20); got != "grid:4x5" {
		t.Errorf("grid of 20: %q, want the most square 4x5", got)
	}
	if got, _ := GraphSpec("grid", 13); got != "grid:1x13" {
		t.Errorf("grid of a prime 13: %q, want 1x13", got)
	}
	for _, bad := range []string{"star", "@edges.txt", "mesh"} {
		if _, err := GraphSpec(bad, 16); err == nil {
			t.Errorf("GraphSpec(%q) accepted", bad)
		}
	}
}

func TestSyncPlanValidate(t *testing.T) {
	ok := SyncPlan{Ns: []int{16}, Graphs: []string{"grid"}, Syncs: []string{"alpha"}, Rings: []string{"franklin"}, Trials: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mod  func(*SyncPlan)
		want string
	}{
		{func(p *SyncPlan) { p.Ns = nil }, "no cluster sizes"},
		{func(p *SyncPlan) { p.Syncs = []string{"zeta"} }, "synchronizer \"zeta\""},
		{func(p *SyncPlan) { p.Rings = []string{"floodmax"} }, "is synchronous"},
		{func(p *SyncPlan) { p.Rings = []string{"nope"} }, "unknown algorithm"},
		{func(p *SyncPlan) { p.Graphs = []string{"random:30"} }, "mean degree"},
		{func(p *SyncPlan) { p.Trials = 0 }, "trials 0"},
	} {
		p := ok
		tc.mod(&p)
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate = %v, want %q", err, tc.want)
		}
	}
}

// TestSyncInTheSimulator: a small plan in the simulator gives one row per run with the
// synchronizer's figures read from each run's verdict.
func TestSyncInTheSimulator(t *testing.T) {
	p := SyncPlan{Ns: []int{9}, Graphs: []string{"grid"}, Syncs: []string{"alpha", "beta"}, Rings: []string{"chang-roberts"},
		Trials: 1, Seed: 1, Sim: true, Delta: 50 * time.Millisecond, Dir: t.TempDir()}
	var seen int
	p.Progress = func(done, total int, r SyncRow) {
		seen++
		if done != seen || total != 3 {
			t.Errorf("progress %d/%d, want %d/3", done, total, seen)
		}
	}
	rows, err := Sync(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	for _, r := range rows[:2] {
		// grid:3x3: 12 edges, diameter 4: 5 pulses, 4 × 24 = 96 floods.
		if !r.OK || r.Graph != "grid:3x3" || r.Edges != 12 || r.Pulses != 5 || r.Reached != 5 || r.Messages != 96 || r.Acks != 96 || r.Ratio != 1 || r.Late != 0 {
			t.Errorf("row %+v", r)
		}
	}
	if rows[0].Expected != 24 || rows[1].Expected != 16 {
		t.Errorf("formula per pulse: alpha %d (want 2|E| = 24), beta %d (want 2(n-1) = 16)", rows[0].Expected, rows[1].Expected)
	}
	if r := rows[2]; !r.OK || r.Algo != "chang-roberts" || r.Graph != "ring" || r.ElectionMS <= 0 || r.Sync != "" {
		t.Errorf("ring row %+v", r)
	}
	if cells := rows[0].Cells(); len(cells) != len(SyncHeader) {
		t.Errorf("%d cells for %d columns", len(cells), len(SyncHeader))
	}
}

func TestProgressLines(t *testing.T) {
	var b strings.Builder
	p := NewProgress(&b, "bench x", 3)
	p.Done("first")
	p.Done("")
	p.Done("last")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "bench x: 1/3 runs (first), ") || !strings.Contains(lines[0], "to go") ||
		!strings.HasPrefix(lines[1], "bench x: 2/3 runs, ") || strings.Contains(lines[2], "to go") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}
