package sim

import (
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/topology"
)

// Sim is one simulated cluster. It is not safe for concurrent use; run one Sim per goroutine.
type Sim struct {
	cfg  Config
	alg  election.Algorithm
	ids  []int // 1..N
	ring []int // the ring order given to ring algorithms (nil on a mesh)
	// cfgIDs and cfgRing are the machines' Config.IDs and Config.Ring: copies, shared by them all.
	cfgIDs, cfgRing []int
	initiator       []bool
	links           [][]int // by ID: the peers a node links to, nearest first (the start event's peers)

	nodes []*node // by ID; nodes[0] is nil
	q     queue
	now   time.Duration
	seq   uint64
	rng   *rand.Rand
	// lastAt is the latest delivery scheduled on each link (from-1)*N + (to-1), on a mesh of up to
	// denseLinks nodes; elsewhere each node keeps its own few links (node.links).
	lastAt []time.Duration

	envs     [][]envelope // the messages (which the log keeps), in chunks of envChunk
	nenv     uint32
	envFree  []uint32          // with NoEvents, envelopes delivered or lost, to be used again
	effs     []election.Effect // the buffer machines with StepInto append their effects to
	scratch  logs.Event        // the event that is not kept, with Config.NoEvents
	run      logs.Run
	kinds    []KindCount
	finished bool
}

// ErrFinished is returned by the step-by-step controls after Finish (or Run) ended the run.
var ErrFinished = errors.New("sim: the run is finished")

// New builds a simulated cluster: N machines of cfg.Algo, all started at virtual time 0 (their
// InStart is the first thing Run or RunFor does).
func New(cfg Config) (*Sim, error) {
	alg, err := election.Lookup(cfg.Algo)
	if cfg.Algorithm != nil {
		alg, err = *cfg.Algorithm, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	cfg.fill(alg)
	if err := cfg.validate(alg); err != nil {
		return nil, err
	}
	n := cfg.N
	s := &Sim{
		cfg:       cfg,
		alg:       alg,
		ids:       make([]int, n),
		initiator: make([]bool, n+1),
		links:     make([][]int, n+1),
		nodes:     make([]*node, n+1),
		rng:       newRand(cfg.Seed),
		q:         newQueue(queueCap(cfg.Topology, n)),
	}
	if cfg.Topology == "mesh" && n <= denseLinks {
		s.lastAt = make([]time.Duration, n*n)
	}
	s.run.Launcher = make([]logs.LaunchRecord, 0, 2*n+8)
	for i := range s.ids {
		s.ids[i] = i + 1
	}
	order := cfg.Order
	if order == nil {
		order = s.ids
	}
	if cfg.Topology != "mesh" {
		s.ring = slices.Clone(order)
	}
	inits, spec := cfg.initiatorSet()
	for _, id := range inits {
		s.initiator[id] = true
	}
	var graph *topology.Topology
	if topology.IsGraph(cfg.Topology) {
		if graph, err = topology.NewGraph(cfg.Topology, order, cfg.Edges); err != nil {
			return nil, fmt.Errorf("sim: %w", err)
		}
	}
	if !cfg.NoEvents { // the links are the start events' peers, which only the log keeps
		for _, id := range s.ids {
			if graph != nil {
				s.links[id] = graph.Neighbours(id)
			} else {
				s.links[id] = links(cfg.Topology, order, id)
			}
		}
	}
	s.run.Cluster = s.cluster(order, inits, spec)
	s.run.Nodes = make(map[int]*logs.NodeLog, n)
	nodes, logsOf := make([]node, n), make([]logs.NodeLog, n)
	// Every machine reads the same copies of the IDs and the ring order (election.Config's slices
	// are the machine's to read, never to change).
	s.cfgIDs, s.cfgRing = slices.Clone(s.ids), slices.Clone(s.ring)
	for _, id := range s.ids {
		nd := &nodes[id-1]
		nd.id, nd.log = id, &logsOf[id-1]
		nd.log.Node = id
		if !cfg.NoEvents {
			nd.log.Events = make([]logs.Event, 0, logCap(alg, cfg.Topology, n))
		}
		s.nodes[id] = nd
		s.run.Nodes[id] = nd.log
		if err := s.incarnate(nd); err != nil {
			return nil, err
		}
		s.launch(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: 1, Pid: nd.pid()})
	}
	for _, id := range s.ids {
		s.launch(logs.LaunchRecord{Ev: logs.LaunchReady, Node: id, Inc: 1, Pid: s.nodes[id].pid()})
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchBegin})
	for _, id := range s.ids {
		s.push(kStart, item{at: 0, node: int16(id), inc: 1})
	}
	if cfg.StatsEvery > 0 && !cfg.Scripted {
		s.push(kStats, item{at: cfg.StatsEvery})
	}
	return s, nil
}

