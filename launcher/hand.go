package launcher

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// Hand drives a run by hand while it runs (leaderlab ui, run --ui): faults taken when asked,
// through the run's own chaos executor and into its chaos.jsonl like a schedule's steps, and the
// stop chosen when asked. A run with a Hand (Config.Hand) lasts until Stop, Config.Duration being
// its bound; when it stops, cluster.json's chaos gains the hand steps (each at its offset from the
// begin, its target the node it took) and its duration becomes the run's, so that `run --replay`
// runs the same faults at the same offsets and `check` judges the directory like any other.
//
// In the simulator (Config.Sim) the run is paced against the wall clock (SetSpeed: virtual time per
// wall time) and the hand steps land at whole milliseconds of virtual time before anything else due
// then, where the replay's scheduled steps land: the replay is the same run, byte for byte.
type Hand struct {
	mu      sync.Mutex
	began   chan struct{}
	done    chan struct{}
	dir     string
	cluster rundir.Cluster
	begin   int64 // Unix ns of the begin record (virtual for a simulated run)

	// the world the run is made in: one of the two is set once the run began
	real *runner
	sc   *sim.Cluster

	speed  float64
	steps  []string           // the hand steps' schedule lines
	recs   []logs.ChaosRecord // the chaos records a real run wrote (for Apply's answer; recMu)
	stop   time.Duration      // the stop's offset, once chosen
	cancel context.CancelFunc // ends a real run's observed time early
	// lastFault is when the last hand fault ends (a pause's "for" counted), from the begin.
	lastFault time.Duration
	wg        sync.WaitGroup // the resumes of hand pauses with a "for"
	recMu     sync.Mutex
	feed      feedState
}

// NewHand makes a Hand to put in Config.Hand.
func NewHand() *Hand {
	return &Hand{began: make(chan struct{}), done: make(chan struct{}), speed: 1}
}

// Began is closed once the run began (its nodes told to begin), or ended without beginning.
func (h *Hand) Began() <-chan struct{} { return h.began }

// Done is closed once the run is over (stopped, and judged or failed).
func (h *Hand) Done() <-chan struct{} { return h.done }

// Run is the run's directory and cluster.json as it began, and the begin record's time (Unix ns).
func (h *Hand) Run() (dir string, c rundir.Cluster, begin int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.dir, h.cluster, h.begin
}

// Simulated tells whether the run is made in the simulator.
func (h *Hand) Simulated() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.sc != nil
}

// SetSpeed sets a simulated run's pace: seconds of virtual time per second of wall time (0
// holds it still; at most 100).
func (h *Hand) SetSpeed(x float64) error {
	if x < 0 || x > 100 {
		return fmt.Errorf("speed %v: want 0 (held) to 100 times the wall clock", x)
	}
	h.mu.Lock()
	h.speed = x
	h.mu.Unlock()
	return nil
}

// ErrNotBegun is Apply's answer before the nodes began.
var ErrNotBegun = errors.New("the run has not begun yet")

// Apply takes a fault now: action is a step of the chaos language without its time ("kill 5",
// "pause 3", "partition 1-2|3-5", "link 1->2 loss 20%", "heal"). By hand a target is a node's ID
// and a partition names its sides (or isolates a node): a draw (random, random-halves) or a target
// that moves (leader, highest, lowest) would not replay the same. It returns the chaos.jsonl
// records the step wrote; an action that could not be carried out is an error naming it.
func (h *Hand) Apply(action string) ([]logs.ChaosRecord, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.began:
	default:
		return nil, ErrNotBegun
	}
	if h.stop > 0 {
		return nil, fmt.Errorf("%q: the run is stopping (at +%v): no more faults", action, h.stop)
	}
	n := len(h.cluster.Nodes)
	st, err := handStep(action, n)
	if err != nil {
		return nil, err
	}
	var recs []logs.ChaosRecord
	switch {
	case h.sc != nil:
		recs, err = h.sc.Apply(st)
		if err == nil {
			h.steps = append(h.steps, recsStep(recs, st))
		}
	case h.real != nil:
		recs, err = h.applyReal(st)
	default:
		err = errors.New("the run is over")
	}
	if err != nil {
		return nil, fmt.Errorf("%q: %w", action, err)
	}
	for _, r := range recs {
		if r.Error != "" {
			return recs, fmt.Errorf("%q: not applied: %s", action, r.Error)
		}
	}
	return recs, nil
}

