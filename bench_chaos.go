package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// `leaderlab bench chaos`: issue 4's figure. Real clusters under the seeded nemesis, many runs per
// (algorithm, N), each judged by the checker; per cell the violations (and which properties
// failed), the split-brain time, the lost log lines (a recv with no send), the node processes left
// running after the run, and the checker's warnings. Every run stays in --out and replays with
// `leaderlab run --replay DIR`.

// chaosBenchConfig is one `bench chaos`: the grid, the nemesis, and where the results go.
type chaosBenchConfig struct {
	// Algos are the algorithms measured (registered names).
	Algos []string
	// Ns are the cluster sizes, ascending.
	Ns []int
	// Runs is the number of runs per (algorithm, N) cell.
	Runs int
	// Nemesis is the comma-separated fault kinds (chaos.NemesisKinds); Interval the nemesis's mean
	// gap and hold; Duration the length of each run.
	Nemesis  string
	Interval time.Duration
	Duration time.Duration
	// Seed is the base seed: run i of every cell has seed Seed+i.
	Seed int64
	// CSV, when set, receives one row per cell as it is measured.
	CSV string
	// Out holds every run, one directory each.
	Out string
	// Sim makes the runs in the simulator (run --sim): the node's code in virtual time.
	Sim bool
}

// chaosBenchAlgorithms is Bully, every registered ring algorithm, and RSDP.
func chaosBenchAlgorithms() []string {
	out := []string{"bully"}
	for _, a := range complexityAlgorithms() {
		if a != "bully" {
			out = append(out, a)
		}
	}
	return append(out, "rsdp")
}

// validate names the first bad value and what would be accepted.
func (c *chaosBenchConfig) validate() error {
	for _, a := range c.Algos {
		if _, err := election.Lookup(a); err != nil {
			return fmt.Errorf("--algos: %w", err)
		}
	}
	if len(c.Algos) == 0 {
		return fmt.Errorf("--algos: no algorithm given (accepted: %s)", strings.Join(election.Names(), ", "))
	}
	if len(c.Ns) == 0 {
		return errors.New("--n: no cluster size given (want a list such as 5,8,12,16 or a range such as 5-16)")
	}
	for _, n := range c.Ns {
		if n < 2 || n > launcher.MaxNodes {
			return fmt.Errorf("--n %d: want 2..%d (the nemesis needs a node to fault and one to stay up)", n, launcher.MaxNodes)
		}
	}
	if _, err := chaos.ParseNemesisKinds(c.Nemesis); err != nil {
		return fmt.Errorf("--nemesis: %w", err)
	}
	switch {
	case c.Runs < 1:
		return fmt.Errorf("--runs %d: want at least 1", c.Runs)
	case c.Interval <= 0:
		return fmt.Errorf("--nemesis-interval %v: want a positive duration such as 500ms", c.Interval)
	case c.Duration <= 0:
		return fmt.Errorf("--duration %v: want a positive duration such as 6s", c.Duration)
	}
	return nil
}

