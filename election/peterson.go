package election

// Peterson (1982), Aguirre Janampa et al. (figure 10, after Ansari's NuSMV model): O(n log n)
// messages on a one-way ring, by rounds of local maxima as in Franklin's algorithm, but with every
// node hearing from one side only. A node is red (active, a candidate) or black (passive, a relay).
// The steps:
//
//  1. Every node starts red, with its own ID as its alias, and begins a round by sending its alias
//     to its successor.
//  2. A red node's first message of a round is the alias of N(i), its red predecessor. If it is its
//     own alias, the node is the only red node left, and its alias is the largest ID: it announces
//     that ID (go to 5). Otherwise it passes the alias on, as the second message of its successor.
//  3. Its second message is the alias of NN(i), N(i)'s red predecessor. If alias(N(i)) is a local
//     maximum, greater than both its own alias and alias(NN(i)), it stays red, takes alias(N(i)) as
//     its alias and begins the next round (1). Otherwise it turns black.
//  4. A black node forwards everything it gets.
//  5. The announcement goes once round the ring: every node's leader is the ID it carries (the
//     node with that ID, which is usually not the one announcing: aliases travel), and the node that
//     sent it stops it when it comes home.
//
// Non-initiators. Every node must be red in the first round, or its ID never competes: a node woken
// by an alias (whatever its round) begins round 1 with its own ID, exactly as if it had started
// late, and then handles the message that woke it. So the election is the textbook's with every
// node red at the start, whatever the initiators. A node cannot sleep through an election: the last
// red node's alias passes it before the announcement does; only a node spliced into the ring after
// a restart can meet the announcement first (see announced).
//
// Rounds without FIFO links. On FIFO links a red node gets its messages in order (the first and
// second of its round, then those of the next), because everything that reaches it left a node
// upstream in the order that node handled it. Without FIFO, a second message can overtake a first
// and a later round an earlier one; a red node keeps a message that is not the one it waits for
// (its round's first, then its round's second) and takes it up when it becomes due, or forwards it
// when the node turns black. A message of a later round is never someone else's: the nodes between
// its sender and this node are black, so this node is the next red one, or will be black by then.
//
// Failures. The ring core opens a new epoch when a participant suspects anyone (ring.go); every
// node but the announcer is a participant until the announcement reaches it, so a death during the
// election ends it. A dead node's alias can still be carried by a live red node: a node never
// announces, nor follows, a leader it suspects; it waits, and the stall timer (or the suspicion, if
// it comes now) opens a new epoch. A node never follows a leader lower than itself either: that
// election did not count it (it was spliced into the ring after its restart, when the election had
// gone past its place), so it opens a new epoch, which does.
//
// Message kinds and the Message fields each uses (Round is the epoch, see ring.go):
//
//	alias1  Cand: the sender's alias. Phase: the sender's Peterson round, from 1. A red node's
//	        first message of a round.
//	alias2  Cand: alias(N(i)) of the sender, passed on. Phase: its round. The second message.
//	leader  Cand: the leader (the largest alias, the largest ID of the ring).
//
// The kind tells a round's first message from its second, so Dir is not used. Black nodes forward
// alias1 and alias2 unchanged.
//
// Cost: see petersonBound, 2n⌊log₂ n⌋ + 2n with the announcement.

// Peterson's message kinds.
const (
	PetersonAlias1 = "alias1"
	PetersonAlias2 = "alias2"
	PetersonLeader = "leader"
)

func init() {
	Register(Algorithm{
		Name:       "peterson",
		Limits:     RingLimits,
		Topologies: []string{"ring"},
		New:        newPeterson,
		Kinds:      []string{PetersonAlias1, PetersonAlias2},
		Announce:   []string{PetersonLeader},
		Bound:      petersonBound,
		FIFO:       false,
		Doc:        "Peterson (1982): one-way ring, rounds of local maxima among travelling aliases; O(n log n) messages",
	})
}

