package election

import "time"

// Synchronizer ABD (asynchronous bounded delay, Aguirre Janampa et al. §IV-B1): a node with a
// clock, in a network whose messages take at most δ. An initiator sets its origin at InStart, sends
// start to every neighbour and runs pulse 1; a non-initiator does the same at its first message
// (start, or an algorithm message that overtook one), except towards the neighbour that sent it,
// which is already up. Pulse k starts at origin + 2(k-1)δ on the node's own clock.
//
// Why 2δ: two neighbours' origins differ by at most δ (the later one woke at the latest when the
// earlier one's start arrived). A message of pulse k leaves p at origin_p + 2(k-1)δ and arrives by
// origin_p + 2(k-1)δ + δ ≤ origin_q + 2kδ: by the time q starts pulse k+1 (only delays of exactly
// δ on both the start and the message tie with q's timer). No ack, no safe: no control message per
// pulse at all; the price is trusting δ. A message slower than that (a congested or partitioned
// link, a paused node, a timer firing early) is simply late: it is counted (Late) and left out of
// its pulse, and the receiver's log shows it; ABD neither detects nor waits.
type abd struct {
	pulser
	origin time.Duration `explore:"instant"` // the node's clock when it started
}

// abdTimer is the timer of the next pulse.
const abdTimer = "pulse"

func (a *abd) Step(in Input) []Effect {
	switch in.Kind {
	case InStart:
		a.plan()
		if a.initiator && !a.awake {
			a.wake(in.Now, 0)
		}
	case InRecv:
		if !a.awake {
			a.wake(in.Now, in.From)
		}
		if in.Msg.Kind != SyncStart {
			a.take(in.From, in.Msg)
		}
	case InTimer:
		if in.Timer == abdTimer && a.awake && !a.done {
			a.enter(a.pulse+1, in.Now)
		}
	}
	return a.flush()
}

// wake starts the node at now: start to every neighbour but from (0: none), then pulse 1.
func (a *abd) wake(now time.Duration, from int) {
	a.wakeUp()
	a.origin = now
	for _, q := range a.nb {
		if q != from {
			a.send(q, Message{Kind: SyncStart})
		}
	}
	a.enter(1, now)
}

// enter starts pulse p and arms the timer of pulse p+1, from the origin so that late timers do not
// add up.
func (a *abd) enter(p int, now time.Duration) {
	a.begin(p)
	outs := a.run()
	if a.done {
		return
	}
	a.sendAll(outs)
	a.emit(Effect{Kind: EffSetTimer, Timer: abdTimer, After: max(0, a.origin+time.Duration(2*p)*a.delta-now)})
}
