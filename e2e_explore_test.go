package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// explore from the command line: 0 without a violation, 1 with one (its run directory written and
// failed by check), 2 for bad input naming what is accepted.
func TestExploreExitCodes(t *testing.T) {
	clean := filepath.Join(t.TempDir(), "clean")
	code, out := leaderlab(t, "explore", "-a", "chang-roberts", "-n", "3", "--crashes", "1", "--out", clean)
	if code != 0 || !strings.Contains(out, "distinct states") || !strings.Contains(out, "complete") {
		t.Fatalf("explore chang-roberts: exit %d\n%s", code, out)
	}
	var done struct {
		Complete   bool   `json:"complete"`
		StoppedBy  string `json:"stopped_by"`
		CycleCheck string `json:"cycle_check"`
	}
	if b, err := os.ReadFile(filepath.Join(clean, "explore.json")); err != nil || json.Unmarshal(b, &done) != nil ||
		!done.Complete || done.StoppedBy != "" || (done.CycleCheck != "reduced" && done.CycleCheck != "acyclic") {
		t.Errorf("explore.json of a complete search: %+v (%v)", done, err)
	}
	bounded := filepath.Join(t.TempDir(), "bounded")
	code, out = leaderlab(t, "explore", "-a", "franklin", "-n", "3", "--partitions", "--max-depth", "12", "--out", bounded)
	var cut struct {
		Complete  bool   `json:"complete"`
		StoppedBy string `json:"stopped_by"`
		MaxDepth  int    `json:"max_depth"`
		Depth     int    `json:"depth"`
	}
	if b, err := os.ReadFile(filepath.Join(bounded, "explore.json")); code != 0 || !strings.Contains(out, "bounded at --max-depth 12") ||
		err != nil || json.Unmarshal(b, &cut) != nil || cut.Complete || cut.StoppedBy != "max-depth" || cut.MaxDepth != 12 || cut.Depth != 12 {
		t.Errorf("explore --max-depth 12: exit %d, explore.json %+v (%v)\n%s", code, cut, err, out)
	}
	dir := filepath.Join(t.TempDir(), "x")
	code, out = leaderlab(t, "explore", "-a", "bully", "-n", "3", "--timers", "async", "--max-states", "50000", "--out", dir)
	if code != 1 || !strings.Contains(out, "UniqueLeader") {
		t.Fatalf("explore bully async: exit %d, want 1\n%s", code, out)
	}
	var sum struct {
		Violations []struct{ Property, Dir string }
	}
	b, err := os.ReadFile(filepath.Join(dir, "explore.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil || len(sum.Violations) == 0 {
		t.Fatalf("explore.json: %v %s", err, b)
	}
	for _, v := range sum.Violations {
		if code, out := leaderlab(t, "check", v.Dir); code != 1 {
			t.Errorf("check %s: exit %d, want 1\n%s", v.Dir, code, out)
		}
	}
	for _, args := range [][]string{
		{"explore", "-a", "nosuch", "-n", "3"},
		{"explore", "-a", "bully", "-n", "0"},
		{"explore", "-a", "bully", "-n", "3", "--crashes", "3"},
		{"explore", "-a", "bully", "-n", "3", "--timers", "fast"},
		{"explore", "-a", "bully", "-n", "3", "--max-depth", "-2"},
		{"explore", "-a", "lelann", "-n", "3", "--ids", "1,1,2"},
		{"explore", "-a", "rsdp", "-n", "3"},
		{"explore", "-a", "bully", "-n", "3", "--workers", "0"},
		{"explore", "-a", "bully", "-n", "3", "--max-memory", "1"},
		{"explore", "-a", "bully", "-n", "3", "--bitstate", "100", "--max-memory", "64"},
	} {
		if code, out := leaderlab(t, args...); code != 2 || !strings.Contains(out, "want") && !strings.Contains(out, "accepted") && !strings.Contains(out, "--ids") {
			t.Errorf("%v: exit %d, want 2 with what is accepted\n%s", args, code, out)
		}
	}
}
