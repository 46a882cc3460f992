package node

import (
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// The node's seams. Everything the node does — its event loop, failure detector, link rules,
// lifecycle and event log — reads time and arms timers through a World, sends through a
// wire.Transport, and writes its lines to an EventSink. A node process has the wall clock, TCP and
// UDP and a file (Run); the simulator (package sim) has virtual time, an in-memory network and a
// slice of events, and runs the same code (NewSimulated). What stays real-only is thin: signals,
// sockets, spawning, and watching the parent process.

// World is a node's time and event loop.
type World interface {
	// Now is the current time: the wall clock, or the simulator's virtual time on its Unix base.
	Now() time.Time
	// After runs f on the node's event loop d from now, unless the timer is stopped first. A timer
	// that fires as it is stopped may still run f: callers that care re-check their own state.
	After(d time.Duration, f func()) Timer
	// Post runs f on the node's event loop after the input being handled now.
	Post(f func())
}

// Timer is a timer armed by World.After.
type Timer interface {
	// Stop prevents the timer from firing; it tells whether it stopped it.
	Stop() bool
}

// EventSink receives the node's event-log lines, one call per line, in order. e and what it points
// to are the sink's only until Write returns (the node reuses its vector clock).
type EventSink interface {
	Write(e *logs.Event) error
}

var _ EventSink = (*logs.Writer)(nil)

// wallWorld is a node process's world: the wall clock, and an event loop that is a goroutine
// reading the inbox channel (Run).
type wallWorld struct{ n *node }

func (w wallWorld) Now() time.Time { return time.Now() }

func (w wallWorld) After(d time.Duration, f func()) Timer {
	if lt := w.n.lt; lt != nil {
		return lt.after(d, f)
	}
	return time.AfterFunc(d, func() { w.Post(f) })
}

func (w wallWorld) Post(f func()) {
	select {
	case w.n.inbox <- f:
	case <-w.n.done:
	}
}

// ticker calls f every interval on the loop, on the schedule first + k·interval (so that lateness
// does not accumulate), skipping the beats a stalled process missed. Stop ends it.
type ticker struct {
	w        World
	f        func()
	interval time.Duration
	first    time.Time
	k        int64
	t        Timer
	stopped  bool
	// due is when the armed beat should fire; stalls the last stretches in which a beat fired
	// late: the process was not running (stopped, or not scheduled) from its due time on.
	due    time.Time
	stalls []stall
}

// stall is a stretch in which the process did not run.
type stall struct{ from, to time.Time }

// maxStalls bounds the stalls a ticker remembers (the detector asks only about the last timeout).
const maxStalls = 32

func startTicker(w World, interval time.Duration, f func()) *ticker {
	t := &ticker{w: w, f: f, interval: interval, first: w.Now()}
	t.arm()
	return t
}

func (t *ticker) arm() {
	now := t.w.Now()
	t.k++
	next := t.first.Add(time.Duration(t.k) * t.interval)
	for !next.After(now) {
		t.k++
		next = t.first.Add(time.Duration(t.k) * t.interval)
	}
	if next.Sub(now) > t.interval {
		// The clock went back (a clock fault's bump or reset): the schedule starts again from now
		// rather than falling silent until the clock catches up with it.
		t.first, t.k, next = now, 1, now.Add(t.interval)
	}
	t.due = next
	t.t = t.w.After(next.Sub(now), t.fire)
}

func (t *ticker) fire() {
	if t.stopped {
		return
	}
	if now := t.w.Now(); now.After(t.due) {
		if len(t.stalls) == maxStalls {
			t.stalls = append(t.stalls[:0], t.stalls[1:]...)
		}
		t.stalls = append(t.stalls, stall{t.due, now})
	}
	t.arm()
	t.f()
}

// stalledSince is how long the process did not run between since and now, as its beats tell: the
// stretches in which a beat fired late, and the one in progress if the armed beat is overdue now (a
// process that has just been resumed runs whatever comes first, maybe before its beat).
func (t *ticker) stalledSince(since, now time.Time) time.Duration {
	var d time.Duration
	for _, s := range append(t.stalls, stall{t.due, now}) {
		if lo, hi := later(s.from, since), earlier(s.to, now); hi.After(lo) {
			d += hi.Sub(lo)
		}
	}
	return d
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

func (t *ticker) stop() {
	t.stopped = true
	if t.t != nil {
		t.t.Stop()
	}
}
