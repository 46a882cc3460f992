package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/rundir"
)

// TestLaunchFigures reads a run directory made by hand: the ready time runs from the first spawn
// to the last first incarnation's ready (a restart's ready is not the launch's), and the peak is
// the largest sample of any node.
func TestLaunchFigures(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.LauncherFile, `{"ts":1000000,"ev":"spawned","node":1,"inc":1,"pid":10}
{"ts":3000000,"ev":"spawned","node":2,"inc":1,"pid":11}
{"ts":5000000,"ev":"ready","node":2,"inc":1}
{"ts":9500000,"ev":"ready","node":1,"inc":1}
{"ts":20000000,"ev":"begin"}
{"ts":30000000,"ev":"spawned","node":1,"inc":2,"pid":12}
{"ts":40000000,"ev":"ready","node":1,"inc":2}
`)
	write(launcher.ResourcesFile, `{"ts":1,"node":1,"inc":1,"pid":10,"rss":7340032}
{"ts":2,"node":2,"inc":1,"pid":11,"rss":9437184}
{"ts":3,"node":1,"inc":1,"pid":10,"rss":8388608}
`)
	if d, err := readyTime(dir); err != nil || d != 8500*time.Microsecond {
		t.Errorf("ready %v, %v; want 8.5ms", d, err)
	}
	if rss, err := peakRSS(dir); err != nil || rss != 9437184 {
		t.Errorf("peak %v, %v; want 9 MiB", rss, err)
	}

	write(rundir.LauncherFile, `{"ts":1000000,"ev":"spawned","node":1,"inc":1,"pid":10}
`)
	if _, err := readyTime(dir); err == nil || !strings.Contains(err.Error(), "no spawned/ready records") {
		t.Errorf("a launch with no ready: %v", err)
	}
	// A run too short for a sample: the exited records' own peaks (rusage) count.
	write(launcher.ResourcesFile, "")
	write(rundir.LauncherFile, `{"ts":1000000,"ev":"spawned","node":1,"inc":1,"pid":10}
{"ts":9000000,"ev":"exited","node":1,"inc":1,"pid":10,"code":0,"max_rss_kb":12288}
{"ts":9000001,"ev":"end","max_rss_kb":40960}
`)
	if rss, err := peakRSS(dir); err != nil || rss != 12<<20 {
		t.Errorf("peak %v, %v; want 12 MiB, the node's (the launcher's own is not a node's)", rss, err)
	}
	if _, err := peakRSS(t.TempDir()); err == nil {
		t.Error("no resources.jsonl, no error")
	}
}

// TestLaunchTrialPacesTheDetector: a trial's cluster is the one run would make, its detector paced
// for the nodes on the machine (unpaced, a thousand nodes at the defaults' 50ms heartbeat took 120 s
// to be ready on the lab machine, against 32-45 s paced).
func TestLaunchTrialPacesTheDetector(t *testing.T) {
	lc := LaunchConfig{Algo: "chang-roberts", Nodes: 1000, Out: "out"}.trialConfig(3)
	if !lc.ScaleDetector || lc.Nodes != 1000 || lc.Out != filepath.Join("out", "trial-03") || lc.Chaos != "" {
		t.Errorf("trial config: scale detector %v, %d nodes, out %q, chaos %q", lc.ScaleDetector, lc.Nodes, lc.Out, lc.Chaos)
	}
}
