package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
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
		return nil, nil, cli.Exit(fmt.Sprintf("--csv: %v", err), ExitUnusable)
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
		return "", cli.Exit(fmt.Sprintf("--out: %v", err), ExitUnusable)
	}
	return dir, nil
}

func benchFailoverCommand() *cli.Command {
	d := bench.DefaultFailoverConfig()
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
			&cli.StringFlag{Name: "algo", Aliases: []string{"a"}, Value: d.Algo, Usage: "the election algorithm (see run --algo)"},
			&cli.IntFlag{Name: "nodes", Aliases: []string{"n"}, Value: d.Nodes, Usage: "cluster size"},
			&cli.IntFlag{Name: "trials", Value: d.Trials, Usage: "runs per fault"},
			&cli.StringFlag{Name: "faults", Value: strings.Join(d.Faults, ","), Usage: "which faults to measure: kill, pause, stop (SIGTERM), comma-separated"},
			&cli.DurationFlag{Name: "heartbeat", Value: d.Heartbeat, Usage: "the failure detector's heartbeat interval"},
			&cli.DurationFlag{Name: "timeout", Value: d.Timeout, Usage: "the failure detector's suspicion timeout"},
			&cli.BoolFlag{Name: "sim", Usage: "make the runs in the simulator (run --sim): the nodes' own code in virtual time"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs (default runs/bench-failover-<time>)"},
			&cli.StringFlag{Name: "detector", Value: d.Detector, Usage: "failure detector (see run --detector)"},
			&cli.IntFlag{Name: "observers", Usage: "with --detector observers: how many"},
			&cli.DurationFlag{Name: "health-interval", Usage: "with a probing --detector (see run)"},
			&cli.StringFlag{Name: "rsdp-mode", Usage: "with --algo rsdp (see run)"},
		}, benchHostFlags()...),
		Action: func(c *cli.Context) error {
			dir, err := benchDir(c, "failover")
			if err != nil {
				return err
			}
			cfg := bench.FailoverConfig{Algo: c.String("algo"), Nodes: c.Int("nodes"), Trials: c.Int("trials"),
				Faults: strings.Split(c.String("faults"), ","), Heartbeat: c.Duration("heartbeat"), Timeout: c.Duration("timeout"),
				// As run does: given neither --heartbeat nor --timeout, real runs pace the detector
				// by the nodes on the busiest host.
				Pace:     !c.IsSet("heartbeat") && !c.IsSet("timeout"),
				Detector: c.String("detector"), Observers: c.Int("observers"), HealthInterval: c.Duration("health-interval"),
				RSDPMode: c.String("rsdp-mode"), Hosts: c.String("hosts"), SSHConfig: c.String("ssh-config"), InsecureIgnoreHostKey: c.Bool("insecure-ignore-host-key"), Sim: c.Bool("sim"),
				Out: dir, Command: bench.ShellJoin(os.Args)}
			// The page lists the options given beyond the usual ones as they were given.
			for _, f := range []string{"observers", "health-interval", "rsdp-mode", "hosts", "ssh-config"} {
				if c.IsSet(f) {
					cfg.Given = append(cfg.Given, bench.KV{Key: "--" + f, Value: fmt.Sprint(c.Value(f))})
				}
			}
			noteDynamic(c, "failover")
			res, err := bench.Failover(c.Context, cfg, os.Stdout, os.Stderr)
			if err != nil {
				return cli.Exit(planFlags(err.Error(), failoverFlagOf), ExitUnusable)
			}
			if res.Failed > 0 {
				return cli.Exit(fmt.Sprintf("%d trials did not pass (their directories are in %s; leaderlab check DIR says why)", res.Failed, dir), ExitViolation)
			}
			return nil
		},
	}
}

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
			cfg := bench.LaunchConfig{Algo: c.String("algo"), Nodes: c.Int("nodes"), Trials: c.Int("trials"),
				Hosts: c.String("hosts"), SSHConfig: c.String("ssh-config"), InsecureIgnoreHostKey: c.Bool("insecure-ignore-host-key"), Out: dir}
			noteDynamic(c, "launch")
			if _, err := bench.Launch(c.Context, cfg, os.Stdout, os.Stderr); err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			return nil
		},
	}
}

// parseNList reads --n of the bench commands (bench.ParseNList), its error naming the flag.
func parseNList(s string) ([]int, error) {
	ns, err := bench.ParseNList(s)
	if err != nil {
		return nil, fmt.Errorf("--n: %w", err)
	}
	return ns, nil
}

// benchHostFlags run a benchmark's clusters on SSH hosts (see run --hosts).
func benchHostFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "hosts", Usage: "run the nodes on the SSH hosts of this inventory `FILE` (see run --hosts)"},
		&cli.StringFlag{Name: "ssh-config", Usage: "the hosts of this OpenSSH config `FILE` (see run --ssh-config)"},
		&cli.BoolFlag{Name: "insecure-ignore-host-key", Usage: "take any host key, unchecked (see run)"},
	}
}