func recsStep(recs []logs.ChaosRecord, st chaos.Step) string {
	if len(recs) > 0 {
		return recs[0].Step
	}
	return st.Text
}

// handStep parses one action taken by hand.
func handStep(action string, n int) (chaos.Step, error) {
	action = strings.TrimSpace(action)
	if action == "" || strings.ContainsAny(action, ";\n#") || strings.HasPrefix(action, "at ") {
		return chaos.Step{}, fmt.Errorf("fault %q: want one action of the chaos language without its time, e.g. \"kill 5\", \"pause 3\", \"partition 1-2|3-5\", \"link 1->2 loss 20%%\", \"heal\"", action)
	}
	sched, err := chaos.Parse("at 0s "+action, n)
	if err != nil {
		return chaos.Step{}, fmt.Errorf("fault %q: %w", action, err)
	}
	if err := sched.Unsupported(supportedOps); err != nil {
		return chaos.Step{}, fmt.Errorf("fault %q: %w", action, err)
	}
	st := sched.Steps[0]
	if k := st.Target.Kind; k != "" && k != chaos.TargetID {
		return chaos.Step{}, fmt.Errorf("fault %q: by hand, name the node by its ID (1..%d): %q is resolved when the step runs, and a replay might resolve it to another node", action, n, k)
	}
	if st.Shape == chaos.ShapeRandomHalves {
		return chaos.Step{}, fmt.Errorf("fault %q: by hand, name the sides (e.g. partition 1-2|3-%d) or a shape drawn from the ring (halves, isolate N, bridge, majorities-ring): random-halves draws them, and a replay might draw others", action, n)
	}
	st.Text = action
	return st, nil
}

// Stop chooses the end of the run: now, or the settle time after the last fault when that is later
// (the checker needs the quiet). It returns the end's offset from the begin.
func (h *Hand) Stop() (time.Duration, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.began:
	default:
		return 0, ErrNotBegun
	}
	if h.stop > 0 {
		return h.stop, nil
	}
	switch {
	case h.sc != nil:
		h.stop = h.sc.StopAt(0)
	case h.real != nil:
		h.stop = h.real.handStopAt()
		time.AfterFunc(time.Until(time.Unix(0, h.begin).Add(h.stop)), h.cancel)
	default:
		return 0, errors.New("the run is over")
	}
	return h.stop, nil
}

// began notes the run's directory, cluster and begin, and opens Apply.
func (h *Hand) setBegan(dir string, c rundir.Cluster, begin int64) {
	h.mu.Lock()
	h.dir, h.cluster, h.begin = dir, c, begin
	h.mu.Unlock()
	close(h.began)
}

// finish closes Done, and Began if the run never began: Done first, so that whoever Began wakes
// sees the run over (the page took a run refused by its configuration for one that began, as often
// as not under the race detector).
func (h *Hand) finish() {
	h.mu.Lock()
	h.real = nil
	h.mu.Unlock()
	began := true
	select {
	case <-h.began:
	default:
		began = false
	}
	close(h.done)
	if !began {
		close(h.began)
	}
}

// handChaos is cluster.json's chaos with the hand steps added.
func handChaos(text string, steps []string) string {
	if len(steps) == 0 {
		return text
	}
	if text != "" {
		text += "\n"
	}
	return text + sim.HandComment + "\n" + strings.Join(steps, "\n")
}

// IDRanges writes IDs as the console does: 1,2,4 and 1-5 (runs of three or more).
func IDRanges(ids []int) string { return idRanges(ids) }
