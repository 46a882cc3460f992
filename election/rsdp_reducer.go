package election

// The state reducers of the Replica State Discovery Protocol (Toliupa et al. 2024, section 3) and
// its leader election reducer (LER, section 3.1–3.2), as pure Go.
//
// RSDP keeps every piece of replicated state in reducers; the protocol engine (rsdp.go) only moves
// messages and calls them under its inter-phase mutex. The paper's interface, method by method:
//
//	getCurrentState      optional: the state a STATUS reply carries (CurrentStater below)
//	aggregateState       STATUS buffer  -> state (DEBATES)
//	normalizeState       state          -> what a client sees (LER: isLeader)
//	aggregateShareState  SHARE buffer   -> state (SHARE; three ways for LER: latest, popular, ranked)
//	sanitizeShareState   state          -> state or nothing (reject what cannot be right)
//	shouldReload         state          -> does the client need to hear of it
//	updateState          state          -> the reducer's own state
//	aggregateCloseState  CLOSE buffer   -> state (CLOSE)

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// Reducer is RSDP's reducer interface over a state type S. Every method is deterministic and free
// of side effects outside the reducer's own state, which is what lets RSDP skip a consensus round on
// CLOSE: every replica that applies the same inputs reaches the same state.
type Reducer[S any] interface {
	// AggregateState folds the STATUS replies of one DEBATES phase (the replica's own included).
	AggregateState(status []Report[S]) S
	// NormalizeState turns a state into what the client is told.
	NormalizeState(s S) Normalized
	// AggregateShareState folds the SHARE messages buffered during one share window, in arrival
	// order. ok is false when the buffer decides nothing (a popular vote without a quorum).
	AggregateShareState(share []Report[S]) (s S, ok bool)
	// SanitizeShareState checks an aggregated state; ok is false when it must be thrown away.
	SanitizeShareState(s S) (S, bool)
	// ShouldReload tells whether s differs from the reducer's state in a way the client must hear of.
	ShouldReload(s S) bool
	// UpdateState makes s the reducer's state (if it is a state at all).
	UpdateState(s S)
	// AggregateCloseState removes the replicas that closed (sent CLOSE, or were declared dead by
	// the failure detector) and returns the resulting state.
	AggregateCloseState(closed []int) S
}

// CurrentStater is the optional getCurrentState: a reducer whose STATUS replies carry a state of
// their own implements it. The leader-election reducer does not (its state derives from who
// answered), as in the paper.
type CurrentStater[S any] interface {
	GetCurrentState() S
}

// Report is one buffered STATUS or SHARE message: who sent it and the state it carries.
type Report[S any] struct {
	From  int
	State S
}

// Normalized is what a reducer tells its client.
type Normalized struct {
	IsLeader bool
	Leader   int
}

// LeaderState is the LER's state: the replica members in ascending order and the leader (0 = ⊥).
type LeaderState struct {
	Members []int
	Leader  int
}

// Empty tells whether s is the empty state ∅ (what sanitize returns for a bad state).
func (s LeaderState) Empty() bool { return len(s.Members) == 0 && s.Leader == 0 }

func (s LeaderState) String() string {
	if s.Leader == 0 {
		return fmt.Sprintf("members %v leader ⊥", s.Members)
	}
	return fmt.Sprintf("members %v leader %d", s.Members, s.Leader)
}

// Ranking is the ranked list a SHARE stands for in the ranked vote: the most desired leader first.
// The LER desires the highest ID, so the list is the leader followed by the other members,
// highest first.
func (s LeaderState) Ranking() []int {
	out := make([]int, 0, len(s.Members))
	if s.Leader != 0 {
		out = append(out, s.Leader)
	}
	for i := len(s.Members) - 1; i >= 0; i-- {
		if s.Members[i] != s.Leader {
			out = append(out, s.Members[i])
		}
	}
	return out
}

