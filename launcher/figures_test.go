package launcher

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/rundir"
)

// ReadFigures reads what bench scale tabulates: a Chang-Roberts worst case with every node
// initiating costs its formula, n(n+1)/2 + n, and the figures say so.
func TestReadFigures(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.IDs, cfg.Initiators, cfg.Chaos = "chang-roberts", 12, "worst", "all", ""
	dir, code := simRun(t, cfg)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	f, err := ReadFigures(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.Nodes != 12 || !f.OK || f.Election != 12*13/2+12 || f.Bound != f.Election || f.Agreement <= 0 || f.Messages < f.Election {
		t.Errorf("figures %+v: want 12 nodes, a pass, a first election of %d messages at its bound, an agreement time", f, 12*13/2+12)
	}
	if f.False != 0 {
		t.Errorf("%d false suspicions in a clean simulated run", f.False)
	}
	// with the verdict at hand, the same figures
	v, err := check.ReadVerdict(dir)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := (Result{Dir: dir, Code: code, Verdict: v}).Figures(); err != nil || g != f {
		t.Errorf("Result.Figures = %+v, %v; want %+v", g, err, f)
	}
	if _, err := (Result{Dir: dir}).Figures(); err == nil {
		t.Error("figures of a result without a verdict were made")
	}
	// a run that never began is refused with the reason
	if err := os.Remove(filepath.Join(dir, rundir.LauncherFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadFigures(dir); err == nil {
		t.Error("figures of a run without launcher.jsonl were read")
	}
}
