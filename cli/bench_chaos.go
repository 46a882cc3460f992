package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/chaos"
)

// `leaderlab bench chaos`: violations, split brain, lost lines and orphans under the seeded
// nemesis, by algorithm and N (bench.Chaos).

func benchChaosCommand() *cli.Command {
	d := bench.DefaultChaosConfig()
	return &cli.Command{
		Name:  "chaos",
		Usage: "violations, split-brain time, lost log lines and orphan processes under the seeded nemesis, by algorithm and N",
		Description: "For every algorithm (Bully, the rings and RSDP by default) and cluster size it makes --runs\n" +
			"real runs, or simulated ones with --sim (`leaderlab run\n" +
			"--nemesis KINDS --nemesis-interval D --nemesis-restart --duration D --seed S`: the nemesis draws each\n" +
			"run's schedule from its seed, and every node it kills is restarted once its fault is over, so that the\n" +
			"checks after the settle window see the whole cluster again). Run i of a cell has seed --seed + i and\n" +
			"its own directory in --out, so any run can be made again with `leaderlab run --replay DIR`.\n\n" +
			"A row per (algorithm, N), printed as it is measured: the runs; the violations (runs the checker did\n" +
			"not pass for a reason the algorithm does not declare); expected (runs that failed only under a limit the\n" +
			"algorithm declares, such as uniqueness under a one-way link drop: \"the algorithm's documented limit\"; they\n" +
			"do not fail the bench); the properties that failed, with how many runs each; the split-brain time (sum and max\n" +
			"over the runs of verdict.json's metrics.split_brain_ms: windows with a leader on each side of a\n" +
			"partition, plus overlaps beyond the grace); the lost log lines (recvs with no send of the same msg.id,\n" +
			"read from the event logs); the orphans (node processes of the run still alive, from /proc, once the\n" +
			"launcher returned; they are then SIGKILLed so the next run starts clean); and the checker's warnings.\n" +
			"Each failing run's directory is printed under its row (with --sim only those runs are written, the\n" +
			"others are judged in memory).\n\n" +
			"With --sim and --hosts FILE or --ssh-config FILE the runs are spread over SSH hosts, reached as run --hosts\n" +
			"reaches them (the binary put there by its digest): each host runs `leaderlab sweep-worker` on all its cores,\n" +
			"the hosts take seeds from one queue as they have room, and the table is the one a local sweep prints. A run\n" +
			"that does not pass is made again here (the simulator is deterministic), which writes its directory, and a\n" +
			"seed whose logs differ between the host and here fails as \"nondeterministic across hosts\". A host lost\n" +
			"mid-sweep is named, and its unfinished runs go to the others; when every host is lost the bench stops.\n\n" +
			"Exit 1 when a run had a violation or left an orphan, 2 for bad flags, unusable hosts, or a run that could\n" +
			"not be made for a reason of configuration.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "algos", Usage: "comma-separated algorithms", DefaultText: strings.Join(d.Algos, ",")},
			&cli.StringFlag{Name: "n", Value: "5,8,12,16", Usage: "cluster sizes: a list, ranges allowed (5-16)"},
			&cli.IntFlag{Name: "runs", Value: d.Runs, Usage: "runs per (algorithm, N)"},
			&cli.StringFlag{Name: "nemesis", Value: d.Nemesis, Usage: "fault kinds the nemesis draws from: " + strings.Join(chaos.NemesisKinds, ", ")},
			&cli.DurationFlag{Name: "nemesis-interval", Value: d.Interval, Usage: "the nemesis's mean gap between faults and mean fault length"},
			&cli.DurationFlag{Name: "duration", Value: d.Duration, Usage: "length of each run (the last 1s is the settle window)"},
			&cli.Int64Flag{Name: "seed", Value: d.Seed, Usage: "base seed: run i of each cell has seed base+i"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV file"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs", DefaultText: "runs/bench-chaos-<time>"},
			&cli.BoolFlag{Name: "check-determinism", Usage: "with --sim: make every run twice and compare the hashes of the logs they wrote; a seed whose two runs differ fails (the simulator stopped being deterministic)"},
			&cli.BoolFlag{Name: "swarm", Usage: "swarm testing: each run draws its own mix of the --nemesis kinds, their weights, its interval and overlap from its seed, so that rare combinations are reached"},
			&cli.BoolFlag{Name: "sim", Usage: "make the runs in the simulator (run --sim): the nodes' own code in virtual time, thousands of runs a minute"},
			&cli.StringFlag{Name: "hosts", Usage: "with --sim: spread the runs over the SSH hosts listed in `FILE` (one [user@]host[:port] per line, as run --hosts): each runs `leaderlab sweep-worker` on all its cores, a host with room takes the next seed, and a run that does not pass is made again here to write its directory"},
			&cli.StringFlag{Name: "ssh-config", Usage: "with --sim: spread the runs over the hosts of this OpenSSH config `FILE` (as `vagrant ssh-config` writes it; see run --ssh-config); it resolves --hosts's names when both are given"},
			&cli.BoolFlag{Name: "insecure-ignore-host-key", Usage: "with --hosts or --ssh-config: take any host key, unchecked (for a throwaway lab)"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("bench chaos takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			cfg := bench.ChaosConfig{Algos: splitList(c.String("algos")), Runs: c.Int("runs"), Nemesis: c.String("nemesis"),
				Interval: c.Duration("nemesis-interval"), Duration: c.Duration("duration"), Seed: c.Int64("seed"),
				CSV: c.String("csv"), Sim: c.Bool("sim"), Swarm: c.Bool("swarm"), CheckDeterminism: c.Bool("check-determinism"), Command: bench.ShellJoin(os.Args),
				Hosts: c.String("hosts"), SSHConfig: c.String("ssh-config"), InsecureIgnoreHostKey: c.Bool("insecure-ignore-host-key")}
			if !c.IsSet("algos") {
				cfg.Algos = d.Algos
			}
			var err error
			if cfg.Ns, err = parseNList(c.String("n")); err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			// Checked before --out is made, so that bad flags leave no directory behind.
			if err := cfg.Validate(); err != nil {
				return cli.Exit(planFlags(err.Error(), chaosFlagOf), ExitUnusable)
			}
			if cfg.Out, err = benchDir(c, "chaos"); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			res, err := bench.Chaos(ctx, cfg, os.Stdout, os.Stderr)
			switch {
			case err != nil:
				if len(res.Cells) == 0 {
					os.Remove(cfg.Out) // empty when no host could be used: nothing half-made stays behind
				}
				return cli.Exit(planFlags(err.Error(), chaosFlagOf), ExitUnusable)
			case res.Violations > 0 || res.Orphans > 0:
				return cli.Exit(fmt.Sprintf("%d failing runs, %d node processes that outlived their run (directories above)", res.Violations, res.Orphans), ExitViolation)
			}
			return nil
		},
	}
}
