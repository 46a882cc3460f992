package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
)

// `leaderlab bench scale`: what real clusters cost as N grows (bench.Scale).

func benchScaleCommand() *cli.Command {
	return &cli.Command{
		Name:  "scale",
		Usage: "launch, readiness, election time, messages, memory, CPU and false suspicions of real clusters as N grows",
		Description: "For every N of -n, algorithm of --algos and ID placement of --ids it makes --trials real runs\n" +
			"without chaos (`leaderlab run -a ALGO -n N --ids IDS --initiators I --chaos ''`), one at a time, and\n" +
			"prints a row per run as it ends: launch (first to last spawn), ready (first spawn to the last node\n" +
			"ready), agree (from the begin record to the first moment every node followed one leader), the\n" +
			"messages of the run and those of the first election against its bound, the nodes' memory (the sum\n" +
			"of their peak resident sets, and the largest; from each process's rusage at exit) and the\n" +
			"launcher's, the nodes' CPU time per message sent, the suspicions (false ones: of a node that ran\n" +
			"and was reachable through the whole timeout; early: of a node begun less than a timeout before)\n" +
			"and the verdict. With --hosts or --ssh-config the nodes run on SSH hosts (the namespace lab), so the same table\n" +
			"shows what more hosts buy; their memory and CPU are then the hosts' business. Exit 1 when a run\n" +
			"did not pass.",
		OnUsageError: usageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "n", Value: "64,128,256,512,1000,2000", Usage: "cluster sizes: a list, ranges allowed"},
			&cli.StringFlag{Name: "algos", Value: "chang-roberts", Usage: "comma-separated algorithms (see run --algo)"},
			&cli.StringFlag{Name: "ids", Value: "random", Usage: "comma-separated ID placements (see run --ids): ascending, descending, random, worst"},
			&cli.StringFlag{Name: "initiators", Value: "all", Usage: "who starts the first election (see run --initiators)"},
			&cli.IntFlag{Name: "trials", Value: 1, Usage: "runs per (algorithm, placement, N)"},
			&cli.DurationFlag{Name: "duration", Usage: "length of each run (default 3s + 4ms × N)"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of trial 0 (trial i: seed + i): the random placements"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV `FILE`"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs (default runs/bench-scale-<time>)"},
		}, benchHostFlags()...),
		Action: func(c *cli.Context) error {
			ns, err := parseNList(c.String("n"))
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			p := bench.ScalePlan{Algos: splitList(c.String("algos")), IDs: splitList(c.String("ids")), Initiators: c.String("initiators"),
				Ns: ns, Trials: c.Int("trials"), Duration: c.Duration("duration"), Seed: c.Int64("seed"),
				Hosts: c.String("hosts"), SSHConfig: c.String("ssh-config"), InsecureIgnoreHostKey: c.Bool("insecure-ignore-host-key")}
			if err := p.Validate(); err != nil {
				return cli.Exit(planFlags(err.Error(), scaleFlagOf), ExitUnusable)
			}
			if p.Dir, err = benchDir(c, "scale"); err != nil {
				return err
			}
			cw, closeCSV, err := csvFlag(c, bench.ScaleCSVHeader)
			if err != nil {
				return err
			}
			defer closeCSV()
			fmt.Printf("scale: %s; ids %s; initiators %s; n %v; %d trial(s) each; detector %v/%v × ceil(nodes per machine / %d); runs in %s\n",
				strings.Join(p.Algos, ","), strings.Join(p.IDs, ","), p.Initiators, ns, p.Trials,
				launcher.DefaultConfig().Heartbeat, launcher.DefaultConfig().Timeout, launcher.NodesPerBeat, p.Dir)
			noteDynamic(c, "scale")
			fmt.Printf(scaleFormat, anySlice(bench.ScaleHeader)...)
			failed := 0
			prog := bench.NewProgress(os.Stderr, "bench scale", len(p.Algos)*len(p.IDs)*len(p.Ns)*p.Trials)
			p.Progress = func(_, _ int, r bench.ScaleRow) {
				prog.Done(fmt.Sprintf("%s n=%d", r.Algo, r.N))
				if !r.Passed() {
					failed++
				}
				fmt.Printf(scaleFormat, anySlice(r.Cells())...)
				if cw != nil && r.Unusable == "" {
					cw.Write(r.CSV())
					cw.Flush()
				}
			}
			if _, err := bench.Scale(c.Context, p); err != nil {
				return cli.Exit(planFlags(err.Error(), scaleFlagOf), ExitUnusable)
			}
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("%d runs did not pass (their directories are in %s)", failed, p.Dir), ExitViolation)
			}
			return nil
		},
	}
}

// scaleFormat lays out bench.ScaleHeader's columns.
const scaleFormat = "%-14s %-9s %5s %9s %8s %9s %9s %15s %9s %8s %12s %11s %12s  %s\n"
