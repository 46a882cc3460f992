package agent

import (
	"context"
	"testing"
	"time"
)

func TestClockOffset(t *testing.T) {
	for _, shift := range []time.Duration{0, 3 * time.Second, -1500 * time.Millisecond} {
		t.Run(shift.String(), func(t *testing.T) {
			a := startAgent(t, func(o *Options) { o.Now = func() time.Time { return time.Now().Add(shift) } })
			c := a.dial(t)
			off, err := ClockOffset(context.Background(), c, 8)
			if err != nil {
				t.Fatal(err)
			}
			if off.Samples != 8 || off.RTT <= 0 {
				t.Fatalf("ClockOffset = %+v", off)
			}
			// The agent read its clock between t0 and t1, so the estimate is within RTT/2 of the
			// truth; RTT leaves room for the wall and monotonic clocks' disagreement.
			if d := (off.Offset - shift).Abs(); d > off.RTT {
				t.Fatalf("offset %v, want %v within the round trip %v", off.Offset, shift, off.RTT)
			}
			t.Logf("shift %v: estimate %v", shift, off)
		})
	}
	a := startAgent(t, nil)
	if _, err := ClockOffset(context.Background(), a.dial(t), 0); err == nil {
		t.Fatal("ClockOffset with 0 samples did not fail")
	}
}
