package sim

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
)

func TestFaultsFromChaos(t *testing.T) {
	text := `at 1s kill leader; at 1.5s pause 2 for 200ms
at 2s partition 1-2|3   # node 4 and 5 form a third side
at 2s partition isolate leader
at 3s link 1->2 delay 20ms±5ms; at 3s link random->leader loss 10%
at 3.5s link 2->1 dup 5%; at 3.5s link 3->4 reorder; at 3.5s link 4->3 drop
at 4s heal; at 4.5s restart leader; at 4.5s partition majorities-ring`
	got, err := FaultsFromChaos(text, 5)
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	want := []Fault{
		{At: time.Second, Op: Kill, Node: TargetLeader},
		{At: 1500 * ms, Op: Pause, Node: 2, For: 200 * ms},
		{At: 2 * time.Second, Op: Partition, Groups: [][]int{{1, 2}, {3}, {4, 5}}},
		{At: 2 * time.Second, Op: Partition, Shape: chaos.ShapeIsolate, Node: TargetLeader},
		{At: 3 * time.Second, Op: Link, From: 1, To: 2, Rule: DelayRule(20*ms, 5*ms)},
		{At: 3 * time.Second, Op: Link, From: TargetRandom, To: TargetLeader, Rule: LossRule(10)},
		{At: 3500 * ms, Op: Link, From: 2, To: 1, Rule: DupRule(5)},
		{At: 3500 * ms, Op: Link, From: 3, To: 4, Rule: ReorderRule()},
		{At: 3500 * ms, Op: Link, From: 4, To: 3, Rule: DropRule()},
		{At: 4 * time.Second, Op: Heal},
		{At: 4500 * ms, Op: Restart, Node: TargetLeader},
		{At: 4500 * ms, Op: Partition, Shape: chaos.ShapeMajoritiesRing},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("faults:\n%+v\nwant:\n%+v", got, want)
	}
	// Each renders as the language writes it and reads back the same.
	for _, f := range got {
		back, err := FaultsFromChaos(f.String(), 5)
		if err != nil || len(back) != 1 || !reflect.DeepEqual(back[0], f) {
			t.Errorf("%q reads back as %+v (%v), want %+v", f.String(), back, err, f)
		}
	}
	if _, err := FaultsFromChaos("at 1s partition 1-2|2-3", 5); err == nil || !strings.Contains(err.Error(), "groups must be disjoint") {
		t.Errorf("overlapping groups: %v", err)
	}
	cfg := DefaultConfig("bully", 5)
	cfg.Faults = got
	if _, err := New(cfg); err != nil {
		t.Errorf("a parsed schedule is refused: %v", err)
	}
}

func TestNetworkFaultErrors(t *testing.T) {
	for _, c := range []struct {
		f    Fault
		want string
	}{
		{Fault{Op: Partition}, "either Groups"},
		{Fault{Op: Partition, Shape: "halves", Groups: [][]int{{1}}}, "either Groups"},
		{Fault{Op: Partition, Shape: "circle"}, `unknown partition "circle"`},
		{Fault{Op: Partition, Groups: [][]int{{1, 2, 3}}}, "leaves every node on one side"},
		{Fault{Op: Partition, Groups: [][]int{{1, 9}}}, "node 9 is out of range"},
		{Fault{Op: Partition, Shape: "halves", Node: 2}, "only a partition of shape isolate"},
		{Fault{Op: Partition, Shape: "isolate"}, "isolate node 0"},
		{Fault{Op: Link, From: 1, To: 1, Rule: DropRule()}, "joins a node to itself"},
		{Fault{Op: Link, From: 1, To: 2}, "rule kind"},
		{Fault{Op: Link, From: 1, To: 2, Rule: LossRule(150)}, "out of range"},
		{Fault{Op: Link, From: 1, To: 2, Rule: DelayRule(5*time.Millisecond, 10*time.Millisecond)}, "exceeds the delay"},
		{Fault{Op: Link, From: 1, To: 2, Rule: DelayRule(0, 0)}, "must be positive"},
		{Fault{Op: Link, From: 1, To: 2, Rule: LinkRule{Kind: "drop", Percent: 3}}, "only loss and dup"},
		{Fault{Op: Link, From: 0, To: 2, Rule: DropRule()}, "want IDs in 1..3"},
		{Fault{Op: Heal, Node: 1}, "heal takes nothing"},
		{Fault{Op: Kill, Node: 1, Shape: "halves"}, "belong to partition and link steps"},
		{Fault{Op: Heal, For: time.Second}, "only a pause"},
	} {
		cfg := Config{Algo: "bully", N: 3, Faults: []Fault{c.f}}
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.f, err, c.want)
		}
	}
}

// A simulated partition run written as a run directory reads back, and is judged, like the run in
// memory: groups, reach and acks survive JSON, and the checker sees the same split.
func TestPartitionRunDirectory(t *testing.T) {
	cfg := DefaultConfig("bully", 5)
	cfg.Seed = 4
	var err error
	cfg.Faults, err = FaultsFromChaos("at 1s partition halves; at 2s partition majorities-ring; at 2.5s link 1->2 loss 50%; at 3s heal", 5)
	if err != nil {
		t.Fatal(err)
	}
	run := mustNew(t, cfg).Run()
	dir := t.TempDir()
	if err := WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	back, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Chaos, run.Chaos) {
		t.Errorf("chaos.jsonl reads back as\n%s\nwant\n%s", recs(back.Chaos), recs(run.Chaos))
	}
	// Bully keeps two leaders under majorities-ring (2 and 5, each heard by a majority), which the
	// checker counts as one component: the in-memory verdict fails uniqueness, and so must the
	// directory's.
	a, b := logs.Check(run, logs.Options{}), logs.Check(back, logs.Options{})
	if !reflect.DeepEqual(a.Properties, b.Properties) || !reflect.DeepEqual(a.Metrics.SplitBrain, b.Metrics.SplitBrain) ||
		a.Metrics.PartitionedMS != b.Metrics.PartitionedMS || a.Metrics.PartitionedMS != 1000 || len(a.Metrics.SplitBrain) == 0 ||
		a.Properties[1].OK {
		t.Errorf("in memory: %+v split %+v partitioned %vms; read back: %+v split %+v partitioned %vms",
			a.Properties, a.Metrics.SplitBrain, a.Metrics.PartitionedMS, b.Properties, b.Metrics.SplitBrain, b.Metrics.PartitionedMS)
	}
}