// petersonBound: 2n⌊log₂ n⌋ + 2n, whatever the initiators (every node is red in round 1).
//
// In a round with k ≥ 2 red nodes, each sends two messages (its alias, then its red predecessor's),
// and each travels to the next red node: every link is crossed twice, 2n messages. Two neighbouring
// red nodes cannot both stay red: if i stays, alias(N(i)) > alias(i), and if N(i) stays,
// alias(NN(i)) > alias(N(i)), which the first node's own test forbids. So at most ⌊k/2⌋ stay red
// (and at least one, the successor of the largest alias): round r has at most n/2^(r-1) red nodes,
// and a round with two or more is round ⌊log₂ n⌋ at the latest. Then the one red node left sends
// its alias round the ring, n messages, and the announcement n more: 2n⌊log₂ n⌋ + n + n, Aguirre
// Janampa et al.'s "2n⌊log₂ n⌋ + n plus the announcement". No buffering, initiator set or delay
// adds a message: every alias is sent once by a red node and relayed by the black ones up to the
// next red one. The bound is tight for every n, not only powers of two: some ring halves the red
// nodes (rounded down) in every round, e.g. 4, 1, 3, 2: rounds of 4 and 2 red nodes, 8 + 8 + 4 + 4
// = 24; and 5, 1, 3, 2, 4: rounds of 5 and 2, 10 + 10 + 5 + 5 = 30 (TestPetersonBoundIsTight tries
// every ring up to n = 7).
func petersonBound(n, initiators int) (int, bool) {
	if n < 1 || initiators < 1 {
		return 0, true
	}
	return 2*n*log2Floor(n) + 2*n, true
}

// petersonState is where a node is in the current epoch's election.
type petersonState int

const (
	petersonAsleep petersonState = iota // not woken in this epoch
	petersonFirst                       // red, waiting for its round's first message: alias(N(i))
	petersonSecond                      // red, waiting for its round's second message: alias(NN(i))
	petersonBlack                       // passive: a relay
	petersonWon                         // its own alias came home: it announced, or waits for a new epoch
)

type peterson struct {
	*ringCore
	state petersonState
	alias int
	round int
	// first is the alias of N(i), the first message of the round, while the second is awaited.
	first int
	// early holds messages that came before this node was ready for them (without FIFO links).
	early []Message
}

func newPeterson(c Config) (Machine, error) {
	core, err := newRingCore("peterson", c, false)
	if err != nil {
		return nil, err
	}
	p := &peterson{ringCore: core}
	core.alg = p
	return p, nil
}

func (p *peterson) reset() {
	p.state, p.alias, p.round, p.first = petersonAsleep, 0, 0, 0
	p.early = p.early[:0]
}

// initiate: step 1 of round 1.
func (p *peterson) initiate() {
	p.state, p.alias, p.round = petersonFirst, p.self, 1
	p.sendSucc(Message{Kind: PetersonAlias1, Cand: p.alias, Phase: p.round, Hops: 1})
}

// join: the core wakes this node for a new epoch; handle begins its round 1 (step 1) unless the
// message that woke it is the announcement.
func (p *peterson) join() {}

func (p *peterson) handle(from int, m Message) {
	switch m.Kind {
	case PetersonLeader:
		p.announced(m.Cand)
	case PetersonAlias1, PetersonAlias2:
		if p.state == petersonAsleep {
			p.initiate()
		}
		switch p.state {
		case petersonBlack:
			p.relay(m)
		case petersonFirst, petersonSecond:
			if m.Phase < p.round {
				return // an earlier round's: cannot happen, each round's messages are consumed once
			}
			p.early = append(p.early, m)
			p.takeUp()
		}
		// petersonWon: no alias is addressed to the last red node any more.
	}
}

