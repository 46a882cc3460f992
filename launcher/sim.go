package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// makeSimRun makes a resolved run in the simulator: the same cluster.json (its addresses
// simulated, "world": "sim"), the same schedule, the node's own code in virtual time; then the
// same check as a real run's.
func makeSimRun(p *plan, dir string) (int, error) {
	cfg := p.cfg
	c := p.cluster
	c.Nodes = make([]rundir.Node, cfg.Nodes)
	for i := range c.Nodes {
		c.Nodes[i] = rundir.Node{ID: i + 1}
	}
	// The run's time origin is virtual; its wall-clock base is the seed's, so that the same seed
	// gives the same bytes.
	c.Created = time.Unix(0, sim.DefaultBase).UTC().Format(time.RFC3339)
	say := func(format string, a ...any) { fmt.Fprintf(cfg.Progress, format+"\n", a...) }
	say("leaderlab: %s on %s, %d nodes, ids %s %v, seed %d (simulated)", c.Algo, c.Topology, len(c.Nodes), c.Placement, c.Ring, c.Seed)
	say("leaderlab: run directory %s", dir)
	if cfg.Nemesis != "" {
		say("leaderlab: the nemesis (%s) drew %d steps, saved in cluster.json:\n%s", cfg.Nemesis, len(p.sched.Steps), indent(p.sched.String()))
	}
	s, err := sim.NewCluster(c, p.sched, sim.Options{})
	if err != nil {
		return ExitUnusable, err
	}
	start := time.Now()
	run, err := s.Run()
	if run == nil {
		return ExitUnusable, err
	}
	// The stderr directory of a real run holds the processes' stderr; simulated nodes have none.
	_ = os.Remove(filepath.Join(dir, rundir.StderrDir))
	if werr := sim.WriteDir(run, dir); werr != nil {
		return ExitUnusable, werr
	}
	if err != nil {
		return ExitUnusable, fmt.Errorf("%v (the run's logs are in %s)", err, dir)
	}
	say("leaderlab: simulated %v in %v of wall time", c.Duration.D(), time.Since(start).Round(time.Millisecond))
	return Check(dir, cfg.Stdout)
}