// parseNList reads --n of the bench commands: sizes and ranges, "5,8,12,16" or "5-16".
func parseNList(s string) ([]int, error) {
	var out []int
	bad := func(f string) error {
		return fmt.Errorf("--n: %q is not a cluster size or a range (want a list such as 5,8,12,16 or 5-16)", f)
	}
	for _, f := range splitList(s) {
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, bad(f)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, bad(f)
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func benchChaosCommand() *cli.Command {
	d := chaosBenchConfig{Runs: 20, Nemesis: strings.Join(chaos.NemesisKinds, ","), Interval: 500 * time.Millisecond, Duration: 6 * time.Second, Seed: 1}
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
			"others are judged in memory). Exit 1 when a run had a violation or left an orphan, 2 for bad flags or\n" +
			"a run that could not be made for a reason of configuration.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "algos", Usage: "comma-separated algorithms", DefaultText: strings.Join(chaosBenchAlgorithms(), ",")},
			&cli.StringFlag{Name: "n", Value: "5,8,12,16", Usage: "cluster sizes: a list, ranges allowed (5-16)"},
			&cli.IntFlag{Name: "runs", Value: d.Runs, Usage: "runs per (algorithm, N)"},
			&cli.StringFlag{Name: "nemesis", Value: d.Nemesis, Usage: "fault kinds the nemesis draws from: " + strings.Join(chaos.NemesisKinds, ", ")},
			&cli.DurationFlag{Name: "nemesis-interval", Value: d.Interval, Usage: "the nemesis's mean gap between faults and mean fault length"},
			&cli.DurationFlag{Name: "duration", Value: d.Duration, Usage: "length of each run (the last 1s is the settle window)"},
			&cli.Int64Flag{Name: "seed", Value: d.Seed, Usage: "base seed: run i of each cell has seed base+i"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV file"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs", DefaultText: "runs/bench-chaos-<time>"},
			&cli.BoolFlag{Name: "sim", Usage: "make the runs in the simulator (run --sim): the nodes' own code in virtual time, thousands of runs a minute"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("bench chaos takes no arguments, got %q", c.Args().Slice()), launcher.ExitUnusable)
			}
			cfg := chaosBenchConfig{
				Algos:    splitList(c.String("algos")),
				Runs:     c.Int("runs"),
				Nemesis:  c.String("nemesis"),
				Interval: c.Duration("nemesis-interval"),
				Duration: c.Duration("duration"),
				Seed:     c.Int64("seed"),
				CSV:      c.String("csv"),
				Sim:      c.Bool("sim"),
			}
			if !c.IsSet("algos") {
				cfg.Algos = chaosBenchAlgorithms()
			}
			var err error
			if cfg.Ns, err = parseNList(c.String("n")); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if err := cfg.validate(); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if cfg.Out, err = benchDir(c, "chaos"); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			cells, failed, orphans, err := runChaosBench(ctx, cfg, os.Stdout, os.Stderr)
			if len(cells) > 0 {
				page, perr := writeChaosPage(cfg, cells)
				if perr != nil && err == nil {
					return cli.Exit(fmt.Sprintf("page: %v", perr), launcher.ExitUnusable)
				}
				if perr == nil {
					fmt.Printf("page: %s\n", page)
				}
			}
			switch {
			case err != nil:
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			case failed > 0 || orphans > 0:
				return cli.Exit(fmt.Sprintf("%d failing runs, %d node processes that outlived their run (directories above)", failed, orphans), launcher.ExitViolation)
			}
			return nil
		},
	}
}

// chaosRun is what one run gave.
type chaosRun struct {
	Dir          string
	Seed         int64
	OK           bool
	Limit        bool     // it failed only under the algorithm's documented limits
	Failed       []string // names of the failed properties, or why the run has no verdict
	Why          string   // the first failed property's detail
	SplitBrainMS float64
	Lost         int   // recvs with no send
	Orphans      []int // pids of the run's node processes alive after the launcher returned
	Warnings     int
}

// chaosCell sums the runs of one (algorithm, N).
type chaosCell struct {
	Algo                 string
	N, Runs, Violations  int
	Expected             int // failing runs that broke only the algorithm's documented limits
	ByProp               map[string]int
	SplitSum, SplitMax   float64
	Lost, Orphans, Warns int
	Failing              []chaosRun
}

func (c *chaosCell) add(r chaosRun) {
	c.Runs++
	if !r.OK && r.Limit {
		c.Expected++
		c.Failing = append(c.Failing, r)
		return
	}
	if !r.OK {
		c.Violations++
		c.Failing = append(c.Failing, r)
	} else if len(r.Orphans) > 0 {
		c.Failing = append(c.Failing, r)
	}
	for _, p := range r.Failed {
		c.ByProp[p]++
	}
	c.SplitSum += r.SplitBrainMS
	c.SplitMax = max(c.SplitMax, r.SplitBrainMS)
	c.Lost += r.Lost
	c.Orphans += len(r.Orphans)
	c.Warns += r.Warnings
}

func (c *chaosCell) merge(o *chaosCell) {
	c.Runs += o.Runs
	c.Violations += o.Violations
	c.Expected += o.Expected
	for p, k := range o.ByProp {
		c.ByProp[p] += k
	}
	c.SplitSum += o.SplitSum
	c.SplitMax = max(c.SplitMax, o.SplitMax)
	c.Lost += o.Lost
	c.Orphans += o.Orphans
	c.Warns += o.Warns
}

// props is "agreement×2,uniqueness×1", or "-".
func (c *chaosCell) props() string {
	if len(c.ByProp) == 0 {
		return "-"
	}
	var s []string
	for _, p := range slices.Sorted(maps.Keys(c.ByProp)) {
		s = append(s, fmt.Sprintf("%s×%d", p, c.ByProp[p]))
	}
	return strings.Join(s, ",")
}

