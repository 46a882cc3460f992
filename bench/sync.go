// Package bench holds the lab's benchmarks apart from the command line: a benchmark takes a plan,
// makes its runs through the launcher (real processes, or the simulator), one at a time, and returns
// rows that the CLI prints; every row names the run directory its figures come from.
package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/topology"
)

// SyncPlan is `leaderlab bench sync`: Aguirre Janampa et al.'s proposed comparison. For every N,
// graph family and synchronizer, FloodMax over that synchronizer; for every N, each asynchronous
// ring algorithm on its own ring, for the time of an election among as many nodes.
type SyncPlan struct {
	Ns     []int
	Graphs []string // families: grid, torus (sized to N), tree:K, random:D
	Syncs  []string // election.Synchronizers
	Rings  []string // asynchronous algorithms to compare with (their own topology)
	Trials int
	Seed   int64 // trial t uses Seed + t
	Sim    bool  // in the simulator (virtual time) instead of real processes
	Delta  time.Duration
	Dir    string // the runs go under it
	// Progress is told of each row as its run ends, with how many runs are done and planned.
	Progress func(done, total int, row SyncRow)
}

// SyncRow is one run's figures.
type SyncRow struct {
	Algo  string `json:"algo"`
	Sync  string `json:"sync,omitempty"`
	Graph string `json:"graph"`
	N     int    `json:"n"`
	Edges int    `json:"edges"`
	Trial int    `json:"trial"`
	// From the synchronizer's metrics (FloodMax rows only).
	Pulses          int     `json:"pulses"`
	Reached         int     `json:"reached"`
	PulseMS         float64 `json:"pulse_ms"`
	PulsesPerSecond float64 `json:"pulses_per_second"`
	Messages        int     `json:"messages"`
	Acks            int     `json:"acks"`
	Init            int     `json:"init"`
	ControlPerPulse float64 `json:"control_per_pulse"`
	Expected        int     `json:"expected_per_pulse"`
	Ratio           float64 `json:"ratio"`
	Late            int     `json:"late"`
	// ElectionMS is the first election's time, from its first elect to the live nodes' agreement
	// (NaN when it never agreed); Total every message of the run.
	ElectionMS float64 `json:"election_ms"`
	Total      int     `json:"total"`
	OK         bool    `json:"ok"`
	Failed     string  `json:"failed,omitempty"` // the first failed property, or why the run could not be made
	Dir        string  `json:"dir"`
}

// GraphSpec is the --topology value of a graph family for n nodes: grid and torus take the most
// square R×C with R·C = n (R ≤ C); the others are given whole (tree:2, random:3).
func GraphSpec(family string, n int) (string, error) {
	switch family {
	case "grid", "torus":
		r := int(math.Sqrt(float64(n)))
		for n%r != 0 {
			r--
		}
		return fmt.Sprintf("%s:%dx%d", family, r, n/r), nil
	}
	if !topology.IsGraph(family) || strings.HasPrefix(family, "@") {
		return "", fmt.Errorf("graph family %q: want grid, torus, tree:K or random:D", family)
	}
	return family, nil
}

// Validate names the first bad field of the plan and what would be accepted.
func (p *SyncPlan) Validate() error {
	if len(p.Ns) == 0 {
		return fmt.Errorf("no cluster sizes (want a list such as 16,64,256)")
	}
	for _, g := range p.Graphs {
		for _, n := range p.Ns {
			spec, err := GraphSpec(g, n)
			if err != nil {
				return err
			}
			if _, err := topology.Generate(spec, n, 1); err != nil {
				return fmt.Errorf("graph %s with %d nodes: %w", g, n, err)
			}
		}
	}
	for _, s := range p.Syncs {
		if !slices.Contains(election.Synchronizers, s) {
			return fmt.Errorf("synchronizer %q: want %s", s, strings.Join(election.Synchronizers, ", "))
		}
	}
	for _, a := range p.Rings {
		alg, err := election.Lookup(a)
		if err != nil {
			return err
		}
		if alg.Synchronous {
			return fmt.Errorf("%s is synchronous: the comparison is with asynchronous algorithms", a)
		}
	}
	if p.Trials < 1 {
		return fmt.Errorf("trials %d: want 1 or more", p.Trials)
	}
	return nil
}

// Sync makes the plan's runs, one at a time (parallel clusters would starve each other's
// heartbeats on a small machine), and returns their rows. A run that cannot be made is a row with
// Failed set; an error is returned only when the context ends.
func Sync(ctx context.Context, p SyncPlan) ([]SyncRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	total := p.Trials * len(p.Ns) * (len(p.Graphs)*len(p.Syncs) + len(p.Rings))
	var rows []SyncRow
	add := func(r SyncRow) {
		rows = append(rows, r)
		if p.Progress != nil {
			p.Progress(len(rows), total, r)
		}
	}
	for _, n := range p.Ns {
		for t := range p.Trials {
			for _, g := range p.Graphs {
				spec, _ := GraphSpec(g, n)
				for _, s := range p.Syncs {
					if err := ctx.Err(); err != nil {
						return rows, err
					}
					add(p.one(ctx, "floodmax", s, spec, n, t))
				}
			}
			for _, a := range p.Rings {
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				add(p.one(ctx, a, "", "", n, t))
			}
		}
	}
	return rows, nil
}

