package bench

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/launcher"
)

func TestScalePlanValidate(t *testing.T) {
	good := ScalePlan{Algos: []string{"chang-roberts"}, IDs: []string{"random", "worst"}, Ns: []int{5}, Trials: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("good plan refused: %v", err)
	}
	bad := good
	bad.IDs = []string{"random", "sideways"}
	wantRefused(t, "placement", bad.Validate(), `ScalePlan.IDs "sideways"`, "ascending")
	bad = good
	bad.Trials = 0
	wantRefused(t, "trials", bad.Validate(), "ScalePlan.Trials 0: want 1 or more")
}

// TestScaleUnusableRun: a run the launcher refuses is a row that says why, and did not pass.
func TestScaleUnusableRun(t *testing.T) {
	p := ScalePlan{Algos: []string{"nope"}, IDs: []string{"random"}, Initiators: "all", Ns: []int{3}, Trials: 2, Dir: t.TempDir()}
	var told []int
	p.Progress = func(done, total int, _ ScaleRow) { told = append(told, done, total) }
	rows, err := Scale(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !slices.Equal(told, []int{1, 2, 2, 2}) {
		t.Fatalf("%d rows, progress %v; want 2 rows told as 1/2, 2/2", len(rows), told)
	}
	r := rows[1]
	if r.Passed() || !strings.HasPrefix(r.Unusable, "unusable: ") || !strings.Contains(r.Unusable, `"nope"`) || r.Trial != 1 ||
		r.Dir != filepath.Join(p.Dir, "nope-random-n3-t1") {
		t.Errorf("row %+v: want an unusable run naming the algorithm, trial 1, in its directory", r)
	}
	if got := r.Cells(); len(got) != len(ScaleHeader) || got[2] != "3" || got[3] != "-" || got[13] != r.Unusable {
		t.Errorf("cells %q", got)
	}
}

func TestScaleRowCells(t *testing.T) {
	r := ScaleRow{Algo: "chang-roberts", IDs: "worst", N: 4, Dir: "runs/x", Figures: launcher.Figures{
		Nodes: 4, Launch: 10 * time.Millisecond, Ready: 45 * time.Millisecond, Agreement: 2500 * time.Microsecond,
		Messages: 20, Election: 14, Bound: 14, NodesCPU: 40 * time.Millisecond, NodesPeakKB: 4096, NodePeakKB: 1024, LauncherPeakKB: 2048,
		Suspicions: 2, False: 1, OK: true}}
	if !r.Passed() {
		t.Error("a run of exit 0 did not pass")
	}
	want := []string{"chang-roberts", "worst", "4", "0.01", "0.04", "2.5", "20", "14/14", "4.0", "1.0", "2.0", "2000.0", "2 (1 false, 0 early)", "PASS"}
	if got := r.Cells(); !slices.Equal(got, want) {
		t.Errorf("cells\n%q\nwant\n%q", got, want)
	}
	wantCSV := []string{"chang-roberts", "worst", "4", "0.010", "0.045", "2.5", "20", "14", "14", "4.0", "1.0", "2.0", "2000.00", "2", "1", "0", "true", "runs/x"}
	if got := r.CSV(); !slices.Equal(got, wantCSV) {
		t.Errorf("CSV\n%q\nwant\n%q", got, wantCSV)
	}
	// on the hosts: no memory or CPU of the nodes; no agreement, no bound
	r.Figures.Remote, r.Figures.Agreement, r.Figures.Bound, r.Figures.OK, r.Code = true, 0, 0, false, launcher.ExitViolation
	got := r.Cells()
	if r.Passed() || got[5] != "never" || got[7] != "14/-" || got[8] != "(hosts)" || got[11] != "-" || got[13] != "FAIL" {
		t.Errorf("remote, failed: %q", got)
	}
	if c := r.CSV(); c[5] != "" || c[8] != "" || c[9] != "" || c[12] != "" || c[16] != "false" {
		t.Errorf("remote CSV: %q", c)
	}
}
