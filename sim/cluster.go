package sim

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	lnode "github.com/leaderlab/leaderlab/node"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Cluster simulates a whole run: N node processes running package node's code (lnode.Simulated)
// over an in-memory network (vtransport) in virtual time, started, begun, faulted and stopped as
// the launcher does a real run — the chaos schedule carried out by chaos.Executor, the same
// resolution of targets and network faults as a real run's — and logged as a real run is: node
// logs, chaos.jsonl, launcher.jsonl, with cluster.json saying "world": "sim". Everything is drawn
// from the cluster's seed; the same cluster.json and schedule give the same bytes.
type Cluster struct {
	cluster *rundir.Cluster
	sched   *chaos.Schedule
	opt     Options
	exec    *chaos.Executor

	q     evq
	now   time.Duration
	seq   uint64
	base  int64
	rng   *rand.Rand
	procs []*proc // by ID; procs[0] is nil
	ids   []int

	begin   time.Duration // virtual time of the begin record: the schedule's origin
	begun   bool
	ended   bool
	run     logs.Run
	errs    []error
	logErr  error // the node logs' first write error (Options.LogDir)
	readyN  int
	rulesOf map[int][]wire.LinkRule // every node's rule set in force
	// stopEv is the scheduled stop at the end of Duration (live.go moves it).
	stopEv *event
	live   liveState
}

// Options tune the simulated world (not the cluster, which cluster.json describes).
type Options struct {
	// MinDelay and MaxDelay bound a frame's or datagram's delay, drawn uniformly (default
	// 100µs..2ms: a loaded loopback).
	MinDelay, MaxDelay time.Duration
	// StatsEvery is the nodes' stats interval (default 1s).
	StatsEvery time.Duration
	// QueueLen is a link's send queue while it dials (default wire.DefaultTCPConfig's).
	QueueLen int
	// Base is the Unix time in nanoseconds of virtual time 0 (default DefaultBase).
	Base int64
	// LogDir, when set, is the run directory the nodes write their logs into as they go
	// (logdir.go); the run Run returns then holds no events.
	LogDir string
}

func (o *Options) fill() {
	if o.MinDelay == 0 && o.MaxDelay == 0 {
		o.MinDelay, o.MaxDelay = 100*time.Microsecond, 2*time.Millisecond
	}
	if o.StatsEvery == 0 {
		o.StatsEvery = time.Second
	}
	if o.QueueLen == 0 {
		o.QueueLen = wire.DefaultTCPConfig().QueueLen
	}
	if o.Base == 0 {
		o.Base = DefaultBase
	}
}

type procState uint8

const (
	stateDead procState = iota
	stateRunning
	statePaused
)

// proc is one simulated node process slot: its current incarnation, if any.
type proc struct {
	id    int
	inc   int
	state procState
	held  []*event
	node  *lnode.Simulated
	tr    *vtransport
	log   *logs.NodeLog
	file  *fileSink // its log's file, with Options.LogDir
	// stopping marks an incarnation told to stop (SIGTERM) that has not ended yet.
	stopping bool
}

func (p *proc) handler() wire.Handler {
	if p.tr == nil || p.tr.closed {
		return nil
	}
	return p.tr.h
}

func (p *proc) pid() int { return 100000 + 1000*p.id + p.inc }

