package explore

// The transitions: which are enabled in a state, in a fixed order, and what each makes of it.

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// apply makes the successor of s by ev.
func (x *model) apply(s *state, ev event) *state { return x.applyScratch(s, ev).clone() }

// applyScratch makes the successor of s by ev in a state of the explorer's own, valid until the next
// call: most successors are states seen before, and need no containers of their own.
func (x *model) applyScratch(s *state, ev event) *state {
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
				x.react, x.reactNode, x.reactFrom = ns.m.(election.Reactor).Reaction(ev.peer, *x.msgs.at(head.id)), ev.node, ev.peer
			}
			x.hear(t, ev.node, ev.peer, false) // the trace writer tells it before the delivery
			x.recvID = head.id + 1
			x.step(t, ev.node, election.Input{Kind: election.InRecv, From: ev.peer, Msg: *x.msgs.at(head.id)})
			x.recvID = 0
		case pEOF:
			if x.reactive {
				x.react, x.reactNode, x.reactFrom = x.newsReaction(s, ev.peer, ev.node), ev.node, ev.peer
				x.reactNews = true
			}
			if ns.suspects&bit == 0 {
				c := copyNode(ns)
				c.suspects |= bit
				x.setNode(t, ev.node-1, c)
				x.step(t, ev.node, election.Input{Kind: election.InSuspect, From: ev.peer})
			}
		case pHello:
			if ns.suspects&bit != 0 {
				c := copyNode(ns)
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
		c := copyNode(ns)
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
		c := copyNode(ns)
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
func (x *model) keptPromises(s, t *state, ev event) {
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
				m := *x.msgs.at(p.id)
				if before, after := ra.Reaction(j, m), rb.Reaction(j, m); after < before {
					x.breach = fmt.Sprintf("node %d's declaration for the %s from node %d on its way to it grew from %v to %v (election.Reactor: it must hold from the moment the message is sent); the partial-order reduction on a mesh rests on it (rerun with --no-reduction)", i, m.Kind, j, before, after)
					return
				}
			}
		}
	}
}

// enabled lists the transitions of s, in a fixed order: deliveries by link, timers, crashes,
// restarts.
func (x *model) enabled(s *state, out []event) []event {
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
func (x *model) timeoutPairs(s *state, out [][2]int) [][2]int {
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
func (x *model) timeouts(s *state, out []event) []event {
	for _, pr := range x.timeoutPairs(s, nil) {
		out = append(out, event{kind: evTimeout, node: pr[0], peer: pr[1]})
	}
	return out
}
