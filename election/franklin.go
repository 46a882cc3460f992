package election

// Franklin (1982), Aguirre Janampa et al.: a two-way ring, elected in rounds of local maxima:
//
//  1. In round r every active node sends its ID both ways. Passive nodes relay what they receive,
//     so each ID reaches the nearest active node on that side.
//  2. An active node that has the IDs of round r from both sides (Aguirre Janampa et al.'s
//     registers r1, r2) compares: larger than both, it is a local maximum and stays active for
//     round r+1; otherwise it becomes passive and relays from then on.
//  3. An active node that receives its own ID (from either side) is the only active node left: it
//     is the leader (Aguirre Janampa et al.'s transition t4).
//  4. The leader sends elected(i) once round the ring, towards its successor; every node follows it
//     and passes it on, and the leader stops it when it comes back.
//
// A neighbour may be a round ahead: the active node on the other side of a passive stretch can win
// round r and send its ID of round r+1 before this node has both IDs of round r (it has one, the
// other is still on its way). Messages of a later round are buffered until the node's round catches
// up with them — then they count — or until it turns passive — then it relays them, in the order
// they came. (Only an active node buffers: a passive one relays everything at once.) This needs no
// FIFO links: each message says its round, and a message is always consumed by the nearest node
// active in its round, so none is stale.
//
// Non-initiators (and every node but the opener of a later epoch) wake on their first message of
// the epoch. A message of round 0 with a smaller ID makes the node active in round 0, as though it
// had initiated: it sends its ID both ways, and the message that woke it is its round-0 ID from that
// side (every node between it and the sender relayed it, so is passive). A larger ID makes it passive
// at once: it cannot win. So the largest ID always takes part: round-0 IDs travel until an active
// node takes them, and every node between two active ones has relayed one. (A sleeper never sees a
// later round: no active node can finish round 0 before the round-0 IDs have passed every sleeper
// on both sides of it. Should one arrive, the sleeper turns passive.)
//
// Failures. The ID of a suspected node is dropped wherever it arrives: it must neither win nor wake
// anyone (the epoch its suspicion opened, ring.go, elects without it). And no node settles for a
// leader below a live ID it has seen in the epoch: elected(l) reaching a node above l, or an ID
// above its leader reaching a node that has decided, means that the election ran on a ring that
// did not close — two nodes routing round different suspects, say one that still trusts a dead
// node because a late heartbeat seemed to bring it back — and missed a node; the node opens a new
// epoch. Neither happens on a ring that closes, where the leader is the epoch's largest ID.
//
// Message kinds and the Message fields each uses (Round is the epoch, see ring.go):
//
//	id       Cand: the active node's ID; Phase: Franklin's round r; Dir: the direction of
//	         travel.
//	elected  Cand: the leader.
//
// Cost, with every initiator set: franklinBound below.

import "slices"

const (
	FranklinID      = "id"
	FranklinElected = "elected"
)

func init() {
	Register(Algorithm{
		Name:       "franklin",
		Limits:     RingLimits,
		Topologies: []string{"biring"},
		New:        newFranklin,
		Kinds:      []string{FranklinID},
		Announce:   []string{FranklinElected},
		Bound:      franklinBound,
		FIFO:       false,
		Doc:        "Franklin (1982): two-way ring, rounds of local maxima, at most half the active nodes survive a round; O(n log n) worst",
	})
}

// franklinBound is 2n⌊log₂ n⌋ + 3n, whoever initiates.
//
// Every round costs exactly 2n messages: each active node's two IDs travel to the nearest active
// node on either side, and the stretches between consecutive active nodes add up to n hops in each
// direction (with one active node left, both its IDs go all the way round: n each). The nodes active
// in round 0 are the initiators and the nodes woken by a smaller ID, a ≤ n of them, with only
// passive nodes between them. Of two neighbouring active nodes the smaller is no local maximum, so
// while two or more are active at most half of them survive a round: at most ⌊n/2^r⌋ are active
// in round r. The rounds with two or more active nodes are over by round ⌊log₂ n⌋ - 1, and one
// more brings the survivor's ID home: ⌊log₂ n⌋ + 1 rounds, 2n(⌊log₂ n⌋ + 1) messages, and n for
// elected. The copy of the survivor's ID that comes home after it won is in the last round's 2n.
// The bound is reached with every node initiating whenever the active nodes halve exactly each
// round: n = 4 with --ids 4,1,3,2 (8 + 8 + 8 + 4 = 28), n = 8 with 8,1,5,2,7,3,6,4 (72), and n = 2
// and 3 whatever the order (10 and 15).
func franklinBound(n, initiators int) (int, bool) {
	if n < 1 || initiators < 1 {
		return 0, true
	}
	return 2*n*log2Floor(n) + 3*n, true
}

// franklinState is where a node stands in the current epoch.
type franklinState int

const (
	frAsleep  franklinState = iota // no message of the epoch has reached it yet
	frActive                       // still in the race, in round f.round
	frPassive                      // a relay
)

