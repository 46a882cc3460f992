package cli

import (
	"encoding/csv"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/election"
)

// `leaderlab bench rsdp`: Toliupa et al.'s models of RSDP held against real clusters (bench.RSDP
// says what is measured and how).

// parseRSDPNs reads --n: cluster sizes 2..64, a list or ranges (bench.ParseNList).
func parseRSDPNs(s string) ([]int, error) {
	want := fmt.Sprintf("want sizes 2..%d such as %s", bench.RSDPMaxN, bench.RSDPDefaultNs)
	ns, err := bench.ParseNList(s)
	if err != nil {
		return nil, fmt.Errorf("--n: %v; %s", err, want)
	}
	if len(ns) == 0 {
		return nil, fmt.Errorf("--n: no cluster size given (%s)", want)
	}
	if n := ns[0]; n < 2 {
		return nil, fmt.Errorf("--n: %d is out of range (%s: a leader kill needs a survivor to detect it)", n, want)
	}
	if n := ns[len(ns)-1]; n > bench.RSDPMaxN {
		return nil, fmt.Errorf("--n: %d is out of range (%s)", n, want)
	}
	return ns, nil
}

func benchRSDPCommand() *cli.Command {
	return &cli.Command{
		Name:  "rsdp",
		Usage: "RSDP against Toliupa et al.'s models: detection time, consensus time and messages, health overhead, loss",
		Description: "Holds Toliupa et al.'s formulas against real clusters. For every --n, --modes and --detectors it runs --trials\n" +
			"clusters of N RSDP nodes with `at 1s kill leader` and measures: detect_ms (verdict.json's first\n" +
			"suspicion after the kill) against h/2N (eq. 12, mutual), h_o/2 (eq. 19, observer), h_o/2M (eq. 25,\n" +
			"observers); consensus_ms, session 1's first hello sent to last share received, against 3(d + t_p(N-1))\n" +
			"(eq. 3) with d (median message delay) and t_p (median hello -> status turnaround) measured in the same\n" +
			"run; consensus_msgs, session 1's hello+status+share sends, against 3N(N-1) (eq. 16); health_per_h,\n" +
			"probes per health interval over the run against N(N-1), N, M*N (eq. 17, 22, 28); agree_msgs, the\n" +
			"observers' agreement messages against 3M(M-1) (eq. 29).\n\n" +
			"With --loss p (> 0) it runs, for every mode and N, one longer cluster whose every ordered link loses p\n" +
			"of its messages, with a session every 200ms, and counts the sessions some replica did not complete\n" +
			"(p_fail_all, eq. 8) and those fewer than ceil(N/2) replicas completed (p_fail_vote, eq. 10-11).\n\n" +
			"Each row: measured, formula, ratio, trials and a note that says what was measured and where the\n" +
			"real protocol departs from the model. A run that fails is counted in its row's note. The runs stay in\n" +
			"--out. Exit 1 when some run could not be measured, 2 for bad flags.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "n", Value: bench.RSDPDefaultNs, Usage: "cluster sizes 2..64: a list, ranges allowed"},
			&cli.StringFlag{Name: "modes", Value: strings.Join(election.RSDPModes, ","), Usage: "comma-separated --rsdp-mode values: " + strings.Join(election.RSDPModes, ", ")},
			&cli.StringFlag{Name: "detectors", Value: strings.Join(bench.RSDPDetectors, ","), Usage: "comma-separated detectors: " + strings.Join(bench.RSDPDetectors, ", ")},
			&cli.IntFlag{Name: "observers", Value: 3, Usage: "M, the observer processes of the observers detector"},
			&cli.IntFlag{Name: "trials", Value: 3, Usage: "runs per (N, mode, detector)"},
			&cli.DurationFlag{Name: "health-interval", Value: 50 * time.Millisecond, Usage: "h and h_o (the mutual detector's h is raised for large N: at least N(N-1) x 300µs)"},
			&cli.Float64Flag{Name: "loss", Value: 0.05, Usage: "p_l of the loss runs, 0 <= p < 1 (0: no loss runs)"},
			&cli.BoolFlag{Name: "quick", Usage: "a smoke run: --n 3,5,9 --trials 1 --loss 0 unless given"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV file"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs", DefaultText: "runs/bench-rsdp-<time>"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("bench rsdp takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			ns, trials, loss := c.String("n"), c.Int("trials"), c.Float64("loss")
			if c.Bool("quick") {
				if !c.IsSet("n") {
					ns = "3,5,9"
				}
				if !c.IsSet("trials") {
					trials = 1
				}
				if !c.IsSet("loss") {
					loss = 0
				}
			}
			p := bench.RSDPPlan{
				Modes:          splitList(c.String("modes")),
				Detectors:      splitList(c.String("detectors")),
				Observers:      c.Int("observers"),
				Trials:         trials,
				HealthInterval: c.Duration("health-interval"),
				Loss:           loss,
			}
			var err error
			if p.Ns, err = parseRSDPNs(ns); err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			if err := p.Validate(); err != nil {
				return cli.Exit(planFlags(err.Error(), rsdpFlagOf), ExitUnusable)
			}
			if p.Dir, err = benchDir(c, "rsdp"); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			cw, closeCSV, err := csvFlag(c, bench.RSDPHeader)
			if err != nil {
				return err
			}
			defer closeCSV()
			failed, made, start := 0, 0, time.Now()
			p.Progress = func(r bench.RSDPRun) {
				made++
				status := "measured"
				if r.Failed != "" {
					failed++
					status = "FAILED: " + r.Failed
				}
				left := fmt.Sprintf(" [%d/%d runs%s]", made, p.Runs(), bench.TimeLeft(start, made, p.Runs()))
				if r.Detector == "" {
					fmt.Fprintf(os.Stderr, "bench rsdp: n=%d %s loss %g in %.1fs: %s%s\n", r.N, r.Mode, p.Loss, r.Elapsed.Seconds(), status, left)
				} else {
					fmt.Fprintf(os.Stderr, "bench rsdp: n=%d %s %s trial %d/%d in %.1fs: %s%s\n", r.N, r.Mode, r.Detector, r.Trial, p.Trials, r.Elapsed.Seconds(), status, left)
				}
			}
			p.Rows = func(rows []bench.RSDPRow) error { return printRSDPRows(rows, cw) }
			lossRuns := "no loss runs"
			if p.Loss > 0 {
				lossRuns = fmt.Sprintf("loss runs with p_l=%g", p.Loss)
			}
			fmt.Printf("rsdp: n %v; modes %s; detectors %s (M=%d); %d trial(s) each with the leader killed at %v + a phase uniform over h; h=h_o=%v; %s (runs in %s)\n",
				p.Ns, strings.Join(p.Modes, ","), strings.Join(p.Detectors, ","), p.Observers, p.Trials, bench.RSDPKillAt, p.HealthInterval, lossRuns, p.Dir)
			fmt.Printf(rsdpFormat, anySlice(bench.RSDPHeader)...)
			if _, err := bench.RSDP(ctx, p); err != nil {
				return cli.Exit(planFlags(err.Error(), rsdpFlagOf), ExitUnusable)
			}
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("%d run(s) could not be measured (see the notes; the runs are in %s)", failed, p.Dir), ExitViolation)
			}
			return nil
		},
	}
}

// rsdpFormat lays out bench.RSDPHeader's columns.
const rsdpFormat = "%-14s %3s %-8s %-9s %10s %10s %7s %6s  %s\n"

// printRSDPRows prints rows as they are measured, and writes them to the --csv file (cw, if any).
func printRSDPRows(rows []bench.RSDPRow, cw *csv.Writer) error {
	for _, r := range rows {
		fmt.Printf(rsdpFormat, anySlice(r.Cells())...)
		if cw != nil {
			cw.Write(r.Cells())
		}
	}
	if cw != nil {
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("--csv: %w", err)
		}
	}
	return nil
}