const chaosHeader = "%-20s %3s %5s %10s %9s %15s %10s %5s %7s %8s  %s\n"

func (c *chaosCell) print(w io.Writer, algo, n string) {
	fmt.Fprintf(w, chaosHeader, algo, n, strconv.Itoa(c.Runs), strconv.Itoa(c.Violations), strconv.Itoa(c.Expected),
		strconv.FormatFloat(c.SplitSum, 'f', 1, 64), strconv.FormatFloat(c.SplitMax, 'f', 1, 64),
		strconv.Itoa(c.Lost), strconv.Itoa(c.Orphans), strconv.Itoa(c.Warns), c.props())
}

// runChaosBench measures the grid, cell by cell, printing each row as it is measured. It returns
// the cells measured (for the page; those before an error when there is one), the number of
// failing runs and of orphan processes.
func runChaosBench(ctx context.Context, cfg chaosBenchConfig, w, progress io.Writer) (cells []bench.ChaosCell, failed, orphans int, err error) {
	var cw *csv.Writer
	if cfg.CSV != "" {
		f, err := os.Create(cfg.CSV)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("--csv: %w", err)
		}
		defer f.Close()
		cw = csv.NewWriter(f)
		cw.Write([]string{"algo", "n", "runs", "violations", "expected_limit", "failed_properties", "split_brain_ms_sum", "split_brain_ms_max",
			"lost_lines", "orphans", "warnings", "failing_runs"})
		defer cw.Flush()
	}
	fmt.Fprintf(w, "chaos: %s; n %v; %d runs each of %v; --nemesis %s --nemesis-interval %v --nemesis-restart; seeds %d..%d; runs in %s\n",
		strings.Join(cfg.Algos, ","), cfg.Ns, cfg.Runs, cfg.Duration, cfg.Nemesis, cfg.Interval, cfg.Seed, cfg.Seed+int64(cfg.Runs)-1, cfg.Out)
	fmt.Fprintf(w, chaosHeader, "algo", "n", "runs", "violations", "expected", "split-brain ms", "max ms", "lost", "orphans", "warnings", "failed properties")
	total := chaosCell{ByProp: map[string]int{}}
	tty := isTerminal(progress)
	all, start, before := len(cfg.Algos)*len(cfg.Ns)*cfg.Runs, time.Now(), 0
	for _, algo := range cfg.Algos {
		for _, n := range cfg.Ns {
			cell := chaosCell{Algo: algo, N: n, ByProp: map[string]int{}}
			runs, err := chaosCellRuns(ctx, cfg, algo, n, func(done int) {
				if tty {
					fmt.Fprintf(progress, "\r%s n=%d: run %d/%d%s\x1b[K", algo, n, done, cfg.Runs, timeLeft(start, before+done, all))
				}
			})
			before += cfg.Runs
			if tty {
				fmt.Fprint(progress, "\r\x1b[K")
			} else {
				fmt.Fprintf(progress, "bench chaos: %d/%d runs (%s n=%d done)%s\n", before, all, algo, n, timeLeft(start, before, all))
			}
			if err != nil {
				total.print(w, "total (so far)", "")
				return cells, total.Violations, total.Orphans, err
			}
			for _, r := range runs {
				cell.add(r)
			}
			cells = append(cells, pageCell(algo, n, runs))
			cell.print(w, algo, strconv.Itoa(n))
			var dirs []string
			for _, r := range cell.Failing {
				dirs = append(dirs, r.Dir)
				what := strings.Join(r.Failed, ",")
				if len(r.Orphans) > 0 {
					what = strings.TrimPrefix(what+fmt.Sprintf(",orphans %v", r.Orphans), ",")
				}
				mark := "FAIL"
				if r.Limit {
					mark = "LIMIT"
				}
				fmt.Fprintf(w, "    %s seed %d %s: %s", mark, r.Seed, r.Dir, what)
				if r.Why != "" {
					fmt.Fprintf(w, " (%s)", r.Why)
				}
				fmt.Fprintln(w)
			}
			total.merge(&cell)
			if cw != nil {
				cw.Write([]string{algo, strconv.Itoa(n), strconv.Itoa(cell.Runs), strconv.Itoa(cell.Violations), strconv.Itoa(cell.Expected), cell.props(),
					strconv.FormatFloat(cell.SplitSum, 'f', 3, 64), strconv.FormatFloat(cell.SplitMax, 'f', 3, 64),
					strconv.Itoa(cell.Lost), strconv.Itoa(cell.Orphans), strconv.Itoa(cell.Warns), strings.Join(dirs, " ")})
				cw.Flush()
				if err := cw.Error(); err != nil {
					return cells, total.Violations, total.Orphans, fmt.Errorf("--csv: %w", err)
				}
			}
		}
	}
	total.print(w, "total", "")
	if total.Violations+total.Orphans > 0 {
		fmt.Fprintln(w, "replay a failing run with: leaderlab run --replay DIR")
	}
	return cells, total.Violations, total.Orphans, nil
}

