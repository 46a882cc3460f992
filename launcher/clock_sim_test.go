package launcher

import (
	"testing"
	"time"
)

// TestSimClockFaultSeedsEnd: seeds of the clock nemesis that once never ended in the simulator (a
// fast clock's timer rounded to 0 ns, re-armed for ever at one instant) end, and pass.
func TestSimClockFaultSeedsEnd(t *testing.T) {
	for _, tc := range []struct {
		algo string
		n    int
		seed int64
	}{{"franklin", 3, 777031}} {
		cfg := DefaultConfig()
		cfg.Algo, cfg.Nodes, cfg.Chaos = tc.algo, tc.n, ""
		cfg.Nemesis, cfg.NemesisInterval, cfg.NemesisRestart = "clock,kill,restart", 500*time.Millisecond, true
		cfg.Duration = 6 * time.Second
		cfg.Seed, cfg.SeedSet = tc.seed, true
		done := make(chan error, 1)
		var ok bool
		go func() {
			s, err := Simulate(cfg)
			if err == nil {
				ok = s.Verdict.OK
			}
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil || !ok {
				t.Errorf("leaderlab run --sim -a %s -n %d --seed %d --nemesis clock,kill,restart --nemesis-interval 500ms --nemesis-restart --duration 6s: ok %v, %v", tc.algo, tc.n, tc.seed, ok, err)
			}
		case <-time.After(2 * time.Minute):
			t.Fatalf("%s -n %d --seed %d under the clock nemesis did not end in 2 minutes", tc.algo, tc.n, tc.seed)
		}
	}
}
