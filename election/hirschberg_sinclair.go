package election

// Hirschberg-Sinclair (1980), Staudek: a two-way ring on which every candidate explores ever larger
// neighbourhoods, twice as far each phase, and only the winners of a phase go on to the next:
//
//  1. In phase k = 0, 1, 2, … a candidate i sends probe(i, k, 1) both ways.
//  2. A node that receives probe(j, k, d):
//     - j smaller than its own ID: swallows it, as Chang-Roberts does (j cannot be the largest);
//     - j larger: the node can never win, it is a relay from now on; it forwards probe(j, k, d+1)
//     while d < 2^k, and at the edge of the neighbourhood (d = 2^k) sends reply(j, k) back;
//     - j its own: the probe went round the ring past every other ID: the node is the leader.
//  3. A node that receives reply(j, k) passes it on towards j; the candidate j, once it has the
//     replies of phase k from both sides (it is the largest ID within 2^k hops either way), goes
//     to phase k+1 — unless a larger ID has passed it meanwhile.
//  4. The leader sends elected(i) once round the ring, towards its successor; every node follows it
//     and passes it on, and the leader stops it when it comes back.
//
// Non-initiators (and every node but the opener of a later epoch) wake on their first message of
// the epoch. One that carries a larger ID makes the node a relay: it cannot win, so it never probes.
// One that carries a smaller ID makes it a candidate, starting phase 0 itself: it may be the largest
// ID, and nobody else will probe for it. So the largest ID always takes part: its wave of probes
// either reaches every node or meets a larger ID, which wakes and takes the wave over.
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
//	probe    Cand: the probing ID; Phase: k; Hops: hops travelled, 1 at the first receiver;
//	         Dir: the direction of travel.
//	reply    Cand: the ID whose probe reached the edge of its neighbourhood; Phase: k; Dir: the
//	         direction of travel, back towards Cand.
//	elected  Cand: the leader.
//
// Cost, with every initiator set: hsBound below.

const (
	HSProbe   = "probe"
	HSReply   = "reply"
	HSElected = "elected"
)

func init() {
	Register(Algorithm{
		Name:       "hirschberg-sinclair",
		Limits:     RingLimits,
		Topologies: []string{"biring"},
		New:        newHirschbergSinclair,
		Kinds:      []string{HSProbe, HSReply},
		Announce:   []string{HSElected},
		Bound:      hsBound,
		FIFO:       false,
		Doc:        "Hirschberg-Sinclair (1980): two-way ring, probes to 2^k hops both ways in phase k; O(n log n) worst",
	})
}

// hsBound is 8n(1 + ⌈log₂ n⌉) + n, whoever initiates.
//
// A phase-k candidate costs at most 4·2^k messages: two probes of at most 2^k hops, two replies
// as long. Phase 0 has at most n candidates (4n). A candidate of phase k ≥ 1 won phase k-1: it is
// the largest ID within 2^(k-1) hops on both sides, so two of them are more than 2^(k-1) apart and
// there are at most n/(2^(k-1)+1) of them: fewer than 4·2^k·n/(2^(k-1)+1) < 8n messages. With
// K = ⌈log₂ n⌉, 2^K ≥ n: the winners of phase K-1 see every node within 2^(K-1) hops one way or
// the other, so only the largest ID reaches phase K, where its two probes come home after n hops
// each (2n) without replies. Phases 0..K cost less than 8n(1+K); the elected message goes round
// once (n). A node that wakes late only starts its phase 0 late: it is one of the n phase-0
// candidates all the same. (A relay never advances, so the candidates of a phase are a subset of
// those counted.) For n = 1: 2 probes to itself and 1 elected, 3 ≤ 9.
func hsBound(n, initiators int) (int, bool) {
	if n < 1 || initiators < 1 {
		return 0, true
	}
	return 8*n*(1+log2Ceil(n)) + n, true
}

type hirschbergSinclair struct {
	*ringCore
	// started: this node is a candidate of this epoch (it sent its phase-0 probes).
	started bool
	// relay: a larger ID has reached this node in this epoch: it cannot win, and only passes
	// messages on.
	relay bool
	// phase is the candidate's phase k; replied[0] and replied[1] tell whether the reply of this
	// phase has come back from the successor's side and from the predecessor's.
	phase   int
	replied [2]bool
	// won: the node's own probe came home and it announced itself (the second probe, coming home
	// from the other side, must not announce it again).
	won bool
	// maxPhase is ⌈log₂ N⌉ for the configured ring: the phase whose probes reach round any ring
	// of these nodes. A probe of a later phase, or a candidate asking for one, can only come of a
	// ring that does not close (two nodes routing round different suspects): it is dropped and
	// the stall timer starts the election again, instead of the probes doubling on for ever.
	maxPhase int
}

