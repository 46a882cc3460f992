package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// hostRun is one run of a series over hosts, once its result (and, for a run that did not pass,
// its making again here) is in.
type hostRun struct {
	res   launcher.Result // Dir: the directory written here ("" for a run only a host made)
	err   error
	where string // the directory, or the host that made it
	seed  int64
	why   string // nondeterministic: the two runs of the seed differ
}

// runManyOnHosts is run --sim --count N with --hosts or --ssh-config: the series' seeds go to the
// hosts' sweep workers (launcher.Sweep), from one queue, and the lines and summary are runMany's,
// in seed order. A run that did not pass is made again here into the directory runMany would
// have written (OUT/run-00K, or runs/…), and a digest that differs from the host's fails it as
// nondeterministic across hosts; a run that passed on its host is not written here. Without
// --seed the series' first seed is drawn here and printed.
func runManyOnHosts(ctx context.Context, cfg launcher.Config, count int, untilFail, report, twice bool, out *ciOut) (int, error) {
	text := out.text()
	if strings.HasPrefix(cfg.Topology, "@") {
		return ExitUnusable, fmt.Errorf("--topology %s: a sweep over hosts cannot read an edge list of this machine on its hosts; give a generated graph (grid:RxC, torus:RxC, tree:K, random:D) or run the series here (without --hosts and --ssh-config)", cfg.Topology)
	}
	if err := launcher.CheckSweepRun(cfg); err != nil {
		return ExitUnusable, err
	}
	sw, err := launcher.OpenSweep(ctx, launcher.SweepOptions{Hosts: cfg.Hosts, SSHConfig: cfg.SSHConfig, InsecureIgnoreHostKey: cfg.InsecureIgnoreHostKey})
	if err != nil {
		return ExitUnusable, err
	}
	fmt.Fprintf(text, "hosts: %s\n", sw.Describe())
	if !cfg.SeedSet {
		cfg.Seed, cfg.SeedSet = launcher.SweepSeed(), true
		fmt.Fprintf(text, "seeds %d, %d, … (drawn; --seed chooses them)\n", cfg.Seed, cfg.Seed+1)
	}
	local := cfg
	local.Hosts, local.SSHConfig, local.InsecureIgnoreHostKey = "", "", false
	local.Stdout, local.Progress = io.Discard, io.Discard
	runConfig := func(i int) launcher.Config {
		c := local
		c.Seed = cfg.Seed + int64(i)
		if cfg.Out != "" {
			c.Out = filepath.Join(cfg.Out, fmt.Sprintf("run-%03d", i+1))
		}
		return c
	}

	var (
		mu       sync.Mutex
		cond     = sync.NewCond(&mu)
		results  = map[int]*hostRun{}
		finished bool
		sweepErr error
		cut      = -1 // --until-fail: the first run known to fail; no later one is written here
		again    sync.WaitGroup
		cores    = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	put := func(i int, r *hostRun) {
		mu.Lock()
		results[i] = r
		cond.Broadcast()
		mu.Unlock()
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := launcher.SweepJobs{
		Count: count,
		Job:   func(i int) any { return bench.NewSweepJob(bench.SweepRun, runConfig(i), twice) },
		Done: func(i int, host string, raw json.RawMessage) bool {
			c := runConfig(i)
			var res bench.SweepResult
			if err := json.Unmarshal(raw, &res); err != nil {
				put(i, &hostRun{res: launcher.Result{Code: ExitUnusable}, seed: c.Seed,
					err: fmt.Errorf("host %s sent a result that is not a run's: %v: %.200s", host, err, raw)})
				return true
			}
			r := &hostRun{res: launcher.Result{Code: res.Code, Verdict: res.Verdict}, seed: c.Seed, why: res.Twice,
				where: fmt.Sprintf("(made on %s; not written here)", host)}
			if res.Error != "" {
				r.err = errors.New(res.Error)
			}
			switch {
			case res.Code == ExitUnusable:
				put(i, r)
				return true // the next would not be made either
			case res.Code == ExitOK && res.Twice == "":
				put(i, r)
				return false
			}
			stop := untilFail && (res.Code == ExitViolation || res.Twice != "")
			if stop {
				mu.Lock()
				if cut < 0 || i < cut {
					cut = i
				}
				mu.Unlock()
			}
			again.Add(1)
			go func() { // made again here, to write its directory
				defer again.Done()
				cores <- struct{}{}
				defer func() { <-cores }()
				mu.Lock()
				past := cut >= 0 && i > cut
				mu.Unlock()
				if past {
					return // never told: the series ends before it
				}
				lres, lerr := launcher.Launch(sctx, c)
				mine := &hostRun{res: lres, err: lerr, where: lres.Dir, seed: c.Seed, why: res.Twice}
				if lres.Dir != "" && lres.Code != ExitUnusable {
					here := ""
					if run, err := logs.ReadRun(lres.Dir); err == nil {
						here = bench.RunDigest(run)
					}
					if here != res.Digest {
						mine.why = bench.AcrossHosts(host, res.Digest, here)
					}
				}
				put(i, mine)
			}()
			return stop
		},
		Lost: func(host, why string) {
			fmt.Fprintf(text, "host %s lost: %s; its unfinished runs go to the other hosts\n", host, why)
		},
	}
	var ran sync.WaitGroup
	ran.Add(1)
	go func() {
		defer ran.Done()
		err := sw.Run(sctx, jobs)
		again.Wait()
		mu.Lock()
		finished, sweepErr = true, err
		cond.Broadcast()
		mu.Unlock()
	}()

	ser := &series{text: text, count: count, start: time.Now()}
	unusable := false
	var unusableErr error
	for i := 0; count == 0 || i < count; i++ {
		mu.Lock()
		for results[i] == nil && !finished {
			cond.Wait()
		}
		r := results[i]
		mu.Unlock()
		if r == nil { // the sweep ended without it: interrupted, or every host lost
			ser.sum.StoppedEarly = true
			break
		}
		out.add(r.res, r.err)
		code := r.res.Code
		if dir := r.res.Dir; dir != "" {
			keepLatest(dir)
			if report && code != ExitUnusable {
				if path, rerr := renderReport(dir); rerr != nil {
					fmt.Fprintf(text, "leaderlab: --report: %v\n", rerr)
				} else {
					fmt.Fprintf(text, "report: %s\n", path)
				}
			}
		}
		if r.why != "" && code != ExitUnusable {
			fmt.Fprintf(text, "run %d: NONDETERMINISTIC  seed %d  %s: %s\n", i+1, r.seed, r.where, r.why)
			code = ExitViolation
		}
		stop, bad := ser.tell(i, r.seed, r.where, code, r.err, untilFail)
		if bad {
			unusable, unusableErr = true, r.err
		}
		if stop {
			break
		}
	}
	cancel()
	ran.Wait()
	var per []string
	for _, h := range sw.Hosts() {
		p := fmt.Sprintf("%s %d", h.Name, h.Runs)
		if h.Lost != "" {
			p += " (lost: " + h.Lost + ")"
		}
		per = append(per, p)
	}
	fmt.Fprintf(text, "runs per host: %s\n", strings.Join(per, ", "))
	switch {
	case unusable:
		return finishMany(out, &ser.sum, text, ExitUnusable, unusableErr)
	case sweepErr != nil && ctx.Err() == nil && !errors.Is(sweepErr, context.Canceled):
		return finishMany(out, &ser.sum, text, ExitUnusable, sweepErr)
	}
	return ser.finish(out)
}
