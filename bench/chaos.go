package bench

// `leaderlab bench chaos`: issue 4's figure. Real clusters under the seeded nemesis, many runs per
// (algorithm, N), each judged by the checker; per cell the violations (and which properties
// failed), the split-brain time, the lost log lines (a recv with no send), the node processes left
// running after the run, and the checker's warnings. Every run stays in Out and replays with
// `leaderlab run --replay DIR`.

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
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

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// ChaosConfig is one `bench chaos`: the grid, the nemesis, and where the results go.
type ChaosConfig struct {
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
	// Out, an existing directory, holds every run written, one directory each, and the page.
	Out string
	// Sim makes the runs in the simulator (run --sim): the node's code in virtual time.
	Sim bool
	// CheckDeterminism makes every simulated run twice and compares the hashes of what the two wrote
	// (the node logs, chaos.jsonl, launcher.jsonl): a seed whose two runs differ is a failing run,
	// "nondeterministic", as madsim's check does. Sim only.
	CheckDeterminism bool
	// Swarm makes each run draw its own nemesis from its seed (chaos.Swarm): a subset of Nemesis's
	// kinds, their weights, the interval (around Interval) and whether faults overlap.
	Swarm bool
	// Command is the command line, as the page shows it.
	Command string
	// Hosts and SSHConfig spread the simulated runs over SSH hosts, as run --hosts reaches them
	// (launcher.Config's fields of the same names): each host runs `leaderlab sweep-worker` on all
	// its cores, seeds go to whichever host has room, and a run that does not pass is made again
	// here to write its directory. Sim only. InsecureIgnoreHostKey takes any host key.
	Hosts, SSHConfig      string
	InsecureIgnoreHostKey bool
}

// remote tells whether the runs go to SSH hosts.
func (c *ChaosConfig) remote() bool { return c.Hosts != "" || c.SSHConfig != "" }

// DefaultChaosConfig is the bench's configuration when nothing is chosen (its N and Out aside):
// every algorithm of ChaosAlgorithms, 20 runs per cell of every nemesis kind, 6 s each.
func DefaultChaosConfig() ChaosConfig {
	return ChaosConfig{Algos: ChaosAlgorithms(), Runs: 20, Nemesis: strings.Join(chaos.NemesisKinds, ","), Interval: 500 * time.Millisecond,
		Duration: 6 * time.Second, Seed: 1}
}

// ChaosAlgorithms is Bully, every registered ring algorithm, and RSDP.
func ChaosAlgorithms() []string {
	out := []string{"bully"}
	for _, a := range RingAlgorithms() {
		if a != "bully" {
			out = append(out, a)
		}
	}
	return append(out, "rsdp")
}

// Validate names the first bad field of the configuration and what would be accepted.
func (c *ChaosConfig) Validate() error {
	for _, a := range c.Algos {
		if _, err := election.Lookup(a); err != nil {
			return &field.Error{Field: "ChaosConfig.Algos", Want: err.Error(), Err: err}
		}
	}
	if len(c.Algos) == 0 {
		return &field.Error{Field: "ChaosConfig.Algos", Want: fmt.Sprintf("no algorithm given (accepted: %s)", strings.Join(election.Names(), ", "))}
	}
	if len(c.Ns) == 0 {
		return &field.Error{Field: "ChaosConfig.Ns", Want: "no cluster size given (want a list such as 5,8,12,16 or a range such as 5-16)"}
	}
	for _, n := range c.Ns {
		if n < 2 || n > launcher.MaxNodes {
			return &field.Error{Field: "ChaosConfig.Ns", Value: n, Want: fmt.Sprintf("want 2..%d (the nemesis needs a node to fault and one to stay up)", launcher.MaxNodes)}
		}
	}
	if c.CheckDeterminism && !c.Sim {
		return &field.Error{Field: "ChaosConfig.CheckDeterminism", Want: "it runs each seed twice in the simulator and compares the logs: it needs ChaosConfig.Sim (real processes are not deterministic)", Also: []string{"ChaosConfig.Sim"}}
	}
	const simOnly = "bench chaos spreads only simulated runs over SSH hosts: give ChaosConfig.Sim too (real runs over hosts are not part of bench chaos; run --hosts makes one)"
	switch {
	case c.Hosts != "" && !c.Sim:
		return &field.Error{Field: "ChaosConfig.Hosts", Want: simOnly, Also: []string{"ChaosConfig.Sim"}}
	case c.SSHConfig != "" && !c.Sim:
		return &field.Error{Field: "ChaosConfig.SSHConfig", Want: simOnly, Also: []string{"ChaosConfig.Sim"}}
	}
	if c.InsecureIgnoreHostKey && !c.remote() {
		return &field.Error{Field: "ChaosConfig.InsecureIgnoreHostKey", Want: "it skips the host key check of SSH hosts: it needs ChaosConfig.Hosts or ChaosConfig.SSHConfig", Also: []string{"ChaosConfig.Hosts", "ChaosConfig.SSHConfig"}}
	}
	if _, err := chaos.ParseNemesisKinds(c.Nemesis); err != nil {
		return &field.Error{Field: "ChaosConfig.Nemesis", Want: err.Error(), Err: err}
	}
	switch {
	case c.Runs < 1:
		return &field.Error{Field: "ChaosConfig.Runs", Value: c.Runs, Want: "want at least 1"}
	case c.Interval <= 0:
		return &field.Error{Field: "ChaosConfig.Interval", Value: c.Interval, Want: "want a positive duration such as 500ms"}
	case c.Duration <= 0:
		return &field.Error{Field: "ChaosConfig.Duration", Value: c.Duration, Want: "want a positive duration such as 6s"}
	}
	return nil
}

