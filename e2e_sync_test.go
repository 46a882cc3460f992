package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
)

// TestFloodMaxOverEverySynchronizer: FloodMax on grid:4x4, 16 real processes, under each
// synchronizer, elects 16; every node logs its pulses; the checker's pulses property holds with the
// control messages equal to the synchronizer's formula.
func TestFloodMaxOverEverySynchronizer(t *testing.T) {
	for _, s := range election.Synchronizers {
		t.Run(s, func(t *testing.T) {
			dir := runCluster(t, 16, "-a", "floodmax", "--sync", s, "-n", "16", "--topology", "grid:4x4", "--duration", "4s")
			v, err := check.ReadVerdict(dir)
			if err != nil {
				t.Fatal(err)
			}
			sm := v.Metrics.Sync
			if sm == nil || sm.Synchronizer != s || sm.Reached != sm.Pulses || sm.Pulses != 7 {
				t.Fatalf("sync metrics %+v: want synchronizer %s, 7 pulses (diameter 6, plus the last) all reached", sm, s)
			}
			if sm.LateCount != 0 || sm.Ratio != 1 {
				t.Errorf("%s: %d late messages, control ratio %v (want 0 and 1)", s, sm.LateCount, sm.Ratio)
			}
			if sm.Messages != 6*2*24 {
				t.Errorf("%s: %d FloodMax messages, want rounds × 2|E| = 6 × 48 = 288", s, sm.Messages)
			}
		})
	}
}

// TestSyncKillStallsWithAVerdict: a kill under α stalls the pulses; the run ends at its duration
// (not a hang) with the verdict naming the stalled pulse, the dead node and the neighbours that
// waited for it.
func TestSyncKillStallsWithAVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	// Node 6 (row 1, column 1 of the ascending grid) is killed before its first pulse can complete:
	// --rounds 400 makes the pulses outlast the kill.
	code, out := leaderlab(t, "run", "--out", dir, "-a", "floodmax", "--sync", "alpha", "--rounds", "400", "-n", "9", "--topology", "grid:3x3",
		"--chaos", "at 300ms kill 5", "--duration", "2s")
	if took := time.Since(start); took > time.Minute {
		t.Errorf("the run took %v: a stalled synchronizer must not hang the run", took)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the pulses stalled):\n%s", code, out)
	}
	v := readVerdictT(t, dir)
	var pulses string
	for _, p := range v.Properties {
		if p.Name == check.PropPulses {
			pulses = p.Detail
		}
	}
	for _, want := range []string{"never completed", "node 5 died", "its neighbours 2, 4, 6, 8 waited", "not fault-tolerant"} {
		if !strings.Contains(pulses, want) {
			t.Errorf("the pulses property does not say %q:\n%s", want, pulses)
		}
	}
}

// TestBadGraphsAreRefused: a bad or disconnected graph exits 2 with the reason.
func TestBadGraphsAreRefused(t *testing.T) {
	edges := filepath.Join(t.TempDir(), "edges.txt")
	if err := os.WriteFile(edges, []byte("1 2\n3 4 # two pieces\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-n", "16", "--topology", "grid:0x3"}, "want at least 1 of each"},
		{[]string{"-n", "10", "--topology", "grid:4x4"}, "make -n 16"},
		{[]string{"-n", "4", "--topology", "@" + edges}, "not connected"},
		{[]string{"-n", "4", "--topology", "@/nonexistent/edges"}, "cannot read the edge list"},
		{[]string{"-n", "4", "--topology", "star:3"}, "grid:RxC"},
		{[]string{"-n", "4", "--sync", "zeta"}, "unknown synchronizer"},
		{[]string{"-n", "4", "--delta", "10ms"}, "--delta is synchronizer abd's"},
	} {
		code, out := leaderlab(t, append([]string{"run", "-a", "floodmax", "--out", filepath.Join(t.TempDir(), "x")}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("run %v: exit %d, want 2 with %q:\n%s", tc.args, code, tc.want, out)
		}
	}
	code, out := leaderlab(t, "run", "-a", "bully", "--sync", "alpha", "--out", filepath.Join(t.TempDir(), "y"))
	if code != 2 || !strings.Contains(out, "--sync applies to floodmax only") {
		t.Errorf("bully --sync alpha: exit %d:\n%s", code, out)
	}
}
