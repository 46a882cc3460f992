package election

// Bully: Garcia-Molina (1982) as taught by Staudek (2020) (timeouts T and T1, recovery, the P1..P4
// example), with the TLA+ readings of Polyakov et al. (2022) and Vinther (2023). The highest live
// ID wins; a node that finds a lower one electing "bullies" it out of the way and takes over the
// election.
//
// Message kinds and the Message fields each uses:
//
//	election     Round: the sender's election round (0: a restarted node that knows no round yet).
//	             Sent to every higher ID.
//	ok           Round: the answering node's round. The answer to an election ("reject" in Staudek,
//	             "alive" in Vinther): a higher node is alive and takes the election over.
//	coordinator  Cand: the new leader (the sender). Round: the round it won. Sent to every lower ID.
//
// Timers: "T" (Config.ElectionTimeout) waits for an ok after sending elections; "T1"
// (Config.CoordinatorTimeout) waits for a coordinator after an ok. T1 must be longer than T plus two
// message delays, or a node gives up on a higher node that is about to win.
//
// Rounds. The textbook has no rounds, and that costs it dearly when elections overlap: a node that
// has already accepted the winner is "not participating" again, so a late election message from
// the same wave makes it hold a new election, whose messages do the same one level up; in an
// asynchronous network the count has no polynomial bound. Here every node keeps a round (the
// highest it has seen on any message, like a Lamport clock; the elect event carries it): a node that
// starts an election on its own initiative (start, suspicion of its leader, T1 running out, a
// bully-back) opens round+1, so the nodes that notice one failure open the same round; a node that
// receives an election of a round above its own, or of round 0 (a restarted node, which asks
// everybody to check again, as in Staudek's step 7), takes part in that round. An election of a
// round the receiver has already taken part in is answered with ok and nothing else: Staudek's
// "pokud tak dosud neučinil" (if it has not done so yet), read per round. Liveness never rests on
// that: a node that got an ok and then no coordinator opens a higher round when T1 runs out (it has
// learnt the others' rounds from their oks), which everybody takes part in.
//
// The leader that receives an election from a lower j (the case the textbook settles only by seed
// 001's step 7, where the leader P3 "se opět stejným postupem zvolí", re-elects itself the same way):
//   - a round it has not taken part in (a restart, a failover it did not notice): answer ok and hold
//     an election, as the textbook says. The highest ID wins that at once and re-announces itself to
//     every lower ID (n-1 coordinators), unless it announced itself less than T ago: then it sends
//     its coordinator to j alone; a lower leader k checks the IDs above it again (n-k elections:
//     they may have come back), then announces itself (k-1).
//   - a round it has taken part in: answer ok and nothing more when it has announced a round at least
//     as new: j sent its election before it received that announcement, which reaches j before this
//     ok on the same FIFO link. (If the leader's round rose after it announced, it sends its
//     coordinator to j alone.)
//
// The textbook's reading of the second case (every late election makes the leader hold an election
// again, which the highest ID wins at once) costs, at a simultaneous start of all n nodes, one
// announcement of n-1 coordinators per late election message: up to (n-1)² coordinators, and lower
// nodes, not participating any more, re-elect too. Here the highest ID announces once, and a clean
// election costs what the textbook's analysis says (see bullyBound).
//
// Failure detector plan: the leader sends heartbeats to every other ID and watches none; a follower
// sends none and watches its leader; a participant (and a node that has not woken) neither sends nor
// watches. Detector traffic grows with N, not N². How heartbeats that claim leadership are answered
// is told at heartbeat below.

import (
	"fmt"
	"slices"
	"time"
)

// Bully's message kinds and timer names.
const (
	BullyElection    = "election"
	BullyOK          = "ok"
	BullyCoordinator = "coordinator"
	BullyTimerT      = "T"
	BullyTimerT1     = "T1"
)

