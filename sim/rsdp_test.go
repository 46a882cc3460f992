package sim

import (
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// RSDP in memory (issue 6): a clean session costs what the paper's model says, and every mode
// converges on the highest live ID when SHARE (and every other) message is lost, duplicated and
// reordered, once the faults stop, within the resync bound.

func rsdpOptions(mode string, resync time.Duration) map[string]string {
	o, err := election.RSDPOptions(mode, election.DefaultRSDPShareWindow, resync)
	if err != nil {
		panic(err)
	}
	return o
}

// TestRSDPCleanSession: with no resync, a cluster's first session is every node's hello, status
// replies and share: exactly 3N(N−1) messages (eq. 16), and everybody follows N.
func TestRSDPCleanSession(t *testing.T) {
	for _, mode := range election.RSDPModes {
		for n := 1; n <= 9; n++ {
			cfg := DefaultConfig("rsdp", n)
			cfg.Seed = int64(n)
			cfg.Duration = time.Second
			cfg.Options = rsdpOptions(mode, 0)
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			s.Run()
			got := s.Sent(election.RSDPHello) + s.Sent(election.RSDPStatus) + s.Sent(election.RSDPShare)
			if want := election.RSDPSessionMessages(n); got != want {
				t.Errorf("%s n=%d: %d session messages, want 3N(N-1) = %d", mode, n, got, want)
			}
			if l, ok := s.Converged(); !ok || l != n {
				t.Errorf("%s n=%d: converged %v on %d, want %d", mode, n, ok, l, n)
			}
		}
	}
}
