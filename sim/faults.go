package sim

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
)

// fault applies a scheduled step: Config.Faults[aux], or (aux = -2-i) the resume that ends the
// "for" of Config.Faults[i], a pause.
func (s *Sim) fault(it item) {
	if it.aux < 0 {
		s.apply(Resume, int(it.node), s.cfg.Faults[-2-it.aux].String(), -1)
		return
	}
	f := s.cfg.Faults[it.aux]
	switch f.Op {
	case Partition, Link, Heal:
		s.applyNet(f, f.String())
	default:
		s.apply(f.Op, f.Node, f.String(), int(it.aux))
	}
}

// Apply carries out a fault now, whatever its At: any op of Config.Faults (a pause with a For
// only there: here, call Resume). It is recorded in chaos.jsonl like a scheduled one, with the
// error when it could not be carried out.
func (s *Sim) Apply(f Fault) error {
	if s.finished {
		return ErrFinished
	}
	f.At = s.now
	if err := f.validate(s.cfg.N); err != nil {
		return fmt.Errorf("sim: fault %s: %w", f, err)
	}
	switch f.Op {
	case Partition, Link, Heal:
		return s.applyNet(f, f.String())
	case Pause:
		if f.For > 0 {
			return fmt.Errorf("sim: fault %s: Apply takes no For (call Resume when it is over)", f)
		}
	}
	return s.apply(f.Op, f.Node, f.String(), -1)
}

// Crash kills node id now (SIGKILL).
func (s *Sim) Crash(id int) error { return s.control(Kill, id) }

// Restart starts a killed node again now, as its next incarnation.
func (s *Sim) Restart(id int) error { return s.control(Restart, id) }

// Pause stops node id now (SIGSTOP) until Resume.
func (s *Sim) Pause(id int) error { return s.control(Pause, id) }

// Resume continues a paused node now (SIGCONT): what arrived or fell due meanwhile is handed over in
// its order, at once.
func (s *Sim) Resume(id int) error { return s.control(Resume, id) }

func (s *Sim) control(op Op, id int) error {
	if s.finished {
		return ErrFinished
	}
	return s.apply(op, id, fmt.Sprintf("at %v %s %s", s.now, op, targetName(id)), -1)
}

// apply resolves the target, carries the fault out and records it in chaos.jsonl, with the error
// when it could not be done (the run goes on, as a real chaos agent's does). fault is the index of
// the step in Config.Faults, -1 for none.
func (s *Sim) apply(op Op, target int, step string, fault int) error {
	rec := logs.ChaosRecord{TS: s.cfg.Base + int64(s.now), Op: string(op), Targets: []int{}, Step: step, At: int64(s.now)}
	id, err := s.resolve(op, target)
	if err == nil {
		err = s.do(op, id)
	}
	if err != nil {
		rec.Error = err.Error()
	} else {
		rec.Targets = []int{id}
		if target == TargetLeader {
			switch op {
			case Kill:
				s.killedLeaders = append(s.killedLeaders, id)
			case Pause:
				s.pausedLeaders = append(s.pausedLeaders, id)
			}
		}
	}
	s.run.Chaos = append(s.run.Chaos, rec)
	if err == nil && op == Pause && fault >= 0 && s.cfg.Faults[fault].For > 0 {
		s.push(kFault, item{at: s.now + s.cfg.Faults[fault].For, node: int16(id), aux: int32(-2 - fault)})
	}
	return err
}

// eligible tells whether op can apply to node n.
func eligible(op Op, n *node) bool {
	switch op {
	case Kill, Partition, Link:
		return n.alive
	case Pause:
		return n.alive && !n.paused
	case Resume:
		return n.alive && n.paused
	case Restart:
		return !n.alive
	}
	return false
}

// resolve turns a fault's target into an ID when it fires, as the launcher does: an ID is itself;
// leader is the node the running nodes follow (kill, pause, partition isolate, link ends), or for
// restart (resume) the node most recently killed (paused) by a leader step that is still dead
// (paused), so that "kill leader … restart leader" brings back the node it took away; highest,
// lowest and random choose among the nodes op can apply to.
func (s *Sim) resolve(op Op, target int) (int, error) { return s.pick(target, op, 0) }