func init() {
	Register(Algorithm{
		Name:        "bully",
		Limits:      bullyLimits,
		Clocks:      bullyClocks,
		Topologies:  []string{"mesh"},
		New:         newBully,
		Kinds:       []string{BullyElection, BullyOK},
		Announce:    []string{BullyCoordinator},
		Bound:       bullyBound,
		FIFO:        true,
		AnswerWaits: true,
		Doc:         "Bully (Garcia-Molina 1982): elections to higher IDs, ok back, the highest live ID announces itself",
	})
}

// bullyBound is the worst case of one election among n nodes, any initiators, with no fault during
// it and every message arriving within T: the textbook's n(n-1)/2 election + n(n-1)/2 ok + (n-1)
// coordinator = n²-1.
//
// Derivation for these semantics: every election of such a run has the same round (initiators open
// round 1 at start; nodes that suspect the same leader open the same round+1), and a node holds at
// most one election per round, so node k sends at most n-k election messages: at most
// Σ(n-k) = n(n-1)/2 in all, the worst being the lowest ID taking part, which drags every node above
// it in. Each election message is answered by at most one ok. Only one node wins (the highest live
// one; T never runs out while a higher node is alive) and it announces once to at most n-1 lower IDs;
// a late election in the round it won costs it an ok and no coordinator. The bound does not depend
// on the number of initiators (one, if it is the lowest ID, already reaches it); with none there is
// no election.
//
// Not covered: a fault during the election (a node that answers ok and dies makes the others start a
// new round when T1 runs out: a new election, with its own bound); and the election of a restarted
// node, which usually costs one round like any other but may cost a second when a node receives the
// restarted node's round-0 election only after the winner of the round it caused announced itself.
func bullyBound(n, initiators int) (int, bool) {
	if n < 2 || initiators < 1 {
		return 0, true
	}
	return n*n - 1, true
}

// bullyLimits are the detector's limits (DetectorLimits) and one of Bully's own: a node learns of a
// higher live node only from that node (its ok, its coordinator, its heartbeats), so under a partial
// partition (seed 5135: majorities-ring, where 2 hears only 1 and 3, and 5 only 1 and 4) a node that
// cannot hear the highest live one takes it for dead, and leads the nodes it reaches while the
// highest leads the others: nobody relays one's claim to the other. A node that hears a higher one
// does not lead (the higher one answers its election with ok), so the overlap is between nodes that
// do not hear each other; it ends at the heal.
//
// And Garcia-Molina's own assumption: Bully is an algorithm for a synchronous system. T must outlast
// an election's round trip; where a timer may fire before the answer it waits for (`leaderlab
// explore --timers async`), a node that a higher one has answered takes itself for the highest and
// announces itself, and two leaders follow, as do more messages than the bound (which counts on
// every answer arriving within T).
func bullyLimits(options map[string]string) []Limit {
	async := "a timeout that fires before the answer it waits for (an asynchronous system; Bully assumes a synchronous one, T longer than any round trip) makes a node that a higher one answered announce itself"
	return append(DetectorLimits(options),
		Limit{Property: "uniqueness", Faults: []string{"partial partition"},
			Why: "Bully hears of a higher node only from that node: under a partial partition a node cut off from the highest live one leads the nodes it reaches, and nobody relays either claim to the other"},
		Limit{Property: "uniqueness", Faults: []string{"async timers"}, Why: async},
		Limit{Property: "agreement", Faults: []string{"async timers"}, Why: async},
		Limit{Property: "complexity", Faults: []string{"async timers"},
			Why: "the bound n²-1 counts on every answer arriving within T: a timeout that fires first opens another round"})
}

// bullyPhase is where a node is in an election.
type bullyPhase int

const (
	bullyIdle                bullyPhase = iota // not participating: following, leading, or not woken yet
	bullyAwaitingOK                            // sent elections, T armed
	bullyAwaitingCoordinator                   // got an ok, T1 armed
)

