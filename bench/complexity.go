package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// `leaderlab bench complexity`: issue 3's table of message complexity against the theory, and of
// time to elect, for every ring algorithm by number of processes (Aguirre Janampa et al.'s proposed
// comparison). Small rings are real clusters (launcher.Launch, the first election read from the
// verdict); larger ones run in the in-memory simulator, whose time is virtual. Each row says which.

// ComplexityDefaultNs are the ring sizes `bench complexity` measures unless told, as its --n writes
// them: the up to 256, and beyond with the in-memory driver.
const ComplexityDefaultNs = "4,8,16,32,64,128,256,512,1024,2048,4096"

// ComplexityPlan is one `bench complexity`: for every N, placement, initiator set and algorithm, in
// that order, one clean election.
type ComplexityPlan struct {
	// Algos are the ring algorithms to measure (RingAlgorithms).
	Algos []string
	// Ns are the ring sizes, each 1..max(RealMax, MemMax).
	Ns []int
	// Placements are topology.Placements: ascending, descending, random, worst.
	Placements []string
	// Initiators are initiator sets: all, one (the lowest ID).
	Initiators []string
	// RealMax is the largest N measured with real processes (0: none); MemMax the largest measured in
	// memory, beyond RealMax (0..sim.MaxNodes).
	RealMax, MemMax int
	// Seed seeds the random placement and, in memory, the links' delays.
	Seed int64
	// Dir is the directory of the real runs (made only when a real run is due).
	Dir string
	// Progress is told of each row as it is measured, with how many are done and planned; an error
	// it returns ends the benchmark with that error.
	Progress func(done, total int, row ComplexityRow) error
}

// RingAlgorithms lists the registered asynchronous algorithms that run on a one-way or two-way ring
// (FloodMax runs on a two-way ring too, but its bound is bench sync's business).
func RingAlgorithms() []string {
	var out []string
	for _, name := range election.Names() {
		a, _ := election.Lookup(name)
		if !a.Synchronous && (slices.Contains(a.Topologies, "ring") || slices.Contains(a.Topologies, "biring")) {
			out = append(out, name)
		}
	}
	return out
}

// Validate names the first bad field of the plan and what would be accepted.
func (p *ComplexityPlan) Validate() error {
	rings := RingAlgorithms()
	if len(p.Algos) == 0 {
		return &field.Error{Field: "ComplexityPlan.Algos", Want: fmt.Sprintf("no algorithm given (accepted: %s)", strings.Join(rings, ", "))}
	}
	for _, a := range p.Algos {
		if _, err := election.Lookup(a); err != nil {
			return &field.Error{Field: "ComplexityPlan.Algos", Want: fmt.Sprintf("unknown algorithm %q (accepted: %s)", a, strings.Join(rings, ", "))}
		}
		if !slices.Contains(rings, a) {
			return &field.Error{Field: "ComplexityPlan.Algos", Want: fmt.Sprintf("%s does not run on a ring (accepted: %s)", a, strings.Join(rings, ", "))}
		}
	}
	switch {
	case p.RealMax < 0 || p.RealMax > launcher.MaxNodes:
		return &field.Error{Field: "ComplexityPlan.RealMax", Value: p.RealMax, Want: fmt.Sprintf("want 0..%d (0: no real runs)", launcher.MaxNodes)}
	case p.MemMax < 0 || p.MemMax > sim.MaxNodes:
		return &field.Error{Field: "ComplexityPlan.MemMax", Value: p.MemMax, Want: fmt.Sprintf("want 0..%d (0: nothing in memory)", sim.MaxNodes)}
	case len(p.Ns) == 0:
		return &field.Error{Field: "ComplexityPlan.Ns", Want: fmt.Sprintf("no ring size given (want a list such as %s)", ComplexityDefaultNs)}
	}
	top := max(p.RealMax, p.MemMax)
	for _, n := range p.Ns {
		if n < 1 || n > top {
			return &field.Error{Field: "ComplexityPlan.Ns", Value: n, Want: fmt.Sprintf("want 1..%d (the larger of ComplexityPlan.RealMax %d and ComplexityPlan.MemMax %d)", top, p.RealMax, p.MemMax), Also: []string{"ComplexityPlan.MemMax", "ComplexityPlan.RealMax"}}
		}
	}
	for _, pl := range p.Placements {
		if !slices.Contains(topology.Placements, pl) {
			return &field.Error{Field: "ComplexityPlan.Placements", Want: fmt.Sprintf("unknown placement %q (accepted: %s)", pl, strings.Join(topology.Placements, ", "))}
		}
	}
	if len(p.Placements) == 0 {
		return &field.Error{Field: "ComplexityPlan.Placements", Want: fmt.Sprintf("none given (accepted: %s)", strings.Join(topology.Placements, ", "))}
	}
	for _, i := range p.Initiators {
		if i != "all" && i != "one" {
			return &field.Error{Field: "ComplexityPlan.Initiators", Want: fmt.Sprintf("unknown initiator set %q (accepted: all, one)", i)}
		}
	}
	if len(p.Initiators) == 0 {
		return &field.Error{Field: "ComplexityPlan.Initiators", Want: "none given (accepted: all, one)"}
	}
	return nil
}

// ComplexityRow is one measured election.
type ComplexityRow struct {
	Algo, IDs, Initiators string
	N                     int
	Driver                string // "real" or "memory"
	Messages, Announce    int
	Bound                 int // -1: the algorithm states none
	ElectMS               float64
	OK                    bool
	Inconclusive          bool   // the run ended while the election was still progressing
	Detail                string // why not OK
	Run                   string // the run directory of a real run
}