// links are the peers a node links to, nearest first: every other node (a ring routes around a
// dead neighbour, so it may have to reach anyone), in ascending order on a mesh and in the
// direction of travel on a ring.
func links(topology string, order []int, id int) []int {
	n := len(order)
	out := make([]int, 0, n-1)
	if topology == "mesh" {
		for i := 1; i <= n; i++ {
			if i != id {
				out = append(out, i)
			}
		}
		return out
	}
	pos := slices.Index(order, id)
	at := func(k int) int { return order[((pos+k)%n+n)%n] }
	if topology == "ring" {
		for k := 1; k < n; k++ {
			out = append(out, at(k))
		}
		return out
	}
	// biring: succ, pred, then outwards. Going outwards from both sides, the two sides meet
	// halfway: 2k < n gives two new peers, 2k = n the one opposite.
	for k := 1; 2*k <= n; k++ {
		out = append(out, at(k))
		if 2*k < n {
			out = append(out, at(-k))
		}
	}
	return out
}

// denseLinks is the largest mesh whose links' FIFO bookkeeping is an N² table (2 MiB): a mesh
// election talks on most of its links. A ring talks on a few links per node, however large.
const denseLinks = 512

// fifo returns the time at which a message n sends now to `to` is delivered, given its drawn
// time: never before the link's previous message, so a link never reorders.
func (s *Sim) fifo(n *node, to int, at time.Duration) time.Duration {
	if s.lastAt != nil {
		link := (n.id-1)*s.cfg.N + to - 1
		at = max(at, s.lastAt[link])
		s.lastAt[link] = at
		return at
	}
	for i := range n.links {
		if l := &n.links[i]; int(l.to) == to {
			at = max(at, l.at)
			l.at = at
			return at
		}
	}
	n.links = append(n.links, link{to: int32(to), at: at})
	return at
}

// queueCap is the initial capacity of the queue: what a mesh election keeps in flight at once
// (Bully's all-to-all rounds), or a few items per node on a ring (a message or two, heartbeats,
// the detector's checks, a timer). The queue grows beyond it when it must.
func queueCap(topology string, n int) int {
	if topology == "mesh" {
		return min(n*n/2+64, 1<<16)
	}
	return min(8*n+64, 1<<16)
}

// logCap is the initial capacity of a node's event log: what one election costs a node, about — a
// send and a recv for its share of the algorithm's bound (Bully: every peer) — and never more than
// a message to and from every peer; it grows when it must.
func logCap(alg election.Algorithm, topology string, n int) int {
	c := 2*n + 16
	if topology == "mesh" || alg.Bound == nil {
		return c
	}
	if b, ok := alg.Bound(n, n); ok {
		c = min(c, 2*b/n+16)
	}
	return c
}

func (s *Sim) push(k kind, it item) {
	s.seq++
	it.sk = s.seq<<8 | uint64(k)
	s.q.push(it)
}

