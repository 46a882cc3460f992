package election

// Chang-Roberts (1979), as taught by Staudek (2020), Aguirre Janampa et al. and Vinther (2023) (the
// LCR "ring" model): a one-way ring; each initiator sends its ID to its successor; a node forwards
// an ID larger than its own, replaces a smaller one by its own if it has not sent its own yet, and
// swallows it if it has; the node whose own ID comes back is the largest, the leader, and an
// elected message goes once round the ring.
//
// Message kinds and the Message fields each uses (Round is the epoch, see ring.go):
//
//	election  Cand: the ID travelling (Vinther's "probe").
//	elected   Cand: the leader (Vinther's "selected"); each node forwards it once, the leader
//	          stops it when it comes back.
//
// Cost (Staudek): with every node initiating and IDs decreasing along the direction of travel
// (--ids worst), ID i travels i hops before it is swallowed or comes home: n(n+1)/2 election
// messages, plus n elected = 20 for n = 5, 44 for n = 8. With one initiator, at most 3n-1: up to
// n-1 hops to reach the largest ID, n for the largest ID to go round, n for elected.

const (
	CRElection = "election"
	CRElected  = "elected"
)

func init() {
	Register(Algorithm{
		Name:       "chang-roberts",
		Limits:     RingLimits,
		Topologies: []string{"ring"},
		New:        newChangRoberts,
		Kinds:      []string{CRElection},
		Announce:   []string{CRElected},
		Bound:      changRobertsBound,
		FIFO:       false,
		Doc:        "Chang-Roberts (1979): one-way ring, larger IDs forwarded, smaller swallowed; O(n²) worst, O(n log n) average",
	})
}

// changRobertsBound: n(n+1)/2 + n with more than one initiator (reached exactly at --ids worst, all
// initiators), 3n-1 with one.
func changRobertsBound(n, initiators int) (int, bool) {
	if n < 1 || initiators < 1 {
		return 0, true
	}
	if initiators == 1 {
		return 3*n - 1, true
	}
	return n*(n+1)/2 + n, true
}

type changRoberts struct {
	*ringCore
	// sent is Chang-Roberts's participant flag: this node has sent its own ID (or forwarded a
	// larger one, after which its own cannot win) in this epoch.
	sent bool
}

func newChangRoberts(c Config) (Machine, error) {
	core, err := newRingCore("chang-roberts", c, false)
	if err != nil {
		return nil, err
	}
	cr := &changRoberts{ringCore: core}
	core.alg = cr
	return cr, nil
}

func (cr *changRoberts) reset() { cr.sent = false }

// initiate: send election(i) to the successor.
func (cr *changRoberts) initiate() {
	cr.sent = true
	cr.sendSucc(Message{Kind: CRElection, Cand: cr.self})
}

func (cr *changRoberts) join() {}

func (cr *changRoberts) handle(from int, m Message) {
	switch m.Kind {
	case CRElection:
		cr.election(m.Cand)
	case CRElected:
		cr.elected(m.Cand)
	}
}

// election(j) arrives.
func (cr *changRoberts) election(j int) {
	switch {
	case cr.suspected[j]:
		// The ID of a node that died: it can never come home, and forwarding it would send it
		// round the ring for ever. The epoch its death opened elects without it.
	case j > cr.self:
		// forward the larger ID; ours cannot win any more
		cr.sent = true
		cr.sendSucc(Message{Kind: CRElection, Cand: j})
	case j < cr.self && !cr.sent:
		// replace the smaller ID by our own
		cr.sent = true
		cr.sendSucc(Message{Kind: CRElection, Cand: cr.self})
	case j < cr.self:
		// swallow it: our own, larger, is already on its way
	default:
		// our own ID came home: every other ID is smaller
		cr.decide(cr.self)
		cr.sendSucc(Message{Kind: CRElected, Cand: cr.self})
	}
}

// elected(l) arrives: l is the leader; pass it on unless it is ours coming home.
func (cr *changRoberts) elected(l int) {
	if l == cr.self {
		return
	}
	cr.decide(l)
	cr.sendSucc(Message{Kind: CRElected, Cand: l})
}
