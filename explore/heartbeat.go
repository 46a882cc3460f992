package explore

import (
	"time"

	"github.com/leaderlab/leaderlab/election"
)

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
func (x *model) heartbeatRound(t *state) { x.heartbeatRoundWith(t, nil) }

// heartbeatRoundWith is heartbeatRound telling each heartbeat to also before it is delivered.
func (x *model) heartbeatRoundWith(t *state, also func(to, from, claim int)) {
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
func (x *model) heartbeatsDue(s *state, first time.Duration) int {
	if s.inflight > 0 {
		return 0
	}
	return x.heartbeatsWould(s, first)
}

// heartbeatsWould is heartbeatsDue whatever is in flight.
func (x *model) heartbeatsWould(s *state, first time.Duration) int {
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
