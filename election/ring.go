package election

// The ring core: what LeLann, Chang-Roberts, Hirschberg-Sinclair, Franklin and Peterson share. Each
// of them is a ringAlg — the textbook steps of one election — plugged into a ringCore, which keeps
// the ring alive around them:
//
//   - The ring order comes from cluster.json (Config.Ring). A node's successor and predecessor are
//     the next live nodes around the ring: suspected nodes are skipped, so the ring closes over a
//     dead node the moment one of its neighbours suspects it (Vinther's TLA+ ring assumed that only
//     the leader dies; here any node may).
//   - Every election runs in an epoch, carried in Message.Round. Initiators of the first election
//     use epoch 1. A node that must start a new election (its leader or a node of the running
//     election was suspected, the election stalled, a node higher than the leader came back) opens
//     the next epoch of its own above the highest it has seen: epochs after the first are owned by
//     their opener (epoch ≡ its ring position mod N), so two nodes never open one epoch
//     independently. (With max-seen+1, a node that had not seen an epoch whose messages a partition
//     lost opened that same number when its stall timer fired, and its election merged with the
//     broken one: a participant of the old one swallowed its candidates as its own election's, a
//     Franklin node took a later phase's message for its first; nobody decided until the next stall,
//     bench chaos --sim --swarm seeds 20261212 and 20262765.) A message of a newer epoch makes the
//     receiver drop what it knew and join it (an `elect` event), a message of an older epoch is
//     stale and discarded. A restarted node knows
//     no epoch: its messages carry epoch 0, which the receiver answers by opening a new epoch that
//     the restarted node joins — it "takes its place again and starts an election", and the ring
//     elects with it.
//   - The failure-detector plan: heartbeats to both live neighbours, and both are watched, so the
//     death of any node is noticed by the two nodes that route around it.
//   - A stall timer guards every election: a message lost with a node that died holding it ends the
//     election by a new epoch, whichever neighbour notices first. Every message of the epoch counts
//     as progress, so only an election that stopped moving is restarted.
//   - A node that fell behind (paused, cut off) and elects in an epoch the ring has left gets a
//     catch-up message from the first settled node its election reaches: the current epoch and
//     leader. It follows that leader, or, if it is itself higher, opens a new epoch and wins it.
//   - Heartbeats carry each node's leader: a neighbour that keeps claiming a live leader above ours
//     for the election timeout means the ring is split in its beliefs (a partition healed, a paused
//     leader came back between two elections): a new epoch reunites it.

import (
	"fmt"
	"slices"
	"time"
)

// ringTimerStall is the name of the timer that restarts a stalled election.
const ringTimerStall = "stall"

// RingCatchUp is the ring core's own message kind: the answer of a settled node to a message of an
// epoch it has left, telling the sender the current epoch (Round) and leader (Cand). It is
// recovery, not election: it is counted in by_kind but neither in an election's messages nor in its
// announcements.
const RingCatchUp = "catch-up"

// ringAlg is one ring election's textbook steps. The core calls it only with messages of the
// current epoch.
type ringAlg interface {
	// reset forgets the current election (a new epoch begins).
	reset()
	// initiate starts this node's part of the election as an initiator.
	initiate()
	// join is called when a message of a new epoch wakes this node (before handle gets it).
	join()
	// handle processes a message of the current epoch.
	handle(from int, m Message)
}

// ringConfig is a ring node's configuration, fixed by newRingCore (Fixed).
type ringConfig struct {
	_ Fixed

	name      string
	self      int
	ids       []int
	order     []int
	pos       map[int]int // each ID's place in order
	bidir     bool
	initiator bool
	stall     time.Duration
	t         time.Duration // the election timeout: how long a neighbour's higher claim must last
}