// delay draws a link delay.
func (s *Sim) delay() time.Duration {
	span := int64(s.cfg.MaxDelay - s.cfg.MinDelay)
	if span == 0 {
		return s.cfg.MinDelay
	}
	return s.cfg.MinDelay + time.Duration(s.rng.Int63n(span+1))
}

// Now is the virtual time.
func (s *Sim) Now() time.Duration { return s.now }

// Config is the run's configuration with its defaults filled in.
func (s *Sim) Config() Config { return s.cfg }

// RunFor advances virtual time by d, carrying out everything that falls due.
func (s *Sim) RunFor(d time.Duration) { s.RunUntil(s.now + d) }

// RunUntil advances virtual time to t (no further than the end of a finished run).
func (s *Sim) RunUntil(t time.Duration) {
	if s.finished || s.cfg.Scripted {
		return
	}
	for s.q.len() > 0 && s.q.next() <= t {
		s.dispatch(s.q.pop())
	}
	if t > s.now {
		s.now = t
	}
}

// Step carries out the next scheduled happening (its time becomes Now) and tells whether there was
// one.
func (s *Sim) Step() bool {
	if s.finished || s.q.len() == 0 || s.cfg.Scripted {
		return false
	}
	s.dispatch(s.q.pop())
	return true
}

// Run runs until Config.Duration and ends the run as the launcher would: every live node writes
// its stats and stops. It returns the run's logs.
func (s *Sim) Run() *logs.Run {
	s.RunUntil(s.cfg.Duration)
	return s.Finish()
}

// stopDelay is how long the orderly stop takes to reach a node and then to be seen by the launcher:
// as in a real run, every stop event comes after the launcher's stopping record, which ends the
// observed run.
const stopDelay = time.Millisecond

// Finish ends the run now: the launcher's stopping; a moment later a stats and a stop event at every
// live node (a paused one too: the launcher resumes it to stop it); then an exited record with code
// 0 for each, and the end. Later calls return the same run.
func (s *Sim) Finish() *logs.Run {
	if s.finished {
		return &s.run
	}
	s.finished = true
	s.launch(logs.LaunchRecord{Ev: logs.LaunchStopping})
	s.now += stopDelay
	for _, id := range s.ids {
		n := s.nodes[id]
		if !n.alive {
			continue
		}
		s.statsEvent(n)
		s.event(n, logs.EvStop).Reason = "terminated"
	}
	s.now += stopDelay
	for _, id := range s.ids {
		if n := s.nodes[id]; n.alive {
			code := 0
			s.launch(logs.LaunchRecord{Ev: logs.LaunchExited, Node: id, Inc: n.inc, Pid: n.pid(), Code: &code})
		}
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchEnd})
	return &s.run
}

// Log is the run as recorded so far (the same value Finish returns once the run is over).
func (s *Sim) Log() *logs.Run { return &s.run }

func (s *Sim) dispatch(it item) {
	s.now = it.at
	switch it.kind() {
	case kStats:
		for _, id := range s.ids {
			if n := s.nodes[id]; n.alive && !n.paused {
				s.statsEvent(n)
			}
		}
		s.push(kStats, item{at: s.now + s.cfg.StatsEvery})
		return
	}
	n := s.nodes[it.node]
	k := it.kind()
	switch {
	case k == kDeliver && (!n.alive || n.inc != int(it.inc)):
		s.lost(&it, "peer crashed")
		return
	case !n.alive || n.inc != int(it.inc):
		return
	case n.paused:
		n.held = append(n.held, it)
		return
	}
	s.handle(n, &it)
}

// handle carries out an item at a running node.
func (s *Sim) handle(n *node, it *item) {
	switch it.kind() {
	case kStart:
		s.start(n)
	case kDeliver:
		s.receive(n, it)
	case kTimer:
		t := &n.timers[it.aux]
		if !t.armed || t.gen != it.gen {
			return
		}
		t.armed = false
		s.step(n, election.Input{Kind: election.InTimer, Timer: t.name})
	}
}