// NewCluster prepares a simulated run of c (its nodes' addresses are replaced by simulated ones,
// and it is marked "world": "sim") with the schedule sched, already parsed against c's size.
func NewCluster(c *rundir.Cluster, sched *chaos.Schedule, opt Options) (*Cluster, error) {
	opt.fill()
	if opt.MinDelay < 0 || opt.MaxDelay < opt.MinDelay {
		return nil, fmt.Errorf("sim: delays %v..%v: want 0 <= min <= max", opt.MinDelay, opt.MaxDelay)
	}
	if len(c.Nodes) == 0 {
		return nil, errors.New("sim: the cluster has no nodes")
	}
	if len(c.Observers) > 0 {
		return nil, errors.New("sim: observer processes (--detector observer|observers) are not simulated; use --detector heartbeat or mutual")
	}
	cc := *c
	cc.World = rundir.WorldSim
	cc.Nodes = make([]rundir.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		cc.Nodes[i] = rundir.Node{ID: n.ID, Addr: addr(n.ID)}
	}
	if cc.Secret == "" {
		cc.Secret = fmt.Sprintf("%064x", uint64(c.Seed))
	}
	if cc.ClusterID == "" {
		cc.ClusterID = fmt.Sprintf("sim-%d", c.Seed)
	}
	s := &Cluster{cluster: &cc, sched: sched, opt: opt, base: opt.Base,
		rng: newRand(c.Seed ^ 0x51d), rulesOf: map[int][]wire.LinkRule{}}
	s.exec = chaos.NewExecutor(s)
	s.ids = cc.IDs()
	top := slices.Max(s.ids)
	if top > MaxNodes {
		return nil, fmt.Errorf("sim: node ID %d: want at most %d", top, MaxNodes)
	}
	s.procs = make([]*proc, top+1)
	s.run.Cluster = cc
	s.run.Nodes = map[int]*logs.NodeLog{}
	for _, id := range s.ids {
		p := &proc{id: id, log: &logs.NodeLog{Node: id}}
		s.procs[id] = p
		if opt.LogDir == "" {
			s.run.Nodes[id] = p.log
		}
	}
	if opt.LogDir != "" {
		if err := s.openLogs(opt.LogDir); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Cluster is the run's cluster.json as the simulator runs it.
func (s *Cluster) Cluster() *rundir.Cluster { return s.cluster }

// delay draws one frame's or datagram's delay.
func (s *Cluster) delay() time.Duration {
	span := int64(s.opt.MaxDelay - s.opt.MinDelay)
	if span == 0 {
		return s.opt.MinDelay
	}
	return s.opt.MinDelay + time.Duration(s.rng.Int63n(span+1))
}

func (s *Cluster) launch(r logs.LaunchRecord) {
	r.TS = s.base + int64(s.now)
	s.run.Launcher = append(s.run.Launcher, r)
}

// sink is a simulated node's event log: the events as values (a line is encoded only when the run
// directory is written).
type sink struct{ l *logs.NodeLog }

func (k sink) Write(e *logs.Event) error {
	ev := *e
	if e.VC != nil {
		ev.VC = slices.Clone(e.VC)
	}
	if e.Msg != nil { // the node's own, until Write returns: it writes every message's lines from one
		m := *e.Msg
		ev.Msg = &m
	}
	k.l.Events = append(k.l.Events, ev)
	return nil
}

// sink is where p's events go: its file (Options.LogDir), else its log in memory.
func (p *proc) sink() lnode.EventSink {
	if p.file != nil {
		return p.file
	}
	return sink{p.log}
}

// spawn starts the next incarnation of p.
func (s *Cluster) spawn(p *proc, awaitBegin bool) error {
	p.inc++
	p.state, p.held, p.stopping = stateRunning, nil, false
	inc := p.inc
	tr := &vtransport{c: s, p: p, inc: inc, links: map[int]*vlink{}}
	sn, err := lnode.NewSimulated(s.cluster, lnode.SimOptions{
		ID: p.id, Inc: inc, Pid: p.pid(), AwaitBegin: awaitBegin, StatsEvery: s.opt.StatsEvery,
		World: loopWorld{s, p, inc}, Sink: p.sink(),
		Transport: func(h wire.Handler) wire.Transport { tr.h = h; return tr },
		Ready:     func() { s.ready(p, inc) },
		Exit:      func(err error) { s.exited(p, inc, err) },
	})
	if err != nil {
		return err
	}
	p.node, p.tr = sn, tr
	s.launch(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: p.id, Inc: inc, Pid: p.pid()})
	s.at(s.now, p, inc, sn.Open)
	return nil
}

// ready: incarnation inc of p announced itself. The first incarnations are begun together once
// all are ready; a restarted one that awaits its begin is given the rules in force first.
func (s *Cluster) ready(p *proc, inc int) {
	s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: p.id, Inc: inc})
	if inc > 1 {
		s.at(s.now+s.delay(), p, inc, func() {
			s.tell(p)
			p.node.Control(wire.CtlRequest{Op: wire.CtlBegin})
		})
		return
	}
	s.readyN++
	if s.readyN == len(s.ids) {
		s.at(s.now, nil, 0, s.beginAll)
	}
}

