package sim

import (
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
)

// detector is a node's failure detector, the simulated twin of node/detector.go: it follows the
// machine's plan (EffHeartbeat), sending heartbeats to the plan's targets every interval (a round at
// once when the plan changes) and suspecting a watched peer not heard from for Timeout. Anything
// heard from a suspected peer (a heartbeat, a message, its link coming back) trusts it again. Off
// (Config.Detector false) it only keeps the suspicions the test injects.
type detector struct {
	on        bool
	to        []int
	epoch     uint32
	watchMark []uint32 // by peer: == epoch while the current plan watches it
	suspected []bool
	// byLink marks suspicions that came from a broken link (the process died): only word from a
	// newer incarnation than lastInc ends them, as in node/detector.go; a heartbeat or message in
	// flight when it died says nothing about it now.
	byLink    []bool
	lastInc   []int32
	pending   []bool // a check of the peer is scheduled
	lastHeard []time.Duration
	beating   bool // the heartbeat ticker runs
}

func (d *detector) reset(on bool, n int) {
	d.on = on
	d.to = d.to[:0]
	d.beating = false
	if d.suspected == nil {
		d.suspected = make([]bool, n+1)
		d.byLink = make([]bool, n+1)
		d.lastInc = make([]int32, n+1)
		if on {
			d.watchMark = make([]uint32, n+1)
			d.pending = make([]bool, n+1)
			d.lastHeard = make([]time.Duration, n+1)
		}
	} else {
		clear(d.suspected)
		clear(d.byLink)
		clear(d.lastInc)
		clear(d.pending)
	}
	d.epoch += 2 // nothing is watched (and nothing "was" watched) in the new incarnation
}

func (d *detector) watched(p int) bool { return d.watchMark[p] == d.epoch }

// plan installs a machine's new heartbeat plan. A newly watched peer gets a full Timeout from now.
func (s *Sim) plan(n *node, to, watch []int) {
	d := &n.det
	d.to = append(d.to[:0], to...)
	if !d.on {
		return
	}
	d.epoch++
	for _, p := range watch {
		if p < 1 || p > s.cfg.N || p == n.id {
			continue
		}
		if d.watchMark[p] != d.epoch-1 {
			d.lastHeard[p] = s.now
			// A machine that watches a peer it still suspected when it stopped watching it (a ring
			// node forgets suspicions of nodes it no longer routes round): a heartbeat suspicion
			// becomes a fresh watch, a full timeout from now (node/detector.go); a link suspicion
			// stands, the process died, and the machine is told so again after this step.
			switch {
			case d.suspected[p] && !d.byLink[p]:
				d.suspected[p] = false
			case d.suspected[p]:
				s.push(kRemind, item{at: s.now, node: int16(n.id), inc: int32(n.inc), from: int16(p), aux: remindWatched})
			}
			if !d.pending[p] && !d.suspected[p] {
				s.scheduleCheck(n, p, s.now+s.cfg.Timeout)
			}
		}
		d.watchMark[p] = d.epoch
	}
	if len(d.to) > 0 {
		s.beatOnce(n)
		if !d.beating {
			d.beating = true
			s.push(kBeat, item{at: s.now + s.cfg.Heartbeat, node: int16(n.id), inc: int32(n.inc)})
		}
	}
}

// beat is the heartbeat ticker; it stops while the plan sends none.
func (s *Sim) beat(n *node) {
	if len(n.det.to) == 0 {
		n.det.beating = false
		return
	}
	s.beatOnce(n)
	s.push(kBeat, item{at: s.now + s.cfg.Heartbeat, node: int16(n.id), inc: int32(n.inc)})
}

// beatOnce sends one round of heartbeats carrying the node's leader belief. Heartbeats are
// datagrams: no FIFO order, lost when nobody listens.
func (s *Sim) beatOnce(n *node) {
	claim := int32(n.m.Leader())
	for _, p := range n.det.to {
		if p < 1 || p > s.cfg.N || p == n.id {
			continue
		}
		n.stats.HeartbeatsSent++
		if t := s.nodes[p]; t.alive {
			s.push(kHeartbeat, item{at: s.now + s.delay(), node: int16(p), inc: int32(t.inc), from: int16(n.id), aux: claim, gen: uint32(n.inc)})
		}
	}
}

func (s *Sim) heartbeat(n *node, from, claim, inc int) {
	n.stats.HeartbeatsRecv++
	d := &n.det
	if d.on && d.watched(from) && !d.suspected[from] {
		d.lastHeard[from] = s.now
		if !d.pending[from] {
			s.scheduleCheck(n, from, s.now+s.cfg.Timeout)
		}
	}
	s.heard(n, from, inc)
	s.step(n, election.Input{Kind: election.InHeartbeat, From: from, Claim: claim})
}

// heard: something came from incarnation inc of p; a suspected p is trusted again, unless its link
// broke and inc is no newer than the incarnation that died.
func (s *Sim) heard(n *node, p, inc int) {
	d := &n.det
	if !d.on {
		return
	}
	if d.byLink[p] && int32(inc) <= d.lastInc[p] {
		return
	}
	d.lastInc[p] = max(d.lastInc[p], int32(inc))
	if !d.suspected[p] {
		return
	}
	d.suspected[p], d.byLink[p] = false, false
	s.event(n, logs.EvTrust).Peer = p
	if d.watched(p) {
		d.lastHeard[p] = s.now
		if !d.pending[p] {
			s.scheduleCheck(n, p, s.now+s.cfg.Timeout)
		}
	}
	s.step(n, election.Input{Kind: election.InTrust, From: p})
}

func (s *Sim) scheduleCheck(n *node, p int, at time.Duration) {
	n.det.pending[p] = true
	s.push(kCheck, item{at: at, node: int16(n.id), inc: int32(n.inc), from: int16(p)})
}

// check: a watched peer silent for Timeout is suspected; otherwise look again when it would be.
func (s *Sim) check(n *node, p int) {
	d := &n.det
	d.pending[p] = false
	if !d.watched(p) || d.suspected[p] {
		return
	}
	if due := d.lastHeard[p] + s.cfg.Timeout; s.now < due {
		s.scheduleCheck(n, p, due)
		return
	}
	s.suspect(n, p, "timeout")
}

func (s *Sim) suspect(n *node, p int, reason string) {
	if n.det.suspected[p] {
		return
	}
	n.det.suspected[p] = true
	e := s.event(n, logs.EvSuspect)
	e.Peer, e.Reason = p, reason
	s.step(n, election.Input{Kind: election.InSuspect, From: p})
}

// remindWatched and remindRefused say why a kRemind item tells a machine again that a peer is down.
const (
	remindRefused = iota
	remindWatched
)

// remind tells the machine again that p is down (node/detector.go's remind): a send to it was
// refused, or the machine watches it again while its link suspicion stands. A peer the detector did
// not suspect yet is suspected now, as a broken link is.
func (s *Sim) remind(n *node, p int, why int32) {
	d := &n.det
	reason := "send failed: connection refused: peer down"
	if why == remindWatched {
		if !d.suspected[p] || !d.watched(p) {
			return // trusted again, or no longer watched, since
		}
		reason = "watched while its link is down"
	}
	if !d.suspected[p] {
		d.byLink[p] = true
		s.suspect(n, p, reason)
		return
	}
	e := s.event(n, logs.EvSuspect)
	e.Peer, e.Reason = p, reason
	s.step(n, election.Input{Kind: election.InSuspect, From: p})
}
