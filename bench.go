package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:         "bench",
		Usage:        "measured figures: failover time, launch time and node memory",
		OnUsageError: usageError,
		Subcommands:  []*cli.Command{benchFailoverCommand(), benchLaunchCommand(), benchComplexityCommand(), benchChaosCommand(), benchRSDPCommand(), benchScaleCommand(), benchSyncCommand()},
	}
}

// csvFlag opens the --csv file of a benchmark and writes its header: nil when no --csv was given.
// close flushes and closes it.
func csvFlag(c *cli.Context, header []string) (w *csv.Writer, close func(), err error) {
	path := c.String("csv")
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, cli.Exit(fmt.Sprintf("--csv: %v", err), launcher.ExitUnusable)
	}
	w = csv.NewWriter(f)
	w.Write(header)
	return w, func() { w.Flush(); f.Close() }, nil
}

// benchDir is where a benchmark keeps its runs: every figure can be traced to a run directory.
func benchDir(c *cli.Context, name string) (string, error) {
	dir := c.String("out")
	if dir == "" {
		dir = filepath.Join("runs", "bench-"+name+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", cli.Exit(fmt.Sprintf("--out: %v", err), launcher.ExitUnusable)
	}
	return dir, nil
}

func benchFailoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "failover",
		Usage: "time from a fault on the leader until every survivor follows the same new leader",
		Description: "Runs --trials real clusters per fault (SIGKILL and SIGSTOP of the leader), or simulated ones with --sim,\n" +
			"and prints p50/p90/max of the checker's failover time (from the fault as chaos.jsonl recorded it to the\n" +
			"moment every live node's log shows the same leader). The runs stay in --out so that every figure can be\n" +
			"traced. The simulator's links take 0.1-2 ms and its processes are never descheduled, so its figures are\n" +
			"the algorithm's and the detector's alone; the real ones add the machine's scheduling and sockets.",
		OnUsageError: usageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Aliases: []string{"a"}, Value: "bully", Usage: "the election algorithm (see run --algo)"},
			&cli.IntFlag{Name: "nodes", Aliases: []string{"n"}, Value: 5, Usage: "cluster size"},
			&cli.IntFlag{Name: "trials", Value: 20, Usage: "runs per fault"},
			&cli.StringFlag{Name: "faults", Value: "kill,pause", Usage: "which faults to measure: kill, pause, stop (SIGTERM), comma-separated"},
			&cli.DurationFlag{Name: "heartbeat", Value: 50 * time.Millisecond, Usage: "the failure detector's heartbeat interval"},
			&cli.DurationFlag{Name: "timeout", Value: 200 * time.Millisecond, Usage: "the failure detector's suspicion timeout"},
			&cli.BoolFlag{Name: "sim", Usage: "make the runs in the simulator (run --sim): the nodes' own code in virtual time"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs (default runs/bench-failover-<time>)"},
			&cli.StringFlag{Name: "detector", Value: rundir.DetectorHeartbeat, Usage: "failure detector (see run --detector)"},
			&cli.IntFlag{Name: "observers", Usage: "with --detector observers: how many"},
			&cli.DurationFlag{Name: "health-interval", Usage: "with a probing --detector (see run)"},
			&cli.StringFlag{Name: "rsdp-mode", Usage: "with --algo rsdp (see run)"},
		}, benchHostFlags()...),
		Action: func(c *cli.Context) error {
			dir, err := benchDir(c, "failover")
			if err != nil {
				return err
			}
			if c.Int("trials") < 1 {
				return cli.Exit("--trials: want at least 1", launcher.ExitUnusable)
			}
			world := "real processes"
			if c.Bool("sim") {
				world = "simulated"
			}
			// As run does: given neither --heartbeat nor --timeout, real runs pace the detector by
			// the nodes on the busiest host.
			heartbeat, timeout := c.Duration("heartbeat"), c.Duration("timeout")
			if !c.Bool("sim") && !c.IsSet("heartbeat") && !c.IsSet("timeout") {
				alg, err := election.Lookup(c.String("algo"))
				if err != nil {
					return cli.Exit(fmt.Sprintf("--algo: %v", err), launcher.ExitUnusable)
				}
				hc := launcher.Config{Nodes: c.Int("nodes"), Hosts: c.String("hosts"), Heartbeat: heartbeat, Timeout: timeout}
				if heartbeat, timeout, _, _, err = launcher.PacedDetector(hc, alg); err != nil {
					return cli.Exit(err.Error(), launcher.ExitUnusable)
				}
			}
			fmt.Printf("failover: %s, %d nodes, heartbeat %v, timeout %v, %d trials per fault, %s (runs in %s)\n",
				c.String("algo"), c.Int("nodes"), heartbeat, timeout, c.Int("trials"), world, dir)
			fmt.Printf("%-6s %6s %9s %9s %9s %8s\n", "fault", "trials", "p50 ms", "p90 ms", "max ms", "failed")
			failedAll := 0
			faults := strings.Split(c.String("faults"), ",")
			var trials []bench.FailoverTrial
			prog := bench.NewProgress(os.Stderr, "bench failover", c.Int("trials")*len(faults))
			for _, fault := range faults {
				switch fault {
				case "kill", "pause", "stop":
				default:
					return cli.Exit(fmt.Sprintf("--faults: unknown fault %q (accepted: kill, pause, stop)", fault), launcher.ExitUnusable)
				}
				var ms []float64
				failed := 0
				for i := 0; i < c.Int("trials"); i++ {
					// The fault falls at 500 ms plus a spread fraction of the detector's period, so
					// that it meets the heartbeats' or probes' schedule at every phase, as a failure
					// at a random moment would (the schedules start at the begin, as the fault's
					// time does).
					period := heartbeat
					if h := c.Duration("health-interval"); h > 0 {
						period = h
					}
					at := 500*time.Millisecond + time.Duration((float64(i)+0.5)/float64(c.Int("trials"))*float64(period)).Round(10*time.Microsecond)
					sched := fmt.Sprintf("at %v %s leader", at, fault)
					if fault == "pause" {
						sched = fmt.Sprintf("at %v pause leader for %v", at, 4*timeout)
					}
					cfg := launcher.DefaultConfig()
					cfg.Algo, cfg.Nodes = c.String("algo"), c.Int("nodes")
					cfg.Heartbeat, cfg.Timeout = heartbeat, timeout
					cfg.Chaos = sched
					cfg.Settle = 500 * time.Millisecond
					cfg.Duration = 1500*time.Millisecond + 4*timeout
					cfg.Out = filepath.Join(dir, fmt.Sprintf("%s-%02d", fault, i))
					cfg.Stdout, cfg.Progress = nopWriter{}, nopWriter{}
					cfg.Detector, cfg.Observers, cfg.HealthInterval = c.String("detector"), c.Int("observers"), c.Duration("health-interval")
					if m := c.String("rsdp-mode"); m != "" {
						opts, err := election.RSDPOptions(m, election.DefaultRSDPShareWindow, election.DefaultRSDPResync)
						if err != nil {
							return cli.Exit(err.Error(), launcher.ExitUnusable)
						}
						cfg.Options = opts
					}
					cfg.Hosts, cfg.TokenFile = c.String("hosts"), c.String("token-file")
					cfg.Sim = c.Bool("sim")
					code, err := launcher.Run(c.Context, cfg)
					if err != nil {
						return cli.Exit(fmt.Sprintf("trial %s %d: %v", fault, i, err), launcher.ExitUnusable)
					}
					prog.Done(fmt.Sprintf("%s trial %d", fault, i+1))
					v, err := logs.ReadVerdict(cfg.Out)
					trials = append(trials, failoverTrial(fault, i, cfg.Out, code, v, err))
					if err != nil || code != 0 || len(v.Metrics.Failovers) == 0 || v.Metrics.Failovers[0].MS == nil {
						failed++
						continue
					}
					ms = append(ms, *v.Metrics.Failovers[0].MS)
				}
				p50, p90, mx := quantiles(ms)
				fmt.Printf("%-6s %6d %9.2f %9.2f %9.2f %8d\n", fault, len(ms), p50, p90, mx, failed)
				failedAll += failed
			}
			page, err := writeFailoverPage(c, dir, world, heartbeat, timeout, faults, trials)
			if err != nil {
				return cli.Exit(fmt.Sprintf("page: %v", err), launcher.ExitUnusable)
			}
			fmt.Printf("page: %s\n", page)
			if failedAll > 0 {
				return cli.Exit(fmt.Sprintf("%d trials did not pass (their directories are in %s; leaderlab check DIR says why)", failedAll, dir), launcher.ExitViolation)
			}
			return nil
		},
	}
}

