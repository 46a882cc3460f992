package sim

import (
	"fmt"
	"strconv"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// What happens at a node: its incarnations, the inputs its machine gets, and the effects it asks
// for, each logged as the node process logs it.

// node is one simulated node process; an incarnation replaces the machine and the volatile state.
type node struct {
	id     int
	inc    int
	alive  bool
	paused bool
	m      election.Machine
	lc     uint64
	seq    uint64
	log    *logs.NodeLog
	idbuf  []byte // "id.inc." followed by the message sequence number
	prefix int
	timers []timer
	held   []item // what arrived or fired while paused, in order
	stats  logs.Stats
	links  []link // the links it sent on, and their latest delivery (not on a small mesh: Sim.lastAt)
}

// link is the FIFO bookkeeping of one outgoing link: the latest delivery scheduled on it.
type link struct {
	to int32
	at time.Duration
}

type timer struct {
	name  string
	gen   uint32
	armed bool
}

func (n *node) pid() int { return 1000*n.id + n.inc }

// incarnate starts the node's next incarnation with a fresh machine and fresh volatile state.
func (s *Sim) incarnate(n *node) error {
	n.inc++
	cfg := election.Config{
		Self:               n.id,
		IDs:                s.cfgIDs,
		Ring:               s.cfgRing,
		Topology:           s.cfg.Topology,
		Edges:              s.cfg.Edges,
		Initiator:          s.initiator[n.id],
		Incarnation:        n.inc,
		ElectionTimeout:    s.cfg.ElectionTimeout,
		CoordinatorTimeout: s.cfg.CoordinatorTimeout,
		Rand:               newRand(s.cfg.Seed ^ int64(n.id)<<32 ^ int64(n.inc)<<16 ^ 0x5eed),
		Options:            s.cfg.Options,
	}
	m, err := s.alg.New(cfg)
	if err != nil {
		return fmt.Errorf("sim: node %d: %w", n.id, err)
	}
	n.m = m
	n.alive, n.paused = true, false
	n.lc, n.seq = 0, 0
	n.idbuf = strconv.AppendInt(n.idbuf[:0], int64(n.id), 10)
	n.idbuf = append(n.idbuf, '.')
	n.idbuf = strconv.AppendInt(n.idbuf, int64(n.inc), 10)
	n.idbuf = append(n.idbuf, '.')
	n.prefix = len(n.idbuf)
	n.timers = n.timers[:0]
	n.held = nil
	n.stats = logs.Stats{}
	return nil
}

func (s *Sim) start(n *node) {
	e := s.event(n, logs.EvStart)
	e.Algo, e.Peers, e.Pid = s.cfg.Algo, s.links[n.id], n.pid()
	s.step(n, election.Input{Kind: election.InStart})
}

func (s *Sim) receive(n *node, it *item) {
	env := s.env(it.env)
	if env.lc > n.lc {
		n.lc = env.lc
	}
	e := s.event(n, logs.EvRecv)
	e.From, e.Msg = int(it.from), &env.m
	n.stats.MsgsRecv++
	s.kinds[env.kc].Delivered++
	s.step(n, election.Input{Kind: election.InRecv, From: int(it.from), Msg: env.m})
	s.freeEnv(it.env)
}

// step feeds one input to n's machine and carries out its effects in order.
func (s *Sim) step(n *node, in election.Input) {
	in.Now = s.now
	var effs []election.Effect
	into, ok := n.m.(election.WithStepInto)
	if ok {
		effs = into.StepInto(s.effs[:0], in)
		s.effs = nil // a nested step (there is none today) gets a buffer of its own
	} else {
		effs = n.m.Step(in)
	}
	for i := range effs {
		e := &effs[i]
		switch e.Kind {
		case election.EffSend:
			s.send(n, e.To, &e.Msg)
		case election.EffSetTimer:
			i := n.timer(e.Timer)
			t := &n.timers[i]
			t.gen++
			t.armed = true
			s.push(kTimer, item{at: s.now + e.After, node: int16(n.id), inc: int32(n.inc),
				aux: int32(i), gen: t.gen})
		case election.EffCancelTimer:
			t := &n.timers[n.timer(e.Timer)]
			t.gen++
			t.armed = false
		case election.EffElect:
			s.event(n, logs.EvElect).Round = e.Round
		case election.EffLeader:
			s.event(n, logs.EvLeader).Leader = e.Leader
		case election.EffHeartbeat:
			// No failure detector: the test injects what one would tell the machine.
		case election.EffPulse:
			s.event(n, logs.EvPulse).Pulse = e.Round
		}
	}
	if ok {
		clear(effs) // let the GC have what the effects pointed to
		s.effs = effs[:0]
	}
}

// timer finds (or makes) the slot of the named timer.
func (n *node) timer(name string) int {
	for i := range n.timers {
		if n.timers[i].name == name {
			return i
		}
	}
	n.timers = append(n.timers, timer{name: name})
	return len(n.timers) - 1
}

// send logs the send and schedules the delivery: after a drawn delay, never before the link's
// previous message. A message to a dead node is refused at once (the send, then a drop); one to an
// ID that is not in the cluster is dropped as an unknown peer.
func (s *Sim) send(n *node, to int, msg *election.Message) {
	n.seq++
	ei := s.newEnv()
	env := s.env(ei)
	m := &env.m
	*m = *msg
	n.idbuf = strconv.AppendUint(n.idbuf[:n.prefix], n.seq, 10)
	m.ID = string(n.idbuf)
	e := s.event(n, logs.EvSend)
	e.To, e.Msg = to, m
	n.stats.MsgsSent++
	env.kc = s.count(m.Kind)
	env.lc, env.finc, env.refs = n.lc, int32(n.inc), 1
	c := &s.kinds[env.kc]
	c.Sent++
	if to < 1 || to > s.cfg.N {
		s.drop(n, to, m, "unknown peer")
		c.Dropped++
		s.freeEnv(ei)
		return
	}
	t := s.nodes[to]
	if !t.alive {
		s.drop(n, to, m, "connection refused: peer down")
		c.Dropped++
		s.freeEnv(ei)
		return
	}
	at := s.now
	if to != n.id {
		at = s.fifo(n, to, at+s.delay())
	}
	s.push(kDeliver, item{at: at, node: int16(to), inc: int32(t.inc), from: int16(n.id), env: ei})
}

const envChunk = 64

// newEnv takes the next envelope: one allocation per envChunk messages, and an index the items can
// hold instead of a pointer. Without an event log, envelopes come back once their message is
// delivered or lost (freeEnv), so a run needs only as many as it has messages in flight.
func (s *Sim) newEnv() uint32 {
	if k := len(s.envFree); k > 0 {
		i := s.envFree[k-1]
		s.envFree = s.envFree[:k-1]
		return i
	}
	if s.nenv%envChunk == 0 {
		s.envs = append(s.envs, make([]envelope, envChunk))
	}
	s.nenv++
	return s.nenv - 1
}

func (s *Sim) env(i uint32) *envelope { return &s.envs[i/envChunk][i%envChunk] }

// freeEnv gives back the envelope of a message that was delivered or lost, once no duplicate of it
// is still to come, unless the log keeps it (its events point at the message).
func (s *Sim) freeEnv(i uint32) {
	if env := s.env(i); env.refs > 1 {
		env.refs--
		return
	}
	if s.cfg.NoEvents {
		s.envFree = append(s.envFree, i)
	}
}

func (s *Sim) drop(n *node, to int, m *election.Message, reason string) {
	e := s.event(n, logs.EvDrop)
	e.To, e.Msg, e.Reason = to, m, reason
	n.stats.Drops++
}

// lost: a message in flight whose receiver died (or restarted: its connection is gone). The
// sender's transport notices the broken link and logs the drop, if the sender still runs.
func (s *Sim) lost(it *item, reason string) {
	env := s.env(it.env)
	s.kinds[env.kc].Dropped++
	defer s.freeEnv(it.env)
	snd := s.nodes[it.from]
	if !snd.alive || snd.paused || snd.inc != int(env.finc) {
		return
	}
	s.drop(snd, int(it.node), &env.m, reason)
}

// event appends an event to n's log, stamped with the time, n's identity and its Lamport clock
// (incremented). The pointer is valid until n's next event.
func (s *Sim) event(n *node, ev string) *logs.Event {
	n.lc++
	if s.cfg.NoEvents {
		s.scratch = logs.Event{}
		return &s.scratch
	}
	n.log.Events = append(n.log.Events, logs.Event{TS: s.cfg.Base + int64(s.now), Node: n.id, Inc: n.inc, LC: n.lc, Ev: ev})
	return &n.log.Events[len(n.log.Events)-1]
}

func (s *Sim) statsEvent(n *node) {
	st := n.stats
	s.event(n, logs.EvStats).Stats = &st
}

func (s *Sim) launch(r logs.LaunchRecord) {
	r.TS = s.cfg.Base + int64(s.now)
	s.run.Launcher = append(s.run.Launcher, r)
}
