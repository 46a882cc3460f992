package launcher

import (
	"fmt"
	"strings"
	"testing"
)

// The detector under many short pauses, in virtual time: 40 nodes of a 64-node ring each stopped
// for 150-198ms (under the 200ms timeout, as a loaded machine's scheduler may), one after another. Its
// neighbours may suspect a paused node (its last heartbeat came up to an interval before the pause:
// a true suspicion); but a paused node that runs again must not suspect its neighbours, whose
// heartbeats wait in its socket: it takes its own stall out of their silence. No false suspicion.
// (The real-process twin is TestScaleShortPausesNoFalseSuspicions.)
func TestSimShortPausesNoSuspicion(t *testing.T) {
	var steps []string
	for i := range 40 {
		steps = append(steps, fmt.Sprintf("at %dms pause %d for %dms", 1000+97*i, 1+(7*i)%64, 150+(13*i)%49))
	}
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.IDs, cfg.Chaos = "chang-roberts", 64, "random", strings.Join(steps, "; ")
	cfg.Seed, cfg.SeedSet = 5, true
	cfg.Duration = 6e9
	s, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sp := s.Verdict.Metrics.Suspicions; sp.False != 0 {
		t.Errorf("suspicions %+v: want no false one", sp)
	}
}