type franklin struct {
	*ringCore
	state franklinState
	round int
	// got holds the IDs of this round from the predecessor's side (got[0], travelling towards the
	// successor) and from the successor's side (got[1]); 0 while on its way.
	got [2]int
	// later holds the messages of later rounds, in the order they came (see the file comment).
	later []Message
	// won: the node's own ID came home and it announced itself (the copy from the other side must
	// not announce it again).
	won bool
	// maxRound is ⌊log₂ N⌋ for the configured ring: no election of these nodes has a later round.
	// A message of a later one is malformed and dropped.
	maxRound int
}

func newFranklin(c Config) (Machine, error) {
	core, err := newRingCore("franklin", c, true)
	if err != nil {
		return nil, err
	}
	f := &franklin{ringCore: core, maxRound: log2Floor(len(c.Ring))}
	core.alg = f
	return f, nil
}

func (f *franklin) reset() {
	f.state, f.round, f.got, f.later, f.won = frAsleep, 0, [2]int{}, nil, false
}

// initiate: round 0.
func (f *franklin) initiate() {
	f.state = frActive
	f.sendID()
}

func (f *franklin) join() {}

// sendID sends this node's ID of the current round both ways.
func (f *franklin) sendID() {
	f.sendDir(+1, Message{Kind: FranklinID, Cand: f.self, Phase: f.round})
	f.sendDir(-1, Message{Kind: FranklinID, Cand: f.self, Phase: f.round})
}

func (f *franklin) handle(from int, m Message) {
	if f.suspected[m.Cand] {
		// The ID of a node this one believes dead: it must not win, nor wake anyone. If the node
		// is alive after all, the stall timer (or its trust) starts the election again.
		return
	}
	switch m.Kind {
	case FranklinID:
		switch {
		case (m.Dir != 1 && m.Dir != -1) || m.Phase < 0 || m.Phase > f.maxRound:
			// malformed
		case !f.participant && f.leader != 0 && m.Cand > f.leader:
			f.newEpoch() // the election missed m.Cand (see the file comment)
		default:
			f.id(m)
		}
	case FranklinElected:
		f.elected(m.Cand)
	}
}

// id: an ID of round m.Phase arrives, travelling in direction m.Dir.
func (f *franklin) id(m Message) {
	if f.state == frAsleep {
		if m.Cand < f.self && m.Phase == 0 {
			f.initiate() // woken by a smaller ID: this node may be the largest
		} else {
			f.state = frPassive
		}
	}
	switch {
	case f.state == frPassive:
		f.relay(m)
	case m.Cand == f.self:
		// our own ID came round: every other node is passive
		if !f.won {
			f.won = true
			f.decide(f.self)
			f.sendSucc(Message{Kind: FranklinElected, Cand: f.self})
		}
	case m.Phase > f.round:
		f.later = append(f.later, m) // a neighbour a round ahead
	case m.Phase == f.round:
		f.collect(m)
	}
	// An ID of an earlier round is dropped. On a ring that closes there is none: each ID of a round
	// is taken by the nearest node active in it, and this node has both IDs of the rounds it
	// finished.
}

// relay passes an ID on in its direction of travel. A passive node's own ID cannot be on the ring
// (it turned passive after both of its last ones were taken): one that comes round is a ring
// that does not close, and is dropped rather than relayed for ever.
func (f *franklin) relay(m Message) {
	if m.Cand == f.self {
		return
	}
	f.sendDir(m.Dir, Message{Kind: FranklinID, Cand: m.Cand, Phase: m.Phase})
}

// collect stores an ID of the current round (Aguirre Janampa et al.'s r1, r2) and compares once
// both are in: a local maximum stays active and sends its ID again for the next round; a node with
// a larger ID near it turns passive.
func (f *franklin) collect(m Message) {
	side := 0
	if m.Dir < 0 {
		side = 1
	}
	if f.got[side] != 0 {
		// A second ID from one side in one round: on a ring that closes only the nearest active
		// node sends one this way. Some node routed past an active one, which now waits for an ID
		// that went elsewhere, until its stall timer fires; elect again at once instead.
		f.newEpoch()
		return
	}
	f.got[side] = m.Cand
	if f.got[0] == 0 || f.got[1] == 0 {
		return
	}
	if f.self > f.got[0] && f.self > f.got[1] {
		f.round++
		f.got = [2]int{}
		f.sendID()
	} else {
		f.state = frPassive
	}
	f.drain()
}

// drain hands over the buffered IDs that the node's new round or state makes current: a passive
// node relays them all, in the order they came; an active one takes those of its new round.
func (f *franklin) drain() {
	for len(f.later) > 0 {
		if f.state == frPassive {
			early := f.later
			f.later = nil
			for _, m := range early {
				f.relay(m)
			}
			return
		}
		i := slices.IndexFunc(f.later, func(m Message) bool { return m.Phase == f.round })
		if i < 0 {
			return
		}
		m := f.later[i]
		f.later = slices.Delete(f.later, i, i+1)
		f.collect(m)
	}
}

// elected(l) arrives: l is the leader; pass it on unless it is ours coming home.
func (f *franklin) elected(l int) {
	switch {
	case l == f.self:
	case l < f.self:
		f.newEpoch() // the election missed this node (see the file comment)
	default:
		f.decide(l)
		f.sendSucc(Message{Kind: FranklinElected, Cand: l})
	}
}
