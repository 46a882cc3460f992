package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestRSDPBenchFlags(t *testing.T) {
	ns, err := parseRSDPNs("9, 3,5,3")
	if err != nil || !slices.Equal(ns, []int{3, 5, 9}) {
		t.Errorf("parseRSDPNs = %v, %v; want [3 5 9]", ns, err)
	}
	if ns, err := parseRSDPNs("3-5,9"); err != nil || !slices.Equal(ns, []int{3, 4, 5, 9}) {
		t.Errorf("parseRSDPNs(3-5,9) = %v, %v; want [3 4 5 9]: ranges as in every bench's --n", ns, err)
	}
	for _, bad := range []string{"0", "1", "65", "x", "5-3", "60-70", ""} {
		if _, err := parseRSDPNs(bad); err == nil || !strings.HasPrefix(err.Error(), "--n") || !strings.Contains(err.Error(), "2..64") {
			t.Errorf("parseRSDPNs(%q) = %v, want an error naming --n and 2..64", bad, err)
		}
	}
}

// TestBenchPlanFlags: every plan field a bench command maps names a flag of that command, and the
// command writes a plan's error in its flags.
func TestBenchPlanFlags(t *testing.T) {
	maps := map[string]map[string]string{"rsdp": rsdpFlagOf, "complexity": complexityFlagOf, "scale": scaleFlagOf,
		"failover": failoverFlagOf, "chaos": chaosFlagOf}
	for _, c := range benchCommand().Subcommands {
		flagOf, ok := maps[c.Name]
		if !ok {
			continue
		}
		delete(maps, c.Name)
		has := map[string]bool{}
		for _, f := range c.Flags {
			for _, n := range f.Names() {
				has["--"+n] = true
			}
		}
		for field, flag := range flagOf {
			if !has[flag] {
				t.Errorf("bench %s: field %s maps to %s, which the command does not have", c.Name, field, flag)
			}
		}
	}
	for name := range maps {
		t.Errorf("no command bench %s", name)
	}
	got := planFlags("ComplexityPlan.Ns 9: want 1..4 (the larger of ComplexityPlan.RealMax 0 and ComplexityPlan.MemMax 4); ComplexityPlan.Other stays", complexityFlagOf)
	if want := "--n 9: want 1..4 (the larger of --real-max 0 and --mem-max 4); ComplexityPlan.Other stays"; got != want {
		t.Errorf("planFlags: %q, want %q", got, want)
	}
	// A bench's configuration is named as a plan is; the launcher's Config is left to asFlags.
	got = planFlags("ChaosConfig.Interval 0s: want ...; trial 1: Config.Nodes 0: want 1..10", chaosFlagOf)
	if want := "--nemesis-interval 0s: want ...; trial 1: Config.Nodes 0: want 1..10"; got != want {
		t.Errorf("planFlags: %q, want %q", got, want)
	}
}
