package explore

// The explorer's model of a cluster: the real election machines, the links between them, the
// machines' timers and a failure detector, and the faults. A state is immutable once made: a
// transition copies what it changes (one node's machine, a link or two) and shares the rest.

import (
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

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
// in the explorer's table of the distinct messages sent (Explorer.msg): a link holds 8 bytes a
// message rather than the whole Message, and its fingerprint hashes the numbers.
type pmsg struct {
	id uint32
	k  pkind
}

// link is the messages in flight on one directed link, oldest first. Never changed once made.
type link struct {
	q      []pmsg
	h      [2]uint64
	pooled bool // handed out by the explorer's linkPool: valid until its next applyScratch
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

// fingerprint is a state's 128-bit hash. Two states with equal fingerprints are taken as one: the
// chance that two of S distinct states collide is about S²/2^129 (TLC keeps 64 bits).
type fingerprint [2]uint64

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
func (x *Explorer) setNode(s *state, i int, ns *nodeState) {
	x.encodeNode(ns)
	x.putNode(s, i, ns)
}

// putNode puts a fingerprinted node in s.
func (x *Explorer) putNode(s *state, i int, ns *nodeState) {
	if old := s.nodes[i]; old != nil {
		s.add(old.h, nodeSalt(i), minus)
	}
	s.nodes[i] = ns
	s.add(ns.h, nodeSalt(i), plus)
}

func (x *Explorer) setLink(s *state, i int, l *link) {
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

func (x *Explorer) linkIndex(from, to int) int { return (from-1)*x.n + to - 1 }

// push appends p to link from->to.
func (x *Explorer) push(s *state, from, to int, p pmsg) {
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
func (x *Explorer) hear(t *state, id, peer int, tell bool) {
	ns := t.nodes[id-1]
	bit := uint64(1) << peer
	if ns.byTimeout&bit == 0 {
		return
	}
	c := x.cloneNode(ns)
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

// cloneNode copies a node so that a step can change it.
func (x *Explorer) cloneNode(ns *nodeState) *nodeState {
	c := &nodeState{inc: ns.inc, suspects: ns.suspects, timers: slices.Clone(ns.timers), hbTo: ns.hbTo, watch: ns.watch, byTimeout: ns.byTimeout}
	if ns.m != nil {
		c.m = x.cloneMachine(ns.m)
	}
	return c
}
