package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cutShort is a run that cannot have elected by its end: Chang-Roberts' worst case on 100 nodes
// sends 5,150 messages, a hundred hops after one another at the least, and the run stops 20ms
// after its begin (the launcher's stop comes a little later still, but far sooner than the
// election could end on two cores).
var cutShort = []string{"-a", "chang-roberts", "-n", "100", "--ids", "worst", "--initiators", "all", "--duration", "20ms", "--chaos", ""}

// TestRunCutShortIsInconclusive: a run that ends while its election still goes is inconclusive —
// exit 3, verdict.json's outcome "inconclusive" with the reason, ok false, INCONCLUSIVE in the
// table — and check of its directory says the same; run --count --until-fail does not stop at it.
func TestRunCutShortIsInconclusive(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	code, out := leaderlab(t, append([]string{"run", "--out", dir}, cutShort...)...)
	if code != 3 || !strings.Contains(out, "verdict: INCONCLUSIVE (chang-roberts, 100 nodes)\n") ||
		!strings.Contains(out, "  inconclusive: still electing when the run ended; the machine fell behind: the election open since ") {
		t.Fatalf("run exited %d, want 3 and an INCONCLUSIVE verdict with its reason:\n%s", code, out)
	}
	var v struct {
		OK           bool            `json:"ok"`
		Outcome      string          `json:"outcome"`
		Reason       string          `json:"reason"`
		Inconclusive json.RawMessage `json:"inconclusive"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.OK || v.Outcome != "inconclusive" || !strings.HasPrefix(v.Reason, "inconclusive: still electing") || len(v.Inconclusive) == 0 {
		t.Errorf("verdict.json: ok %v, outcome %q, reason %q, inconclusive %s", v.OK, v.Outcome, v.Reason, v.Inconclusive)
	}
	if code, out := leaderlab(t, "check", dir); code != 3 || !strings.Contains(out, "verdict: INCONCLUSIVE") {
		t.Errorf("check of the run exited %d, want 3 as run did:\n%s", code, out)
	}

	series := filepath.Join(t.TempDir(), "series")
	code, out = leaderlab(t, append([]string{"run", "--count", "2", "--until-fail", "--seed", "1", "--out", series}, cutShort...)...)
	if code != 3 || strings.Count(out, ": INCONCLUSIVE  seed ") != 2 || !strings.Contains(out, "2 runs: 0 passed, 0 failed, 2 inconclusive") {
		t.Errorf("run --count 2 --until-fail exited %d, want 3 after both runs, each inconclusive:\n%s", code, out)
	}
}
