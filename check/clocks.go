package check

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// Clock faults (chaos.jsonl's clock records). The checker judges by true time (the ts of the event
// log), so a clock fault changes nothing in what it measures; it changes which failures are the
// algorithm's declared limits. Each algorithm declares the clock faults its timing assumptions allow
// (election.Algorithm.Bounds); this file follows every node's clock through the records — its rate,
// and the offset a rate or a bump put on it, which a reset takes off again in one jump — and finds
// the stretches in which a node's clock was beyond them. Those are the fault kind "clock" of the
// algorithm's Limits, in force from the record until the node's clock is back within bounds, and a
// detector's timeout and a heartbeat after (the suspicions the fault set off take that long to
// clear). A clock fault of any kind, within bounds or not, counts as a fault in the windows of the
// elections it overlaps, as a link rule does.

// clockSpan is a stretch of true time in which node's clock was under a fault.
type clockSpan struct {
	node     int
	from, to int64
	j        int    // the record that began it, in c.faults
	beyond   string // why it is beyond the algorithm's bounds; "" when within
}

// clockState is one node's clock as the records left it.
type clockState struct {
	rate   float64
	off    int64 // perceived − true at anchor, ns
	anchor int64
	span   *clockSpan // the fault in force; nil on the true clock
}

func (s *clockState) offset(t int64) int64 {
	return s.off + int64(float64(t-s.anchor)*(s.rate-1))
}

// clockBounds are the run's algorithm's clock bounds.
func (c *checker) clockBounds() election.ClockBounds {
	if !c.algOK {
		return election.DetectorClocks(c.run.Cluster.Options, c.timing())
	}
	return c.alg.Bounds(c.run.Cluster.Options, c.timing())
}

// clockRecovery is election.ClockRecovery for the run's timings, ns.
func (c *checker) clockRecovery() int64 { return int64(election.ClockRecovery(c.timing())) }

// timing is the run's size and timings, as the algorithms' declarations take them.
func (c *checker) timing() election.Timing {
	cl := &c.run.Cluster
	return election.Timing{N: len(c.ids), Heartbeat: cl.Heartbeat.D(), Timeout: cl.Timeout.D(), T: cl.ElectionTimeout.D(), T1: cl.CoordinatorTimeout.D()}
}

// clockSpans follows the clock records; computed once.
func (c *checker) clockSpans() []clockSpan {
	if c.clocks != nil {
		c.flushClockWarnings()
		return *c.clocks
	}
	spans := []clockSpan{}
	c.clocks = &spans
	b := c.clockBounds()
	after := int64(c.run.Cluster.Timeout.D() + c.run.Cluster.Heartbeat.D())
	st := map[int]*clockState{}
	// A node's clock is under a fault (span) from its first clock record until a reset or the end
	// of its process, beyond the bounds while its rate is; a jump (a bump, a strobe's flips, the
	// reset that takes an offset off) is a span of its own, from the jump to the detector's
	// recovery after it.
	end := func(s *clockState, t int64) {
		if s.span == nil {
			return
		}
		s.span.to = t
		if s.span.beyond != "" {
			s.span.to += after
		}
		spans = append(spans, *s.span)
		s.span = nil
	}
	jumpSpan := func(id int, t, until int64, j int, jump time.Duration, note string) {
		sp := clockSpan{node: id, from: t, to: until, j: j, beyond: b.Beyond(0, jump)}
		if sp.beyond != "" {
			sp.beyond += note
			sp.to += after
		}
		spans = append(spans, sp)
	}
	for j, op := range c.faults {
		for _, id := range op.Targets {
			s := st[id]
			if s == nil {
				s = &clockState{rate: 1}
				st[id] = s
			}
			t := op.TS
			switch op.Op {
			case logs.OpKill, logs.OpStop, logs.OpRestart:
				end(s, t)
				*s = clockState{rate: 1} // a new process starts on the true clock
				continue
			case logs.OpClock:
			default:
				continue
			}
			if op.Acks != nil {
				ack, ok := op.Acks[strconv.Itoa(id)]
				if !ok {
					continue // this node did not take it
				}
				t = ack
			}
			kind, rate, by, _, length, err := parseClockText(op.Clock)
			if err != nil {
				c.warnf("chaos: clock record at %s: %v: not judged", c.rel(op.TS), err)
				continue
			}
			switch kind {
			case "rate":
				s.off, s.anchor, s.rate = s.offset(t), t, rate
				end(s, t)
				s.span = &clockSpan{node: id, from: t, j: j, beyond: b.Beyond(rate, 0)}
			case "bump":
				s.off += int64(by)
				if s.span == nil {
					s.span = &clockSpan{node: id, from: t, j: j}
				}
				jumpSpan(id, t, t, j, by, "")
			case "strobe":
				jump := by
				if b.Beyond(0, -by) != "" {
					jump = -by // a flip back is the one beyond
				}
				jumpSpan(id, t, t+int64(length), j, jump, " (each flip of the strobe)")
			case "reset":
				jump := time.Duration(-s.offset(t))
				end(s, t)
				if jump != 0 {
					jumpSpan(id, t, t, j, jump, " (the reset takes off what the fault had put on the clock)")
				}
				*s = clockState{rate: 1}
			}
		}
	}
	for _, s := range st {
		if s.span != nil {
			s.span.to = c.end
			spans = append(spans, *s.span)
		}
	}
	return spans
}

// parseClockText reads a clock record's fault: "rate 3", "bump -300ms",
// "strobe +200ms every 10ms for 500ms", "reset".
func parseClockText(s string) (kind string, rate float64, by, every, length time.Duration, err error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "", 0, 0, 0, 0, fmt.Errorf("no fault in %q", s)
	}
	kind = f[0]
	bad := fmt.Errorf("unreadable clock fault %q (want rate <r>, bump <±d>, strobe <d> every <p> for <D> or reset)", s)
	switch {
	case kind == "reset" && len(f) == 1:
	case kind == "rate" && len(f) == 2:
		if rate, err = strconv.ParseFloat(f[1], 64); err != nil || rate <= 0 {
			return "", 0, 0, 0, 0, bad
		}
	case kind == "bump" && len(f) == 2:
		if by, err = time.ParseDuration(f[1]); err != nil {
			return "", 0, 0, 0, 0, bad
		}
	case kind == "strobe" && len(f) == 6 && f[2] == "every" && f[4] == "for":
		var e1, e2, e3 error
		by, e1 = time.ParseDuration(f[1])
		every, e2 = time.ParseDuration(f[3])
		length, e3 = time.ParseDuration(f[5])
		if e1 != nil || e2 != nil || e3 != nil {
			return "", 0, 0, 0, 0, bad
		}
	default:
		return "", 0, 0, 0, 0, bad
	}
	return kind, rate, by, every, length, nil
}

// clockBeyond tells whether a clock fault beyond the bounds was in force somewhere in [from, to).
func (c *checker) clockBeyond(from, to int64) bool {
	for _, s := range c.clockSpans() {
		if s.beyond != "" && s.from < to && s.to > from {
			return true
		}
	}
	return false
}

// clockBeyondText names the clock faults of the run beyond the bounds, and the assumption: the
// verdict's reason when a property failed under one.
func (c *checker) clockBeyondText() string {
	var parts []string
	for _, s := range c.clockSpans() {
		if s.beyond != "" {
			op := c.faults[s.j]
			parts = append(parts, fmt.Sprintf("clock %d %s at %s: %s", s.node, op.Clock, c.rel(op.TS), s.beyond))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("the clock faults beyond %s's assumption (%s): %s", c.alg.Name, c.clockBounds().Assumption, listed(parts))
}
