package launcher

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Figures are what a run cost, read back from its directory (launcher.jsonl and verdict.json):
// the numbers `bench scale` tabulates.
type Figures struct {
	Nodes int
	// Launch is the first spawn to the last first-incarnation spawn; Ready the first spawn to the
	// last first-incarnation ready.
	Launch, Ready time.Duration
	// Agreement is the begin record to the first moment every live node followed one live leader
	// (the first election's end); zero when they never did.
	Agreement time.Duration
	// Messages is every send of the observed run; Election the first election's messages and
	// announcements, Bound its bound (0: none stated).
	Messages, Election, Bound int
	// NodesCPU is the nodes' CPU time (user + system, from their rusage at exit); NodesPeakKB the
	// sum of the nodes' peak resident sets, NodePeakKB the largest; Launcher* the launcher's own.
	NodesCPU, LauncherCPU                   time.Duration
	NodesPeakKB, NodePeakKB, LauncherPeakKB int64
	// Suspicions, False and Early are the verdict's metrics.suspicions.
	Suspicions, False, Early int
	OK                       bool
	// Outcome is the verdict's: pass, fail or inconclusive (still electing when the run ended).
	Outcome string
	// Remote is set when the nodes ran on agents: their rusage is their hosts' business.
	Remote bool
}

// ReadFigures reads a finished run's figures.
func ReadFigures(dir string) (Figures, error) { return readFigures(dir, nil) }

// Figures are the run's figures, its verdict taken from the Result rather than read again from
// verdict.json.
func (r Result) Figures() (Figures, error) {
	if r.Verdict == nil {
		return Figures{}, fmt.Errorf("%s: the run has no verdict", r.Dir)
	}
	return readFigures(r.Dir, r.Verdict)
}

// readFigures reads the figures of the run in dir, with its verdict v (nil: read verdict.json).
func readFigures(dir string, v *check.Verdict) (Figures, error) {
	var f Figures
	c, err := rundir.Load(dir)
	if err != nil {
		return f, err
	}
	f.Nodes = len(c.Nodes)
	recs, err := logs.ReadLauncher(dir)
	if err != nil {
		return f, err
	}
	var first, lastSpawn, lastReady, begin int64
	exited := map[int]bool{}
	for _, r := range recs {
		switch r.Ev {
		case logs.LaunchSpawned:
			if first == 0 {
				first = r.TS
			}
			if r.Inc == 1 {
				lastSpawn = r.TS
			}
		case logs.LaunchReady:
			if r.Inc == 1 {
				lastReady = max(lastReady, r.TS)
			}
		case logs.LaunchBegin:
			begin = r.TS
		case logs.LaunchExited:
			if rundir.IsObserver(r.Node) {
				continue
			}
			exited[r.Node] = true
			f.NodesCPU += time.Duration(r.CPUMS * 1e6)
			f.NodesPeakKB += r.MaxRSSKB
			f.NodePeakKB = max(f.NodePeakKB, r.MaxRSSKB)
		case logs.LaunchEnd:
			f.LauncherCPU = time.Duration(r.CPUMS * 1e6)
			f.LauncherPeakKB = r.MaxRSSKB
		}
	}
	if first == 0 || lastReady == 0 || begin == 0 {
		return f, fmt.Errorf("%s: launcher.jsonl lacks its spawned, ready or begin records (a run that did not start)", dir)
	}
	f.Launch, f.Ready = time.Duration(lastSpawn-first), time.Duration(lastReady-first)
	f.Remote = f.NodesPeakKB == 0 && len(exited) > 0

	if v == nil {
		b, err := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
		if err != nil {
			return f, err
		}
		v = new(check.Verdict)
		if err := json.Unmarshal(b, v); err != nil {
			return f, fmt.Errorf("%s: %w", filepath.Join(dir, rundir.VerdictFile), err)
		}
	}
	f.OK, f.Outcome, f.Messages = v.OK, v.Result(), v.Metrics.MessagesTotal
	sp := v.Metrics.Suspicions
	f.Suspicions, f.False, f.Early = sp.Total, sp.False, sp.Early
	if len(v.Metrics.Elections) > 0 {
		e := v.Metrics.Elections[0]
		f.Election = e.Messages + e.Announce
		if e.Bound != nil {
			f.Bound = *e.Bound
		}
		if e.EndNS != nil {
			f.Agreement = time.Duration(*e.EndNS - begin)
		}
	}
	return f, nil
}

// CPUPerMessage is the nodes' CPU time per message sent (0 without messages).
func (f Figures) CPUPerMessage() time.Duration {
	if f.Messages == 0 {
		return 0
	}
	return f.NodesCPU / time.Duration(f.Messages)
}