// bullyConfig is a Bully node's configuration, fixed by newBully (Fixed).
type bullyConfig struct {
	_ Fixed

	self        int
	incarnation int
	initiator   bool
	higher      []int // ascending
	lower       []int // ascending
	others      []int
	t, t1       time.Duration
}

type bully struct {
	*bullyConfig

	phase     bullyPhase
	started   bool // InStart came
	leader    int
	round     int
	announced int // the round of this node's last coordinator broadcast; -1 before any
	suspected map[int]bool
	now       time.Duration `explore:"instant"` // of the input being handled
	// quietUntil: leadership claims from lower IDs heard before this are not answered: our
	// announcement (or an election that will end in one) is on its way to them.
	quietUntil time.Duration `explore:"instant"`
	// claimFrom is a higher ID heard claiming leadership (not our leader) since claimSince; 0: none.
	claimFrom  int
	claimSince time.Duration `explore:"instant"`

	// former is the leader this node followed before the election it is in, while that leader is
	// higher than itself: a participant keeps watching it, so that when another node's election
	// reaches this one first, it still notices the leader's heartbeats stopping at the same moment as
	// everybody else (and wins at once if nobody above is left) instead of waiting T for its answer.
	former int

	hbTo, watch []int // the failure-detector plan last emitted
	watchBuf    [1]int
	out         []Effect
}

func newBully(c Config) (Machine, error) {
	if c.Topology != "" && c.Topology != "mesh" {
		return nil, fmt.Errorf("bully: topology %q: bully runs on a mesh only", c.Topology)
	}
	if c.ElectionTimeout <= 0 || c.CoordinatorTimeout <= 0 {
		return nil, fmt.Errorf("bully: ElectionTimeout %v and CoordinatorTimeout %v: want positive durations", c.ElectionTimeout, c.CoordinatorTimeout)
	}
	if c.Incarnation < 1 {
		return nil, fmt.Errorf("bully: Incarnation %d: want 1 or more", c.Incarnation)
	}
	b := &bully{
		bullyConfig: &bullyConfig{
			self:        c.Self,
			incarnation: c.Incarnation,
			initiator:   c.Initiator,
			t:           c.ElectionTimeout,
			t1:          c.CoordinatorTimeout,
			others:      make([]int, 0, len(c.IDs)),
		},
		announced: -1,
	}
	found, nLower := false, 0
	for i, id := range c.IDs {
		if i > 0 && id <= c.IDs[i-1] {
			return nil, fmt.Errorf("bully: IDs %v: want distinct IDs in ascending order", c.IDs)
		}
		if id == c.Self {
			found = true
			continue
		}
		if id < c.Self {
			nLower++
		}
		b.others = append(b.others, id)
	}
	if !found {
		return nil, fmt.Errorf("bully: Self %d is not among IDs %v", c.Self, c.IDs)
	}
	b.lower, b.higher = b.others[:nLower:nLower], b.others[nLower:]
	return b, nil
}

func (b *bully) Leader() int       { return b.leader }
func (b *bully) Participant() bool { return b.phase != bullyIdle }

func (b *bully) Step(in Input) []Effect { return b.StepInto(nil, in) }

// StepInto is Step appending the effects to dst (WithStepInto): a driver that carries effects out
// before its next call reuses one buffer instead of allocating per input. Step is StepInto(nil, in).
func (b *bully) StepInto(dst []Effect, in Input) []Effect {
	b.out = dst
	b.now = in.Now
	switch in.Kind {
	case InStart:
		b.start()
	case InRecv:
		switch in.Msg.Kind {
		case BullyElection:
			b.answerElection(in.From, in.Msg)
		case BullyOK:
			b.receiveOK(in.From, in.Msg)
		case BullyCoordinator:
			b.receiveCoordinator(in.From, in.Msg)
		}
	case InTimer:
		switch {
		case in.Timer == BullyTimerT && b.phase == bullyAwaitingOK:
			b.noAnswer()
		case in.Timer == BullyTimerT1 && b.phase == bullyAwaitingCoordinator:
			b.noCoordinator()
		}
	case InSuspect:
		b.suspect(in.From)
	case InTrust:
		delete(b.suspected, in.From)
	case InHeartbeat:
		b.heartbeat(in.From, in.Claim)
	}
	b.plan()
	out := b.out
	b.out = nil // the caller owns the buffer
	return out
}

