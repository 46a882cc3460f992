package logs

import (
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/node/election"
)

// algoPartial is a fake algorithm that does not promise uniqueness under a partial partition (as
// Bully declares: it hears of a higher node only from that node).
const algoPartial = "logstest-partial"

func init() {
	election.Register(election.Algorithm{Name: algoPartial, Topologies: []string{"mesh"},
		Kinds: []string{"election", "ok"}, Announce: []string{"coordinator"},
		Bound: func(n, _ int) (int, bool) { return n * n, true },
		Limits: func(map[string]string) []election.Limit {
			return []election.Limit{{Property: PropUniqueness, Faults: []string{PartialPartition}, Why: "test: nobody relays"}}
		}})
}

// uniquenessOf returns the verdict's uniqueness property.
func uniquenessOf(t *testing.T, v *Verdict) Property {
	t.Helper()
	for _, p := range v.Properties {
		if p.Name == PropUniqueness {
			return p
		}
	}
	t.Fatal("no uniqueness property")
	return Property{}
}

// A majorities-ring is one component in which 2 and 5 cannot hear each other: 2 crowning itself
// beside 5 is an overlap in one network, and a partial partition, which the algorithm declares. The
// same overlap under a clean partition (2 and 5 on one side) is a violation: a partial partition is
// not any partition. And one that outlasts the partial partition's heal by more than the grace is a
// violation too (seed 5135's Bully limit, bench chaos --sim --nemesis kill,pause,restart,partition).
func TestCheckPartialPartitionLimit(t *testing.T) {
	ring := ChaosRecord{Op: OpPartition, Step: "at 300ms partition majorities-ring",
		Reach: map[int][]int{1: {2, 5}, 2: {1, 3}, 3: {2, 4}, 4: {3, 5}, 5: {1, 4}}}
	halves := ChaosRecord{Op: OpPartition, Step: "at 300ms partition 1,2,5|3,4", Groups: [][]int{{1, 2, 5}, {3, 4}}}
	for _, c := range []struct {
		name      string
		part      ChaosRecord
		followsAt float64 // when 2 follows 5 again
		limit     bool
	}{
		{"majorities-ring", ring, 810, true},
		{"clean partition", halves, 810, false},
		{"majorities-ring, overlap outlasts the heal", ring, 1100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStory(algoPartial, 5)
			s.bully(2, []int{1, 2, 3, 4, 5})
			s.netRecord(300, c.part)
			s.leader(2, 500, 2)
			s.heal(800)
			s.leader(2, c.followsAt, 5)
			s.stop(1500)
			p := uniquenessOf(t, Check(s.run, Options{}))
			if p.OK {
				t.Fatalf("uniqueness passed: %s", p.Detail)
			}
			if got := p.Limit != ""; got != c.limit {
				t.Errorf("judged the algorithm's limit: %v, want %v: %s (limit %q)", got, c.limit, p.Detail, p.Limit)
			}
			if c.limit && !strings.Contains(p.Limit, "test: nobody relays") {
				t.Errorf("limit %q does not give the algorithm's reason", p.Limit)
			}
		})
	}
}
