package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/leaderlab/leaderlab/launcher"
)

// bench chaos --sim --hosts: the grid's seeds spread over SSH hosts (launcher.Sweep). Every run of
// every cell goes into one queue, in the table's order, so hosts never wait for a cell's slowest
// run; the table is printed as here, cell by cell once a cell's runs are all in. A run that does
// not pass (or lost lines) is made again here, which writes its directory as a local sweep does,
// and the two runs' digests must agree: a seed whose logs differ between a host and here is a
// failing run, "nondeterministic across hosts".

// chaosHosts is a grid's sweep over hosts, going on in the background while measure prints.
type chaosHosts struct {
	cfg    *ChaosConfig
	sweep  *launcher.Sweep
	cancel context.CancelFunc
	over   chan struct{} // closed when the sweep and every local run again are done

	mu   sync.Mutex
	cond *sync.Cond
	runs [][]ChaosRun // per cell, in seed order
	left []int        // per cell, runs not in yet
	err  error        // the sweep's, once over
	lost []string     // hosts lost mid-sweep, and why
}

// onHosts opens the hosts, says which take part, and starts the sweep of the whole grid.
func (cfg *ChaosConfig) onHosts(ctx context.Context, w io.Writer) (*chaosHosts, error) {
	sw, err := launcher.OpenSweep(ctx, launcher.SweepOptions{Hosts: cfg.Hosts, SSHConfig: cfg.SSHConfig, InsecureIgnoreHostKey: cfg.InsecureIgnoreHostKey})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "hosts: %s\n", sw.Describe())
	ctx, cancel := context.WithCancel(ctx)
	cells := len(cfg.Algos) * len(cfg.Ns)
	h := &chaosHosts{cfg: cfg, sweep: sw, cancel: cancel, over: make(chan struct{}), runs: make([][]ChaosRun, cells), left: make([]int, cells)}
	h.cond = sync.NewCond(&h.mu)
	for c := range h.runs {
		h.runs[c], h.left[c] = make([]ChaosRun, cfg.Runs), cfg.Runs
	}
	// job i is run i%Runs of cell i/Runs, cells in the table's order (algorithm, then N)
	at := func(i int) (algo string, n int, seed int64) {
		c := i / cfg.Runs
		return cfg.Algos[c/len(cfg.Ns)], cfg.Ns[c%len(cfg.Ns)], cfg.Seed + int64(i%cfg.Runs)
	}
	var again sync.WaitGroup
	local := make(chan struct{}, runtime.GOMAXPROCS(0)) // the runs made again here, on every core
	jobs := launcher.SweepJobs{
		Count: cells * cfg.Runs,
		Job: func(i int) any {
			algo, n, seed := at(i)
			return NewSweepJob(SweepChaos, cfg.runConfig(algo, n, seed), cfg.CheckDeterminism)
		},
		Done: func(i int, host string, raw json.RawMessage) bool {
			algo, n, seed := at(i)
			lc := cfg.runConfig(algo, n, seed)
			base := ChaosRun{Dir: lc.Out, Seed: seed, Replay: replayCommand(lc)}
			var res SweepResult
			if err := json.Unmarshal(raw, &res); err != nil || res.Chaos == nil {
				base.Failed, base.Why = []string{"no result"}, fmt.Sprintf("host %s sent a result that is not a chaos run: %.200s", host, raw)
				h.put(i, base)
				return false
			}
			r := *res.Chaos
			r.Dir, r.Seed, r.Replay = base.Dir, base.Seed, base.Replay
			if r.Status() == "pass" && r.Lost == 0 {
				h.put(i, r)
				return false
			}
			again.Add(1)
			go func() {
				defer again.Done()
				local <- struct{}{}
				defer func() { <-local }()
				mine, digest, err := simChaosRun(lc, base, cfg.CheckDeterminism, true)
				if err != nil {
					mine.OK, mine.Failed, mine.Why = false, append(mine.Failed, "not written"), err.Error()
				}
				if digest != res.Digest {
					mine.OK, mine.Limit, mine.Inconclusive = false, false, false
					mine.Failed = append(mine.Failed, "nondeterministic")
					mine.Why = AcrossHosts(host, res.Digest, digest)
				}
				h.put(i, mine)
			}()
			return false
		},
		Lost: func(host, why string) {
			h.mu.Lock()
			h.lost = append(h.lost, host+": "+why)
			h.mu.Unlock()
			fmt.Fprintf(w, "host %s lost: %s; its unfinished runs go to the other hosts\n", host, why)
		},
	}
	go func() {
		err := sw.Run(ctx, jobs)
		again.Wait()
		h.mu.Lock()
		h.err = err
		close(h.over)
		h.cond.Broadcast()
		h.mu.Unlock()
	}()
	return h, nil
}

// put records run i.
func (h *chaosHosts) put(i int, r ChaosRun) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := i / h.cfg.Runs
	h.runs[c][i%h.cfg.Runs] = r
	h.left[c]--
	h.cond.Broadcast()
}

// cell waits for cell c's runs (measure's cellRuns over hosts), telling progress how many are in.
func (h *chaosHosts) cell(ctx context.Context, c int, _ string, _ int, progress func(int)) ([]ChaosRun, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for h.left[c] > 0 {
		select {
		case <-h.over:
			if h.err == nil {
				h.err = fmt.Errorf("the sweep over hosts ended with %d runs of this cell missing", h.left[c])
			}
			return nil, h.err
		default:
		}
		progress(h.cfg.Runs - h.left[c])
		h.cond.Wait()
	}
	progress(h.cfg.Runs)
	return h.runs[c], ctx.Err()
}

// finish stops the sweep (when it is not over) and says how many runs each host made, and which
// were lost.
func (h *chaosHosts) finish(w io.Writer) {
	h.cancel()
	<-h.over
	var parts []string
	for _, s := range h.sweep.Hosts() {
		p := fmt.Sprintf("%s %d", s.Name, s.Runs)
		if s.Lost != "" {
			p += " (lost)"
		}
		parts = append(parts, p)
	}
	fmt.Fprintf(w, "runs per host: %s\n", strings.Join(parts, ", "))
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.lost {
		fmt.Fprintf(w, "lost host %s\n", l)
	}
}
