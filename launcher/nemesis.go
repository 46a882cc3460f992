package launcher

import (
	"fmt"
	"strings"

	"github.com/leaderlab/leaderlab/chaos"
)

// drawNemesis draws the run's fault schedule from its seed (--nemesis) and returns it as chaos
// text, headed by a comment that says how it was drawn. The text is what cluster.json keeps, so a
// replay runs the same steps without drawing again.
func drawNemesis(cfg Config) (string, error) {
	kinds, weights, err := chaos.ParseNemesis(cfg.Nemesis)
	if err != nil {
		return "", fmt.Errorf("Config.Nemesis: %w", err)
	}
	nm := chaos.Nemesis{
		Kinds:    kinds,
		Interval: cfg.NemesisInterval,
		Overlap:  cfg.NemesisOverlap,
		Restart:  cfg.NemesisRestart,
		Nodes:    cfg.Nodes,
		Until:    cfg.Duration - cfg.Settle,
		// A fault held for less than the failure detector's timeout may never be noticed.
		MinHold: 2 * cfg.Timeout,
		Weights: weights,
		Shapes:  splitShapes(cfg.NemesisShapes),
	}
	if cfg.NetBackend == BackendIPTables {
		nm.LinkKinds = IPTablesLinkKinds
	}
	s, err := nm.Draw(cfg.Seed)
	if err != nil {
		return "", err
	}
	flags := "--nemesis " + chaos.FormatNemesis(kinds, weights) + " --nemesis-interval " + cfg.NemesisInterval.String()
	if cfg.NemesisOverlap {
		flags += " --nemesis-overlap"
	}
	if cfg.NemesisRestart {
		flags += " --nemesis-restart"
	}
	if cfg.NemesisShapes != "" {
		flags += " --nemesis-shapes " + cfg.NemesisShapes
	}
	header := fmt.Sprintf("# drawn by %s with seed %d: every fault is over by %v (--duration %v less --settle %v)\n",
		flags, cfg.Seed, nm.Until, cfg.Duration, cfg.Settle)
	return header + s.String(), nil
}

// indent prefixes every line of s with four spaces, for progress output.
func indent(s string) string {
	if s == "" {
		return "    (no step)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// splitShapes reads --nemesis-shapes: a comma-separated list (the nemesis checks each name).
func splitShapes(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
