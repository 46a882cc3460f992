package main

// End-to-end tests of clock faults (issue 31) in both worlds, real processes and the simulator: a
// rate within Bully's declared clock assumption passes; one beyond it passes or fails only under the
// declared limit, whose reason names the fault and the assumption; chaos.jsonl records the faults
// and the nodes log their perceived time beside the true one while a fault is in force.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
)

// limitVerdict is what verdict.json says of the failed properties' limits.
type limitVerdict struct {
	OK         bool `json:"ok"`
	Properties []struct {
		Name   string `json:"name"`
		OK     bool   `json:"ok"`
		Detail string `json:"detail"`
		Limit  string `json:"limit"`
	} `json:"properties"`
}

func clockRun(t *testing.T, world, schedule, duration string) (int, string, string) {
	t.Helper()
	if world == "" && testing.Short() {
		t.Skip("real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "-a", "bully", "-n", "5", "--chaos", schedule, "--duration", duration, "--out", dir}
	if world != "" {
		args = append(args, world)
	}
	code, out := leaderlab(t, args...)
	return code, out, dir
}

func TestClockWithinAssumptionPasses(t *testing.T) {
	for _, world := range []string{"--sim", ""} {
		t.Run("world"+world, func(t *testing.T) {
			// At the defaults (heartbeat 50ms, timeout 200ms) Bully's bounds are rates 0.5..2 and
			// jumps within +100ms/−200ms. Every fault here is within them, and so is every reset,
			// which takes off what the fault had put on the clock in one jump: +150ms of the leader's
			// 300ms at ×1.5 (a jump of −150ms), the −80ms bump (+80ms), node 3's −75ms of 300ms at
			// ×0.75 (+75ms); and node 1's strobe flips +50ms and back.
			sched := "at 1s clock leader rate 1.5; at 1.3s clock leader reset; at 1.5s clock 2 bump -80ms; at 1.7s clock 3 rate 0.75; at 2s clock all reset; at 2.2s clock 1 strobe 50ms every 10ms for 300ms"
			code, out, dir := clockRun(t, world, sched, "5s")
			if code != 0 {
				t.Fatalf("clock faults within the assumption: exit %d, want 0:\n%s", code, out)
			}
			recs := readClockRecords(t, dir)
			if len(recs) != 6 {
				t.Fatalf("chaos.jsonl has %d clock records, want 6: %+v", len(recs), recs)
			}
			if recs[0].Clock != "rate 1.5" || len(recs[0].Acks) != 1 {
				t.Errorf("first clock record %+v, want rate 1.5 acked by its one target", recs[0])
			}
		})
	}
}

func TestClockBeyondAssumptionIsNamed(t *testing.T) {
	for _, world := range []string{"--sim", ""} {
		t.Run("world"+world, func(t *testing.T) {
			// The leader's clock at a quarter of the rate for the rest of the run: its heartbeats
			// come every 200ms, the peers' timeout; it is suspected and elected again and again.
			code, out, dir := clockRun(t, world, "at 1s clock 5 rate 0.25", "5s")
			if !loggedPerceived(t, dir, 5) {
				t.Errorf("node 5 logged no pt while its clock ran at 0.25")
			}
			switch code {
			case 0:
				return // beyond the assumption, a pass is allowed
			case 1:
			default:
				t.Fatalf("exit %d, want 0 or 1:\n%s", code, out)
			}
			b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
			if err != nil {
				t.Fatal(err)
			}
			var v limitVerdict
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			for _, p := range v.Properties {
				if p.OK {
					continue
				}
				if !strings.Contains(p.Limit, "clock 5 rate 0.25") || !strings.Contains(p.Limit, "rates 0.5..2") {
					t.Errorf("%s failed with limit %q, want it to name the fault (clock 5 rate 0.25) and the assumption (rates 0.5..2): %s", p.Name, p.Limit, p.Detail)
				}
			}
		})
	}
}

// TestClockBeyondAssumptionFailsNamed is the deterministic case of a fault beyond the assumption that
// breaks a property (agreement: the nodes still flip between 4 and 5 at the end), with the verdict
// naming the fault and the assumption: the simulator's seed 3.
func TestClockBeyondAssumptionFailsNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, out := leaderlab(t, "run", "--sim", "--seed", "3", "-a", "bully", "-n", "5", "--chaos", "at 1s clock 5 rate 0.25", "--duration", "5s", "--out", dir)
	if code != 1 || !strings.Contains(out, "documented limit") || !strings.Contains(out, "clock 5 rate 0.25 at 1000ms: rate 0.25 is below 0.5") {
		t.Fatalf("exit %d, want 1 under the documented limit naming clock 5 rate 0.25:\n%s", code, out)
	}
}

func readClockRecords(t *testing.T, dir string) []logs.ChaosRecord {
	t.Helper()
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []logs.ChaosRecord
	for _, r := range run.Chaos {
		if r.Op == logs.OpClock {
			out = append(out, r)
		}
	}
	return out
}

// loggedPerceived tells whether node id logged a line with pt (its perceived time).
func loggedPerceived(t *testing.T, dir string, id int) bool {
	t.Helper()
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, nl := range run.Nodes {
		if nl.Node != id {
			continue
		}
		for _, e := range nl.Events {
			if e.PT != 0 {
				return true
			}
		}
	}
	return false
}