// one makes one run and reads its figures from its verdict.
func (p *SyncPlan) one(ctx context.Context, algo, sync, spec string, n, trial int) SyncRow {
	cfg := launcher.DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Topology, cfg.Chaos = algo, n, spec, ""
	cfg.Seed, cfg.SeedSet = p.Seed+int64(trial), true
	cfg.Sim = p.Sim
	cfg.ScaleDetector = !p.Sim
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	if sync != "" {
		cfg.Options = map[string]string{election.OptSync: sync}
		if sync == "abd" {
			cfg.Options[election.OptDelta] = p.Delta.String()
		}
	} else {
		cfg.IDs = "random" // an asynchronous ring's typical case
	}
	// A real run goes on until the nodes agree (the termination bound is the cap); the simulator's
	// virtual time needs a duration long enough for the slowest synchronizer on the largest graph.
	cfg.Duration, cfg.UntilElected = 2*time.Second, true
	cfg.TerminationBound = time.Minute
	if p.Sim {
		cfg.Duration = 10*time.Second + time.Duration(n)*100*time.Millisecond
	}
	name := algo
	if sync != "" {
		name += "-" + sync + "-" + strings.NewReplacer(":", "", "@", "").Replace(spec)
	}
	cfg.Out = filepath.Join(p.Dir, fmt.Sprintf("%s-n%d-t%d", name, n, trial))
	row := SyncRow{Algo: algo, Sync: sync, Graph: spec, N: n, Trial: trial, Dir: cfg.Out, ElectionMS: math.NaN()}
	res, err := launcher.Launch(ctx, cfg)
	if err != nil || res.Verdict == nil {
		row.Failed = "unusable: the run gave no verdict"
		if err != nil {
			row.Failed = "unusable: " + firstLine(err.Error())
		}
		return row
	}
	dir, v := res.Dir, res.Verdict
	row.OK = res.Code == launcher.ExitOK && v.OK
	for _, prop := range v.Properties {
		if !prop.OK {
			row.Failed = prop.Name + ": " + firstLine(prop.Detail)
			break
		}
	}
	row.Total = v.Metrics.MessagesTotal
	if len(v.Metrics.Elections) > 0 {
		if e := v.Metrics.Elections[0]; e.EndNS != nil {
			row.ElectionMS = float64(*e.EndNS-e.StartNS) / 1e6
		}
	}
	if row.Graph == "" {
		row.Graph = "ring"
		if lc, err := logs.ReadRun(dir); err == nil {
			row.Graph = lc.Cluster.Topology
			if net, err := lc.Cluster.Net(); err == nil {
				row.Edges = len(net.Edges())
			}
		}
	}
	if sm := v.Metrics.Sync; sm != nil {
		row.Pulses, row.Reached, row.PulseMS, row.PulsesPerSecond = sm.Pulses, sm.Reached, sm.PulseMS, sm.PulsesPerSecond
		row.Messages, row.Acks, row.Init = sm.Messages, sm.Acks, sm.Init
		row.ControlPerPulse, row.Expected, row.Ratio, row.Late = sm.ControlPerPulse, sm.ExpectedPerPulse, sm.Ratio, sm.LateCount
		if g, err := topology.Generate(spec, n, cfg.Seed); err == nil {
			row.Edges = len(g)
		}
	}
	return row
}

// SyncHeader and Cells render rows as the table `bench sync` prints.
var SyncHeader = []string{"algo", "sync", "graph", "n", "|E|", "pulses", "pulse ms", "pulses/s", "ctrl/pulse", "formula", "ratio", "acks", "init", "late", "election ms", "messages", "verdict"}

// Cells are a row's columns, in SyncHeader's order.
func (r SyncRow) Cells() []string {
	f := func(x float64, prec int) string {
		if math.IsNaN(x) {
			return "-"
		}
		return strconv.FormatFloat(x, 'f', prec, 64)
	}
	verdict := "ok"
	if !r.OK {
		verdict = "FAIL " + r.Failed
	}
	if r.Sync == "" {
		return []string{r.Algo, "-", r.Graph, strconv.Itoa(r.N), strconv.Itoa(r.Edges), "-", "-", "-", "-", "-", "-", "-", "-", "-",
			f(r.ElectionMS, 1), strconv.Itoa(r.Total), verdict}
	}
	pulses := strconv.Itoa(r.Pulses)
	if r.Reached < r.Pulses {
		pulses = fmt.Sprintf("%d/%d", r.Reached, r.Pulses)
	}
	return []string{r.Algo, r.Sync, r.Graph, strconv.Itoa(r.N), strconv.Itoa(r.Edges), pulses, f(r.PulseMS, 1), f(r.PulsesPerSecond, 1),
		f(r.ControlPerPulse, 1), strconv.Itoa(r.Expected), f(r.Ratio, 3), strconv.Itoa(r.Acks), strconv.Itoa(r.Init), strconv.Itoa(r.Late),
		f(r.ElectionMS, 1), strconv.Itoa(r.Total), verdict}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
