package explore

import (
	"fmt"
	"slices"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
)

// ample is partial-order reduction: of the transitions enabled in s, a subset whose exploration
// reaches every quiescent state that the whole set reaches (a persistent set): the transitions of a
// set of nodes G, when nothing the nodes outside G can do gives a node of G a transition it does not
// have now. Transitions at different nodes commute: each changes its own node, takes the head of a
// link into it and appends to links out of it; a crash of one node and a step of another commute
// (what the step sends the dead node is lost either way), and so do two crashes. So what must not
// happen outside G is a message put at the head of an empty link into G: a message behind one
// already queued is no risk (the node is offered the head anyway); a crashed node that may not
// restart sends nothing, and one that may restart is in G (a restart does not commute with a step
// that sends to the restarted node: before it, the message is lost); a live node may send to a node
// of G only along its routes or as an answer
// (mayReach, answers), or by crashing (the detector's end of stream reaches every node) while
// crashes are still allowed; and no timer can fire while a message is in flight (timely timers). G
// is grown from one node by adding every node outside it that could: the closure. Then the other
// nodes' transitions are explored after one of G's, not before it as well. A crash in G and a crash
// outside it do not both fit in the budget, but the argument needs only that a crash of G taken
// first in a path commutes with what comes before it there, and that a delivery of G stays enabled
// along a path that takes none of G's. Under async timers, a timer may fire at any moment and move
// the clock that every step reads: then G qualifies only if no node outside it has a timer armed.
//
// The invariants judged at every state (UniqueLeader, PulseSafety) need one more condition, the
// ample sets' visibility proviso: a reduced set must not change what they read, or a state where
// two nodes believe in themselves for a moment could lie on a path the reduction skips. So a set
// with a transition that would change its node's belief in itself (or make it late) is not taken
// while the invariant is still judged. Of the sets that qualify, the one with the fewest transitions
// is taken. Quiescent states, the message bound and the invariants are what the properties judge,
// and a persistent set with the proviso preserves them in a finite, acyclic graph; the cycle search
// looks for cycles in the reduced graph first (package checker's findCycle).
func (x *model) ample(s *state, evs []event, visible func(s, t *state, id int) bool) []event {
	if len(evs) <= 1 || s.inflight == 0 {
		return evs
	}
	if x.cfg.Partitions && (!s.partUsed || s.part != 0) {
		return evs // a partition or its heal changes where the messages sent from now on go
	}
	canRestart := s.restarts < x.cfg.Restarts
	canCrash := s.crashes < x.cfg.Crashes
	async := x.cfg.Timers == TimersAsync
	// whether s is in one epoch, found out the first time it matters (a scan of every message)
	one := int8(0)
	oneEpoch := func() bool {
		if one == 0 {
			one = 2
			if x.oneEpoch(s) {
				one = 1
			}
		}
		return one == 1
	}
	// the nodes that a message in flight to them may make send anything (see answers), found out
	// the first time it matters
	stir, stirKnown := uint64(0), false
	stirred := func() uint64 {
		if !stirKnown {
			stir, stirKnown = x.stirred(s), true
		}
		return stir
	}
	// Who may put a message at the head of an empty link into whom, as bit sets by ID: empty[k]
	// the live nodes whose link from k is empty; reach[k] those of them k may reach as the
	// configuration stands; on a mesh whose machines declare their reactions, with no crash to
	// come, answer[k] those k may answer, and reach[k] is empty[k] only while a node outside G is
	// stirred (see meshReach). force: the crashed nodes that may restart.
	var empty, reach, answer [MaxN + 1]uint64
	var force uint64
	meshAnswers := x.ring == nil && x.reactive && !canCrash
	for k := 1; k <= x.n; k++ {
		if !s.nodes[k-1].alive() {
			if canRestart {
				force |= 1 << k
			}
			continue
		}
		for j := 1; j <= x.n; j++ {
			if j != k && s.nodes[j-1].alive() && s.links[x.linkIndex(k, j)] == nil {
				empty[k] |= 1 << j
			}
		}
		switch {
		case canCrash || x.ring == nil && !x.reactive:
			reach[k] = empty[k]
		case meshAnswers:
			for j := 1; j <= x.n; j++ {
				if empty[k]>>j&1 != 0 && x.answers(s, k, j) {
					answer[k] |= 1 << j
				}
			}
		default:
			for j := 1; j <= x.n; j++ {
				if empty[k]>>j&1 != 0 && x.mayReach(s, k, j, oneEpoch()) {
					reach[k] |= 1 << j
				}
			}
		}
	}
	// closure grows G from node i: a crashed node that may restart is in it whatever its links
	// (what G sends it is lost before its restart and kept after)
	closure := func(i int) uint64 {
		g := uint64(1)<<i | force
		for {
			old := g
			for k := 1; k <= x.n; k++ {
				if g>>k&1 != 0 {
					continue
				}
				r := reach[k]
				if meshAnswers {
					r = answer[k]
					if stirred()&^g != 0 {
						r = empty[k]
					}
				}
				if r&g != 0 {
					g |= 1 << k
				}
			}
			if g == old {
				return g
			}
		}
	}
	type cand struct {
		g    uint64
		n    int
		deli bool
	}
	var cands [MaxN]cand
	nc := 0
	for i := 1; i <= x.n; i++ {
		if !s.nodes[i-1].alive() {
			continue
		}
		g := closure(i)
		if async && x.timedOutside(s, g) {
			continue // a timer elsewhere may move the clock that G's steps read
		}
		c := cand{g: g}
		for _, e := range evs {
			if e.node >= 1 && g>>e.node&1 != 0 {
				c.n++
				c.deli = c.deli || e.kind == evDeliver
			}
		}
		if c.deli && c.n < len(evs) && !slices.ContainsFunc(cands[:nc], func(o cand) bool { return o.g == g }) {
			cands[nc] = c
			nc++
		}
	}
	slices.SortStableFunc(cands[:nc], func(a, b cand) int { return a.n - b.n })
	for _, c := range cands[:nc] {
		if visible != nil && x.anyVisible(s, evs, c.g, visible) {
			continue
		}
		out := evs[:0]
		for _, e := range evs {
			if e.node >= 1 && c.g>>e.node&1 != 0 {
				out = append(out, e)
			}
		}
		return out
	}
	return evs
}

