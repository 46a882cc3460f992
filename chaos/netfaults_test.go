package chaos

import (
	"math/rand"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// drops renders a rule set map as "x<-y,z" per node (the peers x drops), for compact tables.
func drops(rules map[int][]wire.LinkRule, ids []int) string {
	var parts []string
	for _, x := range ids {
		var from []string
		for _, r := range rules[x] {
			if r.Drop {
				from = append(from, strconv.Itoa(r.From))
			}
		}
		parts = append(parts, strconv.Itoa(x)+"<-"+strings.Join(from, ","))
	}
	return strings.Join(parts, " ")
}

func shape(t *testing.T, name string, ids []int, target int) Partition {
	t.Helper()
	p, err := Shape(name, ids, target, rand.New(rand.NewSource(1)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPartitionRules(t *testing.T) {
	ids := []int{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name   string
		p      Partition
		want   string
		cutOff []int
	}{
		{"groups", Partition{Groups: [][]int{{1, 2}, {3, 4, 5}}}, "1<-3,4,5 2<-3,4,5 3<-1,2 4<-1,2 5<-1,2", ids},
		{"halves", shape(t, ShapeHalves, ids, 0), "1<-3,4,5 2<-3,4,5 3<-1,2 4<-1,2 5<-1,2", ids},
		{"isolate 5", shape(t, ShapeIsolate, ids, 5), "1<-5 2<-5 3<-5 4<-5 5<-1,2,3,4", ids},
		// bridge over 1..5: [1 2 3] and [3 4 5]; 3 hears everyone and gets no rule.
		{"bridge", shape(t, ShapeBridge, ids, 0), "1<-4,5 2<-4,5 3<- 4<-1,2 5<-1,2", []int{1, 2, 4, 5}},
		// majorities-ring over 1..5: each node hears its two ring neighbours' side (back 1, ahead 1).
		{"majorities-ring", shape(t, ShapeMajoritiesRing, ids, 0), "1<-3,4 2<-4,5 3<-1,5 4<-1,2 5<-2,3", ids},
		// A node the partition does not name holds no rule: it hears everyone, the others refuse it.
		{"unnamed node", Partition{Reach: map[int][]int{1: {2}, 2: {1}}}, "1<-3,4,5 2<-3,4,5 3<- 4<- 5<-", []int{1, 2}},
	} {
		var f netFaults
		cutOff := f.partition(tc.p, ids, "at 1s partition")
		got := f.rules(ids)
		if s := drops(got, ids); s != tc.want {
			t.Errorf("%s: rules %s, want %s", tc.name, s, tc.want)
		}
		if !reflect.DeepEqual(cutOff, tc.cutOff) {
			t.Errorf("%s: cut off %v, want %v", tc.name, cutOff, tc.cutOff)
		}
		for x, set := range got {
			if set == nil {
				t.Errorf("%s: node %d's set is nil, want empty (a node told it holds no rule)", tc.name, x)
			}
			for _, r := range set {
				if r.Why != "at 1s partition" {
					t.Errorf("%s: rule %+v has why %q", tc.name, r, r.Why)
				}
			}
		}
	}
}

// TestPartitionReplaces: a second partition replaces the first (link rules stay), heal clears all.
func TestPartitionReplaces(t *testing.T) {
	ids := []int{1, 2, 3, 4}
	var f netFaults
	f.partition(Partition{Groups: [][]int{{1, 2}, {3, 4}}}, ids, "p1")
	f.link(1, 2, LinkRule{Kind: LinkDrop}, "l1")
	f.partition(Partition{Groups: [][]int{{1, 3}, {2, 4}}}, ids, "p2")
	if got, want := drops(f.rules(ids), ids), "1<-2,4 2<-1,3 3<-2,4 4<-1,3"; got != want {
		t.Errorf("after two partitions and a link: %s, want %s", got, want)
	}
	f.partition(Partition{Groups: [][]int{{1, 2, 3}, {4}}}, ids, "p3")
	if got, want := drops(f.rules(ids), ids), "1<-4 2<-1,4 3<-4 4<-1,2,3"; got != want {
		t.Errorf("the link drop 1->2 did not outlive the partitions: %s, want %s", got, want)
	}
	if !f.heal() {
		t.Errorf("heal found nothing to remove")
	}
	if got, want := drops(f.rules(ids), ids), "1<- 2<- 3<- 4<-"; got != want {
		t.Errorf("after heal: %s, want %s", got, want)
	}
	if f.heal() {
		t.Errorf("a second heal found something to remove")
	}
}

func TestLinkRules(t *testing.T) {
	ids := []int{1, 2, 3}
	var f netFaults
	f.link(1, 2, LinkRule{Kind: LinkDelay, Delay: 20 * time.Millisecond, Jitter: 5 * time.Millisecond}, "d")
	f.link(1, 2, LinkRule{Kind: LinkLoss, Percent: 10}, "l1")
	f.link(1, 2, LinkRule{Kind: LinkLoss, Percent: 30}, "l2") // replaces 10%
	f.link(1, 2, LinkRule{Kind: LinkDup, Percent: 5}, "u")
	f.link(3, 2, LinkRule{Kind: LinkReorder}, "r")
	f.link(2, 1, LinkRule{Kind: LinkDrop}, "x")
	got := f.rules(ids)
	want := map[int][]wire.LinkRule{
		1: {{From: 2, Drop: true, Why: "x"}},
		2: {
			{From: 1, Delay: int64(20 * time.Millisecond), Jitter: int64(5 * time.Millisecond), Loss: 0.3, Dup: 0.05, Why: "d; l1; l2; u"},
			{From: 3, Reorder: true, Why: "r"},
		},
		3: {},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules\n got %+v\nwant %+v", got, want)
	}
	// A link drop wins over the other rules of the same link.
	f.link(1, 2, LinkRule{Kind: LinkDrop}, "y")
	if r := f.rules(ids)[2][0]; !r.Drop || r.From != 1 || r.Why != "y" {
		t.Errorf("after a drop on 1->2, node 2's rule for 1 is %+v", r)
	}
}

func TestRuleText(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want string
	}{
		{"link 1->2 drop", "drop"},
		{"link 1->2 delay 20ms±5ms", "delay 20ms±5ms"},
		{"link leader->3 loss 10%", "loss 10%"},
		{"link 1->2 dup 0.5%", "dup 0.5%"},
		{"link 2->1 reorder", "reorder"},
	} {
		s, err := Parse("at 1s "+tc.rule, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := RuleText(*s.Steps[0].Link); got != tc.want {
			t.Errorf("RuleText(%s) = %q, want %q", tc.rule, got, tc.want)
		}
	}
}

// TestStepRand: each step's source depends only on the seed and the step's position.
func TestStepRand(t *testing.T) {
	draw := func(seed int64, i int) int64 { return StepRand(seed, i).Int63() }
	if draw(7, 3) != draw(7, 3) {
		t.Errorf("step 3 of seed 7 draws differently twice")
	}
	seen := map[int64]bool{}
	for i := range 50 {
		seen[draw(7, i)] = true
	}
	seen[draw(8, 0)] = true
	if len(seen) != 51 {
		t.Errorf("steps 0..49 of seed 7 and step 0 of seed 8 share sources: %d distinct draws of 51", len(seen))
	}
}

// TestFollowed: "leader" is the belief most nodes hold; ⊥ does not count; a tie goes to the higher ID.
func TestFollowed(t *testing.T) {
	for _, c := range []struct {
		beliefs []int
		want    int
	}{
		{nil, 0}, {[]int{0, 0}, 0}, {[]int{5, 5, 4}, 5}, {[]int{4, 5}, 5}, {[]int{5, 4}, 5},
		{[]int{3, 3, 0, 0, 0, 5}, 3}, {[]int{2, 4, 4, 2}, 4},
	} {
		if got := Followed(c.beliefs); got != c.want {
			t.Errorf("Followed(%v) = %d, want %d", c.beliefs, got, c.want)
		}
	}
}