// pick resolves target among the nodes op can apply to, other than not.
func (s *Sim) pick(target int, op Op, not int) (int, error) {
	if target >= 1 && target <= s.cfg.N {
		return target, nil
	}
	if target == TargetLeader {
		var l int
		switch op {
		case Restart:
			l = s.lastTaken(s.killedLeaders, op)
		case Resume:
			l = s.lastTaken(s.pausedLeaders, op)
		default:
			l = s.followed()
		}
		if l == 0 {
			what := "no live node follows one"
			switch op {
			case Restart:
				what = "no node killed as the leader is still dead"
			case Resume:
				what = "no node paused as the leader is still paused"
			}
			return 0, fmt.Errorf("no leader: %s", what)
		}
		return l, nil
	}
	var cand []int
	for _, id := range s.ids {
		if id != not && eligible(op, s.nodes[id]) {
			cand = append(cand, id)
		}
	}
	if len(cand) == 0 {
		return 0, fmt.Errorf("no node to %s", op)
	}
	switch target {
	case TargetHighest:
		return cand[len(cand)-1], nil
	case TargetLowest:
		return cand[0], nil
	case TargetRandom:
		return cand[s.rng.Intn(len(cand))], nil
	}
	return 0, fmt.Errorf("target %d: want an ID in 1..%d or a Target constant", target, s.cfg.N)
}

// lastTaken is the most recent of ids (leaders a step took away) that op can apply to; 0 if none.
func (s *Sim) lastTaken(ids []int, op Op) int {
	for i := len(ids) - 1; i >= 0; i-- {
		if eligible(op, s.nodes[ids[i]]) {
			return ids[i]
		}
	}
	return 0
}

// followed is the node most running nodes believe in (ties: the highest), 0 when none believes in
// any. Paused nodes have no say: the launcher asks the nodes, and a stopped process cannot answer.
func (s *Sim) followed() int {
	votes := make(map[int]int)
	best, bestVotes := 0, 0
	for _, id := range s.ids {
		n := s.nodes[id]
		if !n.alive || n.paused {
			continue
		}
		l := n.m.Leader()
		if l == 0 {
			continue
		}
		votes[l]++
		if v := votes[l]; v > bestVotes || (v == bestVotes && l > best) {
			best, bestVotes = l, v
		}
	}
	return best
}

func (s *Sim) do(op Op, id int) error {
	n := s.nodes[id]
	if !eligible(op, n) {
		state := "running"
		switch {
		case !n.alive:
			state = "killed"
		case n.paused:
			state = "paused"
		}
		return fmt.Errorf("cannot %s node %d: it is %s", op, id, state)
	}
	switch op {
	case Kill:
		s.kill(n)
	case Restart:
		return s.restart(n)
	case Pause:
		n.paused = true
	case Resume:
		n.paused = false
		held := n.held
		n.held = nil
		// What waits in the socket buffers is read before the overdue timers fire: a resumed detector
		// sees the heartbeats that came meanwhile before it judges a peer silent.
		slices.SortStableFunc(held, func(a, b item) int { return cmpBool(isIO(b.kind()), isIO(a.kind())) })
		for i := range held {
			s.handle(n, &held[i])
		}
	}
	return nil
}

// kill ends n's incarnation. What it held unread is lost; with the detector on, each live peer's
// link to it breaks (the kernel resets the connections) and the peer suspects it after a link delay.
func (s *Sim) kill(n *node) {
	n.alive, n.paused = false, false
	for i := range n.held {
		switch n.held[i].kind() {
		case kDeliver:
			s.lost(&n.held[i], "peer crashed")
		case kRelease:
			s.vanish(&n.held[i])
		}
	}
	n.held = nil
	s.launch(logs.LaunchRecord{Ev: logs.LaunchExited, Node: n.id, Inc: n.inc, Pid: n.pid(), Signal: "killed"})
	if !s.cfg.Detector {
		return
	}
	for _, id := range s.ids {
		if p := s.nodes[id]; p.alive {
			s.push(kLinkDown, item{at: s.now + s.delay(), node: int16(id), inc: int32(p.inc), from: int16(n.id), aux: int32(n.inc)})
		}
	}
}

