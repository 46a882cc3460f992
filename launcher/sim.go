package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// Simulated is a run made in the simulator and judged in memory: what `run --sim` writes into its
// directory, before it is written.
type Simulated struct {
	// Run is the whole run: cluster.json (with "world": "sim"), the node logs, the chaos and the
	// launcher records.
	Run *logs.Run
	// Verdict is the checker's verdict on Run, the verdict.json a run directory would hold.
	Verdict *check.Verdict
}

// Simulate resolves cfg (cfg.Sim is implied; cfg.Out is not used) and makes the run in the
// simulator: the node's own code in virtual time, nothing written. For sweeps of thousands of seeds
// that keep only the runs that fail (WriteDir).
func Simulate(cfg Config) (*Simulated, error) {
	cfg.Sim = true
	p, err := resolve(cfg)
	if err != nil {
		return nil, err
	}
	run, err := simulate(p, "")
	if err != nil {
		return nil, err
	}
	return &Simulated{Run: run, Verdict: check.Check(run, check.Options{})}, nil
}

// WriteDir writes the run and its verdict into dir as `run --sim` does (dir may exist; files of the
// same names are replaced).
func (s *Simulated) WriteDir(dir string) error {
	if err := sim.WriteDir(s.Run, dir); err != nil {
		return err
	}
	return s.Verdict.WriteFile(dir)
}

// simulate makes a resolved run in the simulator: the same cluster.json (its addresses simulated,
// "world": "sim"), the same schedule, the node's own code in virtual time. With logDir the nodes
// write their logs there as they go, and the run holds none of their events.
func simulate(p *plan, logDir string) (*logs.Run, error) {
	s, err := newSimCluster(p, logDir)
	if err != nil {
		return nil, err
	}
	return s.Run()
}

// newSimCluster makes the simulated cluster of a resolved run (logDir: sim.Options.LogDir).
func newSimCluster(p *plan, logDir string) (*sim.Cluster, error) {
	c := p.cluster
	c.Nodes = make([]rundir.Node, p.cfg.Nodes)
	for i := range c.Nodes {
		c.Nodes[i] = rundir.Node{ID: i + 1}
	}
	// The run's time origin is virtual; its wall-clock base is the seed's, so that the same seed
	// gives the same bytes.
	c.Created = time.Unix(0, sim.DefaultBase).UTC().Format(time.RFC3339)
	return sim.NewCluster(c, p.sched, sim.Options{LogDir: logDir})
}

// makeSimRun makes a resolved run in the simulator, writes it into dir and checks it there, as a
// real run's directory is checked.
func makeSimRun(p *plan, dir string) (int, error) {
	cfg, c := p.cfg, p.cluster
	say := func(format string, a ...any) { fmt.Fprintf(cfg.Progress, format+"\n", a...) }
	say("leaderlab: %s on %s, %d nodes, ids %s %s, seed %d (simulated)", c.Algo, c.Topology, cfg.Nodes, c.Placement, ringShown(c.Ring), c.Seed)
	say("leaderlab: run directory %s", dir)
	if cfg.Nemesis != "" {
		say("leaderlab: the nemesis (%s) drew %d steps, saved in cluster.json:\n%s", cfg.Nemesis, len(p.sched.Steps), indent(p.sched.String()))
	}
	start := time.Now()
	// The nodes write their logs into dir as they go: the run is never held in memory, however
	// long; what is left to write (chaos, launcher, cluster.json) is small.
	run, err := simulate(p, dir)
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
	var code int
	p.verdict, code, err = CheckVerdict(dir, cfg.Stdout)
	return code, err
}