// ChaosResult is what a chaos bench measured: the cells (those before an error when there is
// one), the failing runs (violations: not the runs that failed only under declared limits), the
// node processes that outlived their run, and the page written ("" when none was).
type ChaosResult struct {
	Cells      []ChaosCell
	Violations int
	Orphans    int
	// Inconclusive counts the runs that ended while their election was still progressing.
	Inconclusive int
	Page         string
}

// Chaos measures the grid, cell by cell, printing to w each row as it is measured and the failing
// runs under it; progress is told how far it is, with the time left. It writes the CSV as it goes
// and, once the cells are measured (or some are, and an error stopped the rest), the page into
// cfg.Out. An error is a configuration Validate refuses, a CSV or page that cannot be written, or
// a run that could not be made for a reason that would stop every run (an interruption, a
// configuration the launcher refuses).
func Chaos(ctx context.Context, cfg ChaosConfig, w, progress io.Writer) (ChaosResult, error) {
	if err := cfg.Validate(); err != nil {
		return ChaosResult{}, err
	}
	res, err := cfg.measure(ctx, w, progress)
	if len(res.Cells) > 0 {
		page, perr := WritePage(cfg.Out, cfg.page(res.Cells))
		if perr != nil && err == nil {
			return res, fmt.Errorf("page: %w", perr)
		}
		if perr == nil {
			res.Page = page
			fmt.Fprintf(w, "page: %s\n", page)
		}
	}
	return res, err
}

// chaosFormat lays out the printed table's columns (a row is printed as its cell ends, so the
// widths are fixed rather than measured).
const chaosFormat = "%-20s %3s %5s %10s %9s %13s %15s %10s %5s %7s %8s  %s\n"

// chaosCSVHeader names the CSV's columns, a row per cell.
var chaosCSVHeader = []string{"algo", "n", "runs", "violations", "expected_limit", "failed_properties", "split_brain_ms_sum", "split_brain_ms_max",
	"lost_lines", "orphans", "warnings", "failing_runs", "inconclusive"}