// failoverTrial is what the page shows of a trial: failed as the table counts it (a run that did
// not pass, or no failover measured), and why.
func failoverTrial(fault string, i int, dir string, code int, v *logs.Verdict, err error) bench.FailoverTrial {
	t := bench.FailoverTrial{Fault: fault, Trial: i, Dir: dir}
	if err != nil {
		t.Why = "no verdict: " + err.Error()
		return t
	}
	if len(v.Metrics.Failovers) > 0 && v.Metrics.Failovers[0].MS != nil {
		t.MS, t.Has = *v.Metrics.Failovers[0].MS, true
	}
	switch {
	case len(v.Metrics.Failovers) == 0:
		t.Why = "no failover measured (the fault took no leader away)"
	case !t.Has:
		t.Why = "the live nodes never agreed again: " + v.Metrics.Failovers[0].Fault
	case code != 0:
		t.Why = fmt.Sprintf("exit %d", code)
		for _, p := range v.Properties {
			if !p.OK {
				t.Why = p.Name + ": " + p.Detail
				break
			}
		}
	default:
		t.OK = true
	}
	return t
}

// writeFailoverPage writes DIR/index.html: the command, the configuration, and per fault the
// failover time's CDF, the trials' scatter and p50/p90/max, and a link to each trial's run.
func writeFailoverPage(c *cli.Context, dir, world string, heartbeat, timeout time.Duration, faults []string, trials []bench.FailoverTrial) (string, error) {
	head := bench.Page{
		Title:   fmt.Sprintf("bench failover: %s, %d nodes", c.String("algo"), c.Int("nodes")),
		Command: bench.ShellJoin(os.Args),
		Config: []bench.KV{
			{Key: "algorithm", Value: c.String("algo")},
			{Key: "nodes", Value: fmt.Sprint(c.Int("nodes"))},
			{Key: "faults", Value: strings.Join(faults, ", ")},
			{Key: "trials per fault", Value: fmt.Sprint(c.Int("trials"))},
			{Key: "detector", Value: fmt.Sprintf("%s, heartbeat %v, timeout %v", c.String("detector"), heartbeat, timeout)},
			{Key: "world", Value: world},
			{Key: "runs in", Value: dir},
		},
	}
	for _, f := range []string{"observers", "health-interval", "rsdp-mode", "hosts"} {
		if c.IsSet(f) {
			head.Config = append(head.Config, bench.KV{Key: "--" + f, Value: fmt.Sprint(c.Value(f))})
		}
	}
	if !c.Bool("sim") {
		head.Notes = append(head.Notes, "Real processes: the figures include the machine's scheduling and sockets.")
	} else {
		head.Notes = append(head.Notes, "Simulated: links take 0.1-2 ms and processes are never descheduled, so the figures are the algorithm's and the detector's alone.")
	}
	p := bench.FailoverPage(dir, head, faults, trials, float64(timeout)/float64(time.Millisecond))
	return bench.WritePage(dir, p)
}

