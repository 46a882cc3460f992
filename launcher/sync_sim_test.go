package launcher

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
)

var syncSweepRuns = flag.Int("sync-sweep-runs", 200, "simulated FloodMax runs per synchronizer of TestSimSyncSweep (a fifth with -short)")

// syncConfig is FloodMax over sync on a graph, in the simulator, without chaos.
func syncConfig(sync, topo string, n int, seed int64) Config {
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Topology, cfg.Chaos = "floodmax", n, topo, ""
	cfg.Options = map[string]string{election.OptSync: sync}
	cfg.Seed, cfg.SeedSet = seed, true
	cfg.Duration = 4 * time.Second
	cfg.Sim = true
	return cfg
}

// TestSimSyncSweep: the whole node (links, detector, event log) in the simulator, FloodMax over each
// synchronizer on random graphs (random:D, torus, tree; 5..24 nodes; IDs placed at random) with the
// simulator's seeded delays: the checker passes every run, pulse safety holds, the leader is the
// highest ID, and the control messages equal the synchronizer's formula pulse by pulse.
func TestSimSyncSweep(t *testing.T) {
	runs := *syncSweepRuns
	if testing.Short() {
		runs /= 5
	}
	for _, s := range election.Synchronizers {
		t.Run(s, func(t *testing.T) {
			for i := range runs {
				seed := int64(7000 + i)
				n := 5 + i%20
				topo := []string{"random:2.5", "random:3", "tree:2", "tree:3", "random:4"}[i%5]
				if i%7 == 3 { // a torus of 2 or 3 rows, as many nodes as fit
					rows := 2 + i%2
					n = n / rows * rows
					topo = fmt.Sprintf("torus:%dx%d", rows, n/rows)
				}
				cfg := syncConfig(s, topo, n, seed)
				cfg.IDs = "random"
				sm, err := Simulate(cfg)
				if err != nil {
					t.Fatalf("%s n=%d seed %d: %v", topo, n, seed, err)
				}
				v := sm.Verdict
				replay := fmt.Sprintf("leaderlab run --sim -a floodmax --sync %s -n %d --topology %s --ids random --chaos '' --duration 4s --seed %d", s, n, topo, seed)
				if !v.OK || v.Leader == nil || *v.Leader != n {
					t.Fatalf("%s: leader %v, ok %v: %s", replay, v.Leader, v.OK, failed(v))
				}
				if m := v.Metrics.Sync; m == nil || m.LateCount != 0 || m.Reached != m.Pulses || (m.Pulses > 1 && m.Ratio != 1) {
					t.Fatalf("%s: sync metrics %+v", replay, m)
				}
			}
		})
	}
}

// failed names a verdict's failed properties.
func failed(v *check.Verdict) string {
	var out []string
	for _, p := range v.Properties {
		if !p.OK {
			out = append(out, p.Name+": "+p.Detail)
		}
	}
	return strings.Join(out, "; ")
}

// TestSimABDLateMessageShown: ABD's δ below the network's delays breaks the pulses, and the checker
// shows the late messages instead of hiding them (the run fails).
func TestSimABDLateMessageShown(t *testing.T) {
	cfg := syncConfig("abd", "grid:3x3", 9, 3)
	cfg.Options[election.OptDelta] = "100us" // the simulator's links take about a millisecond
	sm, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m := sm.Verdict.Metrics.Sync
	if sm.Verdict.OK || m == nil || m.LateCount == 0 || len(m.Late) == 0 {
		t.Fatalf("ABD with δ = 100µs: ok %v, metrics %+v: want late messages and a failed run", sm.Verdict.OK, m)
	}
	var detail string
	for _, p := range sm.Verdict.Properties {
		if p.Name == check.PropPulses {
			detail = p.Detail
		}
	}
	if !strings.Contains(detail, "pulse safety broken") || !strings.Contains(detail, "in its pulse") {
		t.Errorf("the pulses property does not show the late message: %s", detail)
	}
	// The same run with the default δ passes.
	cfg = syncConfig("abd", "grid:3x3", 9, 3)
	if sm, err := Simulate(cfg); err != nil || !sm.Verdict.OK {
		t.Fatalf("ABD with the default δ: %v %s", err, failed(sm.Verdict))
	}
	// A pause longer than δ breaks it too: the paused node's floods reach its neighbours after they
	// moved on (and its own clock's pulses come late). α waits for the node instead, and passes.
	for _, sync := range []string{"abd", "alpha"} {
		cfg = syncConfig(sync, "grid:3x3", 9, 3)
		cfg.Options[election.OptRounds] = "30"
		cfg.Chaos = "at 1s pause 5 for 300ms"
		sm, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m := sm.Verdict.Metrics.Sync
		if sync == "abd" && (m == nil || m.LateCount == 0) {
			t.Errorf("ABD with a 300ms pause (δ 50ms): metrics %+v, want late messages", m)
		}
		if sync == "alpha" && (!sm.Verdict.OK || m == nil || m.LateCount != 0) {
			t.Errorf("alpha with a 300ms pause: %s; metrics %+v", failed(sm.Verdict), m)
		}
	}
}

// TestSimSyncRunTooShort: pulses still going at the end are not called a stall: the verdict says the
// run was too short for its rounds; a crash is still a stall.
func TestSimSyncRunTooShort(t *testing.T) {
	cfg := syncConfig("beta", "grid:3x3", 9, 4)
	cfg.Options[election.OptRounds] = "2000"
	cfg.Duration = 2 * time.Second
	sm, err := Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m := sm.Verdict.Metrics.Sync; m == nil || !strings.Contains(m.Stall, "while the pulses were still going") || strings.Contains(m.Stall, "never completed") {
		t.Errorf("a run cut short: stall %q", m.Stall)
	}
	cfg.Chaos = "at 1s kill 5"
	sm, err = Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m := sm.Verdict.Metrics.Sync; m == nil || !strings.Contains(m.Stall, "never completed: node 5 died") {
		t.Errorf("a crash: stall %q", m.Stall)
	}
}
