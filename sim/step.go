package sim

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Step mode (leaderlab ui): a scripted Sim driven one happening at a time by hand — deliver this
// message, fire that timer, crash or restart a node, tell the live nodes a node is gone — that can
// go back: the simulator is deterministic, so the state before the last action is the state the
// actions before it make, replayed from the start. The explorer's counterexamples are stepped
// through the same way, their transitions read as actions.

// Action is one thing done in step mode.
type Action struct {
	// Kind is ActDeliver (the oldest message in flight on the link Peer->Node), ActFire (Node's
	// armed Timer), ActCrash, ActRestart, ActSuspect (Node suspects Peer, Reason said), ActTrust
	// (Node trusts Peer again) or ActGone (every live node suspects Node: the detector's news).
	Kind   string `json:"kind"`
	Node   int    `json:"node,omitempty"`
	Peer   int    `json:"peer,omitempty"`
	Timer  string `json:"timer,omitempty"`
	Reason string `json:"reason,omitempty"`
	// At, when Timed, is the virtual time the action happens at (an explorer trace's); otherwise a
	// delivery or a timer happens when it falls due, or now if that has passed.
	At    time.Duration `json:"at,omitempty"`
	Timed bool          `json:"timed,omitempty"`
}

// The kinds of Action.
const (
	ActDeliver = "deliver"
	ActFire    = "fire"
	ActCrash   = "crash"
	ActRestart = "restart"
	ActSuspect = "suspect"
	ActTrust   = "trust"
	ActGone    = "gone"
)

// String is the action in words: "deliver 1->2", "fire election at 3", "crash 5".
func (a Action) String() string {
	switch a.Kind {
	case ActDeliver:
		return fmt.Sprintf("deliver %d->%d", a.Peer, a.Node)
	case ActFire:
		return fmt.Sprintf("fire %s at %d", a.Timer, a.Node)
	case ActSuspect:
		return fmt.Sprintf("%d suspects %d", a.Node, a.Peer)
	case ActTrust:
		return fmt.Sprintf("%d trusts %d", a.Node, a.Peer)
	case ActGone:
		return fmt.Sprintf("every live node suspects %d", a.Node)
	}
	return fmt.Sprintf("%s %d", a.Kind, a.Node)
}

// Stepper is a scripted Sim with its history.
type Stepper struct {
	cfg  Config
	s    *Sim
	acts []Action
	// when is each action's virtual time, as carried out
	when []time.Duration
}

// NewStepper starts cfg's machines (cfg.Scripted is implied) and holds: nothing happens until Do.
func NewStepper(cfg Config) (*Stepper, error) {
	cfg.Scripted = true
	if cfg.Duration == 0 {
		cfg.Duration = time.Hour
	}
	st := &Stepper{cfg: cfg}
	if err := st.reset(); err != nil {
		return nil, err
	}
	return st, nil
}

func (st *Stepper) reset() error {
	s, err := New(st.cfg)
	if err != nil {
		return err
	}
	if err := s.Begin(); err != nil {
		return err
	}
	st.s, st.acts, st.when = s, nil, nil
	return nil
}

// Sim is the simulator in its current state (to read; Do and Back change it).
func (st *Stepper) Sim() *Sim { return st.s }

// Actions are the actions taken so far, with the virtual time of each.
func (st *Stepper) Actions() ([]Action, []time.Duration) { return st.acts, st.when }

// Do carries out a; one that cannot be done is an error and changes nothing.
func (st *Stepper) Do(a Action) error {
	if err := st.do(a); err != nil {
		// the Sim may have moved its clock: make it again
		keep := st.acts
		if rerr := st.replay(keep); rerr != nil {
			return fmt.Errorf("%v (and the state could not be made again: %v)", err, rerr)
		}
		return err
	}
	st.acts = append(st.acts, a)
	st.when = append(st.when, st.s.Now())
	return nil
}

