package launcher

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

func TestReplayConfig(t *testing.T) {
	dir := t.TempDir()
	c := &rundir.Cluster{
		ClusterID: "abc", Algo: "bully", Topology: "mesh", Placement: "descending", Ring: []int{3, 1, 2},
		InitiatorsSpec: "one", Initiators: []int{2},
		Nodes:     []rundir.Node{{ID: 1, Addr: "127.0.0.1:4001"}, {ID: 2, Addr: "127.0.0.1:4002"}, {ID: 3, Addr: "127.0.0.1:4003"}},
		Heartbeat: rundir.Duration(40 * time.Millisecond), Timeout: rundir.Duration(300 * time.Millisecond),
		ElectionTimeout: rundir.Duration(300 * time.Millisecond), CoordinatorTimeout: rundir.Duration(900 * time.Millisecond),
		Settle: rundir.Duration(2 * time.Second), Duration: rundir.Duration(7 * time.Second),
		Grace: rundir.Duration(300 * time.Millisecond), TerminationBound: rundir.Duration(6 * time.Second),
		Seed: 7, Chaos: "# drawn by --nemesis kill\nat 1s kill leader", Options: map[string]string{"x": "y"},
	}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	base := DefaultConfig()
	base.Out = "elsewhere"
	base.Nemesis = "kill" // a replay never draws again
	cfg, notes, err := ReplayConfig(dir, base)
	if err != nil {
		t.Fatal(err)
	}
	// The ring and initiators were not made by this seed's placement: they are pinned as lists.
	if cfg.IDs != "3,1,2" || cfg.Initiators != "2" || len(notes) != 2 {
		t.Errorf("ids %q initiators %q notes %q; want the lists 3,1,2 and 2 with two notes", cfg.IDs, cfg.Initiators, notes)
	}
	want := base
	want.Algo, want.Nodes, want.Topology, want.IDs, want.Initiators = "bully", 3, "mesh", "3,1,2", "2"
	want.Seed, want.SeedSet, want.Chaos, want.Nemesis = 7, true, c.Chaos, ""
	want.Heartbeat, want.Timeout, want.ElectionTimeout, want.CoordinatorTimeout = 40*time.Millisecond, 300*time.Millisecond, 300*time.Millisecond, 900*time.Millisecond
	want.Settle, want.Duration, want.Grace, want.TerminationBound = 2*time.Second, 7*time.Second, 300*time.Millisecond, 6*time.Second
	want.Options, want.NetBackend, want.Host = map[string]string{"x": "y"}, BackendTransport, "127.0.0.1"
	want.Stdout, want.Progress = nil, nil
	cfg.Stdout, cfg.Progress = nil, nil
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("ReplayConfig\n got %+v\nwant %+v", cfg, want)
	}

	// Nodes with their own bind addresses were run by the iptables backend.
	c.Nodes[0].Bind, c.Placement, c.Ring = "127.0.1.1:4001", "ascending", []int{1, 2, 3}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	cfg, _, err = ReplayConfig(dir, base)
	if err != nil || cfg.NetBackend != BackendIPTables || cfg.IDs != "ascending" {
		t.Errorf("with bind addresses: backend %q ids %q err %v; want iptables, ascending", cfg.NetBackend, cfg.IDs, err)
	}
}

func TestDiffOutcomes(t *testing.T) {
	five, four := 5, 4
	base := outcome{
		ok: true, leader: &five, failovers: 1,
		props: []check.Property{{Name: "agreement", OK: true}, {Name: "uniqueness", OK: true}},
		ops:   []string{"partition 1,2,3,4,5 sides [[5] [1 2 3 4]]", "heal 1,2,3,4,5", "kill 5"},
	}
	if d := diffOutcomes(base, base); len(d) != 0 {
		t.Errorf("a run differs from itself: %v", d)
	}
	other := base
	other.ok, other.leader, other.failovers = false, &four, 2
	other.props = []check.Property{{Name: "agreement", OK: true}, {Name: "uniqueness", OK: false}}
	other.ops = []string{"partition 1,2,3,4,5 sides [[5] [1 2 3 4]]", "heal 1,2,3,4,5", "kill 4", "restart 4"}
	got := diffOutcomes(base, other)
	want := [][3]string{
		{"verdict", "FAIL", "PASS"},
		{"leader", "4", "5"},
		{"uniqueness", "FAIL", "PASS"},
		{"failovers", "2", "1"},
		{"chaos op 3", "kill 4", "kill 5"},
		{"chaos op 4", "restart 4", "none"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff\n got %q\nwant %q", got, want)
	}
}

func TestOpString(t *testing.T) {
	for _, tc := range []struct {
		rec  logs.ChaosRecord
		want string
	}{
		{logs.ChaosRecord{Op: "kill", Targets: []int{5}, TS: 1, At: 2}, "kill 5"},
		{logs.ChaosRecord{Op: "partition", Targets: []int{1, 2, 3}, Groups: [][]int{{1}, {2, 3}}, Acks: map[string]int64{"1": 9}}, "partition 1,2,3 sides [[1] [2 3]]"},
		{logs.ChaosRecord{Op: "partition", Targets: []int{1, 2, 3}, Reach: map[int][]int{1: {2}, 2: {1, 3}, 3: {2}}}, "partition 1,2,3 reach 1<2 2<1,3 3<2"},
		{logs.ChaosRecord{Op: "link", Targets: []int{2}, From: 1, To: 2, Rule: "loss 10%"}, "link 2 link 1->2 loss 10%"},
		{logs.ChaosRecord{Op: "kill", Targets: []int{}, Error: "no leader agreed on"}, "kill (not applied)"},
	} {
		if got := opString(tc.rec); got != tc.want {
			t.Errorf("opString(%+v) = %q, want %q", tc.rec, got, tc.want)
		}
	}
}

// The launcher's errors name Config's fields (run writes them as its flags: TestFlagsForFields).
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.NetBackend = "ebpf" }, `Config.NetBackend "ebpf": want one of transport, iptables`},
		{func(c *Config) { c.Nemesis, c.Chaos = "kill", "at 1s kill 1" }, "cannot be combined with Config.Chaos"},
		{func(c *Config) { c.Nemesis, c.NemesisInterval = "kill", -time.Second }, "Config.NemesisInterval -1s"},
		{func(c *Config) { c.NemesisRestart = true }, "they need Config.Nemesis"},
		{func(c *Config) { c.Nemesis = "kill,explode" }, `unknown fault kind "explode"`},
		{func(c *Config) { c.Nemesis, c.Duration = "kill", 1200*time.Millisecond }, "less than the shortest fault (400ms)"},
	} {
		cfg := DefaultConfig()
		tc.edit(&cfg)
		if _, err := resolve(cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("resolve: error %v, want %q", err, tc.want)
		}
	}
	// A nemesis schedule is drawn before the run and is the cluster's chaos text.
	cfg := DefaultConfig()
	cfg.Nemesis, cfg.Seed, cfg.SeedSet, cfg.NemesisInterval = "kill,pause,partition", 7, true, 500*time.Millisecond
	cfg.Duration = 6 * time.Second
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.cluster.Chaos, "# drawn by --nemesis kill,pause,partition --nemesis-interval 500ms with seed 7") || len(p.sched.Steps) == 0 {
		t.Errorf("cluster chaos %q, %d steps", p.cluster.Chaos, len(p.sched.Steps))
	}
	if !strings.Contains(p.cluster.Chaos, "at 338ms partition isolate leader\n") {
		t.Errorf("seed 7 drew another schedule than chaos.TestNemesisSeven's:\n%s", p.cluster.Chaos)
	}
}
