package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// The jobs of sweeps over hosts (launcher.Sweep): what `leaderlab sweep-worker` makes on a host
// for bench chaos --sim --hosts and run --sim --count --hosts. A job is one simulated run
// described whole by its launcher.Config (the simulator is deterministic: the same configuration
// and seed give the same bytes anywhere); its result carries what the sweep's table needs and the
// sha256 of the logs the run wrote (RunDigest), which the sweeping machine compares with its own
// when it makes a failing run again to write its directory.

// The kinds of job.
const (
	SweepChaos = "chaos" // a bench chaos run: simChaosRun, judged in memory
	SweepRun   = "run"   // a run --count run: launcher.Launch, its directory in the worker's
)

// SweepJob is one simulated run for a sweep worker.
type SweepJob struct {
	Kind   string          `json:"kind"`
	Config launcher.Config `json:"config"`
	// Twice makes the run a second time and compares the two (--check-determinism).
	Twice bool `json:"twice,omitempty"`
}

// SweepResult is a job's outcome.
type SweepResult struct {
	// Chaos is a chaos run's row material (its Dir and Replay are the sweeping machine's).
	Chaos *ChaosRun `json:"chaos,omitempty"`
	// Code, Verdict and Error are a run --count run's: the launcher's exit code, the verdict, and
	// the error of a run that could not be made; Twice is SameTwice's answer ("" when the same).
	Code    int            `json:"code"`
	Verdict *check.Verdict `json:"verdict,omitempty"`
	Error   string         `json:"error,omitempty"`
	Twice   string         `json:"twice,omitempty"`
	// Digest is RunDigest of the run ("" when it could not be made).
	Digest string `json:"digest"`
}

// NewSweepJob is the job of simulated run lc: the configuration without what only this machine
// has (its writers, its hosts, its output directory).
func NewSweepJob(kind string, lc launcher.Config, twice bool) SweepJob {
	lc.Stdout, lc.Progress, lc.Hand = nil, nil, nil
	lc.Out, lc.Binary = "", ""
	lc.Hosts, lc.SSHConfig, lc.InsecureIgnoreHostKey = "", "", false
	lc.Sim = true
	return SweepJob{Kind: kind, Config: lc, Twice: twice}
}

// DoSweepJob is the sweep worker's work (launcher.SweepDo): one job, made in dir.
func DoSweepJob(ctx context.Context, raw json.RawMessage, dir string) (any, error) {
	var j SweepJob
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("not a job: %v (want {\"kind\": %q or %q, \"config\": {...}, \"twice\": false})", err, SweepChaos, SweepRun)
	}
	lc := j.Config
	lc.Stdout, lc.Progress, lc.Sim = io.Discard, io.Discard, true
	switch j.Kind {
	case SweepChaos:
		lc.Out = dir
		r, digest, err := simChaosRun(lc, ChaosRun{Seed: lc.Seed}, j.Twice, false)
		if err != nil {
			return nil, err
		}
		return SweepResult{Chaos: &r, Digest: digest}, nil
	case SweepRun:
		lc.Out = filepath.Join(dir, "run")
		res, err := launcher.Launch(ctx, lc)
		out := SweepResult{Code: res.Code, Verdict: res.Verdict}
		if err != nil {
			out.Error = err.Error()
		}
		if res.Dir != "" {
			if run, rerr := logs.ReadRun(res.Dir); rerr == nil {
				out.Digest = RunDigest(run)
			}
			if j.Twice && (res.Code == 0 || res.Code == 1 || res.Code == 3) {
				out.Twice = SameTwice(lc, res.Dir)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("job kind %q: want %q (bench chaos) or %q (run --count)", j.Kind, SweepChaos, SweepRun)
}

// SameTwice makes simulated run c again and compares what it writes with what the first wrote in
// dir (RunDigest of both); "" when they are the same.
func SameTwice(c launcher.Config, dir string) string {
	first, err := logs.ReadRun(dir)
	if err != nil {
		return "reading the first run: " + err.Error()
	}
	again, err := launcher.Simulate(c)
	if err != nil {
		return "the second run: " + err.Error()
	}
	if a, b := RunDigest(first), RunDigest(again.Run); a != b {
		return fmt.Sprintf("the same seed ran twice wrote different logs (sha256 %.12s… and %.12s…): the simulator is not deterministic", a, b)
	}
	return ""
}

// AcrossHosts is the reason of a run whose logs here differ from the host's: "nondeterministic
// across hosts: h1 and here (sha256 … and …)".
func AcrossHosts(host, there, here string) string {
	return fmt.Sprintf("nondeterministic across hosts: %s and here (sha256 %.12s… and %.12s…): the same seed wrote different logs", host, there, here)
}
