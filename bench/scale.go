package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/topology"
)

// ScalePlan is `leaderlab bench scale`: for every algorithm, ID placement and N, Trials real runs
// without chaos, and what each cost (launcher.Figures).
type ScalePlan struct {
	Algos      []string // they are not checked: a run the launcher refuses is a row that says why
	IDs        []string // placements (topology.Place)
	Initiators string
	Ns         []int
	Trials     int
	// Duration is each run's length; 0: 3s + 4ms × N, long enough for the worst case's n(n+1)/2
	// messages on two cores at the sizes the bench is for.
	Duration time.Duration
	Seed     int64 // trial t uses Seed + t
	// Hosts and SSHConfig run the nodes on SSH hosts (launcher.Config's), InsecureIgnoreHostKey
	// skips their host-key check.
	Hosts, SSHConfig      string
	InsecureIgnoreHostKey bool
	Dir                   string // the runs go under it
	// Progress is told of each row as its run ends, with how many runs are done and planned.
	Progress func(done, total int, row ScaleRow)
}

// ScaleRow is one run's figures.
type ScaleRow struct {
	Algo, IDs string
	N, Trial  int
	Dir       string
	// Unusable says why the run could not be made ("": it was); Figures are then empty.
	Unusable string
	Code     int // the run's exit code
	Figures  launcher.Figures
}

// Passed tells whether the run was made and passed (exit 0).
func (r ScaleRow) Passed() bool { return r.Unusable == "" && r.Code == launcher.ExitOK }

// Validate names the first bad field of the plan and what would be accepted.
func (p *ScalePlan) Validate() error {
	for _, ids := range p.IDs {
		if _, err := topology.Place(2, ids, 1); err != nil {
			return &field.Error{Field: "ScalePlan.IDs", Value: fmt.Sprintf("%q", ids), Want: fmt.Sprintf("%v", err)}
		}
	}
	if p.Trials < 1 {
		return &field.Error{Field: "ScalePlan.Trials", Value: p.Trials, Want: "want 1 or more"}
	}
	return nil
}

// Scale makes the plan's runs, one at a time, and returns their rows. A run that cannot be made
// is a row with Unusable set; an error is returned when the plan is bad or a run's figures cannot
// be read.
func Scale(ctx context.Context, p ScalePlan) ([]ScaleRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	total := len(p.Algos) * len(p.IDs) * len(p.Ns) * p.Trials
	var rows []ScaleRow
	for _, algo := range p.Algos {
		for _, ids := range p.IDs {
			for _, n := range p.Ns {
				for trial := range p.Trials {
					row, err := p.one(ctx, algo, ids, n, trial)
					if err != nil {
						return rows, err
					}
					rows = append(rows, row)
					if p.Progress != nil {
						p.Progress(len(rows), total, row)
					}
				}
			}
		}
	}
	return rows, nil
}

// one makes one run and reads its figures.
func (p *ScalePlan) one(ctx context.Context, algo, ids string, n, trial int) (ScaleRow, error) {
	cfg := launcher.DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.IDs, cfg.Initiators = algo, n, ids, p.Initiators
	cfg.Chaos = ""
	// run's default detector pace (DESIGN.md, "Large clusters: the detector's pace, control at scale")
	cfg.ScaleDetector = true
	cfg.Duration = p.Duration
	if cfg.Duration == 0 {
		cfg.Duration = 3*time.Second + time.Duration(n)*4*time.Millisecond
	}
	cfg.Seed, cfg.SeedSet = p.Seed+int64(trial), true
	cfg.Out = filepath.Join(p.Dir, fmt.Sprintf("%s-%s-n%d-t%d", algo, ids, n, trial))
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	cfg.Hosts, cfg.SSHConfig, cfg.InsecureIgnoreHostKey = p.Hosts, p.SSHConfig, p.InsecureIgnoreHostKey
	row := ScaleRow{Algo: algo, IDs: ids, N: n, Trial: trial, Dir: cfg.Out}
	res, err := launcher.Launch(ctx, cfg)
	if err != nil {
		row.Unusable = "unusable: " + firstLine(err.Error())
		return row, nil
	}
	row.Code = res.Code
	if row.Figures, err = res.Figures(); err != nil {
		return row, err
	}
	return row, nil
}

// ScaleHeader names the columns of ScaleRow.Cells, as `bench scale` prints them.
var ScaleHeader = []string{"algo", "ids", "n", "launch s", "ready s", "agree ms", "messages", "election/bound",
	"nodes MB", "node MB", "launcher MB", "CPU µs/msg", "suspicions", "verdict"}

// ScaleCSVHeader names the columns of ScaleRow.CSV.
var ScaleCSVHeader = []string{"algo", "ids", "n", "launch_s", "ready_s", "agree_ms", "messages", "election_messages", "bound",
	"nodes_peak_mb", "node_peak_mb", "launcher_peak_mb", "cpu_us_per_message", "suspicions", "false_suspicions", "early_suspicions", "verdict", "dir"}

// Cells are the row's columns, in ScaleHeader's order: "-" and the reason for a run not made.
func (r ScaleRow) Cells() []string {
	if r.Unusable != "" {
		return []string{r.Algo, r.IDs, strconv.Itoa(r.N), "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", r.Unusable}
	}
	f := r.Figures
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
	verdict := strings.ToUpper(f.Outcome) // PASS, FAIL, INCONCLUSIVE
	if verdict == "" {
		verdict = map[bool]string{true: "PASS", false: "FAIL"}[f.OK]
	}
	return []string{r.Algo, r.IDs, strconv.Itoa(f.Nodes), fmt.Sprintf("%.2f", f.Launch.Seconds()), fmt.Sprintf("%.2f", f.Ready.Seconds()),
		agree, strconv.Itoa(f.Messages), fmt.Sprintf("%d/%s", f.Election, bound), mb(f.NodesPeakKB), mb(f.NodePeakKB),
		fmt.Sprintf("%.1f", float64(f.LauncherPeakKB)/1024), cpu,
		fmt.Sprintf("%d (%d false, %d early)", f.Suspicions, f.False, f.Early), verdict}
}

// CSV is the row as the CSV file has it, in ScaleCSVHeader's order: plain numbers, empty where
// there is none.
func (r ScaleRow) CSV() []string {
	f := r.Figures
	cell := func(ok bool, format string, x float64) string {
		if !ok {
			return ""
		}
		return fmt.Sprintf(format, x)
	}
	local := !f.Remote
	return []string{r.Algo, r.IDs, strconv.Itoa(f.Nodes), cell(true, "%.3f", f.Launch.Seconds()), cell(true, "%.3f", f.Ready.Seconds()),
		cell(f.Agreement > 0, "%.1f", f.Agreement.Seconds()*1000), strconv.Itoa(f.Messages), strconv.Itoa(f.Election),
		cell(f.Bound > 0, "%.0f", float64(f.Bound)), cell(local, "%.1f", float64(f.NodesPeakKB)/1024), cell(local, "%.1f", float64(f.NodePeakKB)/1024),
		cell(true, "%.1f", float64(f.LauncherPeakKB)/1024), cell(local && f.Messages > 0, "%.2f", float64(f.CPUPerMessage().Nanoseconds())/1000),
		strconv.Itoa(f.Suspicions), strconv.Itoa(f.False), strconv.Itoa(f.Early), strconv.FormatBool(f.OK), r.Dir}
}