// ringCore carries a ringAlg through epochs, crashes and restarts.
type ringCore struct {
	*ringConfig

	restarted bool // a restarted incarnation that has not learnt the epoch yet
	started   bool // InStart came

	alg         ringAlg
	suspected   map[int]bool
	epoch       int
	participant bool
	leader      int

	// trustedAbove is the highest ID trusted again during the current election: if the election
	// ends with a lower leader, the ring elects again with it.
	trustedAbove int
	// claimFrom/claim/claimSince: a neighbour claiming a leader above ours since claimSince.
	claimFrom, claim int
	claimSince       time.Duration `explore:"instant"`
	now              time.Duration `explore:"instant"`
	progress         time.Duration `explore:"instant"` // when the current election last moved here
	stallMul         time.Duration // the stall timer's multiplier: doubles with each stall in a row

	hbTo, watch []int
	// callers are the nodes that sent us heartbeats though we send them none, and when they last
	// did: they count us as their neighbour while we still route round them (or past them), and
	// we answer them until they stop, so that a one-sided view of the ring (ours still reaching
	// across a partition or a dead node, theirs not) does not make them suspect us.
	callers map[int]time.Duration `explore:"instant"`
	out     []Effect
}

func newRingCore(name string, c Config, bidir bool) (*ringCore, error) {
	want := "ring"
	if bidir {
		want = "biring"
	}
	if c.Topology != "" && c.Topology != want {
		return nil, fmt.Errorf("%s: topology %q: %s runs on a %s only", name, c.Topology, name, want)
	}
	if c.Incarnation < 1 {
		return nil, fmt.Errorf("%s: Incarnation %d: want 1 or more", name, c.Incarnation)
	}
	if len(c.Ring) != len(c.IDs) {
		return nil, fmt.Errorf("%s: Ring %v must order every ID of %v", name, c.Ring, c.IDs)
	}
	r := &ringCore{
		ringConfig: &ringConfig{name: name, self: c.Self, ids: c.IDs, order: c.Ring, bidir: bidir,
			initiator: c.Initiator, pos: make(map[int]int, len(c.Ring))},
		restarted: c.Incarnation > 1, suspected: map[int]bool{}, stallMul: 1,
	}
	for i, id := range c.Ring {
		if _, dup := r.pos[id]; dup {
			return nil, fmt.Errorf("%s: Ring %v lists %d twice", name, c.Ring, id)
		}
		r.pos[id] = i
	}
	if _, ok := r.pos[c.Self]; !ok {
		return nil, fmt.Errorf("%s: Self %d is not in Ring %v", name, c.Self, c.Ring)
	}
	// Every message of the epoch postpones the stall timer, so it must only outlast the longest
	// quiet spell of a live election: a lap of the ring (an initiator waiting for its own ID). A
	// twentieth of the election timeout per node covers laps at 10 ms per hop with the default
	// 200 ms, and it is never shorter than three coordinator timeouts.
	r.t = c.ElectionTimeout
	r.stall = RingStall(len(c.Ring), c.ElectionTimeout, c.CoordinatorTimeout)
	if r.stall <= 0 {
		r.stall = time.Second
	}
	return r, nil
}

// nextEpoch is the epoch this node opens: 1 for an initiator of the first election (all of them open
// it together: one election with several initiators), else the least epoch above every one seen
// that is this node's own (≡ its position in the ring, mod N), so that no other node can have
// opened it too.
func (r *ringCore) nextEpoch() int {
	if r.epoch == 0 && r.initiator {
		return 1
	}
	n, own := len(r.order), r.pos[r.self]
	e := max(r.epoch, 1) + 1
	return e + ((own-e)%n+n)%n
}

// stallFor is the quiet spell after which an election counts as stalled.
func (r *ringCore) stallFor() time.Duration { return r.stall * r.stallMul }

func (r *ringCore) Leader() int { return r.leader }

// Epoch is the election epoch this node is in (0 before any), or -1 for a restarted node that has
// not learnt it yet (WithEpoch). The explorer reads it: while every node and every message in flight is in one
// epoch, no message can arrive stale, so no catch-up goes back against a one-way ring (see
// explore.mayReach).
func (r *ringCore) Epoch() int {
	if r.restarted {
		return -1
	}
	return r.epoch
}
func (r *ringCore) Participant() bool { return r.participant }

// n is the number of nodes of the live ring as this node sees it.
func (r *ringCore) n() int { return len(r.order) - len(r.suspected) }