// ComplexityHeader names the columns of ComplexityRow.Cells, as `bench complexity` prints them.
var ComplexityHeader = []string{"algo", "n", "ids", "init", "driver", "messages", "announce", "bound", "ratio", "elect ms", "ok"}

// ComplexityCSVHeader names the columns of ComplexityRow.CSV.
var ComplexityCSVHeader = []string{"algo", "n", "ids", "initiators", "driver", "messages", "announce", "bound", "ratio", "elect_ms", "ok", "detail", "run"}

// Cells are the row's columns, in ComplexityHeader's order.
func (r ComplexityRow) Cells() []string {
	ok := "ok"
	switch {
	case !r.OK && r.Inconclusive:
		ok = "INCONCLUSIVE: " + r.Detail
	case !r.OK:
		ok = "FAIL: " + r.Detail
	}
	return []string{r.Algo, strconv.Itoa(r.N), r.IDs, r.Initiators, r.Driver, strconv.Itoa(r.Messages), strconv.Itoa(r.Announce),
		r.bound(), r.ratio(), strconv.FormatFloat(r.ElectMS, 'f', 1, 64), ok}
}

// CSV is the row as the CSV file has it, in ComplexityCSVHeader's order.
func (r ComplexityRow) CSV() []string {
	return []string{r.Algo, strconv.Itoa(r.N), r.IDs, r.Initiators, r.Driver, strconv.Itoa(r.Messages), strconv.Itoa(r.Announce),
		r.bound(), r.ratio(), strconv.FormatFloat(r.ElectMS, 'f', 3, 64), strconv.FormatBool(r.OK), r.Detail, r.Run}
}

func (r ComplexityRow) ratio() string {
	if r.Bound <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(r.Messages+r.Announce)/float64(r.Bound))
}

func (r ComplexityRow) bound() string {
	if r.Bound < 0 {
		return "-"
	}
	return strconv.Itoa(r.Bound)
}

// Complexity measures the plan, N by N, and returns its rows; a row that did not end well has OK
// false. An error is returned when the plan is bad, a run cannot be made, the context ends
// ("interrupted") or Progress returns one.
func Complexity(ctx context.Context, p ComplexityPlan) ([]ComplexityRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	total := len(p.Ns) * len(p.Placements) * len(p.Initiators) * len(p.Algos)
	var rows []ComplexityRow
	for _, n := range p.Ns {
		for _, ids := range p.Placements {
			for _, inits := range p.Initiators {
				for _, algo := range p.Algos {
					if ctx.Err() != nil {
						return rows, errors.New("interrupted")
					}
					var row ComplexityRow
					var err error
					if n <= p.RealMax {
						row, err = p.measureReal(ctx, algo, n, ids, inits)
					} else {
						row, err = p.measureMemory(algo, n, ids, inits)
					}
					if err != nil {
						return rows, err
					}
					rows = append(rows, row)
					if p.Progress != nil {
						if err := p.Progress(len(rows), total, row); err != nil {
							return rows, err
						}
					}
				}
			}
		}
	}
	return rows, nil
}

// judge fills OK and Detail: the election ended with every node following n, within its bound.
func (r *ComplexityRow) judge(agreed bool, leader int) {
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

// measureReal runs a real cluster with no faults and reads its first election from the verdict.
func (p *ComplexityPlan) measureReal(ctx context.Context, algo string, n int, ids, inits string) (ComplexityRow, error) {
	row := ComplexityRow{Algo: algo, N: n, IDs: ids, Initiators: inits, Driver: "real", Bound: -1}
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes, lc.IDs, lc.Initiators = algo, n, ids, inits
	lc.Chaos = ""
	lc.Seed, lc.SeedSet = p.Seed, true
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
	lc.Out = filepath.Join(p.Dir, fmt.Sprintf("%s-n%d-%s-%s", algo, n, ids, inits))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	row.Run = lc.Out
	if err := os.MkdirAll(p.Dir, 0o755); err != nil {
		return row, &field.Error{Field: "ComplexityPlan.Dir", Want: err.Error(), Err: err}
	}
	res, err := launcher.Launch(ctx, lc)
	if err != nil {
		return row, fmt.Errorf("%s with %d nodes (%s): %w", algo, n, lc.Out, err)
	}
	v := res.Verdict
	if v == nil {
		return row, fmt.Errorf("%s with %d nodes: %s has no verdict", algo, n, lc.Out)
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
	if res.Code == launcher.ExitInconclusive {
		row.OK, row.Inconclusive, row.Detail = false, true, "still electing when the run ended; the machine fell behind (see "+lc.Out+")"
	}
	if row.OK && (res.Code != launcher.ExitOK || !v.OK) {
		row.OK, row.Detail = false, "the checker found a violation (see "+lc.Out+")"
	}
	return row, nil
}

// measureMemory runs the election in the simulator, without a failure detector or an event log,
// until every node follows the leader, and then until what is still in flight has landed.
func (p *ComplexityPlan) measureMemory(algo string, n int, ids, inits string) (ComplexityRow, error) {
	row := ComplexityRow{Algo: algo, N: n, IDs: ids, Initiators: inits, Driver: "memory", Bound: -1}
	a, err := election.Lookup(algo)
	if err != nil {
		return row, err
	}
	order, err := topology.Place(n, ids, p.Seed)
	if err != nil {
		return row, &field.Error{Field: "ComplexityPlan.Placements", Want: err.Error(), Err: err}
	}
	sc := sim.Config{Algo: algo, N: n, Order: order, Placement: ids, Seed: p.Seed, NoEvents: true, Duration: time.Hour}
	k := n
	if inits == "one" {
		if sc.Initiators, err = topology.ParseInitiators(inits, order, p.Seed); err != nil {
			return row, &field.Error{Field: "ComplexityPlan.Initiators", Want: err.Error(), Err: err}
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
