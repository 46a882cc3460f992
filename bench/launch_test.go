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
	if _, err := peakRSS(t.TempDir()); err == nil {
		t.Error("no resources.jsonl, no error")
	}
}