// restart starts n's next incarnation. With the detector on, the new process dials its peers: a live
// peer hears from it (and trusts it again), a dead one refuses and is suspected.
func (s *Sim) restart(n *node) error {
	if err := s.incarnate(n); err != nil {
		return err
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: n.id, Inc: n.inc, Pid: n.pid()})
	s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: n.id, Inc: n.inc, Pid: n.pid()})
	s.start(n)
	if !s.cfg.Detector {
		return nil
	}
	for _, id := range s.ids {
		p := s.nodes[id]
		switch {
		case id == n.id:
		case p.alive:
			s.push(kLinkUp, item{at: s.now + s.delay(), node: int16(id), inc: int32(p.inc), from: int16(n.id), aux: int32(n.inc)})
		default:
			s.push(kLinkDown, item{at: s.now + s.delay(), node: int16(n.id), inc: int32(n.inc), from: int16(id), aux: int32(p.inc)})
		}
	}
	return nil
}

// Inject hands an input to node id's machine now, as the (manual) failure detector or a test would:
// InSuspect and InTrust are logged as suspect and trust events and change what the detector
// believes; InHeartbeat and InTimer go to the machine as they are. Messages are not injected (a recv
// needs its send): have a machine send them.
func (s *Sim) Inject(id int, in election.Input) error {
	n, err := s.running(id)
	if err != nil {
		return err
	}
	switch in.Kind {
	case election.InSuspect:
		n.det.suspected[in.From] = true
		e := s.event(n, logs.EvSuspect)
		e.Peer, e.Reason = in.From, "injected"
	case election.InTrust:
		n.det.suspected[in.From], n.det.byLink[in.From] = false, false
		s.event(n, logs.EvTrust).Peer = in.From
	case election.InHeartbeat, election.InTimer:
	default:
		return fmt.Errorf("sim: cannot inject a %s input (accepted: suspect, trust, heartbeat, timer)", in.Kind)
	}
	if in.From < 0 || in.From > s.cfg.N {
		return fmt.Errorf("sim: input from %d: want an ID in 1..%d", in.From, s.cfg.N)
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

// Nemesis draws a fault schedule like `leaderlab run --nemesis`: count faults at seeded random
// times in [from, to), half of them aimed at the leader, each healed by `to`: a kill is followed by
// the restart of a killed node, a pause lasts at most until `to`. Steps that find no node to act on
// (a kill of a node already dead) are recorded with their error and change nothing.
func Nemesis(seed int64, n, count int, from, to time.Duration) []Fault {
	r := newRand(seed)
	var out []Fault
	span := int64(to - from)
	if span <= 0 || n < 1 {
		return nil
	}
	for range count {
		at := from + time.Duration(r.Int63n(span))
		target := TargetLeader
		if r.Intn(2) == 0 {
			target = 1 + r.Intn(n)
		}
		rest := int64(to - at)
		if r.Intn(2) == 0 {
			out = append(out, Fault{At: at, Op: Kill, Node: target})
			out = append(out, Fault{At: at + time.Duration(1+r.Int63n(rest)), Op: Restart, Node: TargetRandom})
		} else {
			out = append(out, Fault{At: at, Op: Pause, Node: target, For: time.Duration(1 + r.Int63n(rest))})
		}
	}
	slices.SortStableFunc(out, func(a, b Fault) int { return cmpDuration(a.At, b.At) })
	return out
}

func isIO(k kind) bool {
	return k == kDeliver || k == kHeartbeat || k == kLinkDown || k == kLinkUp || k == kRelease || k == kReleaseBeat
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

func cmpDuration(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