// pageCell is a cell's runs as the page takes them.
func pageCell(algo string, n int, runs []chaosRun) bench.ChaosCell {
	c := bench.ChaosCell{Algo: algo, N: n}
	for _, r := range runs {
		c.Runs = append(c.Runs, bench.ChaosRun{Seed: r.Seed, Dir: r.Dir, OK: r.OK, Limit: r.Limit, Failed: r.Failed, Why: r.Why,
			SplitBrainMS: r.SplitBrainMS, Lost: r.Lost, Orphans: len(r.Orphans), Warnings: r.Warnings})
	}
	return c
}

// writeChaosPage writes OUT/index.html: per (algorithm, N) the violations, the runs that failed
// only under declared limits, the split-brain time, and a link to every run written.
func writeChaosPage(cfg chaosBenchConfig, cells []bench.ChaosCell) (string, error) {
	world := "real processes"
	if cfg.Sim {
		world = "simulated (only the runs that did not pass are written)"
	}
	ns := make([]string, len(cfg.Ns))
	for i, n := range cfg.Ns {
		ns[i] = strconv.Itoa(n)
	}
	head := bench.Page{
		Title:   "bench chaos: " + strings.Join(cfg.Algos, ", "),
		Command: bench.ShellJoin(os.Args),
		Config: []bench.KV{
			{Key: "algorithms", Value: strings.Join(cfg.Algos, ", ")},
			{Key: "n", Value: strings.Join(ns, ", ")},
			{Key: "runs per cell", Value: strconv.Itoa(cfg.Runs)},
			{Key: "nemesis", Value: fmt.Sprintf("%s, interval %v, nodes restarted after their faults", cfg.Nemesis, cfg.Interval)},
			{Key: "duration", Value: fmt.Sprintf("%v per run (the last 1s is the settle window)", cfg.Duration)},
			{Key: "seeds", Value: fmt.Sprintf("%d..%d (run i has seed %d+i)", cfg.Seed, cfg.Seed+int64(cfg.Runs)-1, cfg.Seed)},
			{Key: "world", Value: world},
			{Key: "runs in", Value: cfg.Out},
		},
		Notes: []string{"Replay any run with: leaderlab run --replay DIR"},
	}
	measured := 0
	for _, c := range cells {
		measured += len(c.Runs)
	}
	if want := len(cfg.Algos) * len(cfg.Ns) * cfg.Runs; measured < want {
		head.Notes = append(head.Notes, fmt.Sprintf("Interrupted: %d of %d runs measured.", measured, want))
	}
	return bench.WritePage(cfg.Out, bench.ChaosPage(cfg.Out, head, cells))
}

