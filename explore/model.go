package explore

// The explorer's model of a cluster: the real election machines, the links between them, the
// machines' timers and a failure detector, and the faults. A state is immutable once made: a
// transition copies what it changes (one node's machine, a link or two) and shares the rest.

import (
	"fmt"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
	"github.com/leaderlab/leaderlab/rundir"
)

// model is the explorer's model of one configuration's cluster, as package checker searches it
// (checked.go): the machines' configuration, what the model keeps across states (the messages
// sent, the step cache, the scratch states), and the figures of the search.
type model struct {
	cfg       Config
	alg       election.Algorithm
	n         int
	ids, ring []int
	initiator []bool
	timings   rundir.Timings
	topology  string
	bound     int
	hasBound  bool
	counted   map[string]bool
	mplan     *plan
	msgPlan   *plan
	enc       encoder
	// msgs are the distinct messages sent, numbered by intern by their encoding, which menc makes
	// (shared with the forks: fork.go).
	msgs       *messages
	menc       encoder
	copier     copier
	trace      func(id int, in election.Input, effs []election.Effect)
	promised   map[string]string // property -> why it is not promised under this configuration
	initiators []int
	timerNames []string
	hbScratch  state
	lookahead  int // rounds of heartbeats looked ahead: the machines' longest patience
	// onDetect is told of the detector's reminders as they are made (the trace writer replays them)
	onDetect    func(id, peer int, suspect bool, reason string)
	onQuiescent func(*state)                          // tests: every quiescent state found
	onVisit     func(*state)                          // tests: every state expanded
	afterStep   func(id, inc int, m election.Machine) // tests: every machine stepped (not from the cache)
	cache       *stepCache                            // shared with the forks (cache.go)
	cacheHits   int64
	keyMsg      election.Message // stepKey's copy of a message
	// parts numbers the nodes and links the levels stow (stow.go), shared with the forks; forks
	// are the model's forks (fork.go), each with its figures.
	parts   *parts
	forks   []*model
	isFork  bool
	scratch state
	effs    []election.Effect
	// pos is each ID's place on the ring (rings only); breach a send that broke the reduction's
	// assumption (see route), "" while none has.
	pos    [MaxN + 1]int
	oneWay bool // a one-way ring
	breach string
	// pre is the state the transition being made starts from, preOne its oneEpoch (0 not known
	// yet, 1 true, 2 false); stepFrom the sender of the message being delivered (0: none).
	pre      *state
	preOne   int8
	stepFrom int
	// recvID is the number (intern) of the message being delivered, plus one (0: none): the step
	// cache keys a delivery by it rather than by the message's encoding.
	recvID uint32
	// reactive: the machines tell what a message may make them send (election.Reactor), which the
	// reduction on a mesh rests on. react is what the receiver declared for the message being
	// delivered (ReactAny in any other transition), reactNode and reactFrom its receiver and sender.
	reactive bool
	// newsReactive: they also tell what the news of a crash may make them send
	// (election.NewsReactor), and the configuration lets the reduction lean on it (newsReaction).
	newsReactive         bool
	ahead                []election.Message // newsReaction's buffer
	react                election.Reaction
	reactNode, reactFrom int
	reactNews            bool // what is being delivered is the news that reactFrom is gone
	// pool hands out the links of applyScratch's transitions.
	pool linkPool
	// The search's figures: the most messages in flight in a state expanded, and the most a
	// fault-free path sent by a quiescent state.
	maxInFlight, mostMessages int
}