// visibility is what the reduction must not reorder in s (see ample): whether a transition of
// node id from s to t changes id's belief in itself while UniqueLeader is judged, or makes it late
// while PulseSafety is; nil when neither is judged any more.
func (x *model) visibility(s *state, found checker.Found) func(s, t *state, id int) bool {
	unique := s.crashes+s.restarts == 0 && !s.partUsed && !found.Has(PropUnique)
	pulse := x.alg.Synchronous && !found.Has(PropPulse)
	if !unique && !pulse {
		return nil
	}
	return func(s, t *state, id int) bool {
		a, b := s.nodes[id-1], t.nodes[id-1]
		// a fault ends what UniqueLeader judges: a crash is not visible to it
		faultFree := t.crashes+t.restarts == 0 && !t.partUsed
		if unique && faultFree && a.alive() && b.alive() && (a.m.Leader() == id) != (b.m.Leader() == id) {
			return true
		}
		return pulse && b.alive() && slices.Contains(lateAt(t), id) && !slices.Contains(lateAt(s), id)
	}
}

// timedOutside tells whether a node outside g (bit ID) has a timer armed.
func (x *model) timedOutside(s *state, g uint64) bool {
	for j, ns := range s.nodes {
		if g>>(j+1)&1 == 0 && len(ns.timers) > 0 {
			return true
		}
	}
	return false
}

// anyVisible tells whether one of the transitions in evs of the nodes in g (bit ID) changes what
// visible reads. It applies them on the explorer's scratch state, and leaves no trace of it (a
// broken route seen on the way is seen again when the transition is taken).
func (x *model) anyVisible(s *state, evs []event, g uint64, visible func(s, t *state, id int) bool) bool {
	breach := x.breach
	defer func() { x.breach = breach }()
	for _, e := range evs {
		if e.node >= 1 && g>>e.node&1 != 0 && visible(s, x.applyScratch(s, e), e.node) {
			return true
		}
	}
	return false
}