// next is the next live node from id in direction dir (+1 successor, -1 predecessor); self when
// every other node is suspected.
func (r *ringCore) next(id, dir int) int {
	p := r.pos[id]
	for k := 1; k < len(r.order); k++ {
		c := r.order[((p+dir*k)%len(r.order)+len(r.order))%len(r.order)]
		if c != r.self && !r.suspected[c] {
			return c
		}
		if c == r.self {
			return r.self
		}
	}
	return r.self
}

func (r *ringCore) succ() int { return r.next(r.self, 1) }
func (r *ringCore) pred() int { return r.next(r.self, -1) }

// send stamps the epoch on m and sends it; a message to oneself (a ring of one live node) is
// delivered by the driver like any other.
func (r *ringCore) send(to int, m Message) {
	m.Round = r.epoch
	r.out = append(r.out, Effect{Kind: EffSend, To: to, Msg: m})
}

func (r *ringCore) sendSucc(m Message) { r.send(r.succ(), m) }
func (r *ringCore) sendPred(m Message) { r.send(r.pred(), m) }

// sendDir sends towards the successor (dir > 0) or the predecessor.
func (r *ringCore) sendDir(dir int, m Message) {
	m.Dir = dir
	if dir > 0 {
		r.sendSucc(m)
	} else {
		r.sendPred(m)
	}
}

// becomeParticipant marks the node as taking part in the current epoch's election: its leader is ⊥.
func (r *ringCore) becomeParticipant() {
	if r.participant {
		return
	}
	r.participant = true
	r.leader = 0
	r.progress = r.now
	r.out = append(r.out, Effect{Kind: EffElect, Round: r.epoch},
		Effect{Kind: EffSetTimer, Timer: ringTimerStall, After: r.stallFor()})
}

// decide ends the election at this node: its leader is l. A leader below this node, or below a
// node that came back during the election, means they were left out of it: the ring elects again.
func (r *ringCore) decide(l int) {
	if l < r.self || (r.trustedAbove > l && !r.suspected[r.trustedAbove]) {
		r.newEpoch()
		return
	}
	r.restarted = false
	r.trustedAbove = 0
	r.stallMul = 1
	r.participant = false
	if r.leader != l {
		r.leader = l
		r.out = append(r.out, Effect{Kind: EffLeader, Leader: l})
	}
	r.out = append(r.out, Effect{Kind: EffCancelTimer, Timer: ringTimerStall})
}

// newEpoch starts a new election with this node as an initiator.
func (r *ringCore) newEpoch() {
	if !r.restarted {
		r.epoch = r.nextEpoch()
	}
	r.participant = false
	r.trustedAbove = 0
	r.claimFrom = 0
	r.forgetDistant()
	r.alg.reset()
	r.becomeParticipant()
	r.alg.initiate()
}

func (r *ringCore) Step(in Input) []Effect { return r.StepInto(nil, in) }

// StepInto is Step appending the effects to dst (WithStepInto).
func (r *ringCore) StepInto(dst []Effect, in Input) []Effect {
	r.out = dst
	r.now = in.Now
	switch in.Kind {
	case InStart:
		r.started = true
		// An initiator that a message of an epoch woke before its own start takes part in that
		// epoch already (it sent its ID or passed a larger one on): a new epoch now would start the
		// election again over the running one. A 1,000-node Chang-Roberts run on a starved machine,
		// whose nodes began up to seconds apart, opened epochs 999, 1999, 2697 and 3697 so, and
		// sent 101 messages over the bound.
		if r.restarted || (r.initiator && r.epoch == 0) {
			r.newEpoch()
		}
	case InRecv:
		r.recv(in.From, in.Msg)
	case InSuspect:
		r.suspect(in.From)
	case InTrust:
		// A node above the leader is back (a paused leader resumed, a partition healed): the ring
		// must elect again, or it keeps two leaders; mid-election, decide checks it. (The machine
		// may have forgotten its suspicion already; the detector's word counts.)
		s, p := r.succ(), r.pred()
		delete(r.suspected, in.From)
		switch {
		case r.participant && (s != r.succ() || p != r.pred()):
			// the ring this election runs on changed under it (a neighbour is back): messages
			// already sent took the old way round, so start again on the new ring
			r.newEpoch()
		case r.participant:
			r.trustedAbove = max(r.trustedAbove, in.From)
		case r.leader != 0 && in.From > r.leader:
			r.newEpoch()
		case r.leader != 0 && (s != r.succ() || p != r.pred()):
			// A neighbour is back (a partition healed, a paused node resumed): the other side may
			// hold a leader of its own, which only a claim lasting the election timeout would reveal,
			// two leaders for that long. Elect on the whole ring now.
			r.newEpoch()
		}
	case InTimer:
		if in.Timer == ringTimerStall && r.participant {
			if quiet := r.now - r.progress; quiet < r.stallFor() {
				// the election moved since the timer was set: wait for the rest of a quiet spell
				r.out = append(r.out, Effect{Kind: EffSetTimer, Timer: ringTimerStall, After: r.stallFor() - quiet})
				break
			}
			// A stalled election starts again, with a longer patience each time in a row (a ring
			// whose laps outgrow the stall timer would otherwise restart for ever). A restarted node
			// that stalled gives up waiting to learn the epoch.
			r.restarted = false
			r.stallMul = min(r.stallMul*2, 64)
			r.newEpoch()
		}
	case InHeartbeat:
		if !slices.Contains(r.hbTo, in.From) || r.callers[in.From] != 0 {
			if r.callers == nil {
				r.callers = map[int]time.Duration{}
			}
			r.callers[in.From] = max(r.now, 1)
		}
		r.heartbeat(in.From, in.Claim)
	}
	r.plan()
	out := r.out
	r.out = nil
	return out
}

