package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/election"
)

func benchSyncCommand() *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "the synchronizers side by side: FloodMax over abd, alpha, beta and gamma on graph families, beside the asynchronous rings",
		Description: "Seed 003's proposed comparison made real. For every N of -n, graph family of --graphs and synchronizer\n" +
			"of --syncs it runs FloodMax (`leaderlab run -a floodmax --sync S --topology G -n N --chaos ''`), and for\n" +
			"every N each algorithm of --rings on its own ring, one run at a time, and prints a row per run as it\n" +
			"ends: the pulses, the time of a pulse and pulses per second, the control messages per pulse against\n" +
			"the synchronizer's formula (and their ratio), the acks, the set-up messages, the messages that\n" +
			"arrived late (ABD with a delay beyond δ), the election's time and the run's messages. Exit 1 when a\n" +
			"run did not pass.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "n", Value: "16,64,256", Usage: "cluster sizes: a list, ranges allowed"},
			&cli.StringFlag{Name: "graphs", Value: "grid,tree:2,random:3", Usage: "graph families: grid and torus (the most square R×C for each N), tree:K, random:D"},
			&cli.StringFlag{Name: "syncs", Value: strings.Join(election.Synchronizers, ","), Usage: "synchronizers"},
			&cli.StringFlag{Name: "rings", Value: "chang-roberts,franklin", Usage: "asynchronous algorithms to compare with, on their own ring ('' for none)"},
			&cli.IntFlag{Name: "trials", Value: 1, Usage: "runs per (N, graph, synchronizer)"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of trial 0 (trial t: seed + t): the random graphs and placements"},
			&cli.DurationFlag{Name: "delta", Value: 50 * time.Millisecond, Usage: "ABD's delay bound δ (see run --delta)"},
			&cli.BoolFlag{Name: "sim", Usage: "make the runs in the simulator (run --sim): the nodes' own code in virtual time"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV `FILE`"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs (default runs/bench-sync-<time>)"},
		},
		Action: func(c *cli.Context) error {
			ns, err := parseNList(c.String("n"))
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			if c.Duration("delta") <= 0 {
				return cli.Exit(fmt.Sprintf("--delta %v: want a positive duration", c.Duration("delta")), ExitUnusable)
			}
			p := bench.SyncPlan{Ns: ns, Graphs: splitList(c.String("graphs")), Syncs: splitList(c.String("syncs")),
				Rings: splitList(c.String("rings")), Trials: c.Int("trials"), Seed: c.Int64("seed"), Sim: c.Bool("sim"),
				Delta: c.Duration("delta")}
			if err := p.Validate(); err != nil {
				return cli.Exit("bench sync: "+err.Error(), ExitUnusable)
			}
			if p.Dir, err = benchDir(c, "sync"); err != nil {
				return err
			}
			cw, closeCSV, err := csvFlag(c, append(bench.SyncHeader, "dir"))
			if err != nil {
				return err
			}
			defer closeCSV()
			world := "real processes"
			if p.Sim {
				world = "the simulator"
			}
			fmt.Printf("sync: n %v; graphs %s; synchronizers %s; rings %s; %d trial(s); %s; runs in %s\n",
				ns, strings.Join(p.Graphs, ","), strings.Join(p.Syncs, ","), strings.Join(p.Rings, ","), p.Trials, world, p.Dir)
			fmt.Printf(syncFormat, anySlice(bench.SyncHeader)...)
			failed := 0
			var prog *bench.Progress
			p.Progress = func(done, total int, r bench.SyncRow) {
				if prog == nil {
					prog = bench.NewProgress(os.Stderr, "bench sync", total)
				}
				if !r.OK {
					failed++
				}
				fmt.Printf(syncFormat, anySlice(r.Cells())...)
				if cw != nil {
					cw.Write(append(r.Cells(), r.Dir))
					cw.Flush()
				}
				prog.Done(strings.TrimSpace(r.Algo + " " + r.Sync + " " + r.Graph))
			}
			if _, err := bench.Sync(c.Context, p); err != nil {
				return cli.Exit(fmt.Sprintf("bench sync: %v", err), ExitUnusable)
			}
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("%d runs did not pass (their directories are in %s)", failed, p.Dir), ExitViolation)
			}
			return nil
		},
	}
}

// syncFormat lays out bench.SyncHeader's columns (a row is printed as its run ends, so the widths
// are fixed rather than measured).
const syncFormat = "%-13s %-5s %-12s %4s %5s %6s %9s %9s %10s %8s %6s %7s %6s %5s %11s %9s  %s\n"
