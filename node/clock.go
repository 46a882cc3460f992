package node

import (
	"fmt"
	"math"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// skewClock is the node's perceived time: a World over the node's true World whose Now and After
// the chaos agent's clock faults bend (wire.CtlClock), the seam through which one implementation
// serves real processes and the simulator. The election machine, the failure detector, the
// heartbeat ticker and the prober read it; the event log's timestamps, the link rules' delays (the
// network is not the node's clock) and the launcher's begin instant read the true World, so that
// the checker is never fooled by the clock under test.
//
// The model is a process's view of a clock that misbehaves, as libfaketime gives one:
//   - rate r: from the moment it is set, the clock advances r seconds a second, and a timer armed
//     for d runs out after d/r. A timer armed before the change keeps the course it was armed on.
//   - bump d: the clock jumps by d. Armed timers keep their course (they run on the monotonic
//     clock); what moves is every reading after the jump, so a deadline computed from an earlier
//     reading comes early (d > 0) or late (d < 0).
//   - strobe d every p for D: the clock reads +d in every other period p, for D.
//   - reset: back to the true clock, rate 1.
//
// On the fast path (no fault in force) Now and After are the true World's, with one branch.
type skewClock struct {
	base World
	on   bool
	rate float64
	// The clock reads perc + (t - at)·rate at true time t (without the strobe).
	at, perc time.Time
	// A strobe adds by in every odd period every of [from, until).
	by, every   time.Duration
	from, until time.Time
}

var _ World = (*skewClock)(nil)

func (c *skewClock) Now() time.Time {
	t := c.base.Now()
	if !c.on {
		return t
	}
	return c.read(t)
}

// read is the perceived time at true time t.
func (c *skewClock) read(t time.Time) time.Time {
	p := c.perc.Add(time.Duration(float64(t.Sub(c.at)) * c.rate))
	if c.every > 0 && !t.Before(c.from) && t.Before(c.until) && (t.Sub(c.from)/c.every)%2 == 1 {
		p = p.Add(c.by)
	}
	return p
}

func (c *skewClock) After(d time.Duration, f func()) Timer {
	if c.on && c.rate != 1 && d > 0 {
		// Rounded up, never to 0: a fast clock's timer of less than rate ns truncated to 0 fired at
		// the same true time, before the clock had reached its deadline, and a caller that re-arms
		// for what is left (the detector's check) spun for ever in the simulator's frozen time
		// (franklin -n 3 --seed 777031, --nemesis clock,kill,restart).
		d = max(1, time.Duration(math.Ceil(float64(d)/c.rate)))
	}
	return c.base.After(d, f)
}

func (c *skewClock) Post(f func()) { c.base.Post(f) }

// apply carries out a clock fault; an op outside the bounds is refused with what is accepted.
func (c *skewClock) apply(op wire.ClockOp) error {
	if err := checkClockOp(op); err != nil {
		return err
	}
	t := c.base.Now()
	if !c.on {
		c.on, c.rate, c.at, c.perc = true, 1, t, t
	}
	switch op.Kind {
	case "rate":
		c.perc, c.at, c.rate = c.perc.Add(time.Duration(float64(t.Sub(c.at))*c.rate)), t, op.Rate
	case "bump":
		c.perc = c.perc.Add(time.Duration(op.By))
	case "strobe":
		c.by, c.every = time.Duration(op.By), time.Duration(op.Every)
		c.from, c.until = t, t.Add(time.Duration(op.For))
	case "reset":
		*c = skewClock{base: c.base}
	}
	return nil
}

// skewed tells whether the node's clock reads other than the true time now.
func (c *skewClock) skewed() bool { return c.on }

func checkClockOp(op wire.ClockOp) error {
	switch op.Kind {
	case "rate":
		if !(op.Rate >= wire.MinClockRate && op.Rate <= wire.MaxClockRate) {
			return fmt.Errorf("clock rate %g is out of range (want %g..%g)", op.Rate, wire.MinClockRate, wire.MaxClockRate)
		}
	case "bump", "strobe":
		if op.By == 0 || op.By > wire.MaxClockJump || op.By < -wire.MaxClockJump {
			return fmt.Errorf("clock %s offset %v: want a non-zero offset within ±%v", op.Kind, time.Duration(op.By), time.Duration(wire.MaxClockJump))
		}
		if op.Kind == "strobe" && (op.Every < int64(time.Millisecond) || op.For < op.Every) {
			return fmt.Errorf("clock strobe every %v for %v: want a period of at least 1ms and a length of at least one period", time.Duration(op.Every), time.Duration(op.For))
		}
	case "reset":
	default:
		return fmt.Errorf("unknown clock fault %q (accepted: rate, bump, strobe, reset)", op.Kind)
	}
	return nil
}
