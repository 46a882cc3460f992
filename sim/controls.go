package sim

import (
	"fmt"
	"slices"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// The step-by-step controls of the bare machines: a test crashes, restarts, pauses and resumes
// nodes by ID and hands their machines the inputs a failure detector would (Inject). There is no
// detector here, no network fault and no target to resolve: those are the node's and the chaos
// executor's, and Cluster runs them.

// Crash kills node id now (SIGKILL): its machine and what it held unread are gone, and messages to
// it are lost.
func (s *Sim) Crash(id int) error { return s.control(opKill, id) }

// Restart starts a crashed node again now, as its next incarnation (a new machine, InStart).
func (s *Sim) Restart(id int) error { return s.control(opRestart, id) }

// Pause stops node id now (SIGSTOP) until Resume: nothing runs at it, and what arrives or falls due
// is kept, in order.
func (s *Sim) Pause(id int) error { return s.control(opPause, id) }

// Resume continues a paused node now (SIGCONT): what arrived or fell due meanwhile is handed over in
// its order, messages before timers, at once.
func (s *Sim) Resume(id int) error { return s.control(opResume, id) }

const (
	opKill    = "kill"
	opRestart = "restart"
	opPause   = "pause"
	opResume  = "resume"
)

// control carries out op on node id and records it in chaos.jsonl, as the chaos agent records a
// step (with the error when it could not be done).
func (s *Sim) control(op string, id int) error {
	if s.finished {
		return ErrFinished
	}
	if id < 1 || id > s.cfg.N {
		return fmt.Errorf("sim: %s node %d: want an ID in 1..%d", op, id, s.cfg.N)
	}
	rec := logs.ChaosRecord{TS: s.cfg.Base + int64(s.now), Op: op, Targets: []int{}, Step: fmt.Sprintf("at %v %s %d", s.now, op, id), At: int64(s.now)}
	err := s.do(op, s.nodes[id])
	if err != nil {
		rec.Error = err.Error()
	} else {
		rec.Targets = []int{id}
	}
	s.run.Chaos = append(s.run.Chaos, rec)
	return err
}

func (s *Sim) do(op string, n *node) error {
	state := "running"
	switch {
	case !n.alive:
		state = "killed"
	case n.paused:
		state = "paused"
	}
	want := map[string]string{opKill: "", opRestart: "killed", opPause: "running", opResume: "paused"}[op]
	if (op == opKill && !n.alive) || (op != opKill && state != want) {
		return fmt.Errorf("cannot %s node %d: it is %s", op, n.id, state)
	}
	switch op {
	case opKill:
		n.alive, n.paused = false, false
		for i := range n.held {
			if n.held[i].kind() == kDeliver {
				s.lost(&n.held[i], "peer crashed")
			}
		}
		n.held = nil
		s.launch(logs.LaunchRecord{Ev: logs.LaunchExited, Node: n.id, Inc: n.inc, Pid: n.pid(), Signal: "killed"})
	case opRestart:
		if err := s.incarnate(n); err != nil {
			return err
		}
		s.launch(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: n.id, Inc: n.inc, Pid: n.pid()})
		s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: n.id, Inc: n.inc, Pid: n.pid()})
		s.start(n)
	case opPause:
		n.paused = true
	case opResume:
		n.paused = false
		held := n.held
		n.held = nil
		// What waits in the socket buffers is read before the overdue timers fire.
		slices.SortStableFunc(held, func(a, b item) int {
			return cmpBool(b.kind() == kDeliver, a.kind() == kDeliver)
		})
		for i := range held {
			s.handle(n, &held[i])
		}
	}
	return nil
}

// Inject hands an input to node id's machine now, as a failure detector or a test would: InSuspect
// and InTrust are logged as suspect and trust events; InHeartbeat and InTimer go to the machine as
// they are. Messages are not injected (a recv needs its send): have a machine send them.
func (s *Sim) Inject(id int, in election.Input) error {
	n, err := s.running(id)
	if err != nil {
		return err
	}
	if in.From < 0 || in.From > s.cfg.N {
		return fmt.Errorf("sim: input from %d: want an ID in 1..%d", in.From, s.cfg.N)
	}
	switch in.Kind {
	case election.InSuspect:
		e := s.event(n, logs.EvSuspect)
		e.Peer, e.Reason = in.From, "injected"
	case election.InTrust:
		s.event(n, logs.EvTrust).Peer = in.From
	case election.InHeartbeat, election.InTimer:
	default:
		return fmt.Errorf("sim: cannot inject a %s input (accepted: suspect, trust, heartbeat, timer)", in.Kind)
	}
	s.step(n, in)
	return nil
}

func (s *Sim) running(id int) (*node, error) {
	switch {
	case s.finished:
		return nil, ErrFinished
	case id < 1 || id > s.cfg.N:
		return nil, fmt.Errorf("sim: node %d: want an ID in 1..%d", id, s.cfg.N)
	case !s.nodes[id].alive:
		return nil, fmt.Errorf("sim: node %d is killed", id)
	case s.nodes[id].paused:
		return nil, fmt.Errorf("sim: node %d is paused", id)
	}
	return s.nodes[id], nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}