// RSDP share-aggregation modes (section 3.1).
const (
	RSDPLatest  = "latest"  // latest source of truth: the last SHARE wins
	RSDPPopular = "popular" // popular vote: the most frequent (members, leader) wins, with a quorum
	RSDPRanked  = "ranked"  // ranked vote, exponential weights 2^(n_i−k), highest-ID tie-break
)

// RSDPModes lists the accepted --rsdp-mode values.
var RSDPModes = []string{RSDPLatest, RSDPPopular, RSDPRanked}

// LeaderReducer is the leader-election reducer (LER) of section 3.
type LeaderReducer struct {
	// Self is a_self, this replica's ID.
	Self int
	// Mode is how SHARE buffers are aggregated: RSDPLatest, RSDPPopular or RSDPRanked.
	Mode string
	// Quorum is the popular vote's q: the votes the most frequent state needs. The paper's
	// q = ⌈n/2⌉ for n replicas (eq. 9); QuorumOf computes it.
	Quorum int

	members []int // G_c, ascending
	leader  int   // L, 0 = ⊥
}

// NewLeaderReducer checks mode and builds a reducer with an empty state (G_c = ∅, L = ⊥).
func NewLeaderReducer(self int, mode string, quorum int) (*LeaderReducer, error) {
	if !slices.Contains(RSDPModes, mode) {
		return nil, fmt.Errorf("rsdp mode %q (accepted: %s)", mode, strings.Join(RSDPModes, ", "))
	}
	if quorum < 1 {
		quorum = 1
	}
	return &LeaderReducer{Self: self, Mode: mode, Quorum: quorum}, nil
}

// QuorumOf is eq. 9: a simple majority q = ⌈n/2⌉ of n replicas.
func QuorumOf(n int) int { return (n + 1) / 2 }

// State returns the reducer's current state (a copy).
func (r *LeaderReducer) State() LeaderState {
	return LeaderState{Members: slices.Clone(r.members), Leader: r.leader}
}

// AggregateState: G' = the senders of the STATUS replies, sorted; L' = max G'. The first call of a
// replica with no state (G_c = ∅ or L = ⊥) also makes it the replica's state.
func (r *LeaderReducer) AggregateState(status []Report[LeaderState]) LeaderState {
	g := make([]int, 0, len(status))
	for _, m := range status {
		g = append(g, m.From)
	}
	slices.Sort(g)
	g = slices.Compact(g)
	s := LeaderState{Members: g}
	if len(g) > 0 {
		s.Leader = g[len(g)-1]
	}
	if len(r.members) == 0 || r.leader == 0 {
		r.members, r.leader = slices.Clone(s.Members), s.Leader
	}
	return s
}

// NormalizeState: isLeader = (L' = a_self).
func (r *LeaderReducer) NormalizeState(s LeaderState) Normalized {
	return Normalized{IsLeader: s.Leader != 0 && s.Leader == r.Self, Leader: s.Leader}
}

// AggregateShareState aggregates a SHARE buffer in the reducer's mode.
func (r *LeaderReducer) AggregateShareState(share []Report[LeaderState]) (LeaderState, bool) {
	if len(share) == 0 {
		return LeaderState{}, false
	}
	switch r.Mode {
	case RSDPPopular:
		return popularVote(share, r.Quorum)
	case RSDPRanked:
		return rankedVote(share), true
	default:
		last := share[len(share)-1].State
		return LeaderState{Members: slices.Clone(last.Members), Leader: last.Leader}, true
	}
}

// stateKey is h(S_i) of the popular vote: the state tuple (G_i, L_i) hashed.
func stateKey(s LeaderState) uint64 {
	h := fnv.New64a()
	var b [8]byte
	put := func(v int) {
		for i := range b {
			b[i] = byte(uint64(v) >> (8 * i))
		}
		h.Write(b[:])
	}
	put(len(s.Members))
	for _, m := range s.Members {
		put(m)
	}
	put(s.Leader)
	return h.Sum64()
}