type nopWriter struct{}

func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }

// quantiles returns p50, p90 and the maximum (nearest-rank).
// The page computes them with the same function.
func quantiles(xs []float64) (p50, p90, mx float64) { return bench.Quantiles(xs) }

func benchLaunchCommand() *cli.Command {
	return &cli.Command{
		Name:         "launch",
		Usage:        "time to start N real nodes until all are ready, and the nodes' memory",
		OnUsageError: usageError,
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "nodes", Aliases: []string{"n"}, Value: 50, Usage: "cluster size"},
			&cli.StringFlag{Name: "algo", Aliases: []string{"a"}, Value: "bully", Usage: "the election algorithm (see run --algo)"},
			&cli.IntFlag{Name: "trials", Value: 3, Usage: "runs to launch, one at a time"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs (default runs/bench-launch-<time>)"},
		}, benchHostFlags()...),
		Action: func(c *cli.Context) error {
			dir, err := benchDir(c, "launch")
			if err != nil {
				return err
			}
			fmt.Printf("launch: %s, %d nodes, %d trials (runs in %s)\n", c.String("algo"), c.Int("nodes"), c.Int("trials"), dir)
			fmt.Printf("%-6s %14s %14s %16s\n", "trial", "ready ms", "verdict", "peak node RSS MB")
			prog := bench.NewProgress(os.Stderr, "bench launch", c.Int("trials"))
			for i := 0; i < c.Int("trials"); i++ {
				cfg := launcher.DefaultConfig()
				cfg.Algo, cfg.Nodes = c.String("algo"), c.Int("nodes")
				cfg.Chaos = ""
				cfg.Duration = 2 * time.Second
				cfg.Out = filepath.Join(dir, fmt.Sprintf("trial-%02d", i))
				cfg.Stdout, cfg.Progress = nopWriter{}, nopWriter{}
				cfg.Hosts, cfg.TokenFile = c.String("hosts"), c.String("token-file")
				code, err := launcher.Run(c.Context, cfg)
				if err != nil {
					return cli.Exit(fmt.Sprintf("trial %d: %v", i, err), launcher.ExitUnusable)
				}
				prog.Done(fmt.Sprintf("trial %d", i+1))
				ready, err := readyTime(cfg.Out)
				if err != nil {
					return cli.Exit(err.Error(), launcher.ExitUnusable)
				}
				rss, err := peakRSS(cfg.Out)
				if err != nil {
					return cli.Exit(err.Error(), launcher.ExitUnusable)
				}
				verdict := "pass"
				if code != 0 {
					verdict = "FAIL"
				}
				mem := fmt.Sprintf("%.1f", rss/(1<<20))
				if cfg.Hosts != "" {
					mem = "(on the hosts)" // resources.jsonl samples local processes only
				}
				fmt.Printf("%-6d %14.1f %14s %16s\n", i, ready.Seconds()*1000, verdict, mem)
			}
			return nil
		},
	}
}

// readyTime is the time from the first spawn to the last ready in launcher.jsonl.
func readyTime(dir string) (time.Duration, error) {
	f, err := os.Open(filepath.Join(dir, rundir.LauncherFile))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var first, last int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r logs.LaunchRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
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
	return peak, sc.Err()
}

// benchHostFlags run a benchmark's clusters on agents (see run --hosts).
func benchHostFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "hosts", Usage: "run the nodes on the agents of this inventory `FILE` (see run --hosts)"},
		&cli.StringFlag{Name: "token-file", Usage: "with --hosts: the agents' token `FILE`"},
	}
}
