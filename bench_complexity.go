package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// `leaderlab bench complexity`: issue 3's table of message complexity against the theory, and of
// time to elect, for every ring algorithm by number of processes (seed 003's proposed comparison).
// Small rings are real clusters (launcher.Run, the first election read from verdict.json); larger
// ones run in the in-memory simulator, whose time is virtual. Each row says which.

// complexityConfig is one `bench complexity`: the grid it measures and where it puts the results.
type complexityConfig struct {
	// Algos are the ring algorithms to measure (registered, running on ring or biring).
	Algos []string
	// Ns are the ring sizes, each 1..max(RealMax, MemMax).
	Ns []int
	// Placements are --ids values: ascending, descending, random, worst.
	Placements []string
	// Initiators are --initiators values: all, one.
	Initiators []string
	// RealMax is the largest N measured with real processes (0: none); MemMax the largest measured in
	// memory, beyond RealMax (0..sim.MaxNodes).
	RealMax, MemMax int
	// Seed seeds the random placement and, in memory, the links' delays.
	Seed int64
	// CSV, when set, is a file that receives every row as it is measured.
	CSV string
	// Out is the directory of the real runs (made only when a real run is due).
	Out string
}

// complexityDefaultNs are the ring sizes measured by default: the up to 256, and beyond
// with the in-memory driver.
const complexityDefaultNs = "4,8,16,32,64,128,256,512,1024,2048,4096"

// complexityAlgorithms lists the registered asynchronous algorithms that run on a one-way or two-way
// ring (FloodMax runs on a two-way ring too, but its bound is bench sync's business).
func complexityAlgorithms() []string {
	var out []string
	for _, name := range election.Names() {
		a, _ := election.Lookup(name)
		if !a.Synchronous && (slices.Contains(a.Topologies, "ring") || slices.Contains(a.Topologies, "biring")) {
			out = append(out, name)
		}
	}
	return out
}

// validate names the first bad value and what would be accepted.
func (c *complexityConfig) validate() error {
	rings := complexityAlgorithms()
	if len(c.Algos) == 0 {
		return fmt.Errorf("--algos: no algorithm given (accepted: %s)", strings.Join(rings, ", "))
	}
	for _, a := range c.Algos {
		if _, err := election.Lookup(a); err != nil {
			return fmt.Errorf("--algos: unknown algorithm %q (accepted: %s)", a, strings.Join(rings, ", "))
		}
		if !slices.Contains(rings, a) {
			return fmt.Errorf("--algos: %s does not run on a ring (accepted: %s)", a, strings.Join(rings, ", "))
		}
	}
	switch {
	case c.RealMax < 0 || c.RealMax > launcher.MaxNodes:
		return fmt.Errorf("--real-max %d: want 0..%d (0: no real runs)", c.RealMax, launcher.MaxNodes)
	case c.MemMax < 0 || c.MemMax > sim.MaxNodes:
		return fmt.Errorf("--mem-max %d: want 0..%d (0: nothing in memory)", c.MemMax, sim.MaxNodes)
	case len(c.Ns) == 0:
		return fmt.Errorf("--n: no ring size given (want a list such as %s)", complexityDefaultNs)
	}
	top := max(c.RealMax, c.MemMax)
	for _, n := range c.Ns {
		if n < 1 || n > top {
			return fmt.Errorf("--n %d: want 1..%d (the larger of --real-max %d and --mem-max %d)", n, top, c.RealMax, c.MemMax)
		}
	}
	for _, p := range c.Placements {
		if !slices.Contains(topology.Placements, p) {
			return fmt.Errorf("--placements: unknown placement %q (accepted: %s)", p, strings.Join(topology.Placements, ", "))
		}
	}
	if len(c.Placements) == 0 {
		return fmt.Errorf("--placements: none given (accepted: %s)", strings.Join(topology.Placements, ", "))
	}
	for _, i := range c.Initiators {
		if i != "all" && i != "one" {
			return fmt.Errorf("--initiators: unknown initiator set %q (accepted: all, one)", i)
		}
	}
	if len(c.Initiators) == 0 {
		return errors.New("--initiators: none given (accepted: all, one)")
	}
	return nil
}

// splitList splits a comma-separated flag value, dropping blanks and repeats.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

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
			&cli.StringFlag{Name: "algos", Usage: "comma-separated ring algorithms to measure", DefaultText: "every ring algorithm: " + strings.Join(complexityAlgorithms(), ",")},
			&cli.StringFlag{Name: "n", Value: complexityDefaultNs, Usage: "comma-separated ring sizes"},
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
				return cli.Exit(fmt.Sprintf("bench complexity takes no arguments, got %q", c.Args().Slice()), launcher.ExitUnusable)
			}
			cfg := complexityConfig{
				Algos:      splitList(c.String("algos")),
				Placements: splitList(c.String("placements")),
				Initiators: splitList(c.String("initiators")),
				RealMax:    c.Int("real-max"),
				MemMax:     c.Int("mem-max"),
				Seed:       c.Int64("seed"),
				CSV:        c.String("csv"),
				Out:        c.String("out"),
			}
			if !c.IsSet("algos") {
				cfg.Algos = complexityAlgorithms()
			}
			var err error
			if cfg.Ns, err = parseNList(c.String("n")); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if err := cfg.validate(); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if cfg.Out == "" {
				cfg.Out = filepath.Join("runs", "bench-complexity-"+time.Now().UTC().Format("20060102T150405Z"))
			}
			ctx, stop := signalContext()
			defer stop()
			failed, err := runComplexity(ctx, cfg, os.Stdout)
			switch {
			case err != nil:
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			case failed > 0:
				return cli.Exit(fmt.Sprintf("%d of the elections did not end well (see the ok column)", failed), launcher.ExitViolation)
			}
			return nil
		},
	}
}