func newHirschbergSinclair(c Config) (Machine, error) {
	core, err := newRingCore("hirschberg-sinclair", c, true)
	if err != nil {
		return nil, err
	}
	hs := &hirschbergSinclair{ringCore: core, maxPhase: log2Ceil(len(c.Ring))}
	core.alg = hs
	return hs, nil
}

func (hs *hirschbergSinclair) reset() {
	hs.started, hs.relay, hs.phase, hs.replied, hs.won = false, false, 0, [2]bool{}, false
}

// initiate: phase 0.
func (hs *hirschbergSinclair) initiate() {
	hs.started = true
	hs.startPhase(0)
}

func (hs *hirschbergSinclair) join() {}

// startPhase sends probe(i, k, 1) both ways.
func (hs *hirschbergSinclair) startPhase(k int) {
	hs.phase, hs.replied = k, [2]bool{}
	hs.sendDir(+1, Message{Kind: HSProbe, Cand: hs.self, Phase: k, Hops: 1})
	hs.sendDir(-1, Message{Kind: HSProbe, Cand: hs.self, Phase: k, Hops: 1})
}

func (hs *hirschbergSinclair) handle(from int, m Message) {
	if hs.suspected[m.Cand] {
		// The ID of a node this one believes dead: it must not win, nor wake anyone. If the node
		// is alive after all, the stall timer (or its trust) starts the election again.
		return
	}
	if m.Kind == HSElected {
		hs.elected(m.Cand)
		return
	}
	if m.Phase < 0 || m.Phase > hs.maxPhase || (m.Dir != 1 && m.Dir != -1) {
		return // malformed
	}
	if !hs.participant && hs.leader != 0 && m.Cand > hs.leader {
		hs.newEpoch() // the election missed m.Cand (see the file comment)
		return
	}
	switch {
	case m.Cand > hs.self:
		hs.relay = true
	case m.Cand < hs.self && !hs.started && !hs.relay:
		hs.initiate() // woken by a smaller ID: this node may be the largest
	}
	switch m.Kind {
	case HSProbe:
		hs.probe(m)
	case HSReply:
		hs.reply(m)
	}
}

// probe(j, k, d) arrives, travelling in direction m.Dir.
func (hs *hirschbergSinclair) probe(m Message) {
	j, k, d := m.Cand, m.Phase, m.Hops
	switch {
	case j == hs.self:
		// our own probe went round the ring: every other ID is smaller
		if hs.started && !hs.won {
			hs.won = true
			hs.decide(hs.self)
			hs.sendSucc(Message{Kind: HSElected, Cand: hs.self})
		}
	case j < hs.self:
		// swallow it: j is not the largest within its neighbourhood
	case d < 1 || d > 1<<k:
		// malformed: a probe never travels past its neighbourhood
	case d < 1<<k:
		// forward the larger ID further out
		hs.sendDir(m.Dir, Message{Kind: HSProbe, Cand: j, Phase: k, Hops: d + 1})
	default:
		// the edge of j's neighbourhood: j is the largest ID this far; tell it
		hs.sendDir(-m.Dir, Message{Kind: HSReply, Cand: j, Phase: k})
	}
}

// reply(j, k) arrives, travelling in direction m.Dir.
func (hs *hirschbergSinclair) reply(m Message) {
	if m.Cand != hs.self {
		hs.sendDir(m.Dir, Message{Kind: HSReply, Cand: m.Cand, Phase: m.Phase})
		return
	}
	if !hs.started || hs.won || m.Phase != hs.phase {
		return // not a reply to a probe this candidate has out
	}
	// A reply travelling towards the predecessor answers the probe sent towards the successor.
	side := 0
	if m.Dir > 0 {
		side = 1
	}
	hs.replied[side] = true
	if hs.replied[0] && hs.replied[1] && !hs.relay && hs.phase < hs.maxPhase {
		// the largest ID within 2^k hops on both sides: the next phase
		hs.startPhase(hs.phase + 1)
	}
}

// elected(l) arrives: l is the leader; pass it on unless it is ours coming home.
func (hs *hirschbergSinclair) elected(l int) {
	switch {
	case l == hs.self:
	case l < hs.self:
		hs.newEpoch() // the election missed this node (see the file comment)
	default:
		hs.decide(l)
		hs.sendSucc(Message{Kind: HSElected, Cand: l})
	}
}