// measure is Chaos's runs and printed table.
func (cfg *ChaosConfig) measure(ctx context.Context, w, progress io.Writer) (res ChaosResult, err error) {
	var cw *csv.Writer
	if cfg.CSV != "" {
		f, err := os.Create(cfg.CSV)
		if err != nil {
			return res, &field.Error{Field: "ChaosConfig.CSV", Want: err.Error(), Err: err}
		}
		defer f.Close()
		cw = csv.NewWriter(f)
		cw.Write(chaosCSVHeader)
		defer cw.Flush()
	}
	nemesis := fmt.Sprintf("--nemesis %s --nemesis-interval %v --nemesis-restart", cfg.Nemesis, cfg.Interval)
	if cfg.Swarm {
		nemesis = fmt.Sprintf("swarm: each run draws its kinds of %s, their weights, an interval around %v and overlap from its seed; --nemesis-restart", cfg.Nemesis, cfg.Interval)
	}
	fmt.Fprintf(w, "chaos: %s; n %v; %d runs each of %v; %s; seeds %d..%d; runs in %s\n",
		strings.Join(cfg.Algos, ","), cfg.Ns, cfg.Runs, cfg.Duration, nemesis, cfg.Seed, cfg.Seed+int64(cfg.Runs)-1, cfg.Out)
	cellRuns := func(ctx context.Context, _ int, algo string, n int, progress func(int)) ([]ChaosRun, error) {
		return cfg.cellRuns(ctx, algo, n, progress)
	}
	if cfg.remote() {
		hs, err := cfg.onHosts(ctx, w)
		if err != nil {
			return res, err
		}
		defer hs.finish(w)
		cellRuns = hs.cell
	}
	fmt.Fprintf(w, chaosFormat, "algo", "n", "runs", "violations", "expected", "inconclusive", "split-brain ms", "max ms", "lost", "orphans", "warnings", "failed properties")
	total := ChaosStats{ByProp: map[string]int{}}
	finish := func() (ChaosResult, error) {
		res.Violations, res.Orphans, res.Inconclusive = total.Violations, total.Orphans, total.Inconclusive
		return res, err
	}
	cell := -1
	tty := isTerminal(progress)
	all, start, before := len(cfg.Algos)*len(cfg.Ns)*cfg.Runs, time.Now(), 0
	for _, algo := range cfg.Algos {
		for _, n := range cfg.Ns {
			var runs []ChaosRun
			cell++
			runs, err = cellRuns(ctx, cell, algo, n, func(done int) {
				if tty {
					fmt.Fprintf(progress, "\r%s n=%d: run %d/%d%s\x1b[K", algo, n, done, cfg.Runs, TimeLeft(start, before+done, all))
				}
			})
			before += cfg.Runs
			if tty {
				fmt.Fprint(progress, "\r\x1b[K")
			} else {
				fmt.Fprintf(progress, "bench chaos: %d/%d runs (%s n=%d done)%s\n", before, all, algo, n, TimeLeft(start, before, all))
			}
			if err != nil {
				total.print(w, "total (so far)", "")
				return finish()
			}
			c := ChaosCell{Algo: algo, N: n, Runs: runs}
			res.Cells = append(res.Cells, c)
			s := c.Stats()
			s.print(w, algo, strconv.Itoa(n))
			var dirs []string
			for _, r := range runs {
				total.add(r)
				if r.Status() != "pass" {
					dirs = append(dirs, r.Dir)
					fmt.Fprintln(w, "    "+r.failing())
				}
			}
			if cw != nil {
				cw.Write([]string{algo, strconv.Itoa(n), strconv.Itoa(s.Runs), strconv.Itoa(s.Violations), strconv.Itoa(s.Expected), s.props(","),
					strconv.FormatFloat(s.SplitSum, 'f', 3, 64), strconv.FormatFloat(s.SplitMax, 'f', 3, 64),
					strconv.Itoa(s.Lost), strconv.Itoa(s.Orphans), strconv.Itoa(s.Warnings), strings.Join(dirs, " "), strconv.Itoa(s.Inconclusive)})
				cw.Flush()
				if err = cw.Error(); err != nil {
					err = &field.Error{Field: "ChaosConfig.CSV", Want: err.Error(), Err: err}
					return finish()
				}
			}
		}
	}
	total.print(w, "total", "")
	if total.Violations+total.Orphans > 0 {
		fmt.Fprintln(w, "replay a failing run with: leaderlab run --replay DIR")
	}
	return finish()
}

// print writes the stats as a row of the printed table.
func (s *ChaosStats) print(w io.Writer, algo, n string) {
	fmt.Fprintf(w, chaosFormat, algo, n, strconv.Itoa(s.Runs), strconv.Itoa(s.Violations), strconv.Itoa(s.Expected), strconv.Itoa(s.Inconclusive),
		strconv.FormatFloat(s.SplitSum, 'f', 1, 64), strconv.FormatFloat(s.SplitMax, 'f', 1, 64),
		strconv.Itoa(s.Lost), strconv.Itoa(s.Orphans), strconv.Itoa(s.Warnings), s.props(","))
}