func (st *Stepper) do(a Action) error {
	s := st.s
	if a.Timed {
		if a.At < s.Now() {
			return fmt.Errorf("%s at %v: the time is %v already", a, a.At, s.Now())
		}
		if err := s.AdvanceTo(a.At); err != nil {
			return err
		}
	}
	switch a.Kind {
	case ActDeliver:
		f, ok := st.head(a.Peer, a.Node)
		if !ok {
			return fmt.Errorf("deliver %d->%d: no message is in flight on that link to a running node", a.Peer, a.Node)
		}
		if !a.Timed && f.Due > s.Now() {
			_ = s.AdvanceTo(f.Due)
		}
		return s.Deliver(a.Peer, a.Node)
	case ActFire:
		for _, t := range st.Timers() {
			if t.Node == a.Node && t.Timer == a.Timer {
				if !a.Timed && t.Due > s.Now() {
					_ = s.AdvanceTo(t.Due)
				}
				return s.Fire(a.Node, a.Timer)
			}
		}
		return fmt.Errorf("fire %q at %d: no such timer is armed there (see the timers pending)", a.Timer, a.Node)
	case ActCrash:
		return s.Crash(a.Node)
	case ActRestart:
		return s.Restart(a.Node)
	case ActSuspect, ActTrust:
		reason := a.Reason
		if reason == "" && a.Kind == ActSuspect {
			reason = "by hand"
		}
		if a.Peer < 1 || a.Peer > st.cfg.N || a.Peer == a.Node {
			return fmt.Errorf("%s: peer %d: want another node's ID in 1..%d", a, a.Peer, st.cfg.N)
		}
		return s.Detect(a.Node, a.Peer, a.Kind == ActSuspect, reason)
	case ActGone:
		if a.Node < 1 || a.Node > st.cfg.N {
			return fmt.Errorf("%s: want an ID in 1..%d", a, st.cfg.N)
		}
		for _, id := range s.ids {
			if id != a.Node && s.Alive(id) && !s.Paused(id) {
				if err := s.Detect(id, a.Node, true, "link broke"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return fmt.Errorf("action %q: want one of deliver, fire, crash, restart, suspect, trust, gone", a.Kind)
}

// Back undoes the last action: the state is made again from the start with the actions before it.
func (st *Stepper) Back() error {
	if len(st.acts) == 0 {
		return fmt.Errorf("back: nothing has been done yet")
	}
	return st.replay(st.acts[:len(st.acts)-1])
}

// GoTo makes the state after the first k actions (k ≤ the actions taken; the later ones are kept
// for a GoTo forward only until the next Do).
func (st *Stepper) GoTo(acts []Action) error { return st.replay(acts) }

func (st *Stepper) replay(acts []Action) error {
	acts = slices.Clone(acts)
	if err := st.reset(); err != nil {
		return err
	}
	for i, a := range acts {
		if err := st.do(a); err != nil {
			return fmt.Errorf("replay of action %d (%s): %w", i+1, a, err)
		}
		st.acts = append(st.acts, a)
		st.when = append(st.when, st.s.Now())
	}
	return nil
}

// Flight is a message in flight.
type Flight struct {
	From, To int
	Kind, ID string
	Cand     int
	Round    int
	Sent     time.Duration // not known to the queue: 0
	Due      time.Duration // when its delay would deliver it
	Head     bool          // the oldest on its link: the one a delivery takes
}

// InFlight lists the messages in flight to running incarnations, by due time.
func (st *Stepper) InFlight() []Flight {
	s := st.s
	var out []Flight
	oldest := map[[2]int]uint64{}
	for i := range s.q.h {
		it := &s.q.h[i]
		n := s.nodes[it.node]
		if it.kind() != kDeliver || !n.alive || int(it.inc) != n.inc {
			continue
		}
		k := [2]int{int(it.from), int(it.node)}
		if o, ok := oldest[k]; !ok || it.sk < o {
			oldest[k] = it.sk
		}
	}
	for i := range s.q.h {
		it := &s.q.h[i]
		n := s.nodes[it.node]
		if it.kind() != kDeliver || !n.alive || int(it.inc) != n.inc {
			continue
		}
		m := &s.env(it.env).m
		out = append(out, Flight{From: int(it.from), To: int(it.node), Kind: m.Kind, ID: m.ID, Cand: m.Cand, Round: m.Round,
			Due: it.at, Head: oldest[[2]int{int(it.from), int(it.node)}] == it.sk})
	}
	slices.SortFunc(out, func(a, b Flight) int {
		if a.Due != b.Due {
			return int(a.Due - b.Due)
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out
}

func (st *Stepper) head(from, to int) (Flight, bool) {
	for _, f := range st.InFlight() {
		if f.From == from && f.To == to && f.Head {
			return f, true
		}
	}
	return Flight{}, false
}

// Pending is an armed timer.
type Pending struct {
	Node  int
	Timer string
	Due   time.Duration
}

// Timers lists the armed timers of running nodes, by due time.
func (st *Stepper) Timers() []Pending {
	s := st.s
	var out []Pending
	for i := range s.q.h {
		it := &s.q.h[i]
		n := s.nodes[it.node]
		if it.kind() != kTimer || !n.alive || int(it.inc) != n.inc {
			continue
		}
		t := n.timers[it.aux]
		if t.armed && t.gen == it.gen {
			out = append(out, Pending{Node: n.id, Timer: t.name, Due: it.at})
		}
	}
	slices.SortFunc(out, func(a, b Pending) int {
		if a.Due != b.Due {
			return int(a.Due - b.Due)
		}
		return a.Node - b.Node
	})
	return out
}

// beliefs are every node's leader now (0: none or dead).
func (st *Stepper) beliefs() []int {
	out := make([]int, st.cfg.N+1)
	for _, id := range st.s.ids {
		out[id] = st.s.Leader(id)
	}
	return out
}

// Next is the happening that would come next in a run left to itself: the deliverable message or
// the armed timer due first (a message first at a tie).
func (st *Stepper) Next() (Action, bool) {
	var best Action
	due := time.Duration(-1)
	for _, f := range st.InFlight() {
		if f.Head && (due < 0 || f.Due < due) {
			best, due = Action{Kind: ActDeliver, Node: f.To, Peer: f.From}, f.Due
		}
	}
	for _, t := range st.Timers() {
		if due < 0 || t.Due < due {
			best, due = Action{Kind: ActFire, Node: t.Node, Timer: t.Timer}, t.Due
		}
	}
	return best, due >= 0
}

// RunToLeaderChange takes the next happening, one after the other, until some node's leader
// changes, nothing is left to happen, or limit actions were taken. It returns how many it took.
func (st *Stepper) RunToLeaderChange(limit int) (int, error) {
	before := st.beliefs()
	for k := 0; k < limit; k++ {
		a, ok := st.Next()
		if !ok {
			return k, nil
		}
		if err := st.Do(a); err != nil {
			return k, err
		}
		if !slices.Equal(before, st.beliefs()) {
			return k + 1, nil
		}
	}
	return limit, nil
}

// Export makes the stepping session a run directory: its actions replayed from the start, the last
// state held past the checker's grace, settle time and termination bound so that `check` judges
// it, cluster.json's chaos the crashes and restarts as schedule steps, and StepsFile the actions
// one a line. It returns the run.
func (st *Stepper) Export(dir string) (*logs.Run, error) {
	x := &Stepper{cfg: st.cfg}
	if err := x.replay(st.acts); err != nil {
		return nil, err
	}
	s := x.s
	c := s.Config()
	end := s.Now() + max(c.Grace, c.Settle, c.TerminationBound) + time.Second
	if err := s.AdvanceTo(end); err != nil {
		return nil, err
	}
	run := s.Finish()
	var steps, lines []string
	for i, a := range x.acts {
		lines = append(lines, fmt.Sprintf("%-10v %s", x.when[i], a))
		switch a.Kind {
		case ActCrash:
			steps = append(steps, fmt.Sprintf("at %v kill %d", x.when[i], a.Node))
		case ActRestart:
			steps = append(steps, fmt.Sprintf("at %v restart %d", x.when[i], a.Node))
		}
	}
	run.Cluster.World = rundir.WorldSim
	run.Cluster.ClusterID = "step"
	run.Cluster.Duration = rundir.Duration(end)
	run.Cluster.Chaos = strings.Join(steps, "; ")
	if err := WriteDir(run, dir); err != nil {
		return nil, err
	}
	text := "# leaderlab ui step mode: the actions, one a line, at their virtual times\n" + strings.Join(lines, "\n") + "\n"
	if err := os.WriteFile(filepath.Join(dir, StepsFile), []byte(text), 0o644); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return run, nil
}

// StepsFile is a stepping session's actions in its exported run directory.
const StepsFile = "steps.txt"
