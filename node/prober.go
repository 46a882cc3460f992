package node

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// The health checks of RSDP's failover topologies (Toliupa et al. 2024, section 4), beside the
// lab's own heartbeat detector (detector.go). With options.detector:
//
//	heartbeat  the detector of detector.go; nothing here runs.
//	mutual     self-regulated mutual health evaluation: every node probes every other every health
//	           interval h, its first probe at position·h/N after begin (positions are the ranks of
//	           the IDs), so that the probes of a node's peers are spread evenly over h. A probe is a
//	           signed UDP datagram that the peer answers at once (an Ack datagram). A peer is judged
//	           gone when, at a probe, the TCP link to it is down (its process is dead: the kernel
//	           refuses the connection), or when the probe goes unanswered for the probe timeout (a
//	           paused process, a partition). A link that breaks between probes is only noted: the
//	           verdict comes at the next probe, as in the paper's model.
//	observer,  the node sends no heartbeats and probes nobody; it answers probes, and takes the
//	observers  verdicts of the observer processes from its control endpoint (CtlVerdict); a send
//	           that fails on a broken link is no suspicion either: the observers alone judge.
//
// In every probing mode a link that breaks is not a suspicion by itself, and any datagram or message
// from a suspected peer trusts it again.

type prober struct {
	mode    string
	h, pt   time.Duration
	offset  time.Duration
	seq     uint64
	pending map[int]uint64 // the probe each peer has yet to answer
	tick    Timer
	first   time.Time // the first round; round k is due at first + k·h (no drift between nodes)
	rounds  int64
}

// initProber reads the run's detector settings.
func (d *detector) initProber(c *rundir.Cluster, self int) error {
	mode, h, pt, err := c.Detector()
	if err != nil {
		return err
	}
	d.pr = prober{mode: mode, h: h, pt: pt, pending: map[int]uint64{}}
	ids := c.IDs()
	if pos := slices.Index(ids, self); pos >= 0 && len(ids) > 0 {
		d.pr.offset = time.Duration(pos) * h / time.Duration(len(ids))
	}
	return nil
}

// probing tells whether the run uses the probe-based detectors instead of heartbeats.
func (d *detector) probing() bool { return d.pr.mode != "" && d.pr.mode != rundir.DetectorHeartbeat }

// observed tells whether the observer processes alone judge the peers.
func (d *detector) observed() bool {
	return d.pr.mode == rundir.DetectorObserver || d.pr.mode == rundir.DetectorObservers
}

// startProbes arms the first probe round (mutual only) at the node's staggered offset.
func (d *detector) startProbes() {
	if d.pr.mode != rundir.DetectorMutual {
		return
	}
	d.pr.first = d.n.clk.Now().Add(d.pr.offset)
	d.armProbe(d.pr.offset)
}

func (d *detector) armProbe(after time.Duration) {
	d.pr.tick = d.n.clk.After(after, d.probeRound)
}

// probeRound probes every peer once and arms the next round, on the schedule first + k·h: timers
// that each waited h after the last would drift apart by their lateness and undo the staggering.
func (d *detector) probeRound() {
	d.pr.rounds++
	next := d.pr.first.Add(time.Duration(d.pr.rounds) * d.pr.h)
	for next.Sub(d.n.clk.Now()) <= 0 { // a stall (a paused process) skips the rounds it missed
		d.pr.rounds++
		next = d.pr.first.Add(time.Duration(d.pr.rounds) * d.pr.h)
	}
	if now := d.n.clk.Now(); next.Sub(now) > d.pr.h { // the clock went back: start again from now
		d.pr.first, d.pr.rounds, next = now, 1, now.Add(d.pr.h)
	}
	d.armProbe(next.Sub(d.n.clk.Now()))
	d.pr.seq++
	seq := d.pr.seq
	for _, p := range d.n.peers {
		if d.linkDown[p] {
			if !d.suspected[p] {
				d.byLink[p], d.brokeAt[p] = true, d.n.w.Now()
				d.suspect(p, "probe: link down")
			}
			continue
		}
		probe := &wire.Datagram{Seq: seq}
		if err := d.n.tr.SendDatagram(p, probe); err != nil {
			continue
		}
		d.n.stats.HeartbeatsSent++
		if d.suspected[p] {
			continue // an answer trusts it again; no answer changes nothing
		}
		d.pr.pending[p] = seq
	}
	d.n.clk.After(d.pr.pt, func() {
		for _, p := range d.n.peers { // in ID order: the same run gives the same log
			if s, ok := d.pr.pending[p]; ok && s == seq && !d.suspected[p] {
				delete(d.pr.pending, p)
				d.suspect(p, fmt.Sprintf("probe unanswered for %v", d.pr.pt))
			}
		}
	})
}

// probeDatagram handles a datagram in a probing mode: an answer to our probe, or a probe to answer.
func (d *detector) probeDatagram(dg wire.Datagram, from string) {
	if dg.Ack {
		if d.pr.pending[dg.From] == dg.Seq {
			delete(d.pr.pending, dg.From)
		}
	} else if r, ok := d.n.tr.(interface {
		ReplyDatagram(string, *wire.Datagram) error
	}); ok {
		_ = r.ReplyDatagram(from, &wire.Datagram{Seq: dg.Seq, Ack: true})
	}
	if rundir.IsObserver(dg.From) {
		return
	}
	d.heard(dg.From, dg.Inc)
}

// verdict takes an observer's verdict: the nodes in down are gone, those in up are back.
func (d *detector) verdict(down, up []int, by int) {
	for _, p := range down {
		if p != d.n.self && slices.Contains(d.n.peers, p) && !d.suspected[p] {
			d.suspect(p, fmt.Sprintf("observer %d: verdict down", by))
		}
	}
	for _, p := range up {
		if d.suspected[p] {
			delete(d.byLink, p)
			d.trust(p)
		}
	}
}

func (d *detector) stopProbes() {
	if d.pr.tick != nil {
		d.pr.tick.Stop()
	}
}