// failing is the line under its cell's row of a run that did not pass: "FAIL seed 3 DIR:
// agreement,orphans [4242] (agreement: ...)", LIMIT for a run that failed only under declared
// limits.
func (r ChaosRun) failing() string {
	what := strings.Join(r.Failed, ",")
	if len(r.Orphans) > 0 {
		what = strings.TrimPrefix(what+fmt.Sprintf(",orphans %v", r.Orphans), ",")
	}
	mark := "FAIL"
	switch r.Status() {
	case "limit":
		mark = "LIMIT"
	case "inconclusive":
		mark = "INCONCLUSIVE"
	}
	line := fmt.Sprintf("%s seed %d %s: %s", mark, r.Seed, r.Dir, what)
	if r.Why != "" {
		line += " (" + r.Why + ")"
	}
	if r.Replay != "" {
		line += "\n      replay anywhere: " + r.Replay
		if rest, sim := strings.CutPrefix(r.Replay, "leaderlab run --sim "); sim {
			line += "\n      on real processes: leaderlab run " + rest
		}
	}
	return line
}

// page is OUT/index.html: per (algorithm, N) the violations, the runs that failed only under
// declared limits, the split-brain time, and a link to every run written.
func (cfg *ChaosConfig) page(cells []ChaosCell) Page {
	world := "real processes"
	if cfg.Sim {
		world = "simulated (only the runs that did not pass are written)"
	}
	ns := make([]string, len(cfg.Ns))
	for i, n := range cfg.Ns {
		ns[i] = strconv.Itoa(n)
	}
	head := Page{
		Title:   "bench chaos: " + strings.Join(cfg.Algos, ", "),
		Command: cfg.Command,
		Config: []KV{
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
	return ChaosPage(cfg.Out, head, cells)
}

// cellRuns makes the runs of one (algorithm, N) cell, in seed order. Real runs are made one at a
// time (clusters side by side would starve each other's heartbeats); simulated ones, which share
// nothing and depend on no clock, on every core at once. progress is told how many are done.
func (cfg *ChaosConfig) cellRuns(ctx context.Context, algo string, n int, progress func(done int)) ([]ChaosRun, error) {
	out := make([]ChaosRun, cfg.Runs)
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
				r, err := cfg.run(ctx, algo, n, cfg.Seed+int64(i))
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

// run makes one run and reads what it gave. An error is a run that could not be made for a reason
// that would stop every run (bad configuration, an interruption); a run that was made but not
// judged (a node that never came up) is a failing run.
func (cfg *ChaosConfig) run(ctx context.Context, algo string, n int, seed int64) (ChaosRun, error) {
	lc := cfg.runConfig(algo, n, seed)
	r := ChaosRun{Dir: lc.Out, Seed: seed, Replay: replayCommand(lc)}
	if cfg.Sim {
		r, _, err := simChaosRun(lc, r, cfg.CheckDeterminism, true)
		return r, err
	}
	res, err := launcher.Launch(ctx, lc)
	if res.Dir == "" || ctx.Err() != nil {
		return r, fmt.Errorf("%s with %d nodes, seed %d: %w", algo, n, seed, err)
	}
	r.Orphans = OrphanNodes(res.Dir)
	for _, pid := range r.Orphans {
		_ = syscall.Kill(pid, syscall.SIGKILL) // so that the next run starts clean
	}
	if err != nil {
		r.Failed, r.Why = []string{"not made"}, err.Error()
		return r, nil
	}
	if res.Verdict == nil {
		r.Failed, r.Why = []string{"no verdict"}, "the run was not judged"
		return r, nil
	}
	r.judge(res.Verdict)
	if !r.OK && len(r.Failed) == 0 {
		r.Failed = []string{"exit " + strconv.Itoa(res.Code)}
	}
	run, err := logs.ReadRun(res.Dir)
	if err == nil {
		r.Lost = lostLines(run)
	} else {
		r.OK = false
		r.Failed = append(r.Failed, "logs unreadable")
		r.Why = strings.TrimPrefix(r.Why+"; "+err.Error(), "; ")
	}
	return r, nil
}

// runConfig is the launcher's configuration of run seed of cell (algo, n), into its directory in
// Out.
func (cfg *ChaosConfig) runConfig(algo string, n int, seed int64) launcher.Config {
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = algo, n
	lc.Chaos = ""
	lc.Nemesis, lc.NemesisInterval, lc.NemesisRestart = cfg.Nemesis, cfg.Interval, true
	if cfg.Swarm {
		kinds, _, _ := chaos.ParseNemesis(cfg.Nemesis) // validated
		d := chaos.Swarm(seed, kinds, cfg.Interval)
		lc.Nemesis, lc.NemesisInterval, lc.NemesisOverlap, lc.NemesisShapes = d.Nemesis, d.Interval, d.Overlap, d.Shapes
	}
	lc.Duration = cfg.Duration
	lc.Seed, lc.SeedSet = seed, true
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("%s-n%d-seed%d", algo, n, seed))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	lc.Sim = cfg.Sim
	return lc
}

// simChaosRun makes one run in the simulator and judges it in memory; with write, a run that did not
// pass is written into its directory (a sweep of thousands keeps the ones worth replaying). It
// returns the run's RunDigest too ("" when it could not be made), which a sweep over hosts
// compares with the host's.
func simChaosRun(lc launcher.Config, r ChaosRun, twice, write bool) (ChaosRun, string, error) {
	s, err := launcher.Simulate(lc)
	if err != nil {
		r.Failed, r.Why = []string{"not made"}, err.Error()
		return r, "", nil
	}
	r.judge(s.Verdict)
	digest := RunDigest(s.Run)
	if twice {
		again, err := launcher.Simulate(lc)
		if err != nil {
			r.Failed, r.Why = []string{"not made"}, "the second run: "+err.Error()
			return r, digest, nil
		}
		if a, b := digest, RunDigest(again.Run); a != b {
			r.OK, r.Limit, r.Inconclusive = false, false, false
			r.Failed = append(r.Failed, "nondeterministic")
			r.Why = fmt.Sprintf("the same seed ran twice wrote different logs (sha256 %.12s… and %.12s…): the simulator is not deterministic", a, b)
		}
	}
	r.Lost = lostLines(s.Run)
	if write && (!r.OK || r.Lost > 0) {
		if err := s.WriteDir(r.Dir); err != nil {
			return r, digest, err
		}
	}
	return r, digest, nil
}

// judge fills in what the verdict says of the run.
func (r *ChaosRun) judge(v *check.Verdict) {
	r.OK = v.OK
	r.Limit = !v.OK && v.OnlyLimits()
	r.Inconclusive = v.Result() == check.OutcomeInconclusive
	r.SplitBrainMS, r.Warnings = v.Metrics.SplitBrainMS, len(v.Warnings)
	for _, p := range v.Properties {
		if !p.OK {
			r.Failed = append(r.Failed, p.Name)
			if r.Why == "" {
				r.Why = p.Name + ": " + p.Detail
				if r.Inconclusive {
					r.Why = v.Reason
				}
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

// OrphanNodes lists the live processes of `leaderlab node --run DIR` for this run directory, from
// /proc (zombies do not count: they hold nothing but a table slot).
func OrphanNodes(dir string) []int { return orphanNodes("/proc", dir) }

// orphanNodes is OrphanNodes over the process table mounted at proc, so that a test can give it
// one of its own.
func orphanNodes(proc, dir string) []int {
	want, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []int
	ents, _ := os.ReadDir(proc)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
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
		if st, err := os.ReadFile(filepath.Join(proc, e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}

// replayCommand is the one command that makes run lc again from nothing but the binary: the same
// seed draws the same nemesis schedule, and in the simulator the same run, byte for byte.
func replayCommand(lc launcher.Config) string {
	args := []string{"leaderlab", "run"}
	if lc.Sim {
		args = append(args, "--sim")
	}
	args = append(args, "-a", lc.Algo, "-n", strconv.Itoa(lc.Nodes), "--seed", strconv.FormatInt(lc.Seed, 10),
		"--duration", lc.Duration.String(), "--nemesis", lc.Nemesis, "--nemesis-interval", lc.NemesisInterval.String())
	if lc.NemesisRestart {
		args = append(args, "--nemesis-restart")
	}
	if lc.NemesisOverlap {
		args = append(args, "--nemesis-overlap")
	}
	if lc.NemesisShapes != "" {
		args = append(args, "--nemesis-shapes", lc.NemesisShapes)
	}
	return ShellJoin(args)
}

// RunDigest is the sha256 of what a simulated run writes, in a fixed order: every node's event log
// (by node ID), chaos.jsonl and launcher.jsonl, each line as the writers write it.
func RunDigest(run *logs.Run) string {
	h := sha256.New()
	ids := slices.Sorted(maps.Keys(run.Nodes))
	var line []byte
	for _, id := range ids {
		nl := run.Nodes[id]
		fmt.Fprintf(h, "node %d\n", id)
		for i := range nl.Events {
			line, _ = logs.AppendEvent(line[:0], &nl.Events[i])
			h.Write(line)
		}
	}
	for _, recs := range []any{run.Chaos, run.Launcher} {
		b, _ := json.Marshal(recs)
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}
