package sim

import (
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/topology"
)

// The partition sweep (issue 4): the seeded sweeps of the earlier issues, extended to partitions.
// For Bully and every ring algorithm, runs with one partition — halves, isolate the leader, or
// random halves — at a random time, healed later, a third of them with a kill (and maybe a restart)
// on top. Each run is judged by the checker after the heal and the settle time (agreement on the
// highest live ID, uniqueness per component, termination, integrity), and by the simulator's own
// view of the sides: a partition that lasts long enough must leave every side with a leader of its
// own, its highest live node. A failure prints the seed and the command that replays it.

var (
	partSeed  = flag.Int64("part-seed", -1, "replay one run of TestPartitionSweep (-run naming one algorithm) and log its events")
	partSweep = flag.Int("part-sweep", 200, "runs per algorithm of TestPartitionSweep (a tenth with -short)")
	partFails = flag.Int("part-fails", 5, "failures per algorithm after which TestPartitionSweep stops (0: never)")
)

// partAlgos are the algorithms of the sweep: Bully on its mesh and every ring algorithm on each of
// its ring topologies.
func partAlgos() []ringAlgo {
	bully, _ := election.Lookup("bully")
	return append([]ringAlgo{{bully, "mesh"}}, ringAlgos()...)
}

// sideStep is how often the sweep looks at the sides during a partition.
const sideStep = 10 * time.Millisecond

// sideBound is how long after a partition (or the last kill or restart during it) every side must
// have a leader of its own: the detector's timeout for each node that a side must notice is gone
// (a ring node notices the far side one neighbour at a time: it watches only its two live
// neighbours), plus a second for the election itself (Bully's T and T1 are 200 and 600 ms). A
// partition shorter than that is judged at the end only.
func sideBound(cfg Config) time.Duration { return time.Second + time.Duration(cfg.N)*cfg.Timeout }

// partCase is one drawn run of the sweep.
type partCase struct {
	cfg  Config
	desc string
	at   time.Duration // the partition
	heal time.Duration
}

// partitionCase draws run number seed: 2..10 nodes in any placement and initiator form, links of
// 1..5ms (a third of the runs up to 20ms), the detector on; a partition at 0..1.5s (a quarter of
// the runs during the first election, where "isolate" takes the highest ID since there is no
// leader yet), lasting 50ms..4s; in a third of the runs a kill during it (or up to 300ms after the
// heal) of the leader or a random node, restarted later in half of them. The run ends 3s after its
// last fault: more than the ring core's stall timer and a new election.
func partitionCase(a ringAlgo, seed int64) partCase {
	r := rand.New(rand.NewSource(seed))
	n := 2 + r.Intn(9)
	placement := topology.Placements[r.Intn(len(topology.Placements))]
	order, err := topology.Place(n, placement, seed)
	if err != nil {
		panic(err)
	}
	form := ringForms[r.Intn(len(ringForms))]
	cfg := DefaultConfig(a.Name, n)
	cfg.Topology, cfg.Order, cfg.Placement, cfg.Seed = a.topo, order, placement, seed
	cfg.Initiators = drawInitiators(r, form, n)
	if r.Intn(3) == 0 {
		cfg.MaxDelay = time.Duration(1+r.Intn(20)) * time.Millisecond
	}
	at := 200*time.Millisecond + time.Duration(r.Int63n(int64(1300*time.Millisecond)))
	if r.Intn(4) == 0 {
		at = time.Duration(r.Int63n(int64(200 * time.Millisecond)))
	}
	length := 50*time.Millisecond + time.Duration(r.Int63n(int64(4*time.Second)))
	part := Fault{At: at, Op: Partition}
	switch r.Intn(3) {
	case 0:
		part.Shape = chaos.ShapeHalves
	case 1:
		part.Shape, part.Node = chaos.ShapeIsolate, TargetLeader
		if at < 200*time.Millisecond {
			part.Node = TargetHighest
		}
	default:
		part.Shape = chaos.ShapeRandomHalves
	}
	cfg.Faults = []Fault{part, {At: at + length, Op: Heal}}
	if r.Intn(3) == 0 {
		victim := TargetLeader
		if r.Intn(2) == 0 {
			victim = 1 + r.Intn(n)
		}
		kill := Fault{At: at + time.Duration(r.Int63n(int64(length+300*time.Millisecond))), Op: Kill, Node: victim}
		cfg.Faults = append(cfg.Faults, kill)
		if r.Intn(2) == 0 {
			// restart leader: the node the kill took when it took the leader
			cfg.Faults = append(cfg.Faults, Fault{At: kill.At + 100*time.Millisecond + time.Duration(r.Int63n(int64(1500*time.Millisecond))), Op: Restart, Node: victim})
		}
	}
	slices.SortStableFunc(cfg.Faults, func(x, y Fault) int { return cmpDuration(x.At, y.At) })
	cfg.Settle = 3 * time.Second
	cfg.Duration = cfg.Faults[len(cfg.Faults)-1].At + cfg.Settle
	var steps []string
	for _, f := range cfg.Faults {
		steps = append(steps, f.String())
	}
	desc := fmt.Sprintf("n=%d ids=%s %v initiators=%s %v links %v..%v; %s",
		n, placement, order, form, cfg.Initiators, cfg.MinDelay, cfg.MaxDelay, strings.Join(steps, "; "))
	return partCase{cfg: cfg, desc: desc, at: at, heal: at + length}
}