// start: an initiator holds an election at once, except the highest ID, which announces itself
// without sending any (Vinther, step 1; its elect event, at once followed by its leader event,
// marks the election of one in the log). A restarted node always does so (Staudek: "Pokud obnoví
// svůj běh vypadlý proces, spouští okamžitě svůj volební běh"); a non-initiator sleeps until its
// first message.
func (b *bully) start() {
	b.started = true
	if !b.initiator && b.incarnation == 1 {
		return
	}
	b.holdElection() // the highest ID has nobody to ask: it wins at once
}

// nextRound opens a round of this node's own. A restarted node knows no round until it hears one:
// its elections carry round 0, which every receiver takes as new.
func (b *bully) nextRound() int {
	if b.round == 0 && b.incarnation > 1 {
		return 0
	}
	return b.round + 1
}

func (b *bully) adopt(r int) {
	if r > b.round {
		b.round = r
	}
}

// holdElection opens a new round of this node's own.
func (b *bully) holdElection() {
	b.round = b.nextRound()
	b.elect()
}

// elect: P_i sends election(P_i) to every process of higher priority, the suspected ones too (a
// paused node reads it when it resumes and learns that it must bully back), and waits T for a
// reject. With every higher ID suspected there is nobody to wait for: it wins at once.
func (b *bully) elect() {
	b.cancelTimers()
	b.phase = bullyAwaitingOK
	if b.leader > b.self {
		b.former = b.leader
	}
	b.leader = 0
	b.claimFrom = 0
	b.out = slices.Grow(b.out, len(b.higher)+3)
	b.emit(Effect{Kind: EffElect, Round: b.round})
	for _, h := range b.higher {
		b.send(h, Message{Kind: BullyElection, Round: b.round})
	}
	if b.allHigherSuspected() {
		b.win() // T was never armed
		return
	}
	b.emit(Effect{Kind: EffSetTimer, Timer: BullyTimerT, After: b.t})
}

// win: no higher process answered; P_i announces itself with coordinator(P_i) to every lower ID.
// (No timer is armed here: callers disarm theirs first.)
func (b *bully) win() {
	b.phase = bullyIdle
	b.leader = b.self
	b.former = 0
	b.announced = b.round
	b.quietUntil = b.now + b.t
	b.out = slices.Grow(b.out, len(b.lower)+2)
	b.emit(Effect{Kind: EffLeader, Leader: b.self})
	for _, l := range b.lower {
		b.send(l, Message{Kind: BullyCoordinator, Cand: b.self, Round: b.round})
	}
}

// answerElection: election(P_j) with j < i: P_j started an election it cannot win; P_i answers ok
// and holds its own election if it has not done so yet (in this round).
func (b *bully) answerElection(from int, m Message) {
	if from >= b.self {
		return // elections only go up; this one is not for us
	}
	fresh := m.Round == 0 || m.Round > b.round
	b.adopt(m.Round)
	b.send(from, Message{Kind: BullyOK, Round: b.round})
	switch {
	case b.phase != bullyIdle:
		// Already holding an election; its end reaches j too.
	case fresh && b.leader == b.self && len(b.higher) == 0 && b.now < b.quietUntil:
		// The highest ID announced itself less than T ago, to everybody: re-announcing to all for
		// each new round read in the meantime (a resumed node reads a backlog of them) would repeat
		// that announcement; j, which may have sent this after receiving it, gets one of its own.
		b.send(from, Message{Kind: BullyCoordinator, Cand: b.self, Round: b.round})
	case fresh:
		if m.Round == 0 {
			b.round = b.nextRound()
		}
		b.elect()
	case b.leader == b.self && m.Round > b.announced:
		b.send(from, Message{Kind: BullyCoordinator, Cand: b.self, Round: b.round})
	}
}

