package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// `leaderlab bench complexity`: every ring algorithm's messages per election against its bound, and
// its time to elect, by N (bench.Complexity).

// complexityAlgorithms are the ring algorithms (bench chaos measures them too).
func complexityAlgorithms() []string { return bench.RingAlgorithms() }

func benchComplexityCommand() *cli.Command {
	return &cli.Command{
		Name:  "complexity",
		Usage: "messages per election of every ring algorithm against its bound, and the time to elect, by N",
		Description: "Seed 003 proposes comparing the coordination algorithms' times for a given number of processes; this\n" +
			"is that comparison made real, with the message counts held against each algorithm's bound (issue 3).\n" +
			"For every ring algorithm, ring size N, ID placement and initiator set it measures one clean election:\n" +
			"its election messages, its announcement messages, the bound on both, the ratio (messages + announce) /\n" +
			"bound, and the time from the cluster's begin until every node follows the leader.\n\n" +
			"Up to --real-max nodes the driver is real processes: `leaderlab run` with an empty chaos schedule and a\n" +
			"short duration, the first election read from the run's verdict.json (the runs stay in --out). Beyond,\n" +
			"up to --mem-max, it is the in-memory simulator: the same state machines, links of 1-5ms of virtual time,\n" +
			"no failure detector; its times are virtual. The driver column says which measured a row. Rows are printed\n" +
			"as they are measured, and written to --csv as well. Exit 1 when an election did not end with every node\n" +
			"following the highest ID or cost more than its bound, 2 for bad flags or a run that could not be made.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "algos", Usage: "comma-separated ring algorithms to measure", DefaultText: "every ring algorithm: " + strings.Join(bench.RingAlgorithms(), ",")},
			&cli.StringFlag{Name: "n", Value: bench.ComplexityDefaultNs, Usage: "comma-separated ring sizes"},
			&cli.StringFlag{Name: "placements", Value: "worst,random,ascending", Usage: "comma-separated ID placements: " + strings.Join(topology.Placements, ", ")},
			&cli.StringFlag{Name: "initiators", Value: "all,one", Usage: "comma-separated initiator sets: all, one (the lowest ID)"},
			&cli.IntFlag{Name: "real-max", Value: 64, Usage: "the largest N measured with real processes (a 256-node run takes a while); 0 for none"},
			&cli.IntFlag{Name: "mem-max", Value: sim.MaxNodes, Usage: "the largest N measured in memory, beyond --real-max"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of the random placement and of the in-memory delays"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV file"},
			&cli.StringFlag{Name: "out", Usage: "directory for the real runs", DefaultText: "runs/bench-complexity-<time>"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("bench complexity takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			p := bench.ComplexityPlan{
				Algos:      splitList(c.String("algos")),
				Placements: splitList(c.String("placements")),
				Initiators: splitList(c.String("initiators")),
				RealMax:    c.Int("real-max"),
				MemMax:     c.Int("mem-max"),
				Seed:       c.Int64("seed"),
				Dir:        c.String("out"),
			}
			if !c.IsSet("algos") {
				p.Algos = bench.RingAlgorithms()
			}
			var err error
			if p.Ns, err = parseNList(c.String("n")); err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			if err := p.Validate(); err != nil {
				return cli.Exit(planFlags(err.Error(), complexityFlagOf), ExitUnusable)
			}
			// the directory is made when a real run is due
			if p.Dir == "" {
				p.Dir = filepath.Join("runs", "bench-complexity-"+time.Now().UTC().Format("20060102T150405Z"))
			}
			ctx, stop := signalContext()
			defer stop()
			cw, closeCSV, err := csvFlag(c, bench.ComplexityCSVHeader)
			if err != nil {
				return err
			}
			defer closeCSV()
			fmt.Printf("complexity: %s; n %v; ids %s; initiators %s; real processes up to n=%d (runs in %s), in memory up to n=%d; seed %d\n",
				strings.Join(p.Algos, ","), p.Ns, strings.Join(p.Placements, ","), strings.Join(p.Initiators, ","),
				p.RealMax, p.Dir, p.MemMax, p.Seed)
			fmt.Printf(complexityFormat, anySlice(bench.ComplexityHeader)...)
			failed, inconclusive := 0, 0
			var prog *bench.Progress
			p.Progress = func(_, total int, r bench.ComplexityRow) error {
				if prog == nil {
					prog = bench.NewProgress(os.Stderr, "bench complexity", total)
				}
				prog.Done(fmt.Sprintf("%s n=%d %s", r.Algo, r.N, r.Driver))
				switch {
				case !r.OK && r.Inconclusive:
					inconclusive++
				case !r.OK:
					failed++
				}
				fmt.Printf(complexityFormat, anySlice(r.Cells())...)
				if cw != nil {
					cw.Write(r.CSV())
					cw.Flush()
					if err := cw.Error(); err != nil {
						return fmt.Errorf("--csv: %w", err)
					}
				}
				return nil
			}
			if _, err := bench.Complexity(ctx, p); err != nil {
				return cli.Exit(planFlags(err.Error(), complexityFlagOf), ExitUnusable)
			}
			switch {
			case failed > 0:
				return cli.Exit(fmt.Sprintf("%d of the elections did not end well (see the ok column)", failed), ExitViolation)
			case inconclusive > 0:
				return cli.Exit(fmt.Sprintf("%d of the runs ended while still electing: inconclusive, the machine fell behind (see the ok column)", inconclusive), ExitInconclusive)
			}
			return nil
		},
	}
}

// complexityFormat lays out bench.ComplexityHeader's columns.
const complexityFormat = "%-20s %5s %-9s %-4s %-6s %9s %8s %9s %7s %10s  %s\n"
