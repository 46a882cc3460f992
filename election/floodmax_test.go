package election

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/topology"
)

func TestFloodMaxRegistered(t *testing.T) {
	a, err := Lookup("floodmax")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Topologies, []string{"mesh", "biring", "graph"}) || !slices.Equal(a.Kinds, []string{FloodMaxFlood}) ||
		len(a.Announce) != 0 || !a.FIFO || !a.Synchronous || a.Bound != nil || a.Doc == "" {
		t.Errorf("floodmax registered as %+v", a)
	}
	if a.Accepts("grid:4x4") != nil || a.Accepts("ring") == nil {
		t.Errorf("floodmax accepts grid:4x4: %v, ring: %v", a.Accepts("grid:4x4"), a.Accepts("ring"))
	}
	ids := make([]int, 16)
	for i := range ids {
		ids[i] = i + 1
	}
	pos, _ := topology.Generate("grid:4x4", 16, 1)
	edges := topology.OnIDs(pos, ids)
	if b, ok := a.EdgeBound(ids, edges, nil); !ok || b != 6*48 {
		t.Errorf("EdgeBound on grid:4x4: %d %v, want diameter 6 × 2|E| 48 = 288", b, ok)
	}
	if b, ok := a.EdgeBound(ids, edges, map[string]string{OptRounds: "10"}); !ok || b != 480 {
		t.Errorf("EdgeBound with 10 rounds: %d %v, want 480", b, ok)
	}
	if _, ok := a.EdgeBound(ids, edges, map[string]string{OptRounds: "0"}); ok {
		t.Error("EdgeBound with rounds=0: ok")
	}
}

// TestFloodMaxLimits: α, β and γ stall (agreement) under the faults that lose messages, and never
// recover; ABD also gives up uniqueness, and under delays too.
func TestFloodMaxLimits(t *testing.T) {
	has := func(ls []Limit, prop, fault string) bool {
		for _, l := range ls {
			if l.Property == prop && slices.Contains(l.Faults, fault) && l.Why != "" && l.Recovery(Timing{}) == math.MaxInt64 {
				return true
			}
		}
		return false
	}
	a, _ := Lookup("floodmax")
	for _, sync := range []string{"", "alpha", "beta", "gamma"} {
		ls := a.Limits(map[string]string{OptSync: sync})
		for _, f := range []string{"partition", "link drop", "link loss"} {
			if !has(ls, "agreement", f) {
				t.Errorf("%s: agreement under %s not declared: %+v", sync, f, ls)
			}
		}
		if has(ls, "uniqueness", "partition") || has(ls, "agreement", "link delay") {
			t.Errorf("%s gives up more than agreement under lost messages: %+v", sync, ls)
		}
		if !strings.Contains(ls[0].Why, "crash") || !strings.Contains(ls[0].Why, "for ever") {
			t.Errorf("%s: the limit does not say a crash stalls for ever: %s", sync, ls[0].Why)
		}
	}
	ls := a.Limits(map[string]string{OptSync: "abd"})
	for _, f := range []string{"partition", "link drop", "link loss", "link delay", "async timers"} {
		if !has(ls, "agreement", f) || !has(ls, "uniqueness", f) {
			t.Errorf("abd: %s not declared for agreement and uniqueness: %+v", f, ls)
		}
	}
}

