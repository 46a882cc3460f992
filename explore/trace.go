package explore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// TraceFile is the explorer's own account of a counterexample in its run directory: the
// configuration explored, the property broken, and the transitions, one a line.
const TraceFile = "trace.txt"

// WriteDir writes violation v as a run directory: the trace replayed by the simulator in scripted
// mode (the same machines, fed the same inputs at the same virtual times), so that cluster.json,
// nodes/*.jsonl, chaos.jsonl and launcher.jsonl are what `run --sim` writes, then held still past
// the checker's settle time and termination bound so that a state that breaks a property stays
// broken long enough to be judged; verdict.json is the checker's verdict on it, and trace.txt the
// explorer's account. It returns the verdict.
func (x *Explorer) WriteDir(v *Violation, dir string) (*check.Verdict, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(dir, rundir.NodesDir)); len(entries) > 0 {
		return nil, fmt.Errorf("explore: %s already holds node logs: want a new or empty directory", dir)
	}
	run, err := x.m.script(v)
	if err != nil {
		return nil, err
	}
	if err := sim.WriteDir(run, dir); err != nil {
		return nil, err
	}
	verdict := check.Check(run, check.Options{Algorithm: x.m.cfg.Algorithm})
	if err := verdict.WriteFile(dir); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, TraceFile), []byte(x.TraceText(v)), 0o644); err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return verdict, nil
}

// script replays v's transitions in a scripted simulator and returns its run.
func (x *model) script(v *Violation) (*logs.Run, error) {
	cfg := sim.Config{
		Algo: x.cfg.Algo, Algorithm: x.cfg.Algorithm, N: x.n, Order: x.cfg.Order, Placement: x.cfg.Placement,
		Initiators: x.cfg.Initiators, Timeout: x.cfg.Timeout, Options: x.cfg.Options,
		ElectionTimeout: x.timings.ElectionTimeout, CoordinatorTimeout: x.timings.CoordinatorTimeout,
		Scripted: true, Duration: time.Hour,
	}
	s, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	if err := s.Begin(); err != nil {
		return nil, err
	}
	var reminders []func() error
	x.onDetect = func(id, peer int, suspect bool, reason string) {
		reminders = append(reminders, func() error { return s.Detect(id, peer, suspect, reason) })
	}
	defer func() { x.onDetect = nil }()
	st := x.initial()
	if len(reminders) > 0 {
		return nil, fmt.Errorf("explore: a reminder of the detector at the start")
	}
	var steps []string
	for k, ev := range v.ev {
		reminders = reminders[:0]
		next := x.apply(st, ev)
		if ev.kind == evHeartbeat {
			reminders = reminders[:0] // scriptHeartbeats makes them in their places
		}
		at := next.now
		if ev.kind == evHeartbeat {
			at = st.now // the rounds move the clock themselves
		}
		if err := s.AdvanceTo(at); err != nil {
			return nil, fmt.Errorf("explore: replay of transition %d (%s): %w", k+1, x.describe(ev), err)
		}
		switch ev.kind {
		case evDeliver:
			err = x.scriptDeliver(s, st, ev)
		case evHeartbeat:
			err = x.scriptHeartbeats(s, st, ev.peer)
		case evTimer:
			err = s.Fire(ev.node, ev.timer)
		case evCrash:
			err = s.Crash(ev.node)
			steps = append(steps, fmt.Sprintf("at %v kill %d", next.now, ev.node))
		case evRestart:
			err = s.Restart(ev.node)
			steps = append(steps, fmt.Sprintf("at %v restart %d", next.now, ev.node))
		case evPartition:
			a, b := x.sides(ev.mask)
			err = s.Partition([][]int{a, b})
			steps = append(steps, fmt.Sprintf("at %v partition %s|%s", next.now, idList(a), idList(b)))
		case evHeal:
			err = s.Heal()
			steps = append(steps, fmt.Sprintf("at %v heal", next.now))
		case evTimeout:
			err = s.Detect(ev.node, ev.peer, true, "timeout")
		}
		for _, r := range reminders {
			if err == nil {
				err = r()
			}
		}
		if err != nil {
			return nil, fmt.Errorf("explore: replay of transition %d (%s): %w", k+1, x.describe(ev), err)
		}
		for i, ns := range next.nodes {
			if want, got := belief(ns), s.Leader(i+1); want != got && !(want < 0 && got == 0) {
				return nil, fmt.Errorf("explore: replay of transition %d (%s) diverged: node %d follows %d in the simulator, %d in the explorer", k+1, x.describe(ev), i+1, got, want)
			}
		}
		st = next
	}
	// Hold the last state past the grace for two leaders, then deliver what is still in flight
	// (link by link, no timer firing: a log whose messages all arrive), and hold that past what the
	// checker waits for: the settle time for agreement, the termination bound for an election
	// left open.
	c := s.Config()
	if err := s.AdvanceTo(st.now + c.Grace + time.Second); err != nil {
		return nil, err
	}
	for k := 0; st.inflight > 0 && k < maxDrain; k++ {
		for i, l := range st.links {
			if l == nil || !st.nodes[i%x.n].alive() {
				continue
			}
			ev := event{kind: evDeliver, node: i%x.n + 1, peer: i/x.n + 1}
			if err := x.scriptDeliver(s, st, ev); err != nil {
				return nil, err
			}
			reminders = reminders[:0]
			st = x.apply(st, ev)
			for _, r := range reminders {
				if err := r(); err != nil {
					return nil, err
				}
			}
			break
		}
		if st.inflight > 0 && !x.deliverable(st) {
			break // only messages to crashed nodes are left: lost
		}
	}
	hold := max(c.Settle, c.TerminationBound) + time.Second
	if err := s.AdvanceTo(s.Now() + hold); err != nil {
		return nil, err
	}
	run := s.Finish()
	run.Cluster.World = rundir.WorldSim
	run.Cluster.ClusterID = "explore"
	run.Cluster.Duration = rundir.Duration(st.now + hold)
	run.Cluster.Chaos = strings.Join(steps, "; ")
	return run, nil
}