// beginAll writes the begin record (the run's time origin) and begins every node, each a
// control round trip's half later.
func (s *Cluster) beginAll() {
	s.begin, s.begun = s.now, true
	s.launch(logs.LaunchRecord{Ev: logs.LaunchBegin})
	for _, id := range s.ids {
		p := s.procs[id]
		s.at(s.now+s.delay(), p, p.inc, func() { p.node.Control(wire.CtlRequest{Op: wire.CtlBegin}) })
	}
	for i, st := range s.sched.Steps {
		s.at(s.begin+st.At, nil, 0, func() { s.step(i, st) })
	}
	s.stopEv = s.at(s.begin+s.cluster.Duration.D(), nil, 0, s.stopAll)
}

// exited: incarnation inc of p ended by itself (an orderly stop) or its log failed.
func (s *Cluster) exited(p *proc, inc int, err error) {
	if p.inc != inc || p.state == stateDead {
		return
	}
	code := 0
	rec := logs.LaunchRecord{Ev: logs.LaunchExited, Node: p.id, Inc: inc, Pid: p.pid(), Code: &code}
	if err != nil {
		code = 1
		rec.Detail = err.Error()
		s.errs = append(s.errs, err)
	}
	// The process exits a moment after its stop event; its sockets close with it.
	s.at(s.now+time.Millisecond, nil, 0, func() {
		s.die(p, inc)
		s.launch(rec)
	})
}

// die ends incarnation inc of p: its transport closes, and the links that reached it break one link
// delay later (the reset).
func (s *Cluster) die(p *proc, inc int) {
	if p.inc != inc || p.state == stateDead {
		return
	}
	p.state, p.held = stateDead, nil
	p.node.Kill()
	p.tr.closed = true
	for _, id := range s.ids {
		q := s.procs[id]
		if q == p || q.state == stateDead {
			continue
		}
		if l := q.tr.links[p.id]; l != nil && l.toInc == inc && l.state == vUp {
			t := q.tr
			s.at(s.now+s.delay(), q, q.inc, func() {
				if !t.closed && l.toInc == inc {
					t.broke(l)
				}
			})
		}
	}
}

// Do carries out a process action (chaos.Cluster).
func (s *Cluster) Do(op string, id int) error {
	p := s.procs[id]
	switch op {
	case chaos.OpKill:
		if p.state == stateDead {
			return fmt.Errorf("node %d is not running", id)
		}
		code := logs.LaunchRecord{Ev: logs.LaunchExited, Node: id, Inc: p.inc, Pid: p.pid(), Signal: "killed"}
		s.die(p, p.inc)
		s.launch(code)
	case chaos.OpStop:
		if p.state == stateDead {
			return fmt.Errorf("node %d is not running", id)
		}
		s.resume(p)
		p.stopping = true
		inc := p.inc
		s.at(s.now, p, inc, func() { p.node.Terminate("terminated") })
	case chaos.OpPause:
		if p.state != stateRunning {
			return fmt.Errorf("node %d is not running", id)
		}
		p.state = statePaused
	case chaos.OpResume:
		if p.state != statePaused {
			return fmt.Errorf("node %d is not paused", id)
		}
		s.resume(p)
		s.at(s.now+s.delay(), p, p.inc, func() { s.tell(p) }) // rules changed while it was stopped
	case chaos.OpRestart:
		if p.state != stateDead {
			return fmt.Errorf("node %d is running (restart starts a killed or stopped node)", id)
		}
		return s.spawn(p, true)
	default:
		return fmt.Errorf("action %q is not supported", op)
	}
	return nil
}