// recv filters a message by epoch before the algorithm sees it.
func (r *ringCore) recv(from int, m Message) {
	if m.Kind == RingCatchUp {
		r.catchUp(from, m)
		return
	}
	switch {
	case m.Round == 0 && !r.restarted:
		// A restarted node's election: it cannot know the epoch, so answer with a new one, which
		// goes round the ring through it.
		r.newEpoch()
		return
	case m.Round > r.epoch || (r.restarted && m.Round > 0):
		r.epoch, r.restarted = m.Round, false
		r.participant = false
		r.forgetDistant()
		r.alg.reset()
		r.becomeParticipant()
		r.alg.join()
	case m.Round < r.epoch:
		// Stale: an election that a newer epoch replaced. If we are settled, its sender may be a
		// node that fell behind: tell it where the ring is.
		if !r.participant && r.leader != 0 {
			r.send(from, Message{Kind: RingCatchUp, Cand: r.leader})
		}
		return
	}
	r.progress = r.now
	r.alg.handle(from, m)
}

// catchUp: a settled node told us the ring's epoch and leader.
func (r *ringCore) catchUp(from int, m Message) {
	if m.Round <= r.epoch && !r.restarted {
		return // we are not behind (the answer to a message we sent before our epoch moved on)
	}
	r.epoch, r.restarted = m.Round, false
	r.alg.reset()
	if m.Cand < r.self || r.suspected[m.Cand] {
		r.newEpoch() // the ring's leader is below us, or dead to us: elect again
		return
	}
	r.participant = true // decide leaves the election
	r.decide(m.Cand)
	// The neighbours that fed us the old epoch's messages are behind too (the two sides of a
	// healed partition, a run of nodes that fell behind together): pass the news on, so that they
	// need not each wait for a stall. A neighbour already in the epoch ignores it.
	pred, succ := r.pred(), r.succ()
	for _, p := range []int{pred, succ} {
		if p != from && p != r.self && !(p == succ && succ == pred) {
			r.send(p, Message{Kind: RingCatchUp, Cand: m.Cand})
		}
	}
}

// heartbeat: a neighbour's leader claim. One above ours, live, held for the election timeout while
// we are settled, means the ring holds two beliefs: elect again.
func (r *ringCore) heartbeat(from, claim int) {
	if r.participant || claim == 0 || claim <= r.leader || r.suspected[claim] || claim == r.self {
		if from == r.claimFrom {
			r.claimFrom = 0
		}
		return
	}
	if r.claimFrom == 0 || r.claim != claim {
		// both neighbours may make the same claim: the first one starts the clock
		r.claimFrom, r.claim, r.claimSince = from, claim, r.now
		return
	}
	if r.now-r.claimSince >= r.t {
		r.newEpoch()
	}
}