// maxDrain bounds the deliveries after a trace.
const maxDrain = 10_000

// deliverable tells whether a message in flight in st can still be delivered.
func (x *model) deliverable(st *state) bool {
	for i, l := range st.links {
		if l != nil && st.nodes[i%x.n].alive() {
			return true
		}
	}
	return false
}

// scriptDeliver carries out a delivery of the explorer's state st in the simulator: a message, or
// the detector's news (a link that broke, a node back) when it changes the detector's mind.
func (x *model) scriptDeliver(s *sim.Sim, st *state, ev event) error {
	head := st.links[x.linkIndex(ev.peer, ev.node)].q[0]
	bit := uint64(1) << ev.peer
	switch {
	case head.k == pMsg && st.nodes[ev.node-1].byTimeout&bit != 0:
		if err := s.Detect(ev.node, ev.peer, false, ""); err != nil {
			return err
		}
		return s.Deliver(ev.peer, ev.node)
	case head.k == pMsg:
		return s.Deliver(ev.peer, ev.node)
	case head.k == pEOF && st.nodes[ev.node-1].suspects&bit == 0:
		return s.Detect(ev.node, ev.peer, true, "link broke")
	case head.k == pHello && st.nodes[ev.node-1].suspects&bit != 0:
		return s.Detect(ev.node, ev.peer, false, "")
	}
	return nil
}

// scriptHeartbeats carries out rounds of heartbeats in the simulator, heartbeat for heartbeat as
// the explorer delivers them.
func (x *model) scriptHeartbeats(s *sim.Sim, st *state, rounds int) error {
	cur := st.clone()
	var err error
	saved := x.onDetect
	x.onDetect = func(id, peer int, suspect bool, reason string) {
		if err == nil {
			err = s.Detect(id, peer, suspect, reason)
		}
	}
	defer func() { x.onDetect = saved }()
	for k := 0; k < rounds && err == nil; k++ {
		if err = s.AdvanceTo(cur.now + x.cfg.Heartbeat); err != nil {
			break
		}
		x.heartbeatRoundWith(cur, func(to, from, claim int) {
			if err == nil {
				err = s.Inject(to, election.Input{Kind: election.InHeartbeat, From: from, Claim: claim})
			}
		})
	}
	return err
}

// belief is a node's leader in the explorer, -1 while crashed.
func belief(ns *nodeState) int {
	if !ns.alive() {
		return -1
	}
	return ns.m.Leader()
}

// TraceText is the explorer's account of a violation.
func (x *Explorer) TraceText(v *Violation) string {
	var b strings.Builder
	c := x.m.cfg
	fmt.Fprintf(&b, "# leaderlab explore -a %s -n %d --ids %s --initiators %s --crashes %d --restarts %d --timers %s\n",
		c.Algo, c.N, orDefault(c.Placement, "ascending"), initiatorsText(c), c.Crashes, c.Restarts, c.Timers)
	if v.Property == "deepest" {
		fmt.Fprintf(&b, "# the search stopped at its bound: the path to one of the deepest states found\n")
	} else {
		fmt.Fprintf(&b, "# %s violated: %s\n", v.Property, v.Detail)
	}
	if v.Limit != "" {
		fmt.Fprintf(&b, "# not promised by %s under this configuration: %s\n", c.Algo, v.Limit)
	}
	fmt.Fprintf(&b, "# %d transitions from the state after every node's start; beliefs by node (⊥ none, † crashed)\n", len(v.Trace))
	for i, st := range v.Trace {
		if i == v.CycleAt {
			b.WriteString("# the cycle begins here; after the last transition the state is the one before this line\n")
		}
		fmt.Fprintf(&b, "%3d  %-9v %-48s %s\n", i+1, st.Now, st.Event, beliefs(st.Beliefs))
	}
	return b.String()
}

func beliefs(bs []int) string {
	parts := make([]string, len(bs))
	for i, l := range bs {
		switch l {
		case -1:
			parts[i] = "†"
		case 0:
			parts[i] = "⊥"
		default:
			parts[i] = fmt.Sprint(l)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
