package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/launcher"
)

// sameTwice finds a simulated run the same the second time, and tells a log that differs by one
// character apart.
func TestSameTwice(t *testing.T) {
	cfg := launcher.DefaultConfig()
	cfg.Sim, cfg.Seed, cfg.SeedSet = true, 9, true
	cfg.Out = filepath.Join(t.TempDir(), "run")
	cfg.Stdout, cfg.Progress = nil, nil
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.WriteDir(cfg.Out); err != nil {
		t.Fatal(err)
	}
	if why := sameTwice(cfg, cfg.Out); why != "" {
		t.Fatalf("the same seed: %s", why)
	}
	log := filepath.Join(cfg.Out, "nodes", "3.jsonl")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte(strings.Replace(string(b), `"lc":2,`, `"lc":3,`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := sameTwice(cfg, cfg.Out); !strings.Contains(why, "not deterministic") {
		t.Fatalf("a log changed by one character: %q", why)
	}
}
