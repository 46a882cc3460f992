package launcher

import (
	"testing"
	"time"
)

// swarmSeed is a seed that bench chaos --sim --swarm found failing, kept with the verdict it must
// have now: a pass, or a failure under the algorithm's declared limits only.
type swarmSeed struct {
	why      string
	algo     string
	n        int
	nemesis  string
	interval time.Duration
	overlap  bool
	shapes   string
	seed     int64
	limit    bool // want a failure under declared limits only (else a pass)
}

var swarmSeeds = []swarmSeed{
	// Node 3 paused 55ms before the paused leader 5 resumed; the session that 5's return opened
	// waited the status timeout for 3 and the share window, and 4 and 5 overlapped 226ms from 5's
	// resume: RSDP's declared limit (a session held up by a paused peer), measured from the
	// session's start.
	{why: "a pause just before a resume holds up RSDP's session", algo: "rsdp", n: 5, nemesis: "kill=1,pause=2,restart=1",
		interval: 250 * time.Millisecond, overlap: true, seed: 20261765, limit: true},
	// Node 4 resumed while node 2 had been paused for 272ms; 4 had not judged 2 (it was paused
	// itself when 2 paused), so the session its return opened waited for 2, and 4 and 5 overlapped
	// 225ms. The checker only looked for a pause begun within a grace of the overlap.
	{why: "a resume beside a peer paused since before holds up RSDP's session", algo: "rsdp", n: 5, nemesis: "kill=4,pause=3,stop=4,clock=2",
		interval: time.Second, overlap: true, seed: 20262554, limit: true},
	// A partition's heal reached node 2 late (it was paused), so it dropped node 1's first message
	// of epoch 105; node 1 then discarded epoch 102's messages as stale, and nothing moved until
	// the stall timer, after the run's end. A message lost across a partition is the rings'
	// declared limit, as one a dropping link loses. (Answering stale messages from participants
	// with a catch-up ended this run, but the explorer found the epochs unbounded: at N = 4 with
	// one crash the search stopped at 20 M states, where it is complete today.)
	{why: "a message lost across a partition stalls a ring", algo: "lelann", n: 5, nemesis: "kill=4,pause=4,restart=1,partition=4,link=2,stop=1",
		interval: 250 * time.Millisecond, overlap: true, shapes: "random-halves,majorities-ring", seed: 7312164, limit: true},
	// Every node a restarted incarnation, all electing in epoch 0, and the aliases of an earlier
	// attempt going round through relays for ever (5,955 messages, every node at ⊥). A relay now
	// opens a new epoch when an alias has gone all the way round.
	{why: "a ring of restarted Peterson nodes ends", algo: "peterson", n: 5, nemesis: "kill=3,pause=2",
		interval: 250 * time.Millisecond, overlap: true, seed: 20271952},
	// Node 4, restarted, crowned itself before its link to 5 was up and deferred to 5 in the same
	// instant, when the live nodes agreed on 5; then 1, 2 and 3 took 4's coordinator, suspected 4
	// 200ms later, and that election (26 messages, bound 24) was judged as one with no fault in its
	// window. An agreement left, with no fault since, is now not the election's end.
	{why: "an agreement left by a restart's stale coordinator is no election's end", algo: "bully", n: 5, nemesis: "pause=2,partition=3,link=2,stop=2",
		interval: 250 * time.Millisecond, overlap: true, shapes: "random-halves,bridge", seed: 20271787},
}

func TestSimSwarmSeeds(t *testing.T) {
	for _, tc := range swarmSeeds {
		t.Run(tc.why, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Algo, cfg.Nodes, cfg.Chaos = tc.algo, tc.n, ""
			cfg.Nemesis, cfg.NemesisInterval, cfg.NemesisRestart, cfg.NemesisOverlap = tc.nemesis, tc.interval, true, tc.overlap
			cfg.NemesisShapes = tc.shapes
			cfg.Duration = 6 * time.Second
			cfg.Seed, cfg.SeedSet = tc.seed, true
			s, err := Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			want, ok := "PASS", s.Verdict.OK
			if tc.limit {
				want, ok = "a failure under declared limits only", !s.Verdict.OK && s.Verdict.OnlyLimits()
			}
			if !ok {
				for _, p := range s.Verdict.Properties {
					t.Logf("%s ok=%v limit=%q: %s", p.Name, p.OK, p.Limit, p.Detail)
				}
				t.Fatalf("run --sim -a %s -n %d --seed %d --nemesis %s --nemesis-interval %v --nemesis-restart (overlap %v, shapes %q): want %s",
					tc.algo, tc.n, tc.seed, tc.nemesis, tc.interval, tc.overlap, tc.shapes, want)
			}
		})
	}
}