// newModel prepares the model of cfg, checked already, exploring alg.
func newModel(cfg Config, alg election.Algorithm) (*model, error) {
	x := &model{cfg: cfg, alg: alg, n: cfg.N, topology: alg.Topologies[0], counted: map[string]bool{}}
	for i := 1; i <= cfg.N; i++ {
		x.ids = append(x.ids, i)
	}
	x.ring = cfg.Order
	if x.ring == nil {
		x.ring = append([]int(nil), x.ids...)
	}
	if x.topology == "mesh" {
		x.ring = nil
	}
	for i, id := range x.ring {
		x.pos[id] = i
	}
	x.oneWay = x.topology == "ring"
	x.initiator = make([]bool, cfg.N+1)
	x.initiators = cfg.Initiators
	if x.initiators == nil {
		x.initiators = x.ids
	}
	for _, id := range x.initiators {
		x.initiator[id] = true
	}
	x.timings.Derive(cfg.Timeout)
	patience := max(x.timings.ElectionTimeout, cfg.Timeout)
	x.lookahead = int((patience+cfg.Heartbeat-1)/cfg.Heartbeat) + 1
	for _, k := range alg.Kinds {
		x.counted[k] = true
	}
	for _, k := range alg.Announce {
		x.counted[k] = true
	}
	switch {
	case alg.EdgeBound != nil:
		edges, err := election.Config{IDs: x.ids, Ring: x.ring, Topology: x.topology}.Graph()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		x.bound, x.hasBound = alg.EdgeBound(x.ids, edges, cfg.Options)
	case alg.Bound != nil:
		x.bound, x.hasBound = alg.Bound(cfg.N, countInitiators(x.initiator))
	}
	m, err := x.newMachine(1, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if x.mplan, err = machinePlan(reflect.TypeOf(m)); err != nil {
		return nil, err
	}
	x.msgPlan = planOf(reflect.TypeOf(election.Message{}))
	x.msgs = &messages{}
	x.cache = newStepCache(cacheSize(cfg))
	x.promised = x.limits()
	return x, nil
}

func countInitiators(in []bool) int {
	k := 0
	for _, b := range in {
		if b {
			k++
		}
	}
	return k
}

func (x *model) newMachine(id, inc int) (election.Machine, error) {
	return x.alg.New(election.Config{
		Self: id, IDs: x.ids, Ring: x.ring, Topology: x.topology, Options: x.cfg.Options,
		Initiator: x.initiator[id], Incarnation: inc,
		ElectionTimeout: x.timings.ElectionTimeout, CoordinatorTimeout: x.timings.CoordinatorTimeout,
	})
}

// cloneMachine deep-copies a machine (see clone.go).
func (x *model) cloneMachine(m election.Machine) election.Machine {
	x.copier.from, x.copier.to = x.copier.from[:0], x.copier.to[:0]
	p := x.copier.ptr(x.mplan.elem, ptrOf(m))
	return view(x.mplan, unsafe.Pointer(&p)).Interface().(election.Machine)
}

// ptrOf is the address of the struct a machine's interface value points at.
func ptrOf(m election.Machine) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

func ptrOfMsg(m *election.Message) unsafe.Pointer { return unsafe.Pointer(m) }

// initial is the state after every node's start, in ID order, at time 0 (nodes begin at a common
// instant, as the launcher's begin makes them; a start sends but receives nothing, so their
// order changes nothing but the order of the links' contents, which are separate).
func (x *model) initial() *state {
	s := &state{nodes: make([]*nodeState, x.n), links: make([]*link, x.n*x.n)}
	for id := 1; id <= x.n; id++ {
		m, err := x.newMachine(id, 1)
		if err != nil {
			panic(err) // New built node 1 from the same configuration
		}
		x.setNode(s, id-1, &nodeState{m: m, inc: 1})
		_, ok := m.(election.Reactor)
		x.reactive = ok && x.ring == nil
		_, news := m.(election.NewsReactor)
		x.newsReactive = x.reactive && news && x.cfg.Timers != TimersAsync && x.cfg.Restarts == 0
	}
	x.react = election.ReactAny
	for id := 1; id <= x.n; id++ {
		x.step(s, id, election.Input{Kind: election.InStart})
	}
	s.seal()
	return s
}

// pkind tells a message on a link from the detector's news carried on it.
type pkind uint8

const (
	// pMsg is an algorithm's message.
	pMsg pkind = iota
	// pEOF: the sender died; its connection breaks after what it sent (TCP's FIN after the data),
	// and the receiver's detector suspects it, as the node's does when a re-dial is refused.
	pEOF
	// pHello: the sender started again; its new connection comes up and the receiver's detector
	// trusts it again.
	pHello
)

// pmsg is what is in flight on a link: a pseudo-message, or an algorithm's message by its number
// in the model's table of the distinct messages sent (model.msgs): a link holds 8 bytes a
// message rather than the whole Message, and its fingerprint hashes the numbers.
type pmsg struct {
	id uint32
	k  pkind
}

// link is the messages in flight on one directed link, oldest first. Never changed once made.
type link struct {
	q      []pmsg
	h      [2]uint64
	pooled bool   // handed out by the explorer's linkPool: valid until its next applyScratch
	part   uint32 // its number in the stowed parts, plus one (0: not known here; stow.go), atomic
}

type timer struct {
	name string
	at   time.Duration
}

// nodeState is one node: its machine (nil while crashed), incarnation, armed timers and what its
// detector suspects. Never changed once made.
type nodeState struct {
	m        election.Machine
	inc      int
	timers   []timer // by name
	suspects uint64  // bit id: the detector suspects node id
	hbTo     []int   // the machine's heartbeat plan: whom it sends heartbeats to (never changed; replaced)
	watch    []int   // and whom it watches (a partition's detector timeouts)
	// byTimeout: the suspicions of suspects that came from silence (a partition), which anything
	// heard from the peer ends; a broken link's end only with the peer's new connection.
	byTimeout uint64
	h         [2]uint64
	// part is the node's number in the stowed parts, plus one, and its ID above (0: not known
	// here; stow.go), read and written atomically: forks share nodes.
	part uint64
}

func (ns *nodeState) alive() bool { return ns.m != nil }

// state is one state of the cluster.
type state struct {
	nodes []*nodeState // by ID-1
	links []*link      // by (from-1)*n + (to-1); nil when empty
	now   time.Duration
	// crashes and restarts are the faults used so far.
	crashes, restarts int
	// part is the side of the partition in force that holds node 1, as a bit set by ID (0: none);
	// partUsed tells that the one partition was made; partAt when.
	part     uint64
	partUsed bool
	partAt   time.Duration
	// sent counts the election's and the announcements' messages while no fault has happened, for
	// the bound; -1 once one has.
	sent     int
	inflight int
	sum      [2]uint64 // the components' mixed fingerprints, added up
	fp       fingerprint
}

// fingerprint is a state's 128-bit hash (checker.Fingerprint).
type fingerprint = checker.Fingerprint

// evKind is a transition's kind.
type evKind uint8

const (
	evDeliver   evKind = iota + 1 // the oldest message on link peer->node reaches node
	evTimer                       // node's timer fires
	evCrash                       // node is killed
	evRestart                     // node starts again, as its next incarnation
	evHeartbeat                   // peer rounds of heartbeats, one every heartbeat interval
	evPartition                   // the network splits: mask is the side of node 1
	evHeal                        // the partition ends
	evTimeout                     // node's detector suspects peer, silent across the partition
)

// event is one transition.
type event struct {
	kind  evKind
	node  int
	peer  int    // evDeliver: the sender
	timer string // evTimer
	mask  uint64 // evPartition
}

// setNode fingerprints ns and puts it in s as node i+1.
func (x *model) setNode(s *state, i int, ns *nodeState) {
	x.encodeNode(ns)
	x.putNode(s, i, ns)
}

// putNode puts a fingerprinted node in s.
func (x *model) putNode(s *state, i int, ns *nodeState) {
	if old := s.nodes[i]; old != nil {
		s.add(old.h, nodeSalt(i), minus)
	}
	s.nodes[i] = ns
	s.add(ns.h, nodeSalt(i), plus)
}

func (x *model) setLink(s *state, i int, l *link) {
	if old := s.links[i]; old != nil {
		s.add(old.h, linkSalt(i), minus)
		s.inflight -= len(old.q)
	}
	if l != nil && len(l.q) == 0 {
		l = nil
	}
	s.links[i] = l
	if l != nil {
		x.encodeLink(l)
		s.add(l.h, linkSalt(i), plus)
		s.inflight += len(l.q)
	}
}

func (x *model) linkIndex(from, to int) int { return (from-1)*x.n + to - 1 }

// push appends p to link from->to.
func (x *model) push(s *state, from, to int, p pmsg) {
	if p.k == pMsg && s.cut(from, to) {
		return // the receiver drops it (the transport's partition rule)
	}
	i := x.linkIndex(from, to)
	var q []pmsg
	if old := s.links[i]; old != nil {
		q = x.pool.msgs(len(old.q), len(old.q)+1)
		copy(q, old.q)
	}
	x.setLink(s, i, x.pool.link(append(q, p)))
}

// cut tells whether a partition in force separates a and b.
func (s *state) cut(a, b int) bool {
	return s.part != 0 && (s.part>>a&1 != s.part>>b&1)
}

// hear is the detector hearing from peer at node id: a suspicion that came from silence ends (told
// to onDetect when tell is set).
func (x *model) hear(t *state, id, peer int, tell bool) {
	ns := t.nodes[id-1]
	bit := uint64(1) << peer
	if ns.byTimeout&bit == 0 {
		return
	}
	c := copyNode(ns)
	c.byTimeout &^= bit
	c.suspects &^= bit
	x.setNode(t, id-1, c)
	if tell && x.onDetect != nil {
		x.onDetect(id, peer, false, "")
	}
	x.step(t, id, election.Input{Kind: election.InTrust, From: peer})
}

// clone starts a successor of s: the same components, shared (pooled links copied out).
func (s *state) clone() *state {
	t := *s
	t.nodes = slices.Clone(s.nodes)
	t.links = slices.Clone(s.links)
	for i, l := range t.links {
		t.links[i] = kept(l)
	}
	return &t
}

// copyNode copies a node's own fields, sharing its machine: for the detector's and the timers'
// changes that come before a step, which copies the machine before it changes it (stepMachine).
// A deep copy there cost a quarter of a search, mostly for steps found in the cache.
func copyNode(ns *nodeState) *nodeState {
	return &nodeState{m: ns.m, inc: ns.inc, suspects: ns.suspects, timers: slices.Clone(ns.timers), hbTo: ns.hbTo, watch: ns.watch, byTimeout: ns.byTimeout}
}

// cloneNode copies a node so that a step can change it.
func (x *model) cloneNode(ns *nodeState) *nodeState {
	c := &nodeState{inc: ns.inc, suspects: ns.suspects, timers: slices.Clone(ns.timers), hbTo: ns.hbTo, watch: ns.watch, byTimeout: ns.byTimeout}
	if ns.m != nil {
		c.m = x.cloneMachine(ns.m)
	}
	return c
}
