package launcher

import (
	"strings"
	"testing"
	"time"
)

// TestSimRingEpochsOwned replays the swarm seeds that found two ring elections merged under one
// epoch number: under overlapping partitions, election messages of a live epoch were lost without
// any detector noticing, and a node that had not seen that epoch opened the same number when its
// stall timer fired. Its election joined the broken one (Chang-Roberts: a participant swallowed its
// candidates as its own election's; Franklin: a node took a later phase's message for its first),
// and nobody decided before the end. Epochs are owned by their opener now (see election/ring.go):
// both runs must pass.
func TestSimRingEpochsOwned(t *testing.T) {
	for _, c := range []struct {
		algo, nemesis, shapes string
		seed                  int64
	}{
		{"chang-roberts", "kill=2,pause=1,restart=2,partition=1", "random-halves,bridge,majorities-ring,minority-third", 20261212},
		{"franklin", "pause=2,partition=3,stop=1,clock=3", "halves,random-halves,isolate,bridge,majorities-ring", 20262765},
	} {
		cfg := DefaultConfig()
		cfg.Algo, cfg.Nodes, cfg.Duration = c.algo, 5, 6*time.Second
		cfg.Seed, cfg.SeedSet = c.seed, true
		cfg.Nemesis, cfg.NemesisShapes = c.nemesis, c.shapes
		cfg.NemesisInterval, cfg.NemesisRestart, cfg.NemesisOverlap = 500*time.Millisecond, true, true
		s, err := Simulate(cfg)
		if err != nil {
			t.Fatalf("%s seed %d: %v", c.algo, c.seed, err)
		}
		if !s.Verdict.OK {
			var b strings.Builder
			s.Verdict.Print(&b)
			t.Errorf("%s seed %d: want a pass:\n%s\n\treplay: leaderlab run --sim -a %s -n 5 --seed %d --duration 6s --nemesis %s --nemesis-interval 500ms --nemesis-restart --nemesis-overlap --nemesis-shapes %s",
				c.algo, c.seed, b.String(), c.algo, c.seed, c.nemesis, c.shapes)
		}
	}
}
