package chaos

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// Clock faults. A clock step changes how one node (or every node) perceives time, through the
// node's clock seam (node.World): its timers and its readings of the time, never the host's clock,
// so that the same fault runs on real processes and in the simulator. What a node logs stays in
// true time; the perceived time is logged beside it (the event log's pt) while a fault is in force.
//
//	clock <t> rate <r>                       its timers run at ×r and its clock advances at ×r (0.25 ≤ r ≤ 4)
//	clock <t> bump <±d>                      its clock jumps by d (timers already armed keep their course)
//	clock <t> strobe <d> every <p> for <D>   its clock flips between +0 and +d every p, for D
//	clock <t> reset                          back to the true clock
//
// <t> is a target (an ID, leader, highest, lowest, random) or "all": every node running then.

// The kinds of ClockFault.
const (
	ClockRate   = "rate"
	ClockBump   = "bump"
	ClockStrobe = "strobe"
	ClockReset  = "reset"
)

// ClockKinds lists the clock faults in the order error messages name them.
var ClockKinds = []string{ClockRate, ClockBump, ClockStrobe, ClockReset}

// TargetAll is the clock steps' target for every running node.
const TargetAll = "all"

// The bounds of a clock fault's values.
const (
	MinClockRate = wire.MinClockRate
	MaxClockRate = wire.MaxClockRate
	// MaxClockJump bounds a bump or a strobe's offset either way.
	MaxClockJump = time.Duration(wire.MaxClockJump)
	// MinStrobeEvery is the shortest strobe period: a flip faster than a millisecond is below what
	// a process's timers resolve.
	MinStrobeEvery = time.Millisecond
)

// ClockFault is what a clock step does to its node's clock.
type ClockFault struct {
	Kind string        // one of ClockKinds
	Rate float64       // rate: the factor, MinClockRate..MaxClockRate
	By   time.Duration // bump: the jump (non-zero, either way); strobe: the offset flipped to (non-zero)
	// Every and For are a strobe's period and how long it goes on (Every ≤ For).
	Every, For time.Duration
}

// String renders the fault as the language writes it after "clock <t> ".
func (c *ClockFault) String() string {
	switch c.Kind {
	case ClockRate:
		return "rate " + strconv.FormatFloat(c.Rate, 'g', -1, 64)
	case ClockBump:
		return "bump " + signed(c.By)
	case ClockStrobe:
		return "strobe " + signed(c.By) + " every " + c.Every.String() + " for " + c.For.String()
	}
	return c.Kind
}

// signed writes a duration with its sign: +300ms, -1s.
func signed(d time.Duration) string {
	if d >= 0 {
		return "+" + d.String()
	}
	return d.String()
}

const clockForm = "clock <target|all> rate <r> | bump <±d> | strobe <d> every <p> for <D> | reset"

// parseClock reads "clock <t> <fault>".
func parseClock(st *Step, args []string, n int) error {
	if len(args) == 0 {
		return fmt.Errorf("clock needs a target and a fault (accepted: %s)", clockForm)
	}
	if args[0] == TargetAll {
		st.Target = Target{Kind: TargetAll}
	} else {
		t, err := parseTarget(args[0], n)
		if err != nil {
			return fmt.Errorf("%w, or all", err)
		}
		st.Target = t
	}
	if len(args) < 2 {
		return fmt.Errorf("clock %s needs a fault (accepted: %s)", args[0], strings.Join(ClockKinds, ", "))
	}
	c := &ClockFault{Kind: args[1]}
	st.Clock = c
	rest := args[2:]
	want := map[string]int{ClockRate: 1, ClockBump: 1, ClockStrobe: 5, ClockReset: 0}
	k, ok := want[c.Kind]
	if !ok {
		return fmt.Errorf("unknown clock fault %q (accepted: %s)", c.Kind, strings.Join(ClockKinds, ", "))
	}
	if len(rest) < k {
		return fmt.Errorf("clock %s is incomplete (accepted: %s)", c.Kind, clockForm)
	}
	if len(rest) > k {
		return fmt.Errorf("unexpected %q after clock %s (accepted: %s)", strings.Join(rest[k:], " "), strings.Join(args[1:1+k+1], " "), clockForm)
	}
	var err error
	switch c.Kind {
	case ClockRate:
		c.Rate, err = strconv.ParseFloat(rest[0], 64)
		if err != nil || c.Rate != c.Rate {
			return fmt.Errorf("bad clock rate %q (want a number %g..%g, e.g. 2 or 0.5)", rest[0], MinClockRate, MaxClockRate)
		}
		if c.Rate < MinClockRate || c.Rate > MaxClockRate {
			return fmt.Errorf("clock rate %s is out of range (want %g..%g: a clock that runs ×%s is not a clock the lab emulates)", rest[0], MinClockRate, MaxClockRate, rest[0])
		}
	case ClockBump:
		c.By, err = jump("bump", rest[0])
	case ClockStrobe:
		if rest[1] != "every" || rest[3] != "for" {
			return fmt.Errorf("clock strobe is written strobe <d> every <p> for <D>, got %q", strings.Join(rest, " "))
		}
		if c.By, err = jump("strobe", rest[0]); err != nil {
			return err
		}
		if c.Every, err = positiveDuration("strobe period", rest[2]); err != nil {
			return err
		}
		if c.Every < MinStrobeEvery {
			return fmt.Errorf("strobe period %s is below %s (what a process's timers resolve)", rest[2], MinStrobeEvery)
		}
		if c.For, err = positiveDuration("strobe", rest[4]); err != nil {
			return err
		}
		if c.For < c.Every {
			return fmt.Errorf("strobe for %s is shorter than its period %s (want at least one flip)", rest[4], rest[2])
		}
	}
	return err
}

// jump reads a bump's or a strobe's offset: a non-zero duration within ±MaxClockJump.
func jump(what, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad %s offset %q (%s, with a sign for a jump back: -300ms)", what, s, durationHint)
	}
	if d == 0 {
		return 0, fmt.Errorf("a %s of 0 changes nothing (want a non-zero offset such as 300ms or -300ms)", what)
	}
	if d > MaxClockJump || d < -MaxClockJump {
		return 0, fmt.Errorf("%s offset %s is beyond ±%s", what, s, MaxClockJump)
	}
	return d, nil
}

// Clock resolves a clock step's target among the running nodes (not paused): every one of them for
// "all", else one. It returns them ascending.
func (x *Executor) Clock(st Step, rng *rand.Rand) ([]int, error) {
	if st.Op != OpClock || st.Clock == nil {
		return nil, fmt.Errorf("action %q is not a clock fault", st.Op)
	}
	live := x.In(Running) // a paused process cannot take a control request, nor read its clock
	if st.Target.Kind == TargetAll {
		if len(live) == 0 {
			return nil, fmt.Errorf("all: %w", ErrNoCandidate)
		}
		return live, nil
	}
	leader := 0
	if st.Target.Kind == TargetLeader {
		leader = x.c.Leader()
	}
	id, err := Resolve(st.Target, live, leader, rng)
	if err != nil {
		return nil, err
	}
	return []int{id}, nil
}

// Op is the fault as a node's control request carries it.
func (c *ClockFault) Op() *wire.ClockOp {
	return &wire.ClockOp{Kind: c.Kind, Rate: c.Rate, By: int64(c.By), Every: int64(c.Every), For: int64(c.For)}
}
