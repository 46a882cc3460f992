package node

import (
	"fmt"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// detector is the failure detector. It follows the machine's plan (EffHeartbeat): heartbeats to the
// peers in `to` every interval, and suspicion of a watched peer not heard from for `timeout`. A
// peer's link breaking with a refused re-dial is a suspicion too, for any peer: a SIGKILLed process's
// sockets close at once, and waiting for the heartbeat timeout would waste it. Anything heard from a
// suspected peer (a heartbeat, a message, its link coming back) makes it trusted again.
type detector struct {
	n        *node
	interval time.Duration
	timeout  time.Duration

	to        []int
	watch     map[int]bool
	lastHeard map[int]time.Time
	suspected map[int]bool
	linkDown  map[int]bool
	// byLink marks suspicions that came from a broken link, since brokeAt. Word from a newer
	// incarnation of the peer ends them: a broken link means the process died (a paused process
	// keeps its sockets), and a heartbeat or frame already in flight when it died says nothing
	// about it now. So does word from the same incarnation more than a timeout after the break,
	// once the link is up again: a process that died cannot speak a timeout later (the heartbeat
	// detector's own assumption, that the timeout exceeds the network's delays), so the link broke
	// under a live process — a receiver that reset it (the link rules' corrupt and reset).
	byLink  map[int]bool
	brokeAt map[int]time.Time
	lastInc map[int]int
	seq     uint64

	check    Timer
	checkGen uint64
	checkAt  time.Time // the deadline the check timer was armed for
	credited time.Time // the own stalls up to this time were taken out of the peers' silence

	pr prober // the probe-based detectors (prober.go)
}

func (d *detector) init(n *node, interval, timeout time.Duration) {
	d.n, d.interval, d.timeout = n, interval, timeout
	d.watch = map[int]bool{}
	d.lastHeard = map[int]time.Time{}
	d.suspected = map[int]bool{}
	d.linkDown = map[int]bool{}
	d.byLink = map[int]bool{}
	d.brokeAt = map[int]time.Time{}
	d.lastInc = map[int]int{}
}

// plan replaces the heartbeat plan. A newly watched peer gets a full timeout from now. The probing
// detectors ignore the plan: they check every peer.
func (d *detector) plan(to, watch []int) {
	if d.probing() {
		return
	}
	d.to = append(d.to[:0], to...)
	now := d.n.clk.Now()
	next := map[int]bool{}
	for _, p := range watch {
		next[p] = true
		if !d.watch[p] {
			d.lastHeard[p] = now
			// A heartbeat suspicion is an opinion about a watched peer. A machine that watches a
			// peer it still suspected when it stopped watching it (a ring node forgets suspicions of
			// nodes it no longer routes round) gets a fresh one: a full timeout from now. A link
			// suspicion stands: the process died.
			if d.suspected[p] && !d.byLink[p] {
				// Trusted again, logged and told to the machine (after this step's effects): a
				// machine that kept its own suspicion (RSDP) must not be left suspecting a peer
				// the detector no longer does. If p is still silent, the timeout suspects it anew.
				p := p
				d.n.post(func() {
					if d.suspected[p] && !d.byLink[p] {
						d.trust(p)
					}
				})
			} else if d.suspected[p] {
				// its link suspicion stands (the process died): the machine may have forgotten it
				p := p
				d.n.post(func() { d.remind(p, "watched again while its link is down") })
			}
		}
	}
	d.watch = next
	d.beat() // the new plan's heartbeats start now, so a new leader is trusted at once
	d.arm()
}

// beat sends one round of heartbeats.
func (d *detector) beat() {
	if !d.n.begun || len(d.to) == 0 || d.probing() {
		return
	}
	d.seq++
	claim := d.n.m.Leader()
	for _, p := range d.to {
		hb := &wire.Datagram{Version: wire.ProtocolVersion, Cluster: d.n.cluster.ClusterID, From: d.n.self, Inc: d.n.inc, Seq: d.seq, Claim: claim}
		if err := d.n.tr.SendDatagram(p, hb); err == nil {
			d.n.stats.HeartbeatsSent++
		}
	}
}

// datagram handles a heartbeat (or, in a probing mode, a probe or its answer) that came from the
// UDP address from.
func (d *detector) datagram(hb wire.Datagram, from string) {
	if hb.From == d.n.self {
		return
	}
	d.n.stats.HeartbeatsRecv++
	if d.probing() {
		if d.n.begun || !hb.Ack {
			d.probeDatagram(hb, from)
		}
		return
	}
	if !d.n.begun {
		return
	}
	d.heard(hb.From, hb.Inc)
	d.n.step(election.Input{Kind: election.InHeartbeat, From: hb.From, Claim: hb.Claim})
}

// heard notes a sign of life from incarnation inc of p (0: the incarnation is not known).
func (d *detector) heard(p, inc int) {
	d.lastHeard[p] = d.n.clk.Now()
	if d.linkDown[p] || (inc > d.lastInc[p] && d.lastInc[p] > 0) {
		// p speaks while our link to it is down and backing off (a restarted p, or one that came
		// back while we were the restarted one and never knew an older incarnation of it): dial it
		// now, or our messages to it are dropped until the backoff's next try.
		d.n.tr.Connect([]int{p})
	}
	if d.byLink[p] && inc <= d.lastInc[p] && (d.linkDown[p] || d.n.w.Now().Sub(d.brokeAt[p]) <= d.timeout) {
		return
	}
	if inc > d.lastInc[p] {
		d.lastInc[p] = inc
	}
	if d.suspected[p] {
		delete(d.byLink, p)
		d.trust(p)
	}
}

// link handles the transport's report on the outbound link to p.
func (d *detector) link(p int, up bool, err error) {
	d.linkDown[p] = !up
	if !d.n.begun {
		return
	}
	if up || d.probing() {
		// In a probing mode a broken link is only noted: the next probe judges the peer.
		//
		// A link coming up proves little: a killed process's listening socket may still complete
		// a re-dial while the kernel tears it down. A link suspicion ends when a newer incarnation
		// of the peer speaks (heard); a heartbeat suspicion ends with any word from the peer.
		return
	}
	if !d.suspected[p] {
		reason := "link down"
		if err != nil {
			reason = "link down: " + err.Error()
		}
		d.byLink[p], d.brokeAt[p] = true, d.n.w.Now()
		d.suspect(p, reason)
	}
}

func (d *detector) suspect(p int, reason string) {
	if d.suspected[p] {
		return
	}
	d.suspected[p] = true
	d.n.emit(&logs.Event{Ev: logs.EvSuspect, Peer: p, Reason: reason})
	d.n.step(election.Input{Kind: election.InSuspect, From: p})
}

// remind tells the machine again that p is down: a send to it failed because its link is down. A
// peer the detector did not suspect yet is suspected now, as a broken link is.
func (d *detector) remind(p int, reason string) {
	if !d.n.begun || d.observed() {
		return // under observers only their verdicts judge a peer
	}
	if !d.suspected[p] && d.n.clk.Now().Sub(d.lastHeard[p]) < d.timeout {
		// We heard from p a moment ago (a restarted incarnation): our link to it is only catching
		// up. Dial it now instead of suspecting a live peer; the lost message is the network's.
		d.n.tr.Connect([]int{p})
		return
	}
	if !d.suspected[p] {
		d.byLink[p], d.brokeAt[p] = true, d.n.w.Now()
		d.suspect(p, reason)
		return
	}
	d.n.emit(&logs.Event{Ev: logs.EvSuspect, Peer: p, Reason: reason})
	d.n.step(election.Input{Kind: election.InSuspect, From: p})
}

func (d *detector) trust(p int) {
	delete(d.suspected, p)
	d.n.emit(&logs.Event{Ev: logs.EvTrust, Peer: p})
	d.n.step(election.Input{Kind: election.InTrust, From: p})
	d.arm()
}

// arm sets the check timer at the earliest deadline of a watched, trusted peer.
func (d *detector) arm() {
	var first time.Time
	for p := range d.watch {
		if d.suspected[p] {
			continue
		}
		dl := d.lastHeard[p].Add(d.timeout)
		if first.IsZero() || dl.Before(first) {
			first = dl
		}
	}
	if d.check != nil {
		d.check.Stop()
	}
	d.checkGen++
	if first.IsZero() {
		return
	}
	gen := d.checkGen
	d.checkAt = first
	d.check = d.n.clk.After(first.Sub(d.n.clk.Now()), func() {
		if gen == d.checkGen {
			d.expire()
		}
	})
}

// expire suspects every watched peer whose deadline passed, then re-arms.
//
// A node judges silence only over time in which it could have heard. Its own stalls (SIGSTOP, or not
// scheduled on a loaded machine) show in its beats: a beat that fires late, or one overdue right now
// (a resumed process may run this check before its beat). The heartbeats of such a stretch may be
// waiting in its socket buffers behind this very timer; and, if the stall is shorter than the
// timeout (load, not a SIGSTOP), a peer on the same loaded machine stalled as long, most likely,
// before it could send them. The stall since the last check (twice a short one) is then taken out of
// every watched peer's silence (with one heartbeat interval more for what waits to be read,
// after a stall of an interval or more), and the check is armed again: a peer that really went
// silent is suspected that much later, after a timeout of this node's own running time. A check
// itself late by more than an interval counts as a stall too.
func (d *detector) expire() {
	now := d.n.clk.Now()
	stall := now.Sub(d.checkAt) - d.interval
	if d.n.hb != nil {
		stall = max(stall, d.n.hb.stalledSince(later(d.credited, now.Add(-d.timeout)), now))
	}
	d.credited = now
	if stall > time.Millisecond { // a millisecond's jitter is no stall
		// A stall shorter than the timeout is the machine's load: the peer's heartbeats came from a
		// process on a machine as loaded as ours, maybe this very one, whose stalls are taken to be
		// as long as ours (on another host an overestimate, which only delays a suspicion). A longer
		// one is this process stopped (SIGSTOP), which says nothing of its peers.
		shift := stall
		if stall < d.timeout {
			shift = 2 * stall
		}
		if stall >= d.interval {
			shift += d.interval // the heartbeats of an interval wait to be read
		}
		for p := range d.watch {
			d.lastHeard[p] = earlier(d.lastHeard[p].Add(shift), now)
		}
		d.arm()
		return
	}
	for _, p := range d.n.peers { // in ID order: the same run gives the same log
		if d.watch[p] && !d.suspected[p] && now.Sub(d.lastHeard[p]) >= d.timeout {
			d.suspect(p, fmt.Sprintf("no heartbeat for %v", d.timeout))
		}
	}
	d.arm()
}
