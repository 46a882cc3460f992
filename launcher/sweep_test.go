package launcher

import (
	"flag"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// The simulated nemesis sweeps: the node's own code (detector, links, netem, lifecycle) under every
// fault the nemesis draws, over every algorithm. They replace the simulator's old sweeps, which ran
// a twin of the node.

var sweepRuns = flag.Int("sweep-runs", 60, "simulated nemesis runs per algorithm of TestSimNemesisSweep (a fifth with -short)")

// sweepAlgorithms is every algorithm a user can run with the heartbeat detector: Bully, the rings,
// RSDP. Not the synchronous ones: a synchronizer is not fault-tolerant (a kill stalls it for ever,
// and the checker says so), so the nemesis would only show that again and again.
func sweepAlgorithms() []string {
	var out []string
	for _, name := range election.Names() {
		a, _ := election.Lookup(name)
		if !strings.HasPrefix(name, "sim-test") && !strings.HasPrefix(name, "chatter") && !a.Synchronous {
			out = append(out, name)
		}
	}
	return out
}

// sweepCommand is the command line that makes cfg's run again, for a user to replay a failing seed.
func sweepCommand(cfg Config) string {
	return fmt.Sprintf("leaderlab run --sim -a %s -n %d --nemesis %s --nemesis-interval %v --nemesis-restart --duration %v --seed %d",
		cfg.Algo, cfg.Nodes, cfg.Nemesis, cfg.NemesisInterval, cfg.Duration, cfg.Seed)
}

// TestSimNemesisSweep: for every algorithm, seeded runs of 5..9 nodes under the full nemesis (kill,
// pause, restart, stop, partitions of every shape, link drop, loss, delay, duplication and
// reordering), each judged by the checker: no violation outside the algorithm's declared limits. A
// failing seed prints the command that replays it (and `run --replay` of that run directory makes it
// again on real processes).
func TestSimNemesisSweep(t *testing.T) {
	runs := *sweepRuns
	if testing.Short() {
		runs /= 5
	}
	for _, algo := range sweepAlgorithms() {
		t.Run(algo, func(t *testing.T) {
			limits := 0
			bit := map[string]int{}
			for i := range runs {
				cfg := nemesisConfig(algo, int64(7000+i))
				cfg.Nodes = 5 + i%5
				cfg.Nemesis = strings.Join(chaos.NemesisKinds, ",")
				s, err := Simulate(cfg)
				if err != nil {
					t.Fatalf("%s: %v", sweepCommand(cfg), err)
				}
				for _, r := range s.Run.Chaos {
					if r.Error == "" {
						bit[r.Op]++
					}
				}
				switch v := s.Verdict; {
				case v.OK:
				case v.OnlyLimits():
					limits++
				default:
					var why []string
					for _, p := range v.Properties {
						if !p.OK && p.Limit == "" {
							why = append(why, p.Name+": "+p.Detail)
						}
					}
					t.Errorf("seed %d, %d nodes: %s\n\treplay: %s", cfg.Seed, cfg.Nodes, strings.Join(why, "; "), sweepCommand(cfg))
				}
			}
			// The sweep must have done what it says: every kind of fault carried out.
			for _, op := range []string{chaos.OpKill, chaos.OpStop, chaos.OpRestart, chaos.OpPause, chaos.OpPartition, chaos.OpLink, chaos.OpHeal} {
				if bit[op] == 0 && runs >= 12 {
					t.Errorf("no %s was carried out in %d runs: %v", op, runs, bit)
				}
			}
			t.Logf("%d runs, %d failed only under a declared limit; faults carried out: %v", runs, limits, bit)
		})
	}
}

// TestSimFailover: the acceptance scenarios of `leaderlab run` in the simulator, 5 Bully nodes: a
// killed or stopped leader is replaced by 4 within milliseconds (the link reset tells its peers), a
// leader paused for a second takes over again when it resumes, and a killed leader restarted leads
// again.
func TestSimFailover(t *testing.T) {
	for _, c := range []struct {
		chaos  string
		leader int
		within time.Duration // the failover's bound, where one is promised
	}{
		{"at 1s kill leader", 4, 20 * time.Millisecond},
		{"at 1s pause leader for 1s", 5, 0},
		{"at 1s kill leader; at 2s restart 5", 5, 0},
		// the orderly stop lingers 20ms for its last frames to leave before its sockets close
		{"at 1s stop leader", 4, 40 * time.Millisecond},
	} {
		cfg := DefaultConfig()
		cfg.Chaos, cfg.Seed, cfg.SeedSet = c.chaos, 3, true
		s, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		v := s.Verdict
		if !v.OK || v.Leader == nil || *v.Leader != c.leader {
			var b strings.Builder
			v.Print(&b)
			t.Errorf("%q: want a pass with leader %d:\n%s", c.chaos, c.leader, b.String())
			continue
		}
		if c.within > 0 {
			f := v.Metrics.Failovers
			if len(f) != 1 || f[0].MS == nil || time.Duration(*f[0].MS*float64(time.Millisecond)) > c.within {
				t.Errorf("%q: failovers %+v, want one within %v", c.chaos, f, c.within)
			}
		}
	}
}

// TestSimRSDPLossyLinks: every link of an RSDP cluster gets loss, duplication or reordering (drawn
// from the seed) from the start; the leader is killed at 1.5s; the link faults are healed at 3s.
// Every mode must then converge on the highest live ID (the checker's agreement after the settle
// window), and termination and integrity must hold. Uniqueness is RSDP's declared limit under loss
// (a status reply lost makes a session count its sender out); the test logs how often it broke. The
// faults must have bitten: some messages dropped for loss.
func TestSimRSDPLossyLinks(t *testing.T) {
	seeds := 12
	if testing.Short() {
		seeds = 3
	}
	const resync = 500 * time.Millisecond
	overlaps, lost := map[string]int{}, 0
	for _, mode := range election.RSDPModes {
		for seed := int64(1); seed <= int64(seeds); seed++ {
			rng := rand.New(rand.NewSource(seed))
			n := 4 + rng.Intn(5)
			var steps []string
			for a := 1; a <= n; a++ {
				for b := 1; b <= n; b++ {
					if a == b {
						continue
					}
					rule := "reorder"
					switch rng.Intn(3) {
					case 0:
						rule = fmt.Sprintf("loss %d%%", 5+rng.Intn(20))
					case 1:
						rule = fmt.Sprintf("dup %d%%", 10+rng.Intn(40))
					}
					steps = append(steps, fmt.Sprintf("at 0s link %d->%d %s", a, b, rule))
				}
			}
			steps = append(steps, "at 1.5s kill leader", "at 3s heal")
			cfg := DefaultConfig()
			cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = "rsdp", n, seed, true
			opts, err := election.RSDPOptions(mode, election.DefaultRSDPShareWindow, resync)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Options = opts
			cfg.Chaos = strings.Join(steps, "\n")
			cfg.Duration = 3*time.Second + 2*resync + cfg.Settle
			s, err := Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range s.Verdict.Properties {
				switch {
				case p.Name == check.PropUniqueness:
					if !p.OK {
						overlaps[mode]++
					}
				case !p.OK:
					t.Errorf("%s seed %d n=%d: %s: %s", mode, seed, n, p.Name, p.Detail)
				}
			}
			for _, nl := range s.Run.Nodes {
				for _, e := range nl.Events {
					if e.Ev == logs.EvDrop && strings.HasPrefix(e.Reason, "loss") {
						lost++
					}
				}
			}
		}
	}
	t.Logf("%d runs per mode; runs with two leaders beyond the grace while links lost messages: %v; %d messages lost", seeds, overlaps, lost)
	if lost == 0 {
		t.Error("the link faults did not bite: no message was lost")
	}
}
