package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/topology"
)

// scaleDuration is a scale run's length when --duration is not given: long enough for the worst
// case's n(n+1)/2 messages on two cores at the sizes the bench is for.
func scaleDuration(n int) time.Duration { return 3*time.Second + time.Duration(n)*4*time.Millisecond }

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
			"and the verdict. With --hosts the nodes run on the agents (the namespace lab), so the same table\n" +
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
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			algos, placements := splitList(c.String("algos")), splitList(c.String("ids"))
			for _, p := range placements {
				if _, err := topology.Place(2, p, 1); err != nil {
					return cli.Exit(fmt.Sprintf("--ids %q: %v", p, err), launcher.ExitUnusable)
				}
			}
			if c.Int("trials") < 1 {
				return cli.Exit(fmt.Sprintf("--trials %d: want 1 or more", c.Int("trials")), launcher.ExitUnusable)
			}
			dir, err := benchDir(c, "scale")
			if err != nil {
				return err
			}
			cw, closeCSV, err := csvFlag(c, scaleCSVHeader)
			if err != nil {
				return err
			}
			defer closeCSV()
			fmt.Printf("scale: %s; ids %s; initiators %s; n %v; %d trial(s) each; detector %v/%v × ceil(nodes per machine / %d); runs in %s\n",
				strings.Join(algos, ","), strings.Join(placements, ","), c.String("initiators"), ns, c.Int("trials"),
				launcher.DefaultConfig().Heartbeat, launcher.DefaultConfig().Timeout, launcher.NodesPerBeat, dir)
			fmt.Printf(scaleHeader, "algo", "ids", "n", "launch s", "ready s", "agree ms", "messages", "election/bound",
				"nodes MB", "node MB", "launcher MB", "CPU µs/msg", "suspicions", "verdict")
			failed := 0
			prog := bench.NewProgress(os.Stderr, "bench scale", len(algos)*len(placements)*len(ns)*c.Int("trials"))
			for _, algo := range algos {
				for _, ids := range placements {
					for _, n := range ns {
						for trial := range c.Int("trials") {
							cfg := launcher.DefaultConfig()
							cfg.Algo, cfg.Nodes, cfg.IDs, cfg.Initiators = algo, n, ids, c.String("initiators")
							cfg.Chaos = ""
							cfg.ScaleDetector = true // run's default detector pace (DESIGN: the detector's pace at scale)
							cfg.Duration = c.Duration("duration")
							if cfg.Duration == 0 {
								cfg.Duration = scaleDuration(n)
							}
							cfg.Seed, cfg.SeedSet = c.Int64("seed")+int64(trial), true
							cfg.Out = filepath.Join(dir, fmt.Sprintf("%s-%s-n%d-t%d", algo, ids, n, trial))
							cfg.Stdout, cfg.Progress = io.Discard, io.Discard
							cfg.Hosts, cfg.TokenFile = c.String("hosts"), c.String("token-file")
							code, err := launcher.Run(c.Context, cfg)
							prog.Done(fmt.Sprintf("%s n=%d", algo, n))
							if err != nil {
								fmt.Printf(scaleHeader, algo, ids, strconv.Itoa(n), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "unusable: "+firstLine(err.Error()))
								failed++
								continue
							}
							f, err := launcher.ReadFigures(cfg.Out)
							if err != nil {
								return cli.Exit(err.Error(), launcher.ExitUnusable)
							}
							if code != launcher.ExitOK {
								failed++
							}
							fmt.Printf(scaleHeader, anySlice(scaleRow(algo, ids, f))...)
							if cw != nil {
								cw.Write(scaleCSVRow(algo, ids, f, cfg.Out))
								cw.Flush()
							}
						}
					}
				}
			}
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("%d runs did not pass (their directories are in %s)", failed, dir), launcher.ExitViolation)
			}
			return nil
		},
	}
}

const scaleHeader = "%-14s %-9s %5s %9s %8s %9s %9s %15s %9s %8s %12s %11s %12s  %s\n"

var scaleCSVHeader = []string{"algo", "ids", "n", "launch_s", "ready_s", "agree_ms", "messages", "election_messages", "bound",
	"nodes_peak_mb", "node_peak_mb", "launcher_peak_mb", "cpu_us_per_message", "suspicions", "false_suspicions", "early_suspicions", "verdict", "dir"}

// scaleRow renders a run's figures as the table's columns.
func scaleRow(algo, ids string, f launcher.Figures) []string {
	mb := func(kb int64) string {
		if f.Remote {
			return "(hosts)"
		}
		return fmt.Sprintf("%.1f", float64(kb)/1024)
	}
	agree := "never"
	if f.Agreement > 0 {
		agree = fmt.Sprintf("%.1f", f.Agreement.Seconds()*1000)
	}
	bound := "-"
	if f.Bound > 0 {
		bound = strconv.Itoa(f.Bound)
	}
	cpu := "-"
	if !f.Remote && f.Messages > 0 {
		cpu = fmt.Sprintf("%.1f", float64(f.CPUPerMessage().Nanoseconds())/1000)
	}
	verdict := "PASS"
	if !f.OK {
		verdict = "FAIL"
	}
	return []string{algo, ids, strconv.Itoa(f.Nodes), fmt.Sprintf("%.2f", f.Launch.Seconds()), fmt.Sprintf("%.2f", f.Ready.Seconds()),
		agree, strconv.Itoa(f.Messages), fmt.Sprintf("%d/%s", f.Election, bound), mb(f.NodesPeakKB), mb(f.NodePeakKB),
		fmt.Sprintf("%.1f", float64(f.LauncherPeakKB)/1024), cpu,
		fmt.Sprintf("%d (%d false, %d early)", f.Suspicions, f.False, f.Early), verdict}
}

// scaleCSVRow is a run's CSV row (scaleCSVHeader): plain numbers, empty where there is none.
func scaleCSVRow(algo, ids string, f launcher.Figures, dir string) []string {
	num := func(ok bool, format string, x float64) string {
		if !ok {
			return ""
		}
		return fmt.Sprintf(format, x)
	}
	local := !f.Remote
	return []string{algo, ids, strconv.Itoa(f.Nodes), num(true, "%.3f", f.Launch.Seconds()), num(true, "%.3f", f.Ready.Seconds()),
		num(f.Agreement > 0, "%.1f", f.Agreement.Seconds()*1000), strconv.Itoa(f.Messages), strconv.Itoa(f.Election),
		num(f.Bound > 0, "%.0f", float64(f.Bound)), num(local, "%.1f", float64(f.NodesPeakKB)/1024), num(local, "%.1f", float64(f.NodePeakKB)/1024),
		num(true, "%.1f", float64(f.LauncherPeakKB)/1024), num(local && f.Messages > 0, "%.2f", float64(f.CPUPerMessage().Nanoseconds())/1000),
		strconv.Itoa(f.Suspicions), strconv.Itoa(f.False), strconv.Itoa(f.Early), strconv.FormatBool(f.OK), dir}
}

func anySlice(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