// mayReach tells whether live node k may, by its own transitions, ever put a message of the
// algorithm at the head of the empty link to node i, as the cluster stands in s with no crash or
// restart still to come and no partition in force or to come, while i takes no step. On a mesh,
// yes. On a ring, if i is next to k on k's routes (onRoute): either way round, for a two-way ring's
// messages and the catch-up go both ways; or if k may answer a stale message of i's in flight (a
// catch-up goes back to whoever sent the stale message, on its routes or not). None of that but the
// forward route is possible in one epoch (oneEpoch): no message can arrive stale, so no catch-up is
// sent, and a one-way ring's messages go forward only. The search holds every send to this (route,
// below): a machine that broke it would make the reduction unsound.
func (x *model) mayReach(s *state, k, i int, oneEpoch bool) bool {
	if x.ring == nil {
		return true
	}
	if oneEpoch {
		return x.onRoute(s, k, i, !x.oneWay)
	}
	return x.onRoute(s, k, i, true) || s.links[x.linkIndex(i, k)] != nil
}

// answers tells whether live node k may answer node i, on a mesh whose machines declare what a
// message may make them send (election.Reactor): whether a message of i's that k does not declare
// ReactNone is on its way to k. That and the stirred nodes are what may reach i on a mesh while i
// takes no step and no crash, restart or partition is still to come (see ample): only what is in
// flight can set a node sending; a node that a message declared ReactAny (or the detector's news)
// is on its way to may send anything, and what it sends may set any other node off; a ReactAnswer
// message makes its receiver answer its sender alone, and the answer sets nothing off. So while any
// node outside the set being reduced is stirred, any node may reach it; else only answers. The
// search holds every send to the declarations (answer).
func (x *model) answers(s *state, k, i int) bool {
	l := s.links[x.linkIndex(i, k)]
	if l == nil {
		return false
	}
	r := s.nodes[k-1].m.(election.Reactor)
	for _, p := range l.q {
		if p.k != pMsg || r.Reaction(i, *x.msgs.at(p.id)) != election.ReactNone {
			return true
		}
	}
	return false
}

// stirred is the set of live nodes (bit ID) that something in flight to them may set sending
// anything: a message they declare ReactAny, or the detector's news (unless declared ReactNone:
// newsReaction).
func (x *model) stirred(s *state) uint64 {
	var out uint64
	for li, l := range s.links {
		to := li%x.n + 1
		if l == nil || out>>to&1 != 0 || !s.nodes[to-1].alive() {
			continue
		}
		r, _ := s.nodes[to-1].m.(election.Reactor)
		for _, p := range l.q {
			if r == nil || p.k == pMsg && r.Reaction(li/x.n+1, *x.msgs.at(p.id)) == election.ReactAny ||
				p.k != pMsg && x.newsReaction(s, li/x.n+1, to) == election.ReactAny {
				out |= 1 << to
				break
			}
		}
	}
	return out
}

// onRoute tells whether i is next to k on the ring, forward (and backward, with both), over the
// nodes k may route around: dead, or suspected by k (the ring core sends to the next node it does
// not suspect).
func (x *model) onRoute(s *state, k, i int, both bool) bool {
	skip := s.nodes[k-1].suspects
	for j, ns := range s.nodes {
		if !ns.alive() {
			skip |= 1 << (j + 1)
		}
	}
	n, p := len(x.ring), x.pos[k]
	for _, dir := range [2]int{1, -1} {
		if dir < 0 && !both {
			break
		}
		for d := 1; d < n; d++ {
			c := x.ring[((p+dir*d)%n+n)%n]
			if c == i {
				return true
			}
			if skip>>c&1 == 0 {
				break
			}
		}
	}
	return false
}

// oneEpoch tells whether s is in one epoch, and stays so along any transitions but timers, faults
// and heartbeats: every live node that has joined an election and every message in flight is in one
// epoch; no catch-up is in flight; no node is a restarted one that has not learnt the epoch; no
// partition is in force or to come, and no node suspects a peer from silence (the trust that ends
// it opens a new epoch). Then no message can arrive stale. A machine that does not tell its epoch
// rules it out.
func (x *model) oneEpoch(s *state) bool {
	if x.ring == nil || s.part != 0 || (x.cfg.Partitions && !s.partUsed) {
		return false
	}
	e := 0
	same := func(r int) bool {
		if r <= 0 || (e != 0 && r != e) {
			return false
		}
		e = r
		return true
	}
	for _, ns := range s.nodes {
		if !ns.alive() {
			continue
		}
		m, ok := ns.m.(election.WithEpoch)
		if !ok || ns.byTimeout != 0 {
			return false
		}
		if r := m.Epoch(); r != 0 && !same(r) {
			return false
		}
	}
	for _, l := range s.links {
		if l == nil {
			continue
		}
		for _, p := range l.q {
			if p.k != pMsg {
				continue
			}
			if m := x.msgs.at(p.id); m.Kind == election.RingCatchUp || !same(m.Round) {
				return false
			}
		}
	}
	return true
}

