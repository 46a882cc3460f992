package explore

// The explorer's model of a cluster: the real election machines, the links between them, the
// machines' timers and a failure detector, and the faults. A state is immutable once made: a
// transition copies what it changes (one node's machine, a link or two) and shares the rest.

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
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

var hashSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hash2(b []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(hashSeeds[0], b), maphash.Bytes(hashSeeds[1], b)}
}

// mix spreads a component's hash over 64 bits, salted by where it sits, so that the sum of the
// components tells one arrangement from another.
func mix(h, salt uint64) uint64 {
	z := h ^ (salt * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *state) add(h [2]uint64, salt uint64, sign uint64) {
	s.sum[0] += sign * mix(h[0], salt)
	s.sum[1] += sign * mix(h[1], salt^0x5555555555555555)
}

const (
	plus  = uint64(1)
	minus = ^uint64(0) // -1 mod 2^64
)

// seal computes the fingerprint from the components' sum and the scalars.
func (s *state) seal() {
	var b [48]byte
	x := binary.LittleEndian.AppendUint64(b[:0], s.sum[0])
	x = binary.LittleEndian.AppendUint64(x, s.sum[1])
	x = binary.AppendVarint(x, int64(s.now))
	x = binary.AppendVarint(x, int64(s.crashes))
	x = binary.AppendVarint(x, int64(s.restarts))
	x = binary.AppendVarint(x, int64(s.sent))
	x = binary.AppendUvarint(x, s.part)
	if s.partUsed {
		x = binary.AppendVarint(x, int64(s.partAt)+1)
	}
	s.fp = hash2(x)
}

func nodeSalt(i int) uint64 { return uint64(i)<<1 | 1 }
func linkSalt(i int) uint64 { return uint64(i+1) << 20 }

// encodeNode fingerprints a node.
func (x *Explorer) encodeNode(ns *nodeState) { ns.h = x.nodeHash(ns, false) }

// plainHash fingerprints a node without its instants.
func (x *Explorer) plainHash(ns *nodeState) [2]uint64 { return x.nodeHash(ns, true) }

// nodeHash fingerprints a node, its instants left out when noInstants is set.
func (x *Explorer) nodeHash(ns *nodeState, noInstants bool) [2]uint64 {
	e := &x.enc
	e.b, e.ptrs, e.noInstants = e.b[:0], e.ptrs[:0], noInstants
	e.varint(int64(ns.inc))
	e.uvarint(ns.suspects)
	e.uvarint(uint64(len(ns.hbTo)))
	for _, p := range ns.hbTo {
		e.uvarint(uint64(p))
	}
	e.uvarint(uint64(len(ns.watch)))
	for _, p := range ns.watch {
		e.uvarint(uint64(p))
	}
	e.uvarint(ns.byTimeout)
	e.uvarint(uint64(len(ns.timers)))
	for _, t := range ns.timers {
		e.uvarint(uint64(len(t.name)))
		e.b = append(e.b, t.name...)
		e.varint(int64(t.at))
	}
	if ns.m != nil {
		e.b = append(e.b, 1)
		e.pointer(x.mplan.elem, ptrOf(ns.m))
	}
	e.noInstants = false
	return hash2(e.b)
}

// encodeLink fingerprints a link's queue.
func (x *Explorer) encodeLink(l *link) {
	e := &x.enc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	for i := range l.q {
		p := &l.q[i]
		e.b = append(e.b, byte(p.k))
		e.uvarint(uint64(p.id))
	}
	l.h = hash2(e.b)
}

// intern numbers a message by its content: equal messages get one number, in the order they were
// first sent, so that a number stands for the same message in every state of the search.
func (x *Explorer) intern(m *election.Message) uint32 {
	e := &x.menc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	e.value(x.msgPlan, ptrOfMsg(m))
	if id, ok := x.msgIndex[string(e.b)]; ok {
		return id
	}
	id := uint32(len(x.msgs))
	x.msgs = append(x.msgs, *m)
	x.msgIndex[string(e.b)] = id
	return id
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

// apply makes the successor of s by ev.
func (x *Explorer) apply(s *state, ev event) *state { return x.applyScratch(s, ev).clone() }

// applyScratch makes the successor of s by ev in a state of the explorer's own, valid until the next
// call: most successors are states seen before, and need no containers of their own.
func (x *Explorer) applyScratch(s *state, ev event) *state {
	t := &x.scratch
	x.pool.on = true
	x.pool.reset()
	defer func() { x.pool.on = false }()
	x.pre, x.preOne = s, 0
	x.react, x.reactNews = election.ReactAny, false
	nodes, links := t.nodes, t.links
	*t = *s
	t.nodes, t.links = append(nodes[:0], s.nodes...), append(links[:0], s.links...)
	switch ev.kind {
	case evDeliver:
		li := x.linkIndex(ev.peer, ev.node)
		l := s.links[li]
		head := l.q[0]
		x.setLink(t, li, x.pool.link(l.q[1:]))
		ns := t.nodes[ev.node-1]
		bit := uint64(1) << ev.peer
		switch head.k {
		case pMsg:
			if x.reactive {
				x.react, x.reactNode, x.reactFrom = ns.m.(election.Reactor).Reaction(ev.peer, x.msgs[head.id]), ev.node, ev.peer
			}
			x.hear(t, ev.node, ev.peer, false) // the trace writer tells it before the delivery
			x.recvID = head.id + 1
			x.step(t, ev.node, election.Input{Kind: election.InRecv, From: ev.peer, Msg: x.msgs[head.id]})
			x.recvID = 0
		case pEOF:
			if x.reactive {
				x.react, x.reactNode, x.reactFrom = x.newsReaction(s, ev.peer, ev.node), ev.node, ev.peer
				x.reactNews = true
			}
			if ns.suspects&bit == 0 {
				c := x.cloneNode(ns)
				c.suspects |= bit
				x.setNode(t, ev.node-1, c)
				x.step(t, ev.node, election.Input{Kind: election.InSuspect, From: ev.peer})
			}
		case pHello:
			if ns.suspects&bit != 0 {
				c := x.cloneNode(ns)
				c.suspects &^= bit
				c.byTimeout &^= bit
				x.setNode(t, ev.node-1, c)
				x.step(t, ev.node, election.Input{Kind: election.InTrust, From: ev.peer})
			}
		}
	case evTimer:
		ns := t.nodes[ev.node-1]
		k := slices.IndexFunc(ns.timers, func(tm timer) bool { return tm.name == ev.timer })
		t.now = max(t.now, ns.timers[k].at)
		c := x.cloneNode(ns)
		c.timers = slices.Delete(c.timers, k, k+1)
		x.setNode(t, ev.node-1, c)
		x.step(t, ev.node, election.Input{Kind: election.InTimer, Timer: ev.timer})
	case evCrash:
		t.crashes++
		t.sent = -1
		ns := t.nodes[ev.node-1]
		x.setNode(t, ev.node-1, &nodeState{inc: ns.inc})
		for from := 1; from <= x.n; from++ { // what was on its way to it is lost
			x.setLink(t, x.linkIndex(from, ev.node), nil)
		}
		for to := 1; to <= x.n; to++ {
			if to != ev.node && t.nodes[to-1].alive() {
				x.push(t, ev.node, to, pmsg{k: pEOF})
			}
		}
	case evRestart:
		t.restarts++
		t.sent = -1
		inc := t.nodes[ev.node-1].inc + 1
		m, err := x.newMachine(ev.node, inc)
		if err != nil {
			panic(err) // the same configuration built incarnation 1
		}
		x.setNode(t, ev.node-1, &nodeState{m: m, inc: inc})
		for p := 1; p <= x.n; p++ {
			switch {
			case p == ev.node:
			case t.nodes[p-1].alive():
				x.push(t, ev.node, p, pmsg{k: pHello}) // its new connection comes up
			default:
				x.push(t, p, ev.node, pmsg{k: pEOF}) // its dial is refused
			}
		}
		x.step(t, ev.node, election.Input{Kind: election.InStart})
	case evHeartbeat:
		for k := 0; k < ev.peer; k++ {
			x.heartbeatRound(t)
		}
	case evPartition:
		t.part, t.partUsed, t.partAt = ev.mask, true, t.now
		t.sent = -1
		for i, l := range t.links { // what was on its way across the cut is dropped on receipt
			if l == nil || !t.cut(i/x.n+1, i%x.n+1) {
				continue
			}
			q := slices.DeleteFunc(slices.Clone(l.q), func(p pmsg) bool { return p.k == pMsg })
			x.setLink(t, i, &link{q: q})
		}
	case evHeal:
		t.part = 0
	case evTimeout:
		t.now = max(t.now, t.partAt+x.cfg.Timeout)
		ns := t.nodes[ev.node-1]
		bit := uint64(1) << ev.peer
		c := x.cloneNode(ns)
		c.suspects |= bit
		c.byTimeout |= bit
		x.setNode(t, ev.node-1, c)
		x.step(t, ev.node, election.Input{Kind: election.InSuspect, From: ev.peer})
	}
	if x.reactive && x.breach == "" && !x.cfg.NoReduction {
		x.keptPromises(s, t, ev)
	}
	t.seal()
	return t
}

// keptPromises holds the machines of a mesh to the other half of their declarations
// (election.Reactor): what a message on its way to a node may make it send must not grow while it
// is on its way. For every node that the transition ev from s to t changed, and every message that
// was on its way to it in s and still is, the declaration read in t must be no wider than in s
// (nothing, then an answer, then anything). The first that grew is recorded as a broken assumption.
func (x *Explorer) keptPromises(s, t *state, ev event) {
	for i := 1; i <= x.n; i++ {
		a, b := s.nodes[i-1], t.nodes[i-1]
		if a == b || !a.alive() || !b.alive() || a.inc != b.inc {
			continue
		}
		ra, rb := a.m.(election.Reactor), b.m.(election.Reactor)
		for j := 1; j <= x.n; j++ {
			l := s.links[x.linkIndex(j, i)]
			if l == nil {
				continue
			}
			q := l.q
			if ev.kind == evDeliver && ev.node == i && ev.peer == j {
				q = q[1:] // the one delivered
			}
			for _, p := range q {
				if p.k == pEOF && x.newsReactive && s.crashes >= x.cfg.Crashes {
					// the news of a crash, once no other can come: its declaration, read with
					// what is ahead of it on its link in s and in t, must not grow either
					if before, after := x.newsReaction(s, j, i), x.newsReaction(t, j, i); after < before {
						x.breach = fmt.Sprintf("node %d's declaration for the news that node %d is gone, on its way to it, grew from %v to %v (election.NewsReactor: it must hold from the moment the news is sent); the partial-order reduction on a mesh rests on it (rerun with --no-reduction)", i, j, before, after)
						return
					}
					continue
				}
				if p.k != pMsg {
					continue
				}
				m := x.msgs[p.id]
				if before, after := ra.Reaction(j, m), rb.Reaction(j, m); after < before {
					x.breach = fmt.Sprintf("node %d's declaration for the %s from node %d on its way to it grew from %v to %v (election.Reactor: it must hold from the moment the message is sent); the partial-order reduction on a mesh rests on it (rerun with --no-reduction)", i, m.Kind, j, before, after)
					return
				}
			}
		}
	}
}

// Heartbeats. The node's failure detector sends every heartbeat interval h a datagram to each
// peer of the machine's plan, carrying the sender's leader; the machine reads each as InHeartbeat
// (Bully and the ring core answer a persistent claim above their leader with an election: how two
// leaders after a fault find each other). The model sends them in rounds: at a state with nothing
// in flight, a round h after it, every sender's heartbeats, in order of sender and receiver, with
// the claims of the round's start. Rounds that change no machine but its instants (when it last
// heard whom) are not states of their own: the transition is the run of rounds up to the first one
// that changes something else, or sends, if one does within the machines' longest patience; else
// heartbeats have nothing more to say and the state is settled. Rounds come before a timer due
// later than them (under timely timers).

// heartbeatRound advances the clock by h and delivers one round of heartbeats.
func (x *Explorer) heartbeatRound(t *state) { x.heartbeatRoundWith(t, nil) }

// heartbeatRoundWith is heartbeatRound telling each heartbeat to also before it is delivered.
func (x *Explorer) heartbeatRoundWith(t *state, also func(to, from, claim int)) {
	t.now += x.cfg.Heartbeat
	var claims [MaxN + 1]int
	for j, ns := range t.nodes {
		if ns.alive() {
			claims[j+1] = ns.m.Leader()
		}
	}
	for j := 1; j <= x.n; j++ {
		sender := t.nodes[j-1]
		if !sender.alive() {
			continue
		}
		for _, i := range sender.hbTo {
			if i != j && i >= 1 && i <= x.n && t.nodes[i-1].alive() && !t.cut(j, i) {
				x.hear(t, i, j, true)
				if also != nil {
					also(i, j, claims[j])
				}
				x.step(t, i, election.Input{Kind: election.InHeartbeat, From: j, Claim: claims[j]})
			}
		}
	}
}

// heartbeatsDue is how many rounds of heartbeats from s change something other than instants, or
// 0 when none within the look-ahead (or before the first timer due at first, when first >= 0).
func (x *Explorer) heartbeatsDue(s *state, first time.Duration) int {
	if s.inflight > 0 {
		return 0
	}
	return x.heartbeatsWould(s, first)
}

// heartbeatsWould is heartbeatsDue whatever is in flight.
func (x *Explorer) heartbeatsWould(s *state, first time.Duration) int {
	any := false
	for _, ns := range s.nodes {
		if ns.alive() && len(ns.hbTo) > 0 {
			any = true
		}
	}
	if !any {
		return 0
	}
	// a look-ahead, not a transition: what its steps send is not held to the routes here
	defer func(b string) { x.breach = b }(x.breach)
	t := &x.hbScratch
	nodes, links := t.nodes, t.links
	*t = *s
	t.nodes, t.links = append(nodes[:0], s.nodes...), append(links[:0], s.links...)
	for k := 1; k <= x.lookahead; k++ {
		if first >= 0 && s.now+time.Duration(k)*x.cfg.Heartbeat >= first {
			return 0
		}
		x.heartbeatRound(t)
		if t.inflight > s.inflight { // a round sent something (heartbeats only add to the links)
			return k
		}
		for i := range t.nodes {
			if t.nodes[i] != s.nodes[i] && x.plainHash(t.nodes[i]) != x.plainHash(s.nodes[i]) {
				return k
			}
		}
	}
	return 0
}

// stepInto is implemented by machines that append their effects to a buffer the driver reuses.
type stepInto interface {
	StepInto(dst []election.Effect, in election.Input) []election.Effect
}

// step feeds in to node id's machine (a copy) and carries out its effects.
//
// A node's step depends only on its own state and the input, and the same pair recurs in many
// states of the cluster (every state where the other nodes are elsewhere): the outcome is kept in a
// cache by the node's fingerprint and the input's, and a step seen before costs no copy and no
// step of the machine.
func (x *Explorer) step(s *state, id int, in election.Input) {
	old := s.nodes[id-1]
	x.stepMachine(s, id, in)
	x.remind(s, id, old.watch)
}

// remind is the node's detector reading the machine's new plan (detector.plan): a peer watched
// anew that the detector suspects because its link broke is suspected again, told to the machine
// (the process died; the machine may have forgotten it: the ring core forgets suspicions of nodes it
// no longer routes round); one it suspected from silence (a partition) is trusted again and gets a
// fresh timeout. Each is a step of its own after the one that changed the plan.
func (x *Explorer) remind(s *state, id int, before []int) {
	ns := s.nodes[id-1]
	if !ns.alive() || slices.Equal(before, ns.watch) {
		return
	}
	for _, p := range ns.watch {
		bit := uint64(1) << p
		if slices.Contains(before, p) || ns.suspects&bit == 0 {
			continue
		}
		cur := s.nodes[id-1]
		if cur.byTimeout&bit != 0 {
			c := x.cloneNode(cur)
			c.byTimeout &^= bit
			c.suspects &^= bit
			x.setNode(s, id-1, c)
			if x.onDetect != nil {
				x.onDetect(id, p, false, "")
			}
			x.stepMachine(s, id, election.Input{Kind: election.InTrust, From: p})
			continue
		}
		if x.onDetect != nil {
			x.onDetect(id, p, true, "watched again while its link is down")
		}
		x.stepMachine(s, id, election.Input{Kind: election.InSuspect, From: p})
	}
}

// stepMachine feeds in to node id's machine (a copy) and carries out its effects.
func (x *Explorer) stepMachine(s *state, id int, in election.Input) {
	in.Now = s.now
	x.stepFrom = 0
	if in.Kind == election.InRecv {
		x.stepFrom = in.From
	}
	old := s.nodes[id-1]
	var key fingerprint
	if x.trace == nil {
		key = x.stepKey(id, old, &in)
		if r, ok := x.cache[key]; ok {
			x.cacheHits++
			x.carryOut(s, id, r)
			return
		}
	}
	ns := x.cloneNode(old)
	var effs []election.Effect
	if into, ok := ns.m.(stepInto); ok {
		effs = into.StepInto(x.effs[:0], in)
		x.effs = effs[:0]
	} else {
		effs = ns.m.Step(in)
	}
	if x.trace != nil {
		x.trace(id, in, effs)
	}
	if x.afterStep != nil {
		x.afterStep(id, ns.inc, ns.m)
	}
	r := &stepResult{ns: ns}
	for i := range effs {
		e := &effs[i]
		switch e.Kind {
		case election.EffSend:
			r.sends = append(r.sends, send{to: e.To, m: e.Msg, id: x.intern(&e.Msg), counted: x.counted[e.Msg.Kind]})
		case election.EffSetTimer:
			k := slices.IndexFunc(ns.timers, func(tm timer) bool { return tm.name == e.Timer })
			at := s.now + e.After
			if k >= 0 {
				ns.timers[k].at = at
			} else {
				ns.timers = append(ns.timers, timer{name: e.Timer, at: at})
				slices.SortFunc(ns.timers, func(a, b timer) int { return cmp.Compare(a.name, b.name) })
			}
		case election.EffCancelTimer:
			ns.timers = slices.DeleteFunc(ns.timers, func(tm timer) bool { return tm.name == e.Timer })
		case election.EffHeartbeat:
			ns.hbTo = slices.Clone(e.HeartbeatTo)
			slices.Sort(ns.hbTo)
			ns.watch = slices.Clone(e.Watch)
			slices.Sort(ns.watch)
		}
	}
	x.encodeNode(ns)
	if x.trace == nil {
		if len(x.cache) >= maxCache {
			clear(x.cache)
		}
		x.cache[key] = r
	}
	x.carryOut(s, id, r)
}

// maxCache bounds the step cache (about 200 bytes an entry and the nodes it keeps).
const maxCache = 1 << 21

// stepResult is a step's outcome: the node after it, and the messages it sent in order.
type stepResult struct {
	ns    *nodeState
	sends []send
}

type send struct {
	to      int
	m       election.Message
	id      uint32 // m's number (intern)
	counted bool
}

// stepKey fingerprints a node's state and an input. The node's ID is part of it: a node's
// fingerprint leaves out its configuration (its own ID among it), and two nodes in the same state
// answer the same input differently.
func (x *Explorer) stepKey(id int, ns *nodeState, in *election.Input) fingerprint {
	e := &x.enc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	e.uvarint(uint64(id))
	e.uvarint(ns.h[0])
	e.uvarint(ns.h[1])
	e.uvarint(uint64(in.Kind))
	e.varint(int64(in.Now))
	e.varint(int64(in.From))
	e.varint(int64(in.Claim))
	e.uvarint(uint64(len(in.Timer)))
	e.b = append(e.b, in.Timer...)
	if in.Kind == election.InRecv {
		if x.recvID != 0 {
			e.uvarint(uint64(x.recvID)) // the message's number stands for its content
		} else {
			e.value(x.msgPlan, ptrOfMsg(&in.Msg))
		}
	}
	return hash2(e.b)
}

// carryOut puts a step's outcome into s: the node, and its messages on their links (a message to a
// crashed node is lost).
func (x *Explorer) carryOut(s *state, id int, r *stepResult) {
	for i := range r.sends {
		m := &r.sends[i]
		if s.sent >= 0 && m.counted {
			s.sent++
		}
		if m.to >= 1 && m.to <= x.n && s.nodes[m.to-1].alive() || m.to == id {
			x.route(s, id, m.to, &m.m)
			x.push(s, id, m.to, pmsg{id: m.id})
		}
	}
	x.putNode(s, id-1, r.ns)
}

// enabled lists the transitions of s, in a fixed order: deliveries by link, timers, crashes,
// restarts.
func (x *Explorer) enabled(s *state, out []event) []event {
	out = out[:0]
	for i, l := range s.links {
		if l == nil {
			continue
		}
		from, to := i/x.n+1, i%x.n+1
		if s.nodes[to-1].alive() {
			out = append(out, event{kind: evDeliver, node: to, peer: from})
		}
	}
	switch x.cfg.Timers {
	case TimersAsync:
		for i, ns := range s.nodes {
			for _, tm := range ns.timers {
				out = append(out, event{kind: evTimer, node: i + 1, timer: tm.name})
			}
		}
		out = x.timeouts(s, out)
		if k := x.heartbeatsDue(s, -1); k > 0 {
			out = append(out, event{kind: evHeartbeat, peer: k})
		}
	default:
		// timely: a timeout is longer than any message's delay, so nothing fires while a message
		// is in flight, and the timer due first fires first (those due at once, in any order)
		if s.inflight > 0 {
			break
		}
		first := time.Duration(-1)
		for _, ns := range s.nodes {
			for _, tm := range ns.timers {
				if first < 0 || tm.at < first {
					first = tm.at
				}
			}
		}
		timeouts := x.timeoutPairs(s, nil)
		if due := s.partAt + x.cfg.Timeout; len(timeouts) > 0 && (first < 0 || due < first) {
			first = due
		}
		if k := x.heartbeatsDue(s, first); k > 0 {
			// heartbeats that change something come before the first timer: they are due earlier
			out = append(out, event{kind: evHeartbeat, peer: k})
			break
		}
		for i, ns := range s.nodes {
			for _, tm := range ns.timers {
				if tm.at == first {
					out = append(out, event{kind: evTimer, node: i + 1, timer: tm.name})
				}
			}
		}
		if len(timeouts) > 0 && s.partAt+x.cfg.Timeout == first {
			out = x.timeouts(s, out)
		}
	}
	live := 0
	for _, ns := range s.nodes {
		if ns.alive() {
			live++
		}
	}
	if s.crashes < x.cfg.Crashes && live > 1 {
		for i, ns := range s.nodes {
			if ns.alive() && (x.cfg.CrashTargets != CrashLeader || ns.m.Leader() == i+1) {
				out = append(out, event{kind: evCrash, node: i + 1})
			}
		}
	}
	if s.restarts < x.cfg.Restarts {
		for i, ns := range s.nodes {
			if !ns.alive() {
				out = append(out, event{kind: evRestart, node: i + 1})
			}
		}
	}
	if x.cfg.Partitions && !s.partUsed {
		// every split into two sides, each named by the side of node 1 (bit 1 set, not all)
		all := uint64(1)<<(x.n+1) - 2
		for r := uint64(0); r < 1<<(x.n-1); r++ {
			if m := 2 | r<<2; m != all {
				out = append(out, event{kind: evPartition, mask: m})
			}
		}
	}
	if s.part != 0 {
		out = append(out, event{kind: evHeal})
	}
	return out
}

// timeoutPairs lists the (node, peer) pairs whose detector would suspect the peer, silent across
// the partition: a live node watching a peer on the other side that it does not suspect yet. They
// fall due a detector timeout after the partition began (the last heartbeat across it came just
// before it).
func (x *Explorer) timeoutPairs(s *state, out [][2]int) [][2]int {
	if s.part == 0 {
		return out
	}
	for i, ns := range s.nodes {
		if !ns.alive() {
			continue
		}
		for _, p := range ns.watch {
			if p >= 1 && p <= x.n && s.cut(i+1, p) && ns.suspects>>p&1 == 0 {
				out = append(out, [2]int{i + 1, p})
			}
		}
	}
	return out
}

// timeouts appends the detector timeouts of the partition.
func (x *Explorer) timeouts(s *state, out []event) []event {
	for _, pr := range x.timeoutPairs(s, nil) {
		out = append(out, event{kind: evTimeout, node: pr[0], peer: pr[1]})
	}
	return out
}

// settled: of the transitions enabled in s, only faults remain: nothing in flight, no timer armed,
// and heartbeats have nothing more to say.
func settled(evs []event) bool {
	for _, e := range evs {
		if e.kind != evCrash && e.kind != evRestart && e.kind != evPartition && e.kind != evHeal {
			return false
		}
	}
	return true
}
