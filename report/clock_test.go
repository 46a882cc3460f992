package report

import (
	"testing"

	"github.com/leaderlab/leaderlab/logs"
)

// A clock fault is drawn as a band while it is in force on its node: a rate until the node's reset,
// a strobe for its length; the reset is a line.
func TestOverTimeDrawsClockFaults(t *testing.T) {
	d := &Data{From: 0, To: 6_000_000}
	for _, r := range []logs.ChaosRecord{
		{TS: 1_000_000_000, Op: logs.OpClock, Targets: []int{5}, Clock: "rate 3"},
		{TS: 2_000_000_000, Op: logs.OpClock, Targets: []int{3}, Clock: "strobe +200ms every 10ms for 500ms"},
		{TS: 3_000_000_000, Op: logs.OpClock, Targets: []int{1, 2, 3, 4, 5}, Clock: "reset"},
	} {
		d.Faults = append(d.Faults, Fault{T: r.TS / 1000, Op: r.Op, Targets: r.Targets, Label: opLabel(r)})
	}
	o := buildOverTime(d, nil)
	want := map[string][2]int64{
		"clock 5 rate 3": {1_000_000, 3_000_000},
		"clock 3 strobe +200ms every 10ms for 500ms": {2_000_000, 2_500_000},
	}
	for _, b := range o.Bands {
		if w, ok := want[b.Label]; ok {
			if b.From != w[0] || b.To != w[1] {
				t.Errorf("band %q from %d to %d µs, want %d to %d", b.Label, b.From, b.To, w[0], w[1])
			}
			delete(want, b.Label)
		}
	}
	if len(want) > 0 {
		t.Errorf("no band for %v; bands %+v", want, o.Bands)
	}
	found := false
	for _, l := range o.Lines {
		found = found || l.Label == "clock 1,2,3,4,5 reset"
	}
	if !found {
		t.Errorf("no line for the reset; lines %+v", o.Lines)
	}
}