// resume lets a paused process run: what it was held from runs now, in its order.
func (s *Cluster) resume(p *proc) {
	if p.state != statePaused {
		return
	}
	p.state = stateRunning
	held := p.held
	p.held = nil
	for _, e := range held {
		s.at(s.now, p, e.inc, e.f).lost = e.lost
	}
}

// tell gives p's running incarnation its rule set in force (a fresh one holds none).
func (s *Cluster) tell(p *proc) {
	if p.state == stateDead {
		return
	}
	if rules, ok := s.rulesOf[p.id]; ok {
		p.node.Control(wire.CtlRequest{Op: wire.CtlRules, Rules: rules})
	}
}

// IDs lists the nodes (chaos.Cluster).
func (s *Cluster) IDs() []int { return s.ids }

// Order is the ring order, or the IDs on a mesh (chaos.Cluster).
func (s *Cluster) Order() []int {
	if len(s.cluster.Ring) == len(s.ids) {
		return s.cluster.Ring
	}
	return s.ids
}

// State is node id's process state (chaos.Cluster).
func (s *Cluster) State(id int) chaos.ProcState {
	switch s.procs[id].state {
	case stateRunning:
		return chaos.Running
	case statePaused:
		return chaos.Paused
	}
	return chaos.Dead
}

// SelfLeaders lists the running, unpaused nodes that believe themselves leader (chaos.SelfLeaders).
func (s *Cluster) SelfLeaders() []int {
	var out []int
	for _, id := range s.ids {
		if p := s.procs[id]; p.state == stateRunning && p.node.Begun() && p.node.Leader() == id {
			out = append(out, id)
		}
	}
	return out
}

// Leader is the belief most running, unpaused nodes hold (ties: the higher ID), as the launcher
// asks it of their control endpoints (chaos.Cluster).
func (s *Cluster) Leader() int {
	var beliefs []int
	for _, id := range s.ids {
		if p := s.procs[id]; p.state == stateRunning && p.node.Begun() {
			beliefs = append(beliefs, p.node.Leader())
		}
	}
	return chaos.Followed(beliefs)
}

// step carries out step i of the schedule and records it in chaos.jsonl.
func (s *Cluster) step(i int, st chaos.Step) {
	rng := chaos.StepRand(s.cluster.Seed, i)
	rec := logs.ChaosRecord{TS: s.base + int64(s.now), Op: st.Op, Step: st.Text, At: int64(st.At), Targets: []int{}}
	switch st.Op {
	case chaos.OpPartition, chaos.OpLink, chaos.OpHeal:
		ch, err := s.exec.Net(st, rng)
		if err != nil {
			rec.Error = err.Error()
			break
		}
		rec.Targets, rec.Groups, rec.Reach = ch.Send, ch.Groups, ch.Reach
		if st.Op == chaos.OpLink {
			rec.From, rec.To, rec.Rule = ch.From, ch.To, ch.Rule
		}
		s.rulesOf = s.exec.Rules()
		rec.Acks = map[string]int64{}
		for _, id := range ch.Send {
			p := s.procs[id]
			if p.state == stateRunning && !p.stopping {
				// told now; the reply is the ack, written with the record
				if r := p.node.Control(wire.CtlRequest{Op: wire.CtlRules, Rules: s.rulesOf[id]}); r.Error == "" {
					rec.Acks[strconv.Itoa(id)] = s.base + int64(s.now)
				}
			}
		}
		if len(rec.Acks) == 0 {
			rec.Acks = nil
		}
	case chaos.OpClock:
		rec.Clock = st.Clock.String()
		ids, err := s.exec.Clock(st, rng)
		if err != nil {
			rec.Error = err.Error()
			break
		}
		rec.Targets, rec.Acks = ids, map[string]int64{}
		var refused []string
		for _, id := range ids {
			if r := s.procs[id].node.Control(wire.CtlRequest{Op: wire.CtlClock, Clock: st.Clock.Op()}); r.Error == "" {
				rec.Acks[strconv.Itoa(id)] = s.base + int64(s.now)
			} else {
				refused = append(refused, fmt.Sprintf("node %d: %s", id, r.Error))
			}
		}
		if len(refused) > 0 {
			rec.Error = "refused: " + strings.Join(refused, "; ")
		}
	default:
		id, err := s.exec.Proc(st, rng)
		if id > 0 {
			rec.Targets = []int{id}
		}
		if err != nil {
			rec.Error = err.Error()
		} else if st.Op == chaos.OpPause && st.For > 0 {
			s.at(s.begin+st.At+st.For, nil, 0, func() {
				r := logs.ChaosRecord{TS: s.base + int64(s.now), Op: chaos.OpResume, Step: st.Text, At: int64(st.At + st.For), Targets: []int{id}}
				if err := s.Do(chaos.OpResume, id); err != nil {
					r.Error = err.Error()
				}
				s.run.Chaos = append(s.run.Chaos, r)
			})
		}
	}
	s.run.Chaos = append(s.run.Chaos, rec)
}

