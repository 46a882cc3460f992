package election

import (
	"reflect"
	"testing"
)

// The leader-election reducer's methods, straight from Toliupa et al.'s definitions (section 3.1).

func st(leader int, members ...int) LeaderState { return LeaderState{Members: members, Leader: leader} }

func rep(from int, s LeaderState) Report[LeaderState] {
	return Report[LeaderState]{From: from, State: s}
}

func newLER(t *testing.T, self int, mode string, quorum int) *LeaderReducer {
	t.Helper()
	r, err := NewLeaderReducer(self, mode, quorum)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLERAggregateState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before LeaderState // the reducer's state before
		status []int       // the senders of the STATUS buffer, in arrival order
		want   LeaderState // returned
		after  LeaderState // the reducer's state after
	}{
		{"empty state is initialized", st(0), []int{3, 1, 2}, st(3, 1, 2, 3), st(3, 1, 2, 3)},
		{"senders sorted, duplicates once", st(0), []int{5, 2, 5, 4}, st(5, 2, 4, 5), st(5, 2, 4, 5)},
		{"a state that exists is kept", st(4, 1, 4), []int{1, 2, 4, 7}, st(7, 1, 2, 4, 7), st(4, 1, 4)},
		{"no replies: nothing", st(0), nil, st(0), st(0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLER(t, 1, RSDPLatest, 1)
			r.members, r.leader = tc.before.Members, tc.before.Leader
			var buf []Report[LeaderState]
			for _, f := range tc.status {
				buf = append(buf, rep(f, LeaderState{}))
			}
			if got := r.AggregateState(buf); !sameState(got, tc.want) {
				t.Errorf("AggregateState = %v, want %v", got, tc.want)
			}
			if got := r.State(); !sameState(got, tc.after) {
				t.Errorf("state after = %v, want %v", got, tc.after)
			}
		})
	}
}

func sameState(a, b LeaderState) bool {
	return a.Leader == b.Leader && len(a.Members) == len(b.Members) && (len(a.Members) == 0 || reflect.DeepEqual(a.Members, b.Members))
}

func TestLERNormalizeState(t *testing.T) {
	r := newLER(t, 3, RSDPLatest, 1)
	for _, tc := range []struct {
		s    LeaderState
		want bool
	}{{st(3, 1, 3), true}, {st(4, 3, 4), false}, {st(0), false}} {
		if got := r.NormalizeState(tc.s); got.IsLeader != tc.want || got.Leader != tc.s.Leader {
			t.Errorf("NormalizeState(%v) = %+v, want isLeader %v", tc.s, got, tc.want)
		}
	}
}