// complexityRow is one measured election.
type complexityRow struct {
	Algo, IDs, Initiators string
	N                     int
	Driver                string // "real" or "memory"
	Messages, Announce    int
	Bound                 int // -1: the algorithm states none
	ElectMS               float64
	OK                    bool
	Detail                string // why not OK
	Run                   string // the run directory of a real run
}

func (r *complexityRow) ratio() string {
	if r.Bound <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(r.Messages+r.Announce)/float64(r.Bound))
}

func (r *complexityRow) bound() string {
	if r.Bound < 0 {
		return "-"
	}
	return strconv.Itoa(r.Bound)
}

func (r *complexityRow) ok() string {
	if r.OK {
		return "ok"
	}
	return "FAIL: " + r.Detail
}

const complexityHeader = "%-20s %5s %-9s %-4s %-6s %9s %8s %9s %7s %10s  %s\n"

// runComplexity measures the grid, N by N, and prints each row as it is measured; it returns how
// many rows failed.
func runComplexity(ctx context.Context, cfg complexityConfig, w io.Writer) (failed int, err error) {
	var cw *csv.Writer
	if cfg.CSV != "" {
		f, err := os.Create(cfg.CSV)
		if err != nil {
			return 0, fmt.Errorf("--csv: %w", err)
		}
		defer f.Close()
		cw = csv.NewWriter(f)
		cw.Write([]string{"algo", "n", "ids", "initiators", "driver", "messages", "announce", "bound", "ratio", "elect_ms", "ok", "detail", "run"})
		defer cw.Flush()
	}
	fmt.Fprintf(w, "complexity: %s; n %v; ids %s; initiators %s; real processes up to n=%d (runs in %s), in memory up to n=%d; seed %d\n",
		strings.Join(cfg.Algos, ","), cfg.Ns, strings.Join(cfg.Placements, ","), strings.Join(cfg.Initiators, ","),
		cfg.RealMax, cfg.Out, cfg.MemMax, cfg.Seed)
	fmt.Fprintf(w, complexityHeader, "algo", "n", "ids", "init", "driver", "messages", "announce", "bound", "ratio", "elect ms", "ok")
	for _, n := range cfg.Ns {
		for _, ids := range cfg.Placements {
			for _, inits := range cfg.Initiators {
				for _, algo := range cfg.Algos {
					if ctx.Err() != nil {
						return failed, errors.New("interrupted")
					}
					var row complexityRow
					if n <= cfg.RealMax {
						row, err = measureReal(ctx, cfg, algo, n, ids, inits)
					} else {
						row, err = measureMemory(cfg, algo, n, ids, inits)
					}
					if err != nil {
						return failed, err
					}
					if !row.OK {
						failed++
					}
					fmt.Fprintf(w, complexityHeader, row.Algo, strconv.Itoa(row.N), row.IDs, row.Initiators, row.Driver,
						strconv.Itoa(row.Messages), strconv.Itoa(row.Announce), row.bound(), row.ratio(),
						strconv.FormatFloat(row.ElectMS, 'f', 1, 64), row.ok())
					if cw != nil {
						cw.Write([]string{row.Algo, strconv.Itoa(row.N), row.IDs, row.Initiators, row.Driver,
							strconv.Itoa(row.Messages), strconv.Itoa(row.Announce), row.bound(), row.ratio(),
							strconv.FormatFloat(row.ElectMS, 'f', 3, 64), strconv.FormatBool(row.OK), row.Detail, row.Run})
						cw.Flush()
						if err := cw.Error(); err != nil {
							return failed, fmt.Errorf("--csv: %w", err)
						}
					}
				}
			}
		}
	}
	return failed, nil
}

// judge fills OK and Detail: the election ended with every node following n, within its bound.
func (r *complexityRow) judge(agreed bool, leader int) {
	switch {
	case !agreed:
		r.Detail = "no agreement"
	case leader != r.N:
		r.Detail = fmt.Sprintf("leader %d, want %d", leader, r.N)
	case r.Bound >= 0 && r.Messages+r.Announce > r.Bound:
		r.Detail = "over the bound"
	default:
		r.OK = true
	}
}

