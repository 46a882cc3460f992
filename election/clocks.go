package election

import (
	"fmt"
	"time"
)

// ClockBounds are the clock faults (chaos "clock") within an algorithm's timing assumptions, on one
// node at a time, the others keeping true time.
type ClockBounds struct {
	// MinRate and MaxRate bound the rate a node's clock and timers may run at.
	MinRate, MaxRate float64
	// MaxAhead and MaxBehind bound a jump of a node's clock forward and back: a bump, a strobe's
	// flips, and the reset that undoes what a rate or a bump had put on the clock.
	MaxAhead, MaxBehind time.Duration
	// Assumption says what they come from, with the run's numbers, for the verdict.
	Assumption string
}

// Bounds are the algorithm's clock bounds for a run (DetectorClocks when it declares none).
func (a Algorithm) Bounds(options map[string]string, tm Timing) ClockBounds {
	if a.Clocks != nil {
		return a.Clocks(options, tm)
	}
	return DetectorClocks(options, tm)
}

// DetectorClocks are the assumptions of the heartbeat failure detector every algorithm runs over:
// a live peer's heartbeats, every interval H by the peer's clock, must come within the timeout D by
// the watcher's, with an interval to spare for the network and the scheduler. A watcher whose
// clock runs fast by r waits D/r, so r ≤ D/2H; a peer whose clock runs slow by r beats every H/r,
// so r ≥ 2H/D. A jump forward by more than D − 2H makes the silence since a peer's last heartbeat
// look longer than the timeout; a jump back by more than D holds off, for longer than a timeout,
// the suspicion of a peer that has really gone (the failover waits that long).
func DetectorClocks(_ map[string]string, tm Timing) ClockBounds {
	h, d := tm.Heartbeat, tm.Timeout
	if h <= 0 || d <= 2*h {
		return ClockBounds{MinRate: 1, MaxRate: 1, Assumption: fmt.Sprintf("the detector's timeout %v leaves no room for a clock fault over its heartbeat %v (it needs more than two heartbeats)", d, h)}
	}
	return ClockBounds{
		MinRate: float64(2*h) / float64(d), MaxRate: float64(d) / float64(2*h),
		MaxAhead: d - 2*h, MaxBehind: d,
		Assumption: fmt.Sprintf("the detector's heartbeats (every %v) must reach a watcher within its timeout (%v) with one to spare: rates %.3g..%.3g, jumps within +%v/−%v", h, d, float64(2*h)/float64(d), float64(d)/float64(2*h), d-2*h, d),
	}
}

// Beyond says why a rate or a jump is outside the bounds ("" when it is within).
func (b ClockBounds) Beyond(rate float64, jump time.Duration) string {
	switch {
	case rate != 0 && rate > b.MaxRate:
		return fmt.Sprintf("rate %g is above %.3g", rate, b.MaxRate)
	case rate != 0 && rate < b.MinRate:
		return fmt.Sprintf("rate %g is below %.3g", rate, b.MinRate)
	case jump > b.MaxAhead:
		return fmt.Sprintf("a jump of +%v is beyond +%v", jump, b.MaxAhead)
	case jump < -b.MaxBehind:
		return fmt.Sprintf("a jump of %v is beyond −%v", jump, b.MaxBehind)
	}
	return ""
}

// clockWhy is the detector's limit under a clock fault beyond its bounds.
const clockWhy = "a clock fault beyond the algorithm's timing assumptions (a watcher's fast clock, a peer's slow one, a jump) makes a node take a live peer for dead, or a dead one for live, as a link fault does"

// ClockRecovery is how long after a clock fault beyond the bounds is gone its effects may last: a
// node's detector trusts a peer again within a timeout and a heartbeat, and an election the fault
// set off takes the election and coordinator timeouts. The checker applies it to the kind "clock"
// alone (a Limit's Recovery would lengthen every fault kind's window of the property).
func ClockRecovery(tm Timing) time.Duration { return tm.Timeout + tm.Heartbeat + tm.T + tm.T1 }

// bullyClocks: the detector's bounds, and Garcia-Molina's own timing. A node that a higher one
// answered waits T1 for its coordinator, while the higher one, on a true clock, waits its T for
// answers of its own before it announces: a node whose clock runs fast by r waits T1/r, so
// r ≤ T1/(T + H), H standing for the round trip and the scheduler. At the defaults (T1 = 3T) the
// detector's bound is the tighter.
func bullyClocks(options map[string]string, tm Timing) ClockBounds {
	b := DetectorClocks(options, tm)
	if tm.T > 0 && tm.T1 > 0 {
		if r := float64(tm.T1) / float64(tm.T+tm.Heartbeat); r < b.MaxRate {
			b.MaxRate = r
			b.Assumption += fmt.Sprintf("; and Bully's T1 (%v) must outlast a higher node's T (%v) and a round trip on a fast clock: rates up to %.3g", tm.T1, tm.T, r)
		}
	}
	return b
}

// floodMaxClocks: α, β and γ pace their pulses by messages, and have the detector's bounds; ABD
// paces them by δ on each node's own clock and assumes the clocks agree: any rate or jump breaks it.
func floodMaxClocks(options map[string]string, tm Timing) ClockBounds {
	if options[OptSync] == "abd" {
		return ClockBounds{MinRate: 1, MaxRate: 1, Assumption: "ABD starts a pulse every δ by each node's clock and trusts every clock to keep one time at one rate"}
	}
	return DetectorClocks(options, tm)
}
