package launcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// makeHandSimRun makes a resolved run in the simulator driven by hand: virtual time paced against
// the wall clock at the Hand's speed, faults and the stop when the Hand is asked; then the run
// directory is written and checked as makeSimRun does. An interrupted run (ctx) stops at once, as
// soon as the checker's settle time allows, in virtual time: a simulated run has no process to
// leave behind.
func makeHandSimRun(ctx context.Context, p *plan, dir string) (int, error) {
	cfg, c, h := p.cfg, p.cluster, p.cfg.Hand
	say := func(format string, a ...any) { fmt.Fprintf(cfg.Progress, format+"\n", a...) }
	s, err := newSimCluster(p, "")
	if err != nil {
		return ExitUnusable, err
	}
	say("leaderlab: %s on %s, %d nodes, ids %s %s, seed %d (simulated, by hand)", c.Algo, c.Topology, cfg.Nodes, c.Placement, ringShown(c.Ring), c.Seed)
	say("leaderlab: run directory %s", dir)
	h.mu.Lock()
	err = s.Start()
	h.sc = s
	h.mu.Unlock()
	if err != nil {
		return ExitUnusable, err
	}
	h.setBegan(dir, *s.Cluster(), sim.DefaultBase+int64(s.Begin()))
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	last := time.Now()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			h.mu.Lock()
			if h.stop == 0 {
				h.stop = s.StopAt(0)
			}
			done, err = s.AdvanceTo(s.Begin() + s.Cluster().Duration.D() + time.Hour)
			h.mu.Unlock()
			continue
		case now := <-tick.C:
			h.mu.Lock()
			step := time.Duration(float64(now.Sub(last)) * h.speed)
			done, err = s.AdvanceTo(s.Now() + step)
			h.mu.Unlock()
			last = now
		}
	}
	run := s.Log()
	_ = os.Remove(filepath.Join(dir, rundir.StderrDir))
	if werr := sim.WriteDir(run, dir); werr != nil {
		return ExitUnusable, werr
	}
	if err != nil {
		return ExitUnusable, fmt.Errorf("%v (the run's logs are in %s)", err, dir)
	}
	var code int
	p.verdict, code, err = CheckVerdict(dir, cfg.Stdout)
	return code, err
}