// measureReal runs a real cluster with no faults and reads its first election from verdict.json.
func measureReal(ctx context.Context, cfg complexityConfig, algo string, n int, ids, inits string) (complexityRow, error) {
	row := complexityRow{Algo: algo, N: n, IDs: ids, Initiators: inits, Driver: "real", Bound: -1}
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes, lc.IDs, lc.Initiators = algo, n, ids, inits
	lc.Chaos = ""
	lc.Seed, lc.SeedSet = cfg.Seed, true
	// Long enough for the slowest of these elections on a loaded machine, short enough to measure a
	// grid: a ring election takes a few laps of hops well under a millisecond each.
	lc.Duration = time.Second + time.Duration(n)*10*time.Millisecond
	// An O(n²) algorithm at hundreds of nodes sends tens of thousands of messages: give each message
	// of the worst case 50 µs more (LeLann at 256 nodes: 65,536 messages, 3.3 s).
	if a, err := election.Lookup(algo); err == nil {
		if b, ok := a.Bound(n, n); ok {
			lc.Duration += time.Duration(b) * 50 * time.Microsecond
		}
	}
	// Hundreds of processes on a couple of cores miss 50 ms heartbeats and churn through epochs:
	// above 64 nodes the failure detector slows with N (256 nodes: 256 ms heartbeats, 2 s timeout).
	if n > 64 {
		lc.Heartbeat = time.Duration(n) * time.Millisecond
		lc.Timeout = 8 * lc.Heartbeat
	}
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("%s-n%d-%s-%s", algo, n, ids, inits))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	row.Run = lc.Out
	if err := os.MkdirAll(cfg.Out, 0o755); err != nil {
		return row, fmt.Errorf("--out: %w", err)
	}
	code, err := launcher.Run(ctx, lc)
	if err != nil {
		return row, fmt.Errorf("%s with %d nodes (%s): %w", algo, n, lc.Out, err)
	}
	v, err := logs.ReadVerdict(lc.Out)
	if err != nil {
		return row, fmt.Errorf("%s with %d nodes: %w", algo, n, err)
	}
	if a, err := election.Lookup(algo); err == nil && a.Bound != nil {
		k := n
		if inits == "one" {
			k = 1
		}
		if b, ok := a.Bound(n, k); ok {
			row.Bound = b
		}
	}
	if len(v.Metrics.Elections) == 0 {
		row.Detail = "no election in verdict.json"
		return row, nil
	}
	e := v.Metrics.Elections[0]
	row.Messages, row.Announce = e.Messages, e.Announce
	if e.Bound != nil {
		row.Bound = *e.Bound
	}
	leader := 0
	if e.Leader != nil {
		leader = *e.Leader
	}
	if e.EndNS != nil {
		row.ElectMS = float64(*e.EndNS-v.BeginNS) / 1e6
	}
	row.judge(e.EndNS != nil, leader)
	if row.OK && (code != launcher.ExitOK || !v.OK) {
		row.OK, row.Detail = false, "the checker found a violation (see "+lc.Out+")"
	}
	return row, nil
}

// measureMemory runs the election in the simulator, without a failure detector or an event log,
// until every node follows the leader, and then until what is still in flight has landed.
func measureMemory(cfg complexityConfig, algo string, n int, ids, inits string) (complexityRow, error) {
	row := complexityRow{Algo: algo, N: n, IDs: ids, Initiators: inits, Driver: "memory", Bound: -1}
	a, err := election.Lookup(algo)
	if err != nil {
		return row, err
	}
	order, err := topology.Place(n, ids, cfg.Seed)
	if err != nil {
		return row, fmt.Errorf("--placements: %w", err)
	}
	sc := sim.Config{Algo: algo, N: n, Order: order, Placement: ids, Seed: cfg.Seed, NoEvents: true, Duration: time.Hour}
	k := n
	if inits == "one" {
		if sc.Initiators, err = topology.ParseInitiators(inits, order, cfg.Seed); err != nil {
			return row, fmt.Errorf("--initiators: %w", err)
		}
		k = 1
	}
	if a.Bound != nil {
		if b, ok := a.Bound(n, k); ok {
			row.Bound = b
		}
	}
	s, err := sim.New(sc)
	if err != nil {
		return row, err
	}
	// Look for agreement every step (1ms of virtual time, a little more on large rings, where each
	// look costs N); give up well past any election's laps of 5ms hops.
	step := max(time.Millisecond, time.Duration(n/256)*time.Millisecond)
	limit := 10*time.Second + time.Duration(n)*100*time.Millisecond
	leader, agreed := 0, false
	for !agreed && s.Now() < limit {
		s.RunFor(step)
		leader, agreed = s.Converged()
	}
	row.ElectMS = float64(s.Now()) / 1e6
	s.RunFor(time.Second + time.Duration(n)*5*time.Millisecond)
	for _, kind := range a.Kinds {
		row.Messages += s.Sent(kind)
	}
	for _, kind := range a.Announce {
		row.Announce += s.Sent(kind)
	}
	row.judge(agreed, leader)
	return row, nil
}
