package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// LaunchConfig is `leaderlab bench launch`: Trials runs of Nodes real nodes without faults, one
// at a time, for the time the launcher takes until every node is ready and the nodes' memory.
type LaunchConfig struct {
	Algo          string
	Nodes, Trials int
	// Hosts and SSHConfig run the nodes on SSH hosts (launcher.Config's), InsecureIgnoreHostKey
	// skips their host-key check.
	Hosts, SSHConfig      string
	InsecureIgnoreHostKey bool
	Out                   string // the runs go under it
}

// LaunchRow is one run's figures.
type LaunchRow struct {
	Trial int
	Dir   string
	Code  int           // the run's exit code
	Ready time.Duration // the first spawn to the last first-incarnation ready
	// PeakRSS is the largest resident set any node had in resources.jsonl, bytes (0 with Hosts:
	// the launcher samples local processes only).
	PeakRSS float64
}

// Launch makes the runs and prints to w the configuration and a row per run as it ends;
// progress is told of every run, with the time left. An error is a run that could not be made
// or whose records cannot be read; the rows before it are returned.
func Launch(ctx context.Context, cfg LaunchConfig, w, progress io.Writer) ([]LaunchRow, error) {
	fmt.Fprintf(w, "launch: %s, %d nodes, %d trials (runs in %s)\n", cfg.Algo, cfg.Nodes, cfg.Trials, cfg.Out)
	fmt.Fprintf(w, "%-6s %14s %14s %16s\n", "trial", "ready ms", "verdict", "peak node RSS MB")
	prog := NewProgress(progress, "bench launch", cfg.Trials)
	var rows []LaunchRow
	for i := range cfg.Trials {
		lc := cfg.trialConfig(i)
		r, err := launcher.Launch(ctx, lc)
		if err != nil {
			return rows, fmt.Errorf("trial %d: %w", i, err)
		}
		prog.Done(fmt.Sprintf("trial %d", i+1))
		row := LaunchRow{Trial: i, Dir: r.Dir, Code: r.Code}
		if row.Ready, err = readyTime(r.Dir); err != nil {
			return rows, err
		}
		if row.PeakRSS, err = peakRSS(r.Dir); err != nil {
			return rows, err
		}
		rows = append(rows, row)
		verdict := "pass"
		if r.Code != launcher.ExitOK {
			verdict = "FAIL"
		}
		mem := fmt.Sprintf("%.1f", row.PeakRSS/(1<<20))
		if cfg.Hosts != "" || cfg.SSHConfig != "" {
			mem = "(on the hosts)" // resources.jsonl samples local processes only
		}
		fmt.Fprintf(w, "%-6d %14.1f %14s %16s\n", i, row.Ready.Seconds()*1000, verdict, mem)
	}
	return rows, nil
}

// trialConfig is trial i's run: no chaos, two seconds, the detector paced for the cluster as run
// paces it (a thousand nodes at the defaults' 50ms heartbeat took 120 s to be ready here, against
// 32-45 s with run's 500ms).
func (cfg LaunchConfig) trialConfig(i int) launcher.Config {
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = cfg.Algo, cfg.Nodes
	lc.Chaos = ""
	lc.ScaleDetector = true
	lc.Duration = 2 * time.Second
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("trial-%02d", i))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	lc.Hosts, lc.SSHConfig, lc.InsecureIgnoreHostKey = cfg.Hosts, cfg.SSHConfig, cfg.InsecureIgnoreHostKey
	return lc
}

// readyTime is the time from the first spawn to the last first-incarnation ready in
// launcher.jsonl.
func readyTime(dir string) (time.Duration, error) {
	recs, err := logs.ReadLauncher(dir)
	if err != nil {
		return 0, err
	}
	var first, last int64
	for _, r := range recs {
		if r.Ev == logs.LaunchSpawned && first == 0 {
			first = r.TS
		}
		if r.Ev == logs.LaunchReady && r.Inc == 1 {
			last = r.TS
		}
	}
	if first == 0 || last == 0 {
		return 0, fmt.Errorf("%s: launcher.jsonl has no spawned/ready records", dir)
	}
	return time.Duration(last - first), nil
}

// peakRSS is the largest RSS of any node in resources.jsonl, bytes.
func peakRSS(dir string) (float64, error) {
	f, err := os.Open(filepath.Join(dir, launcher.ResourcesFile))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var peak float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s launcher.Sample
		if json.Unmarshal(sc.Bytes(), &s) == nil && float64(s.RSS) > peak {
			peak = float64(s.RSS)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	// The samples come every 2ms per node (2 s for a thousand): a short run may have none. The
	// exited records carry each process's own peak (its rusage).
	recs, err := logs.ReadLauncher(dir)
	if err != nil {
		return 0, err
	}
	for _, r := range recs {
		if r.Ev == logs.LaunchExited {
			peak = max(peak, float64(r.MaxRSSKB)*1024)
		}
	}
	return peak, nil
}