// suspect routes the ring around p. If p was the leader, or a neighbour through which the running
// election passes, the election starts again; a suspicion of a node elsewhere on the ring (the
// simulator tells every node of a death) only reroutes.
func (r *ringCore) suspect(p int) {
	if r.suspected[p] {
		return
	}
	neighbour := p == r.succ() || p == r.pred()
	r.suspected[p] = true
	// A node that no election has reached yet (a non-initiator with no leader) opens one when a
	// neighbour dies: the election it waits for may have died with it (explore -a chang-roberts
	// --initiators 2 --crashes 2 found nodes sleeping with no leader for ever).
	if p == r.leader || (r.participant && neighbour) || (r.started && r.leader == 0 && !r.participant && neighbour) {
		r.newEpoch()
	}
}

// plan keeps heartbeats flowing to both live neighbours and watches both. Once a leader is known,
// and whenever an epoch begins, suspicions of nodes that are no longer between this node and its
// neighbours (a closer node came back) are forgotten: nobody watches them from here, so nothing
// would end them, and a stale one would keep the ring from ever following a live node (a node that
// suspected the other side of a healed partition would refuse its leader for ever). Within an
// epoch they stay: they keep the ID of a node that died during it from being decided. A node that
// died before the epoch began is routed round by its neighbours, so its ID cannot be in the epoch.
func (r *ringCore) plan() {
	if !r.participant && r.leader != 0 {
		r.forgetDistant()
	}
	// The plan is worked out in arrays on the stack and copied only when it changed: it is
	// worked out at every step, and rarely changes.
	var nbs, tos [8]int
	s, p := r.succ(), r.pred()
	nb := nbs[:0]
	if s != r.self {
		nb = append(nb, s)
	}
	if p != r.self && p != s {
		nb = append(nb, p)
	}
	// Heartbeats also go to every suspected node skipped on the way to the live neighbours: they
	// are how the two sides of a healed partition (or a resumed node) hear each other again, even
	// across a node that died meanwhile; nobody else sends across the cut. They are not watched:
	// they are already suspected. And they go to the callers (see ringCore.callers).
	to := append(tos[:0], nb...)
	for _, dir := range []int{1, -1} {
		for k := 1; k < len(r.order); k++ {
			c := r.order[((r.pos[r.self]+dir*k)%len(r.order)+len(r.order))%len(r.order)]
			if c == r.self || !r.suspected[c] {
				break
			}
			if !slices.Contains(to, c) {
				to = append(to, c)
			}
		}
	}
	for p, at := range r.callers {
		switch {
		case r.now-at > r.t:
			delete(r.callers, p) // it stopped calling
		case !slices.Contains(to, p):
			to = append(to, p)
		}
	}
	slices.Sort(to[len(nb):]) // map order must not reach the plan
	if slices.Equal(to, r.hbTo) && slices.Equal(nb, r.watch) {
		return
	}
	hb, w := append(make([]int, 0, len(to)), to...), append(make([]int, 0, 2), nb...)
	r.hbTo, r.watch = hb, w
	r.out = append(r.out, Effect{Kind: EffHeartbeat, HeartbeatTo: hb, Watch: w})
}

// forgetDistant drops the suspicions of nodes outside the two arcs this node skips to reach its
// live neighbours.
func (r *ringCore) forgetDistant() {
	if len(r.suspected) == 0 {
		return
	}
	skipped := map[int]bool{}
	for _, dir := range []int{1, -1} {
		p := r.pos[r.self]
		for k := 1; k < len(r.order); k++ {
			c := r.order[((p+dir*k)%len(r.order)+len(r.order))%len(r.order)]
			if c == r.self || !r.suspected[c] {
				break
			}
			skipped[c] = true
		}
	}
	for id := range r.suspected {
		if !skipped[id] {
			delete(r.suspected, id)
		}
	}
}

// log2Ceil is ⌈log₂ n⌉ for n ≥ 1.
func log2Ceil(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// log2Floor is ⌊log₂ n⌋ for n ≥ 1.
func log2Floor(n int) int {
	k := 0
	for 1<<(k+1) <= n {
		k++
	}
	return k
}