// popularVote: the most frequent (members, leader) tuple among the SHAREs wins if it has at least
// quorum votes. Ties between equally frequent states go to the one with the higher leader, then the
// one seen last (a deterministic rule; the paper leaves ties open).
func popularVote(share []Report[LeaderState], quorum int) (LeaderState, bool) {
	type tally struct {
		s    LeaderState
		n    int
		last int
	}
	byKey := map[uint64]*tally{}
	var best *tally
	for i, m := range share {
		k := stateKey(m.State)
		t := byKey[k]
		if t == nil {
			t = &tally{s: m.State}
			byKey[k] = t
		}
		t.n++
		t.last = i
	}
	for _, t := range byKey {
		if best == nil || t.n > best.n || (t.n == best.n && (t.s.Leader > best.s.Leader ||
			(t.s.Leader == best.s.Leader && t.last > best.last))) {
			best = t
		}
	}
	if best.n < quorum {
		return LeaderState{}, false
	}
	return LeaderState{Members: slices.Clone(best.s.Members), Leader: best.s.Leader}, true
}

// RankedScores are the ranked vote's totals: for every SHARE i with ranked list G_i of n_i
// candidates, the candidate at position k (1-based) earns 2^(n_i−k).
func RankedScores(share []Report[LeaderState]) map[int]uint64 {
	scores := map[int]uint64{}
	for _, m := range share {
		rank := m.State.Ranking()
		n := len(rank)
		for k, a := range rank {
			w := uint64(1)
			if e := n - (k + 1); e < 64 {
				w <<= e
			} else {
				w = 1 << 63 // lists longer than 64 saturate; ties then fall to the tie-break
			}
			scores[a] += w
		}
	}
	return scores
}

// rankedVote: the candidate with the highest total score leads, ties to the highest ID; the
// members are the union of the SHAREs' members (section 2.4's M_agg = ∪ M_j).
func rankedVote(share []Report[LeaderState]) LeaderState {
	scores := RankedScores(share)
	var members []int
	for _, m := range share {
		members = append(members, m.State.Members...)
	}
	slices.Sort(members)
	members = slices.Compact(members)
	leader := 0
	var best uint64
	for a, c := range scores {
		if leader == 0 || c > best || (c == best && a > leader) {
			leader, best = a, c
		}
	}
	return LeaderState{Members: members, Leader: leader}
}

// SanitizeShareState: valid members are a non-empty list containing a_self; a valid leader is one
// of them. Anything else is ∅ (ok false).
func (r *LeaderReducer) SanitizeShareState(s LeaderState) (LeaderState, bool) {
	if len(s.Members) == 0 || !slices.Contains(s.Members, r.Self) || s.Leader == 0 || !slices.Contains(s.Members, s.Leader) {
		return LeaderState{}, false
	}
	return s, true
}

// ShouldReload: the members or the leader changed.
func (r *LeaderReducer) ShouldReload(s LeaderState) bool {
	if len(s.Members) == 0 || s.Leader == 0 {
		return false
	}
	return !slices.Equal(s.Members, r.members) || s.Leader != r.leader
}

// UpdateState: if G' ≠ ∅ and L' ∈ G', then G_c ← G' and L ← L'.
func (r *LeaderReducer) UpdateState(s LeaderState) {
	if len(s.Members) == 0 || !slices.Contains(s.Members, s.Leader) {
		return
	}
	r.members = slices.Clone(s.Members)
	slices.SortFunc(r.members, cmp.Compare[int])
	r.leader = s.Leader
}

// AggregateCloseState: G_c ← G_c \ A_cl; L ← max G_c (⊥ when G_c is empty).
func (r *LeaderReducer) AggregateCloseState(closed []int) LeaderState {
	r.members = slices.DeleteFunc(r.members, func(m int) bool { return slices.Contains(closed, m) })
	r.leader = 0
	if len(r.members) > 0 {
		r.leader = r.members[len(r.members)-1]
	}
	return r.State()
}

var _ Reducer[LeaderState] = (*LeaderReducer)(nil)
