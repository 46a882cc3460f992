package report

import (
	"fmt"
	"strconv"

	"github.com/leaderlab/leaderlab/logs"
)

// What the exports say about their clocks. A run with vector clocks on logs a vc on every line
// (logs.VClock); a run without them (--vclock off, a cluster above the threshold, the simulator)
// has Lamport clocks alone, and the exports say so rather than leave a reader to guess.

// loggedClocks counts the exported events (all but stats) and those whose line carries a vc.
func loggedClocks(hosts []*host) (events, logged int) {
	for _, h := range hosts {
		for _, e := range h.events {
			events++
			if e.VC != nil {
				logged++
			}
		}
	}
	return events, logged
}

// whyLamport says why a run's logs carry no vector clocks, from the choice cluster.json records.
func whyLamport(run *logs.Run) string {
	if run.Cluster.Options["vclock"] == "off" {
		return "vector clocks were off for this run (--vclock off, or --vclock auto above 64 nodes)"
	}
	return "the logs carry no vector clocks (vc)"
}

// clockChecker compares the clocks an export computes with the ones the nodes logged.
type clockChecker struct {
	hosts []*host
	index map[[2]int]int // (node, inc) -> host index
}

func newClockChecker(hosts []*host) *clockChecker {
	c := &clockChecker{hosts: hosts, index: make(map[[2]int]int, len(hosts))}
	for _, h := range hosts {
		e := h.events[0]
		c.index[[2]int{e.Node, e.Inc}] = h.id
	}
	return c
}

// same tells whether a logged clock equals a computed one (indexed by host, 0 for none).
func (c *clockChecker) same(logged logs.VClock, computed []int) bool {
	nonzero := 0
	for _, n := range computed {
		if n != 0 {
			nonzero++
		}
	}
	if nonzero != len(logged) {
		return false
	}
	for _, t := range logged {
		i, ok := c.index[[2]int{t.Node, t.Inc}]
		if !ok || uint64(computed[i]) != t.N {
			return false
		}
	}
	return true
}

// shivizClocks is the ShiViz export's sentence about its clocks.
func shivizClocks(run *logs.Run, st ExportStats) string {
	switch {
	case st.LoggedClocks == 0:
		return "clocks computed from send/recv matching: " + whyLamport(run)
	case st.ClockMismatches == 0 && st.LoggedClocks == st.Events:
		return "vector clocks from the logs (vc), each equal to the one send/recv matching gives"
	}
	s := "clocks computed from send/recv matching"
	if n := st.Events - st.LoggedClocks; n > 0 {
		s += fmt.Sprintf("; %d of %d events have no vc", n, st.Events)
	}
	if st.ClockMismatches > 0 {
		s += fmt.Sprintf("; %d logged vector clocks differ from them, the first at %s", st.ClockMismatches, st.FirstMismatch)
	}
	return s
}

// perfettoClocks is the Perfetto export's sentence about its clocks (also in its otherData).
func perfettoClocks(run *logs.Run, events, logged int) string {
	switch {
	case logged == 0:
		return "Lamport clocks only (args.lc): " + whyLamport(run) + "; message flows come from send/recv matching"
	case logged == events:
		return "Lamport (args.lc) and vector clocks (args.vc) from the logs"
	}
	return "Lamport clocks (args.lc); vector clocks (args.vc) on " + strconv.Itoa(logged) + " of " + strconv.Itoa(events) + " events only"
}
