package agent

import (
	"context"
	"fmt"
	"time"
)

// Offset is an estimate of an agent's clock against the local one.
type Offset struct {
	// Offset is the agent's clock minus the local clock: add it to a local time to get the agent's,
	// subtract it from an agent's timestamp to get local time.
	Offset time.Duration
	// RTT is the round trip of the sample the estimate comes from; the error is at most RTT/2.
	RTT time.Duration
	// Samples is how many round trips were measured.
	Samples int
}

// Bound is the estimate's error bound, RTT/2.
func (o Offset) Bound() time.Duration { return o.RTT / 2 }

func (o Offset) String() string {
	return fmt.Sprintf("%v ± %v (best of %d round trips)", o.Offset, o.Bound(), o.Samples)
}

// ClockOffset estimates the agent's clock offset as NTP does: for each of samples round trips,
// t0 = local now, T = the agent's time, t1 = local now, and offset = T - (t0+t1)/2; the sample with
// the smallest round trip t1 - t0 is kept, as the one least skewed by queueing. The agent read T
// somewhere between t0 and t1, so the true offset is within RTT/2 of the estimate.
func ClockOffset(ctx context.Context, c *Client, samples int) (Offset, error) {
	if samples < 1 {
		return Offset{}, fmt.Errorf("clock offset from %d samples: want 1 or more", samples)
	}
	best := Offset{RTT: -1}
	for i := 0; i < samples; i++ {
		t0 := time.Now()
		at, err := c.Time(ctx)
		if err != nil {
			return Offset{}, fmt.Errorf("clock offset of agent %s: %w", c.Addr(), err)
		}
		t1 := time.Now()
		rtt := t1.Sub(t0) // monotonic
		if best.RTT < 0 || rtt < best.RTT {
			mid := t0.UnixNano() + rtt.Nanoseconds()/2
			best = Offset{Offset: time.Duration(at.UnixNano() - mid), RTT: rtt}
		}
	}
	best.Samples = samples
	return best, nil
}