// Reaction tells what a message on its way to this node may make it send (Reactor), for the
// explorer's reduction: an ok never makes a node send (receiveOK sends nothing), nor does an
// election from a higher ID (ignored) or a coordinator from one (followed); an election of a round
// this node has taken part in is answered, to its sender alone, with an ok and at most a coordinator,
// which the sender (lower) handles without sending; and as rounds only grow, such an election stays
// so. A fresh election (a new round, or round 0) makes this node hold one of its own, and a
// coordinator from a lower ID may make it bully back: anything.
func (b *bully) Reaction(from int, m Message) Reaction {
	switch m.Kind {
	case BullyOK:
		return ReactNone
	case BullyElection:
		switch {
		case from >= b.self:
			return ReactNone
		case m.Round == 0 || m.Round > b.round:
			return ReactAny
		}
		return ReactAnswer
	case BullyCoordinator:
		if from > b.self {
			return ReactNone
		}
	}
	return ReactAny
}

// SuspectReaction tells what the news that p is gone may make this node send (NewsReactor). suspect
// sends only when the node sleeps with no leader (it holds an election), when p is its leader (it
// holds one), or when p was the last higher ID it did not suspect and it is electing (it wins, or
// starts over). So the news sends nothing when p is lower (no leader is lower, and a node that is
// electing has a higher ID it does not suspect: elect wins at once otherwise, an ok unsuspects its
// sender, and the last suspicion ends the wait), or when p is higher, is not the leader, and some
// other higher ID is not suspected. That holds until the news arrives: a node leaves "no leader"
// on its first message and never comes back to it, its leader becomes p only by p's coordinator
// (ahead: on p's connection, before the news; unless it is stale, and then it stays so) or
// heartbeat (p is gone), and only other news makes it suspect another ID, which the declaration
// does not cover.
func (b *bully) SuspectReaction(p int, ahead []Message) Reaction {
	if b.phase == bullyIdle && b.leader == 0 {
		return ReactAny
	}
	if p < b.self {
		return ReactNone
	}
	if b.leader == p || slices.ContainsFunc(ahead, func(m Message) bool { return m.Kind == BullyCoordinator && !b.stale(p, m) }) {
		return ReactAny
	}
	for _, h := range b.higher {
		if h != p && !b.suspected[h] {
			return ReactNone
		}
	}
	return ReactAny
}

// receiveOK: a higher process is alive and takes over; wait T1 for its coordinator.
//
// The ok may come after this node has won: it won at once because every higher ID was suspected,
// and a suspicion can be stale (only the leader sends heartbeats, so a higher node that restarted
// or was cut off is suspected here until it is heard from again: its ok is the first word of it),
// or the ok took longer than T. Either way the sender is alive, above us, and has taken the
// election over: this node is not the highest live one and must not go on leading. It stops, as
// if the ok had come in time, and waits T1 for the coordinator; if none comes, it elects again.
//
// A node that is not electing (it follows a leader: the ok answers an election it has left) does
// not take the ok's round. Its next election is then the one the others opened for the same
// failure, which they answer with ok alone, rather than a round above it that every node above
// would take part in again: 1 follows 5, 3's answer to 1's first election carries round 2 (5 died
// and 4 won round 2), and 1 hears of 5's death after that answer and before 4's coordinator. A
// node that leads adopts it: it steps down and waits for a coordinator, and its T1 must open a
// round above the one under way.
func (b *bully) receiveOK(from int, m Message) {
	if b.phase != bullyIdle || b.leader == b.self {
		b.adopt(m.Round)
	}
	if from < b.self {
		return
	}
	delete(b.suspected, from) // it is alive: the next election waits for it
	switch {
	case b.phase == bullyAwaitingOK:
		b.emit(Effect{Kind: EffCancelTimer, Timer: BullyTimerT})
	case b.phase == bullyIdle && b.leader == b.self:
		b.leader = 0
		b.claimFrom = 0
		b.emit(Effect{Kind: EffElect, Round: b.round})
	default:
		return
	}
	b.emit(Effect{Kind: EffSetTimer, Timer: BullyTimerT1, After: b.t1})
	b.phase = bullyAwaitingCoordinator
}