// takeUp hands a red node the messages it waits for, in order, as long as it has them; a node that
// turned black forwards what it kept.
func (p *peterson) takeUp() {
	for p.state == petersonFirst || p.state == petersonSecond {
		want := PetersonAlias1
		if p.state == petersonSecond {
			want = PetersonAlias2
		}
		i := -1
		for k, m := range p.early {
			if m.Kind == want && m.Phase == p.round {
				i = k
				break
			}
		}
		if i < 0 {
			return
		}
		m := p.early[i]
		p.early = append(p.early[:i], p.early[i+1:]...)
		if p.state == petersonFirst {
			p.firstAlias(m.Cand)
		} else {
			p.secondAlias(m.Cand)
		}
	}
	if p.state == petersonBlack {
		early := p.early
		p.early = nil
		for _, m := range early {
			if p.state != petersonBlack {
				break // relaying opened a new epoch: the rest belongs to the old one
			}
			p.relay(m)
		}
	}
}

// firstAlias: step 2, alias(N(i)) arrives.
func (p *peterson) firstAlias(a int) {
	if a == p.alias {
		p.win()
		return
	}
	p.first = a
	p.state = petersonSecond
	p.sendSucc(Message{Kind: PetersonAlias2, Cand: a, Phase: p.round, Hops: 1})
}

// secondAlias: step 3, alias(NN(i)) arrives.
func (p *peterson) secondAlias(b int) {
	if p.first > p.alias && p.first > b {
		p.alias = p.first
		p.round++
		p.state = petersonFirst
		p.sendSucc(Message{Kind: PetersonAlias1, Cand: p.alias, Phase: p.round, Hops: 1})
		return
	}
	p.state = petersonBlack
}

// relay: step 4. A black node that is the last live node of its ring has nobody to relay to: its
// successor is itself, and relaying would send the message round a ring of one for ever. It opens a
// new epoch instead, which it wins as a red node.
//
// An alias counts the links it crosses (Hops, 1 as a red node sends it). One that reaches a relay
// after as many links as the ring has nodes went all the way round through relays: no red node is
// left to take it, and a red node never forwards, so it would go round for ever, and every lap
// counts as progress to the stall timer. That happens when every node is a restarted incarnation:
// none knows the epoch, they all elect in epoch 0, and the aliases of an earlier attempt in epoch 0
// meet nodes that went black in a later one (run --sim -a peterson -n 5 --seed 20271952: 5,955
// messages going round, every node at ⊥). The relay opens a new epoch of its own, above 0, which
// the others join.
func (p *peterson) relay(m Message) {
	if p.succ() == p.self {
		p.newEpoch()
		return
	}
	if m.Hops >= len(p.order) {
		p.restarted = false // it gives up waiting to learn the epoch, as at a stall
		p.newEpoch()
		return
	}
	p.sendSucc(Message{Kind: m.Kind, Cand: m.Cand, Phase: m.Phase, Hops: max(m.Hops, 1) + 1})
}

// win: the only red node left; its alias is the largest ID. Step 5 begins here.
func (p *peterson) win() {
	p.state = petersonWon
	if p.suspected[p.alias] {
		// The largest ID is a node we believe dead: this epoch cannot end with it. The stall timer
		// runs, and opens a new epoch, which elects without it.
		return
	}
	p.decide(p.alias)
	p.sendSucc(Message{Kind: PetersonLeader, Cand: p.alias})
}

// announced: step 5, the leader's ID goes round; the announcer stops it.
func (p *peterson) announced(l int) {
	switch {
	case p.state == petersonWon:
		// it came home
	case l < p.self:
		// An election that never saw this node: it was spliced into the ring after its restart,
		// when the election had gone past it. It must not follow a lower node: elect again.
		p.newEpoch()
	case p.suspected[l]:
		// Never follow a node we believe dead; the stall timer opens a new epoch.
	default:
		p.decide(l)
		p.sendSucc(Message{Kind: PetersonLeader, Cand: l})
	}
}