// TestFloodMaxBadOptions: each bad option is refused, naming the option and what it accepts.
func TestFloodMaxBadOptions(t *testing.T) {
	a, _ := Lookup("floodmax")
	ids := []int{1, 2, 3, 4}
	edges := [][2]int{{1, 2}, {2, 3}, {3, 4}}
	for _, c := range []struct {
		opts map[string]string
		want []string
	}{
		{map[string]string{OptSync: "zeta"}, []string{`option sync "zeta"`, "abd, alpha, beta, gamma"}},
		{map[string]string{OptRounds: "0"}, []string{`option rounds "0"`, "at least 1"}},
		{map[string]string{OptRounds: "many"}, []string{`option rounds "many"`, "whole number"}},
		{map[string]string{OptSync: "abd", OptDelta: "-1s"}, []string{`option delta "-1s"`, "positive Go duration"}},
		{map[string]string{OptSync: "abd", OptDelta: "soon"}, []string{`option delta "soon"`, "50ms"}},
		{map[string]string{OptSync: "gamma", OptClusters: "x"}, []string{`option clusters "x"`, "at least 1"}},
		{map[string]string{OptSync: "gamma", OptClusters: "0"}, []string{`option clusters "0"`, "at least 1"}},
	} {
		_, err := a.New(Config{Self: 1, IDs: ids, Topology: "@edges", Edges: edges, Options: c.opts})
		// the same refusal, before any machine is made, from the check the launcher and the
		// explorer call
		verr := a.ValidOptions(c.opts, len(ids))
		for _, err := range []error{err, verr} {
			if err == nil {
				t.Errorf("%v: accepted", c.opts)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: %q does not say %q", c.opts, err, w)
				}
			}
		}
	}
	// what only the check sees: a setting of another synchronizer or algorithm, more clusters
	// than nodes
	for _, c := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{OptSync: "alpha", OptDelta: "10ms"}, "option delta is synchronizer abd's delay bound; option sync is alpha"},
		{map[string]string{OptSync: "beta", OptClusters: "2"}, "option clusters is synchronizer gamma's; option sync is beta"},
		{map[string]string{OptSync: "gamma", OptClusters: "5"}, "option clusters 5: want 1..4"},
		{map[string]string{OptRSDPMode: "latest"}, "option rsdp-mode applies to rsdp only (the algorithm is floodmax)"},
	} {
		if err := a.ValidOptions(c.opts, len(ids)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.opts, err, c.want)
		}
	}
	b, _ := Lookup("bully")
	if err := b.ValidOptions(map[string]string{OptSync: "alpha", "vclock": "on"}, 4); err == nil || !strings.Contains(err.Error(), "option sync applies to floodmax only (the algorithm is bully)") {
		t.Errorf("bully with sync: %v", err)
	}
	if err := b.ValidOptions(map[string]string{"vclock": "on"}, 4); err != nil {
		t.Errorf("a key no algorithm reads is not the algorithm's business: %v", err)
	}
	for _, sync := range Synchronizers {
		if _, err := a.New(Config{Self: 1, IDs: ids, Topology: "@edges", Edges: edges, Options: map[string]string{OptSync: sync}}); err != nil {
			t.Errorf("sync=%s: %v", sync, err)
		}
	}
}

// TestFloodMaxPulses: FloodMax alone, pulse by pulse, on the path 1-2-3 with 2 rounds: it floods in
// pulses 1 and 2 and decides in pulse 3.
func TestFloodMaxPulses(t *testing.T) {
	f := newFloodMax(1, []int{2}, 2)
	if f.Pulses() != 3 {
		t.Fatalf("pulses %d, want 3", f.Pulses())
	}
	out := f.Pulse(1, nil)
	if len(out) != 1 || out[0].To != 2 || out[0].Msg.Cand != 1 || out[0].Msg.Kind != FloodMaxFlood {
		t.Errorf("pulse 1: %+v", out)
	}
	out = f.Pulse(2, []SyncIn{{From: 2, Msg: Message{Kind: FloodMaxFlood, Cand: 2}}})
	if len(out) != 1 || out[0].Msg.Cand != 2 || f.Leader() != 0 {
		t.Errorf("pulse 2: %+v, leader %d", out, f.Leader())
	}
	out = f.Pulse(3, []SyncIn{{From: 2, Msg: Message{Kind: FloodMaxFlood, Cand: 3}}})
	if len(out) != 0 || f.Leader() != 3 {
		t.Errorf("pulse 3: %+v, leader %d; want no message and leader 3", out, f.Leader())
	}
}

// TestSynchronizerOfOneNode: a lone node runs its one pulse at InStart and leads.
func TestSynchronizerOfOneNode(t *testing.T) {
	for _, sync := range Synchronizers {
		m, err := NewSynchronizer(sync, Config{Self: 7, IDs: []int{7}, Topology: "mesh", Initiator: true}, newFloodMax(7, nil, 0))
		if err != nil {
			t.Fatal(err)
		}
		var kinds []EffectKind
		for _, e := range m.Step(Input{Kind: InStart}) {
			kinds = append(kinds, e.Kind)
		}
		want := []EffectKind{EffHeartbeat, EffElect, EffPulse, EffLeader}
		if !slices.Equal(kinds, want) || m.Leader() != 7 || m.Participant() {
			t.Errorf("%s: effects %v leader %d participant %v; want %v, 7, false", sync, kinds, m.Leader(), m.Participant(), want)
		}
	}
}