func TestLERAggregateShareState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   string
		quorum int
		share  []Report[LeaderState]
		want   LeaderState
		ok     bool
	}{
		{"latest: the last message wins", RSDPLatest, 1,
			[]Report[LeaderState]{rep(5, st(5, 1, 2, 5)), rep(4, st(4, 1, 2, 4))}, st(4, 1, 2, 4), true},
		{"latest: empty buffer", RSDPLatest, 1, nil, st(0), false},
		{"popular: the most frequent state", RSDPPopular, 2,
			[]Report[LeaderState]{rep(1, st(5, 1, 2, 5)), rep(2, st(4, 1, 2, 4)), rep(5, st(5, 1, 2, 5))}, st(5, 1, 2, 5), true},
		{"popular: same leader, other members is another state", RSDPPopular, 2,
			[]Report[LeaderState]{rep(1, st(5, 1, 5)), rep(2, st(5, 1, 2, 5)), rep(5, st(5, 1, 2, 5))}, st(5, 1, 2, 5), true},
		{"popular: no quorum", RSDPPopular, 3,
			[]Report[LeaderState]{rep(1, st(5, 1, 2, 5)), rep(2, st(4, 1, 2, 4)), rep(5, st(5, 1, 2, 5))}, st(0), false},
		{"popular: a tie goes to the higher leader", RSDPPopular, 1,
			[]Report[LeaderState]{rep(5, st(5, 1, 5)), rep(4, st(4, 1, 4))}, st(5, 1, 5), true},
		// ranked: lists 5>2>1 (weights 4,2,1), 5>2>1, 4>2>1: 5 scores 8, 4 scores 4, 2 scores 6
		{"ranked: exponential weights", RSDPRanked, 1,
			[]Report[LeaderState]{rep(1, st(5, 1, 2, 5)), rep(2, st(5, 1, 2, 5)), rep(4, st(4, 1, 2, 4))}, st(5, 1, 2, 4, 5), true},
		// a full view weighs as much as two partial ones: 6>5>4>3 gives 6 eight points and 5 four; 5>4 and
		// 5>3 give 5 two points each: 8 to 8, and the tie goes to the highest ID
		{"ranked: partial views are downgraded", RSDPRanked, 1,
			[]Report[LeaderState]{rep(3, st(6, 3, 4, 5, 6)), rep(4, st(5, 4, 5)), rep(5, st(5, 3, 5))}, st(6, 3, 4, 5, 6), true},
		// 4>1 and 3>1: 4 and 3 both score 2: the tie goes to the highest ID
		{"ranked: tie to the highest ID", RSDPRanked, 1,
			[]Report[LeaderState]{rep(1, st(3, 1, 3)), rep(2, st(4, 1, 4))}, st(4, 1, 3, 4), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLER(t, 1, tc.mode, tc.quorum)
			got, ok := r.AggregateShareState(tc.share)
			if ok != tc.ok || (ok && !sameState(got, tc.want)) {
				t.Errorf("AggregateShareState = %v, %v; want %v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestRankedScores(t *testing.T) {
	got := RankedScores([]Report[LeaderState]{rep(1, st(5, 1, 2, 5)), rep(2, st(4, 1, 2, 4))})
	// 5>2>1: 4,2,1; 4>2>1: 4,2,1
	want := map[int]uint64{5: 4, 4: 4, 2: 4, 1: 2}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RankedScores = %v, want %v", got, want)
	}
}

func TestLERSanitizeShareState(t *testing.T) {
	r := newLER(t, 2, RSDPLatest, 1)
	for _, tc := range []struct {
		name string
		s    LeaderState
		ok   bool
	}{
		{"valid", st(3, 1, 2, 3), true},
		{"members without self", st(3, 1, 3), false},
		{"leader outside the members", st(4, 1, 2, 3), false},
		{"empty members", st(3), false},
		{"no leader", st(0, 1, 2), false},
	} {
		got, ok := r.SanitizeShareState(tc.s)
		if ok != tc.ok || (ok && !sameState(got, tc.s)) || (!ok && !got.Empty()) {
			t.Errorf("%s: SanitizeShareState(%v) = %v, %v; want ok %v (∅ when not)", tc.name, tc.s, got, ok, tc.ok)
		}
	}
}

func TestLERShouldReloadAndUpdate(t *testing.T) {
	r := newLER(t, 1, RSDPLatest, 1)
	r.UpdateState(st(3, 1, 2, 3))
	for _, tc := range []struct {
		s    LeaderState
		want bool
	}{
		{st(3, 1, 2, 3), false},
		{st(3, 1, 3), true},    // members changed
		{st(2, 1, 2, 3), true}, // leader changed
		{st(0), false},         // nothing to reload to
	} {
		if got := r.ShouldReload(tc.s); got != tc.want {
			t.Errorf("ShouldReload(%v) with state %v = %v, want %v", tc.s, r.State(), got, tc.want)
		}
	}
	r.UpdateState(st(9, 1, 2)) // leader not a member: ignored
	r.UpdateState(st(0))       // empty: ignored
	if got := r.State(); !sameState(got, st(3, 1, 2, 3)) {
		t.Errorf("after invalid updates the state is %v, want it unchanged", got)
	}
}

func TestLERAggregateCloseState(t *testing.T) {
	r := newLER(t, 1, RSDPLatest, 1)
	r.UpdateState(st(5, 1, 2, 3, 4, 5))
	if got := r.AggregateCloseState([]int{5, 3}); !sameState(got, st(4, 1, 2, 4)) {
		t.Errorf("close 5,3 = %v, want members [1 2 4] leader 4", got)
	}
	if got := r.AggregateCloseState([]int{9}); !sameState(got, st(4, 1, 2, 4)) {
		t.Errorf("close of a non-member = %v, want unchanged", got)
	}
	if got := r.AggregateCloseState([]int{1, 2, 4}); !sameState(got, st(0)) {
		t.Errorf("closing everybody = %v, want ∅ and ⊥", got)
	}
}

func TestLERModes(t *testing.T) {
	if _, err := NewLeaderReducer(1, "loudest", 1); err == nil || err.Error() != `rsdp mode "loudest" (accepted: latest, popular, ranked)` {
		t.Errorf("bad mode: err = %v", err)
	}
	if q := QuorumOf(5); q != 3 {
		t.Errorf("QuorumOf(5) = %d, want 3", q)
	}
	if q := QuorumOf(4); q != 2 {
		t.Errorf("QuorumOf(4) = %d, want 2 (eq. 9: ceil(n/2))", q)
	}
}