// receiveCoordinator: coordinator(P_j) with j > i: P_j is the new leader. With j < i, P_i was down
// during that election and has not started one since: it bullies back.
//
// A coordinator from above of a round older than this node's is stale, and is not followed: it
// was sent before a newer round began (in which its sender, alive, takes part: the newer round's
// elections reach every node above their sender), and that round's winner will announce itself.
// Following it would do harm when its sender is dead: links are separate, so a dead leader's last
// coordinator can reach a node after the new leader's, and its end of stream behind it would make
// the node open yet another round, which every node above it takes part in. Round 0 (a restarted
// node that has heard no round yet) is never stale.
func (b *bully) receiveCoordinator(from int, m Message) {
	if b.stale(from, m) {
		return
	}
	b.adopt(m.Round)
	if from > b.self {
		wasParticipant := b.phase != bullyIdle
		b.cancelTimers()
		b.phase = bullyIdle
		b.claimFrom = 0
		b.former = 0
		if b.leader != from || wasParticipant {
			b.leader = from
			b.emit(Effect{Kind: EffLeader, Leader: from})
		}
		return
	}
	if from < b.self && b.phase == bullyIdle {
		b.bullyBack()
	}
}

// stale tells whether a coordinator from from is stale (see receiveCoordinator): and it stays so,
// as rounds only grow.
func (b *bully) stale(from int, m Message) bool {
	return from > b.self && m.Round != 0 && m.Round < b.round
}

// bullyBack answers a lower node that claims leadership with an election of our own (which the
// highest ID wins at once, announcing itself to the claimant).
func (b *bully) bullyBack() {
	b.quietUntil = b.now + b.t
	b.holdElection()
}

// noAnswer: T passed without an ok: no higher process is alive; P_i is the coordinator.
func (b *bully) noAnswer() { b.win() }

// noCoordinator: T1 passed after an ok without a coordinator: the higher process failed meanwhile;
// start over.
func (b *bully) noCoordinator() {
	b.phase = bullyIdle // T1 has fired: no timer left to disarm
	b.holdElection()
}

// suspect: the failure detector gave up on p. A follower whose leader it is holds an election. A node
// waiting for answers whose every higher ID is now suspected wins at once (this is what makes the
// failover after a SIGKILL take milliseconds); one waiting for a coordinator starts over.
func (b *bully) suspect(p int) {
	if b.suspected == nil {
		b.suspected = map[int]bool{}
	}
	b.suspected[p] = true
	switch b.phase {
	case bullyIdle:
		// A node not woken yet (no leader: a non-initiator no election has reached) that sees a
		// node die holds an election too: the initiators may all be dead, and nobody else would
		// ever wake it (explore -a bully -n 3 --initiators 2 --crashes 2: 2 and 3 die before any
		// message reaches 1, which slept with no leader for ever).
		if (p == b.leader && p != b.self) || (b.leader == 0 && b.started) {
			b.holdElection()
		}
	case bullyAwaitingOK:
		if b.allHigherSuspected() {
			b.cancelTimers()
			b.win()
		}
	case bullyAwaitingCoordinator:
		if b.allHigherSuspected() {
			b.holdElection()
		}
	}
}