// partResult is what one run of the sweep found.
type partResult struct {
	hard, soft []string
	verdict    *logs.Verdict
	// judged: the partition lasted sideBound after its last fault, so the sides were judged;
	// elected is how long after that fault every side had its leader (when they did).
	judged  bool
	elected time.Duration
	settled bool
	asleep  bool // a judged partition left a side that never woke
}

// sides are the partition's sides as applied (the record's groups), nil if it was not applied.
func sides(s *Sim) [][]int {
	for _, c := range slices.Backward(s.Log().Chaos) {
		if c.Op == logs.OpPartition && c.Error == "" {
			return c.Groups
		}
	}
	return nil
}

// sidesLed tells whether every side with a live node follows its own highest live node, which
// believes in itself; otherwise it says what each side believes. A side none of whose live nodes
// has a leader or takes part in an election is asleep (a partition during the first election can
// cut every initiator off from it, and a non-initiator waits for a message): it is not required
// to elect, and asleep counts such sides.
func sidesLed(s *Sim, groups [][]int) (ok bool, asleep int, view string) {
	ok = true
	var views []string
	for _, g := range groups {
		top, awake := 0, false
		for _, id := range g {
			if s.Alive(id) {
				top = id
				awake = awake || s.Leader(id) != 0 || s.Participant(id)
			}
		}
		if top == 0 {
			continue
		}
		if !awake {
			asleep++
			views = append(views, fmt.Sprintf("side %v: asleep", g))
			continue
		}
		var b []string
		for _, id := range g {
			if !s.Alive(id) {
				continue
			}
			if s.Leader(id) != top || s.Participant(id) {
				ok = false
			}
			b = append(b, fmt.Sprintf("%d->%d", id, s.Leader(id)))
		}
		views = append(views, fmt.Sprintf("side %v (highest live %d): %s", g, top, strings.Join(b, " ")))
	}
	return ok, asleep, strings.Join(views, "; ")
}

// lastFaultBefore is the time of the last fault of cfg at or before t.
func lastFaultBefore(cfg Config, t time.Duration) time.Duration {
	var last time.Duration
	for _, f := range cfg.Faults {
		if f.At <= t {
			last = f.At
		}
	}
	return last
}

// partitionRun runs one case, watching the sides during the partition, and judges it.
func partitionRun(c partCase, noEvents bool) (res partResult, s *Sim) {
	cfg := c.cfg
	cfg.NoEvents = noEvents
	s, err := New(cfg)
	if err != nil {
		return partResult{hard: []string{err.Error()}}, nil
	}
	if !advance(s, c.at) {
		return partResult{hard: []string{livelock(s)}}, s
	}
	groups := sides(s)
	var since time.Duration = -1 // when the sides last became led
	for t := c.at + sideStep; t < c.heal; t += sideStep {
		if !advance(s, t) {
			return partResult{hard: []string{livelock(s)}}, s
		}
		if ok, _, _ := sidesLed(s, groups); !ok || lastFaultBefore(cfg, t) > since {
			since = -1
			if ok {
				since = t
			}
		}
	}
	if !advance(s, c.heal-1) {
		return partResult{hard: []string{livelock(s)}}, s
	}
	last := lastFaultBefore(cfg, c.heal-1)
	ok, asleep, view := sidesLed(s, groups)
	res.judged = groups != nil && c.heal-last >= sideBound(cfg)
	res.asleep = res.judged && asleep > 0
	if ok && since >= 0 {
		res.settled, res.elected = true, since-last
	}
	if res.judged && !ok {
		res.hard = append(res.hard, fmt.Sprintf("sides: %v after the partition (its last fault at %v), not every side follows its own highest live node: %s",
			c.heal-last, last, view))
	}
	if !advance(s, cfg.Duration) {
		return partResult{hard: append(res.hard, livelock(s))}, s
	}
	hard, soft, v := partJudge(s, s.Run())
	res.hard, res.soft, res.verdict = append(res.hard, hard...), soft, v
	return res, s
}

