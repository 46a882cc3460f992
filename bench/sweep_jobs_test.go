package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/launcher"
)

// A sweep worker's job is a whole simulated run: through JSON and back it gives what the local
// sweep gives for the same seed, digest included.
func TestSweepJobChaos(t *testing.T) {
	cfg := ChaosConfig{Algos: []string{"bully"}, Ns: []int{4}, Runs: 1, Nemesis: "kill,partition", Interval: 500 * time.Millisecond,
		Duration: 3 * time.Second, Seed: 5, Sim: true, Out: t.TempDir()}
	lc := cfg.runConfig("bully", 4, 5)
	want, digest, err := simChaosRun(lc, ChaosRun{Seed: 5}, false, false)
	if err != nil {
		t.Fatal(err)
	}
	job, err := json.Marshal(NewSweepJob(SweepChaos, lc, false))
	if err != nil {
		t.Fatal(err)
	}
	out, err := DoSweepJob(context.Background(), job, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var res SweepResult
	if err := json.Unmarshal(b, &res); err != nil || res.Chaos == nil {
		t.Fatalf("result %s: %v", b, err)
	}
	if res.Digest != digest || res.Chaos.OK != want.OK || res.Chaos.SplitBrainMS != want.SplitBrainMS || res.Chaos.Warnings != want.Warnings {
		t.Errorf("over JSON: %+v digest %.12s; here: %+v digest %.12s", *res.Chaos, res.Digest, want, digest)
	}
}

// A run --count job: the launcher's exit code and verdict, and the digest of what it wrote.
func TestSweepJobRun(t *testing.T) {
	lc := launcher.DefaultConfig()
	lc.Nodes, lc.Seed, lc.SeedSet, lc.Duration = 4, 3, true, 3*time.Second
	job, _ := json.Marshal(NewSweepJob(SweepRun, lc, true))
	out, err := DoSweepJob(context.Background(), job, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	res := out.(SweepResult)
	if res.Code != 0 || res.Verdict == nil || !res.Verdict.OK || len(res.Digest) != 64 || res.Twice != "" || res.Error != "" {
		t.Errorf("result %+v: want a passing run, its digest, the same twice", res)
	}
}

// Jobs that are not jobs are errors that say what a job is.
func TestSweepJobBad(t *testing.T) {
	for _, tc := range []struct{ job, want string }{
		{`{"kind": "nope", "config": {}}`, `job kind "nope": want "chaos" (bench chaos) or "run" (run --count)`},
		{`{"kind": "chaos", "config": {"Nodes": "five"}}`, `not a job: json: cannot unmarshal string into Go struct field`},
		{`{"kind": "chaos", "extra": 1}`, `not a job: json: unknown field "extra"`},
	} {
		_, err := DoSweepJob(context.Background(), json.RawMessage(tc.job), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("job %s: error %v, want %q", tc.job, err, tc.want)
		}
	}
}