// heartbeat carries the sender's leader belief. A node that claims leadership and is not our leader
// (two leaders after a partition heals, or a paused leader resuming without having read anything) is
// answered with an election: a lower claimant is bullied back; a higher one, above our leader, is
// asked to take over (it answers).
//
// Two refinements keep this from costing elections the textbook would not hold. A lower claimant
// heard within T of our last announcement (or of our last answer to a claim) is not answered: the
// announcement is on its way to it, and a burst of heartbeats read after a pause, or sent by the old
// leader before it heard of us, would otherwise cost one announcement each. A higher claimant is
// answered only when its claim has lasted T — a new leader's first heartbeat (a datagram) often
// overtakes its coordinator (on TCP), and the coordinator settles it; when nothing does, the claim
// persists and we act — unless we believe in ourselves: two leaders must not wait, and the lower
// holds an election at once (the higher answers and announces itself).
func (b *bully) heartbeat(from, claim int) {
	if claim == from && from > b.self && b.phase == bullyAwaitingCoordinator && !b.suspected[from] {
		// We wait for the coordinator of an election a higher node took over, and a higher node
		// says it leads: that is the announcement, whether or not its coordinator reaches us (it
		// may have been lost to a fault that is over, and its round be the one we would ask in
		// next: it would answer our election with ok alone, and we would wait T1 twice; seed
		// 921999). A higher winner still to come announces itself in its turn.
		b.receiveCoordinator(from, Message{Kind: BullyCoordinator, Cand: from, Round: b.round})
		return
	}
	if claim != from || from == b.self || from == b.leader || b.phase != bullyIdle {
		return
	}
	switch {
	case from < b.self:
		if b.now < b.quietUntil {
			return
		}
		b.bullyBack()
	case b.leader == 0 || from > b.leader:
		if b.leader == b.self {
			// Two leaders (a partition or a link fault healed, a paused leader resumed): the lower
			// one defers at once, so the overlap lasts a heartbeat and a round trip, not T more.
			b.holdElection()
			return
		}
		if b.claimFrom != from {
			b.claimFrom, b.claimSince = from, b.now
			return
		}
		if b.now-b.claimSince < b.t {
			return
		}
		b.holdElection()
	}
}

func (b *bully) allHigherSuspected() bool {
	for _, h := range b.higher {
		if !b.suspected[h] {
			return false
		}
	}
	return true
}

func (b *bully) cancelTimers() {
	switch b.phase {
	case bullyAwaitingOK:
		b.emit(Effect{Kind: EffCancelTimer, Timer: BullyTimerT})
	case bullyAwaitingCoordinator:
		b.emit(Effect{Kind: EffCancelTimer, Timer: BullyTimerT1})
	}
}

// plan emits the failure-detector plan when it changed: the leader sends heartbeats to all and
// watches none, a follower watches its leader, a participant does neither. (HeartbeatTo is the
// machine's own list of the other IDs: drivers copy it, never change it.)
func (b *bully) plan() {
	var to, watch []int
	switch {
	case b.phase != bullyIdle && b.former != 0 && !b.suspected[b.former]:
		b.watchBuf[0] = b.former
		watch = b.watchBuf[:]
	case b.phase != bullyIdle || b.leader == 0:
	case b.leader == b.self:
		to = b.others
	default:
		b.watchBuf[0] = b.leader
		watch = b.watchBuf[:]
	}
	if slices.Equal(to, b.hbTo) && slices.Equal(watch, b.watch) {
		return
	}
	if watch != nil {
		watch = []int{watch[0]} // the effect must not alias watchBuf, which changes later
	}
	b.hbTo, b.watch = to, watch
	b.emit(Effect{Kind: EffHeartbeat, HeartbeatTo: to, Watch: watch})
}

func (b *bully) send(to int, m Message) { b.emit(Effect{Kind: EffSend, To: to, Msg: m}) }
func (b *bully) emit(e Effect)          { b.out = append(b.out, e) }