// chaosCellRuns makes the runs of one (algorithm, N) cell, in seed order. Real runs are made one at
// a time (clusters side by side would starve each other's heartbeats); simulated ones, which share
// nothing and depend on no clock, on every core at once. progress is told how many are done.
func chaosCellRuns(ctx context.Context, cfg chaosBenchConfig, algo string, n int, progress func(done int)) ([]chaosRun, error) {
	out := make([]chaosRun, cfg.Runs)
	workers := 1
	if cfg.Sim {
		workers = min(runtime.GOMAXPROCS(0), cfg.Runs)
	}
	var (
		mu    sync.Mutex
		done  int
		first error
		next  = make(chan int)
		wg    sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r, err := chaosBenchRun(ctx, cfg, algo, n, cfg.Seed+int64(i))
				mu.Lock()
				out[i] = r
				done++
				if err != nil && first == nil {
					first = err
				}
				progress(done)
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < cfg.Runs; i++ {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	return out, first
}

// chaosBenchRun makes one run and reads what it gave. An error is a run that could not be made for
// a reason that would stop every run (bad configuration, an interruption); a run that was made but
// not judged (a node that never came up) is a failing run.
func chaosBenchRun(ctx context.Context, cfg chaosBenchConfig, algo string, n int, seed int64) (chaosRun, error) {
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = algo, n
	lc.Chaos = ""
	lc.Nemesis, lc.NemesisInterval, lc.NemesisRestart = cfg.Nemesis, cfg.Interval, true
	lc.Duration = cfg.Duration
	lc.Seed, lc.SeedSet = seed, true
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("%s-n%d-seed%d", algo, n, seed))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	lc.Sim = cfg.Sim
	r := chaosRun{Dir: lc.Out, Seed: seed}
	if cfg.Sim {
		return simChaosRun(lc, r)
	}
	dir, code, err := launcher.RunDir(ctx, lc)
	if dir == "" || ctx.Err() != nil {
		return r, fmt.Errorf("%s with %d nodes, seed %d: %w", algo, n, seed, err)
	}
	if !cfg.Sim {
		r.Orphans = orphanNodes(dir)
	}
	for _, pid := range r.Orphans {
		_ = syscall.Kill(pid, syscall.SIGKILL) // so that the next run starts clean
	}
	if err != nil {
		r.Failed, r.Why = []string{"not made"}, err.Error()
		return r, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
	var v logs.Verdict
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		r.Failed, r.Why = []string{"no verdict"}, err.Error()
		return r, nil
	}
	r.judged(&v)
	if !r.OK && len(r.Failed) == 0 {
		r.Failed = []string{"exit " + strconv.Itoa(code)}
	}
	run, err := logs.ReadRun(dir)
	if err == nil {
		r.Lost = lostLines(run)
	} else {
		r.OK = false
		r.Failed = append(r.Failed, "logs unreadable")
		r.Why = strings.TrimPrefix(r.Why+"; "+err.Error(), "; ")
	}
	return r, nil
}

// simChaosRun makes one run in the simulator and judges it in memory; only a run that did not pass
// is written into its directory (a sweep of thousands keeps the ones worth replaying).
func simChaosRun(lc launcher.Config, r chaosRun) (chaosRun, error) {
	s, err := launcher.Simulate(lc)
	if err != nil {
		r.Failed, r.Why = []string{"not made"}, err.Error()
		return r, nil
	}
	r.judged(s.Verdict)
	r.Lost = lostLines(s.Run)
	if !r.OK || r.Lost > 0 {
		if err := s.WriteDir(r.Dir); err != nil {
			return r, err
		}
	}
	return r, nil
}

// judged fills in what the verdict says of the run.
func (r *chaosRun) judged(v *logs.Verdict) {
	r.OK = v.OK
	r.Limit = !v.OK && v.OnlyLimits()
	r.SplitBrainMS, r.Warnings = v.Metrics.SplitBrainMS, len(v.Warnings)
	for _, p := range v.Properties {
		if !p.OK {
			r.Failed = append(r.Failed, p.Name)
			if r.Why == "" {
				r.Why = p.Name + ": " + p.Detail
			}
		}
	}
}

// lostLines counts the recvs of a run that no send in its logs matches by msg.id: lines lost from
// the sender's log (a send is logged before its frame is written, so there should be none). It
// reads the logs itself rather than trusting the checker's integrity detail.
func lostLines(run *logs.Run) int {
	sent := map[string]bool{}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && e.Msg != nil {
				sent[e.Msg.ID] = true
			}
		}
	}
	lost := 0
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Ev == logs.EvRecv && e.Msg != nil && !sent[e.Msg.ID] {
				lost++
			}
		}
	}
	return lost
}

// orphanNodes lists the live processes of `leaderlab node --run DIR` for this run directory, from
// /proc (zombies do not count: they hold nothing but a table slot).
func orphanNodes(dir string) []int {
	want, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) < 4 || args[1] != "node" || args[2] != "--run" {
			continue
		}
		if got, err := filepath.Abs(args[3]); err != nil || got != want {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}

// isTerminal tells whether w is a character device (a terminal), where a progress line may be
// rewritten in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// timeLeft is ", about 1m10s to go" after done of all runs begun at start ("" when none is left).
func timeLeft(start time.Time, done, all int) string {
	if done == 0 || done >= all {
		return ""
	}
	return fmt.Sprintf(", about %s to go", (time.Since(start) / time.Duration(done) * time.Duration(all-done)).Round(time.Second))
}