// route holds a send from node from to node to to what mayReach assumes, and records the first
// that breaks it (the search stops there and says so): on a ring, a send goes to a node next to the
// sender on its routes, either way round, or answers the message being delivered; and a transition
// from a state in one epoch sends no answer off the routes, and on a one-way ring nothing backward.
func (x *model) route(s *state, from, to int, m *election.Message) {
	if x.breach != "" || x.cfg.NoReduction || from == to {
		return
	}
	if x.ring == nil {
		x.answer(s, from, to, m)
		return
	}
	onRoute := x.onRoute(s, from, to, true)
	switch {
	case !onRoute && to != x.stepFrom:
		x.breach = fmt.Sprintf("node %d sent to node %d, which is not next to it on the ring over the nodes it may route around, nor the sender of what it was handling; the partial-order reduction assumes a ring node sends only along its routes (rerun with --no-reduction)", from, to)
	case (!onRoute || x.oneWay && !x.onRoute(s, from, to, false)) && x.preOneEpoch():
		x.breach = fmt.Sprintf("node %d sent to node %d, back against the ring or off its routes, in a transition from a state in one epoch; the partial-order reduction assumes that only a catch-up, the answer to a stale message, goes so, and none can arrive stale in one epoch (rerun with --no-reduction)", from, to)
	}
}

// answer holds a send on a mesh to what the receiver of the message being delivered declared
// (election.Reactor, see answers): nothing for ReactNone; for ReactAnswer, messages to the sender
// alone, each of which the sender declares it handles without sending anything.
func (x *model) answer(s *state, from, to int, m *election.Message) {
	if !x.reactive || x.react == election.ReactAny || from != x.reactNode {
		return
	}
	switch {
	case x.react == election.ReactNone && x.reactNews:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling the news that node %d is gone, for which it declared it sends nothing (election.NewsReactor); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case x.react == election.ReactNone:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling a message from node %d for which it declared it sends nothing (election.ReactNone); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case to != x.reactFrom:
		x.breach = fmt.Sprintf("node %d sent %s to node %d while handling a message from node %d that it declared it only answers (election.ReactAnswer); the partial-order reduction on a mesh rests on that declaration (rerun with --no-reduction)", from, m.Kind, to, x.reactFrom)
	case s.nodes[to-1].alive() && s.nodes[to-1].m.(election.Reactor).Reaction(from, *m) != election.ReactNone:
		x.breach = fmt.Sprintf("node %d answered node %d with %s, which node %d does not declare it handles without sending (election.ReactNone); the partial-order reduction on a mesh assumes an answer is not answered (rerun with --no-reduction)", from, to, m.Kind, to)
	}
}

// preOneEpoch is oneEpoch of the state the transition being made starts from.
func (x *model) preOneEpoch() bool {
	if x.preOne == 0 {
		x.preOne = 2
		if x.pre != nil && x.oneEpoch(x.pre) {
			x.preOne = 1
		}
	}
	return x.preOne == 1
}

// newsReaction is what the news on its way from node from to node to in s, that from is gone, may
// make to send (election.NewsReactor), read with the messages ahead of it on the link: ReactAny
// unless the machines declare it and the configuration lets the reduction lean on it
// (newsReactive: no restart, whose news and refused dials come from live nodes, and timely timers),
// and while other news is on its way to the same node (the declaration does not cover two).
func (x *model) newsReaction(s *state, from, to int) election.Reaction {
	if !x.newsReactive || !s.nodes[to-1].alive() {
		return election.ReactAny
	}
	ahead := x.ahead[:0]
	defer func() { x.ahead = ahead[:0] }()
	found := false
	for j := 1; j <= x.n; j++ {
		l := s.links[x.linkIndex(j, to)]
		if l == nil {
			continue
		}
		for _, p := range l.q {
			switch {
			case p.k == pMsg:
				if j == from && !found {
					ahead = append(ahead, *x.msgs.at(p.id))
				}
			case j != from || p.k != pEOF || found:
				return election.ReactAny
			default:
				found = true
			}
		}
	}
	if !found {
		return election.ReactAny
	}
	return s.nodes[to-1].m.(election.NewsReactor).SuspectReaction(from, ahead)
}
