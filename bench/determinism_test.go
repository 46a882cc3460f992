package bench

import (
	"testing"

	"github.com/leaderlab/leaderlab/launcher"
)

// The same seed gives the same digest; one event changed gives another (what --check-determinism
// compares).
func TestRunDigest(t *testing.T) {
	cfg := launcher.DefaultConfig()
	cfg.Nemesis, cfg.Chaos, cfg.NemesisRestart = "kill,pause,clock", "", true
	cfg.Seed, cfg.SeedSet = 42, true
	a, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	da, db := RunDigest(a.Run), RunDigest(b.Run)
	if da != db {
		t.Fatalf("seed 42 twice: digests %s and %s", da, db)
	}
	b.Run.Nodes[3].Events[2].TS++
	if RunDigest(b.Run) == da {
		t.Fatal("an event moved by 1ns left the digest as it was")
	}
}
