package node

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// stepWorld is a World whose time moves only when the test says; After records the delays asked.
type stepWorld struct {
	now    time.Time
	afters []time.Duration
}

func (w *stepWorld) Now() time.Time { return w.now }
func (w *stepWorld) After(d time.Duration, f func()) Timer {
	w.afters = append(w.afters, d)
	return nopTimer{}
}
func (w *stepWorld) Post(f func()) { f() }

type nopTimer struct{}

func (nopTimer) Stop() bool { return true }

func TestSkewClock(t *testing.T) {
	base := &stepWorld{now: time.Unix(1000, 0)}
	c := &skewClock{base: base}
	at := func(d time.Duration) time.Duration {
		base.now = time.Unix(1000, 0).Add(d)
		return c.Now().Sub(time.Unix(1000, 0))
	}
	must := func(op wire.ClockOp) {
		t.Helper()
		if err := c.apply(op); err != nil {
			t.Fatal(err)
		}
	}
	if got := at(time.Second); got != time.Second || c.skewed() {
		t.Fatalf("no fault: clock reads %v at 1s (skewed %v)", got, c.skewed())
	}
	must(wire.ClockOp{Kind: "rate", Rate: 3})
	if got := at(2 * time.Second); got != 4*time.Second {
		t.Errorf("rate 3 from 1s: clock reads %v at 2s, want 4s", got)
	}
	c.After(300*time.Millisecond, func() {})
	if got := base.afters[len(base.afters)-1]; got != 100*time.Millisecond {
		t.Errorf("rate 3: a 300ms timer runs %v of true time, want 100ms", got)
	}
	must(wire.ClockOp{Kind: "rate", Rate: 0.5})
	if got := at(4 * time.Second); got != 5*time.Second {
		t.Errorf("rate 0.5 from 2s (reading 4s): clock reads %v at 4s, want 5s", got)
	}
	must(wire.ClockOp{Kind: "bump", By: int64(-300 * time.Millisecond)})
	if got := at(4 * time.Second); got != 4700*time.Millisecond {
		t.Errorf("bump -300ms: clock reads %v, want 4.7s", got)
	}
	must(wire.ClockOp{Kind: "reset"})
	if got := at(5 * time.Second); got != 5*time.Second || c.skewed() {
		t.Errorf("reset: clock reads %v at 5s (skewed %v), want the true time", got, c.skewed())
	}
	must(wire.ClockOp{Kind: "strobe", By: int64(200 * time.Millisecond), Every: int64(10 * time.Millisecond), For: int64(50 * time.Millisecond)})
	for _, tc := range []struct{ at, want time.Duration }{
		{5*time.Second + 5*time.Millisecond, 5*time.Second + 5*time.Millisecond},
		{5*time.Second + 15*time.Millisecond, 5*time.Second + 215*time.Millisecond},
		{5*time.Second + 25*time.Millisecond, 5*time.Second + 25*time.Millisecond},
		{5*time.Second + 35*time.Millisecond, 5*time.Second + 235*time.Millisecond},
		{5*time.Second + 55*time.Millisecond, 5*time.Second + 55*time.Millisecond}, // the strobe is over
	} {
		if got := at(tc.at); got != tc.want {
			t.Errorf("strobe +200ms every 10ms from 5s: clock reads %v at %v, want %v", got, tc.at, tc.want)
		}
	}
}

func TestSkewClockRefusesBadOps(t *testing.T) {
	c := &skewClock{base: &stepWorld{now: time.Unix(1000, 0)}}
	for _, tc := range []struct {
		op   wire.ClockOp
		want string
	}{
		{wire.ClockOp{Kind: "rate", Rate: 99}, "clock rate 99 is out of range (want 0.25..4)"},
		{wire.ClockOp{Kind: "rate"}, "clock rate 0 is out of range"},
		{wire.ClockOp{Kind: "bump"}, "want a non-zero offset"},
		{wire.ClockOp{Kind: "strobe", By: 1e6, Every: 1e3, For: 1e9}, "want a period of at least 1ms"},
		{wire.ClockOp{Kind: "warp"}, `unknown clock fault "warp" (accepted: rate, bump, strobe, reset)`},
	} {
		err := c.apply(tc.op)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("apply(%+v) = %v, want an error containing %q", tc.op, err, tc.want)
		}
		if c.skewed() {
			t.Errorf("apply(%+v) was refused but left the clock skewed", tc.op)
		}
	}
}

// A clock that goes back (a bump, or a reset after a fast rate) must not silence the heartbeat
// ticker until the clock catches up with its schedule.
func TestTickerSurvivesClockGoingBack(t *testing.T) {
	base := &stepWorld{now: time.Unix(1000, 0)}
	c := &skewClock{base: base}
	tk := startTicker(c, 50*time.Millisecond, func() {})
	base.now = base.now.Add(50 * time.Millisecond)
	if err := c.apply(wire.ClockOp{Kind: "bump", By: int64(-4 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	tk.fire()
	if got := base.afters[len(base.afters)-1]; got > 50*time.Millisecond {
		t.Errorf("after the clock went back 4s the next beat is armed %v ahead, want at most the 50ms interval", got)
	}
}

// A fast clock's timer shorter than its rate in ns must still wait a true nanosecond: rounded to 0
// it fired before the clock reached its deadline, and the detector re-armed for what was left, for
// ever, in the simulator's frozen time (franklin -n 3 --seed 777031).
func TestSkewClockFastTimerNeverZero(t *testing.T) {
	base := &stepWorld{now: time.Unix(1000, 0)}
	c := &skewClock{base: base}
	if err := c.apply(wire.ClockOp{Kind: "rate", Rate: 4}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []time.Duration{1, 3, 5, 1001} {
		c.After(d, func() {})
		got := base.afters[len(base.afters)-1]
		if got < 1 || time.Duration(float64(got)*4) < d {
			t.Errorf("rate 4: a timer of %v runs %v of true time, which the clock covers in %v", d, got, time.Duration(float64(got)*4))
		}
	}
}