// stopAll ends the run as the launcher does: the stopping record, SIGCONT and SIGTERM to every
// running node, and, once they are gone (or a grace later, SIGKILL), the end record.
func (s *Cluster) stopAll() {
	s.launch(logs.LaunchRecord{Ev: logs.LaunchStopping})
	for _, id := range s.ids {
		p := s.procs[id]
		if p.state == stateDead || p.stopping {
			continue
		}
		s.resume(p)
		p.stopping = true
		inc := p.inc
		s.at(s.now+s.delay(), p, inc, func() { p.node.Terminate("terminated") })
	}
	s.ended = true
}

// maxEventsPerInstant bounds the events of one instant of virtual time (a 1,000-node cluster's
// begin makes some thousands).
const maxEventsPerInstant = 1_000_000

// Run simulates the whole run and returns its logs. The error is a node that could not be made or
// whose log failed.
func (s *Cluster) Run() (*logs.Run, error) {
	run, err := s.simulate()
	if cerr := s.closeLogs(); cerr != nil && run != nil {
		err = errors.Join(err, cerr)
	}
	return run, err
}

func (s *Cluster) simulate() (*logs.Run, error) {
	for _, id := range s.ids {
		if err := s.spawn(s.procs[id], false); err != nil {
			return nil, err
		}
	}
	// The launcher gives the nodes a few seconds to come up; a cluster whose links never come up
	// in the simulator is a bug of the simulator's, reported as one.
	limit := 10 * time.Second
	var last time.Duration
	same := 0
	for len(s.q) > 0 {
		e := s.q.pop()
		if !s.begun && e.at > limit {
			return nil, fmt.Errorf("sim: %d of %d nodes were ready after %v of virtual time", s.readyN, len(s.ids), limit)
		}
		// Virtual time stands still while events of one instant run; a cluster that keeps making
		// events for the same instant would never end (a node's timer re-armed for 0 until a
		// deadline that time cannot reach): say so rather than spin.
		if same++; e.at != last {
			last, same = e.at, 0
		} else if same > maxEventsPerInstant {
			return nil, fmt.Errorf("sim: livelock: more than %d events at virtual time %v without time moving on: a bug of the node code or the simulator (report it with the seed)", maxEventsPerInstant, e.at)
		}
		s.dispatch(e)
		if s.ended && s.allDead() {
			break
		}
		if s.ended && s.now > s.begin+s.cluster.Duration.D()+5*time.Second {
			return nil, errors.New("sim: nodes still running 5s after their SIGTERM")
		}
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchEnd})
	if len(s.errs) > 0 {
		return &s.run, errors.Join(s.errs...)
	}
	return &s.run, nil
}

func (s *Cluster) allDead() bool {
	for _, id := range s.ids {
		if s.procs[id].state != stateDead {
			return false
		}
	}
	return true
}