// partJudge is crashJudge with uniqueness required: the checker judges it per component, so the
// leaders of two sides are no violation, but two leaders in one component beyond the grace (two
// sides that fail to merge after the heal) are. Only complexity is excused by the faults.
func partJudge(s *Sim, run *logs.Run) (hard, soft []string, v *logs.Verdict) {
	hard, soft, v = crashJudge(s, run)
	soft = slices.DeleteFunc(soft, func(p string) bool {
		if strings.HasPrefix(p, logs.PropUniqueness+":") {
			hard = append(hard, p)
			return true
		}
		return false
	})
	return hard, soft, v
}

// partStats gathers a sweep's figures for one algorithm.
type partStats struct {
	mu                        sync.Mutex
	runs, judged, asleep      int
	splitRuns                 int
	elected, converged, split []float64 // ms
	neverConverged            int
}

func (p *partStats) add(res partResult) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runs++
	if res.judged {
		p.judged++
	}
	if res.asleep {
		p.asleep++
	}
	if res.settled {
		p.elected = append(p.elected, float64(res.elected)/1e6)
	}
	if v := res.verdict; v != nil {
		for _, w := range v.Metrics.SplitBrain {
			p.split = append(p.split, w.MS)
		}
		if len(v.Metrics.SplitBrain) > 0 {
			p.splitRuns++
		}
		for _, h := range v.Metrics.Heals {
			if h.ConvergedMS == nil {
				p.neverConverged++
				continue
			}
			p.converged = append(p.converged, *h.ConvergedMS)
		}
	}
}

// quantiles renders p50/p90/max of xs.
func quantiles(xs []float64) string {
	if len(xs) == 0 {
		return "none"
	}
	xs = slices.Sorted(slices.Values(xs))
	q := func(p float64) float64 { return xs[min(len(xs)-1, int(p*float64(len(xs))))] }
	return fmt.Sprintf("p50 %.0fms, p90 %.0fms, max %.0fms (%d)", q(0.5), q(0.9), xs[len(xs)-1], len(xs))
}

// TestPartitionSweep runs 200 seeded partition scenarios per algorithm (see partitionCase) and
// requires the checker's agreement, uniqueness, termination and integrity after the heal, the
// simulator's agreement at the end, and a leader of its own on every side of a partition that lasts
// sideBound. It logs, per algorithm, how long the sides took to elect, the split-brain windows and
// the convergence after the heal.
func TestPartitionSweep(t *testing.T) {
	runs := int64(*partSweep)
	if testing.Short() {
		runs /= 10
	}
	for _, a := range partAlgos() {
		t.Run(a.name(), func(t *testing.T) {
			if *partSeed >= 0 {
				c := partitionCase(a, *partSeed)
				t.Logf("%s seed %d: %s", a.name(), *partSeed, c.desc)
				res, _ := partitionRun(c, false)
				replayRing(t, c.cfg)
				if len(res.hard) > 0 {
					t.Errorf("%s", strings.Join(res.hard, "\n"))
				}
				return
			}
			t.Parallel()
			const shards = 2
			var failed atomic.Int64
			var st partStats
			t.Cleanup(func() {
				t.Logf("%s: %d runs, %d failed; sides judged in %d, %d of them with a side asleep (every side led after the partition's last fault: %s); split-brain windows in %d runs (%s); heal to agreement: %s, %d heals never converged",
					a.name(), st.runs, failed.Load(), st.judged, st.asleep, quantiles(st.elected), st.splitRuns, quantiles(st.split), quantiles(st.converged), st.neverConverged)
			})
			for sh := range int64(shards) {
				t.Run(fmt.Sprintf("shard%d", sh), func(t *testing.T) {
					t.Parallel()
					for seed := sh; seed < runs; seed += shards {
						if *partFails > 0 && failed.Load() >= int64(*partFails) {
							return // enough to go on with
						}
						c := partitionCase(a, seed)
						res, _ := partitionRun(c, false)
						st.add(res)
						if len(res.hard) > 0 {
							failed.Add(1)
							t.Errorf("%s seed %d (%s):\n\t%s\n\treplay: go test ./sim -run 'TestPartitionSweep/^%s$' -part-seed %d -v",
								a.name(), seed, c.desc, strings.Join(res.hard, "\n\t"), a.name(), seed)
						}
					}
				})
			}
		})
	}
}
