package election

// LeLann (1977), Staudek: a one-way ring on which every ID goes all the way round, so that every
// node learns every ID and picks the largest itself; there is no announcement. The textbook steps:
//
//  1. An initiator P_i starts a new, empty list of active processes, writes i in it and sends
//     elect(i) to its successor.
//  2. P_i gets elect(j), its first elect message: it becomes a participant, starts a new list with
//     i and j, and sends elect(i) and elect(j) to its successor.
//  3. P_i gets a later elect(j), j ≠ i: it adds j to its list and forwards elect(j).
//  4. P_i gets elect(i): its own ID came home, so its list holds the ID of every process on the
//     ring; its leader is the largest, and elect(i) goes no further.
//
// Own ID first. Step 2 lists elect(j) before elect(i), but the order matters: step 4 rests on
// every other ID reaching P_i before P_i's own does. A node sends its own ID before it forwards the
// one that woke it, so on a FIFO ring its own ID travels ahead of every ID it forwards, and P_i's
// ID, which passed every node, comes home behind all of theirs. The other order breaks it: if P_j
// is woken by elect(i), elect(j) follows elect(i) home, and P_i decides without j.
//
// No FIFO needed. The seed assumes FIFO links; without them an ID can overtake another and come home
// early. So an elect message counts its hops, and when P_i's own comes home the count is the number
// of nodes on the ring: P_i decides once its list holds that many IDs. On a FIFO link it already
// does, and nothing waits.
//
// Failures. A participant that suspects anyone opens a new epoch (ring.go), whose election starts
// with an empty list at every node, and a node never decides for a suspected maximum. The ID of a
// suspected node is still forwarded, and counted: a suspicion can be stale (a node that was paused,
// or that this node stopped watching when the ring closed over it, stays suspected here), and an ID
// dropped on the way would leave every node after it waiting for it in every new epoch. Nothing goes
// round for ever all the same: an ID that has made as many hops as the ring has nodes without
// coming home has passed the place of a node that is gone, and is dropped there.
//
// Message kinds and the Message fields each uses (Round is the epoch, see ring.go):
//
//	elect  Cand: the ID travelling. Hops: the links it has crossed, 1 as its owner sends it, so
//	       that it is the number of nodes on the ring when it comes home.
//
// Cost: every node sends its own ID once (an initiator at the start, any other node when the first
// elect wakes it) and every ID makes n hops: n² messages exactly, whoever initiates (Staudek:
// "každý proces z N procesů způsobí generování N zpráv", each of the N processes causes N
// messages).

// LeLannElect is LeLann's only message kind.
const LeLannElect = "elect"

func init() {
	Register(Algorithm{
		Name:       "lelann",
		Limits:     RingLimits,
		Topologies: []string{"ring"},
		New:        newLeLann,
		Kinds:      []string{LeLannElect},
		Announce:   []string{},
		Bound:      leLannBound,
		FIFO:       false,
		Doc:        "LeLann (1977): one-way ring, every ID goes all the way round and every node picks the largest; n² messages",
	})
}

// leLannBound: n² whatever the initiators. Every node sends its own ID once: an initiator at the
// start, any other node on its first elect, which reaches it because the IDs that are on their way
// pass every node. Each ID is forwarded by every node but its owner, n hops in all, and nothing
// else is sent.
func leLannBound(n, initiators int) (int, bool) {
	if n < 1 || initiators < 1 {
		return 0, true
	}
	return n * n, true
}

type leLann struct {
	*ringCore
	// sent: this node has sent its own ID in this epoch.
	sent bool
	// list is the list of active processes: the IDs seen in this epoch, this node's own included.
	list map[int]bool
	// home is the hop count of this node's own ID when it came home (the ring's size); 0 before.
	home    int
	decided bool
}

func newLeLann(c Config) (Machine, error) {
	core, err := newRingCore("lelann", c, false)
	if err != nil {
		return nil, err
	}
	l := &leLann{ringCore: core, list: map[int]bool{}}
	core.alg = l
	return l, nil
}

func (l *leLann) reset() {
	l.sent, l.home, l.decided = false, 0, false
	clear(l.list)
}

// initiate: step 1.
func (l *leLann) initiate() { l.sendOwn() }

func (l *leLann) join() {}

func (l *leLann) handle(from int, m Message) {
	if m.Kind == LeLannElect {
		l.elect(m.Cand, m.Hops)
	}
}

// sendOwn starts the list with this node's ID and sends elect(i).
func (l *leLann) sendOwn() {
	l.sent = true
	l.list[l.self] = true
	l.sendSucc(Message{Kind: LeLannElect, Cand: l.self, Hops: 1})
}

// elect(j) arrives, having crossed hops links.
func (l *leLann) elect(j, hops int) {
	if !l.sent {
		// step 2: the first elect wakes this node; its own ID goes first
		l.sendOwn()
	}
	if j != l.self && hops >= len(l.order) {
		// Round the ring and not home: its node is gone.
		return
	}
	if j == l.self {
		// step 4: our own ID came home
		l.home = hops
		l.conclude()
		return
	}
	// steps 2 and 3: note j and pass it on
	l.list[j] = true
	l.sendSucc(Message{Kind: LeLannElect, Cand: j, Hops: hops + 1})
	l.conclude()
}

// conclude decides once this node's own ID has come home and the list holds an ID for every node
// it passed: the largest ID that is not suspected is the leader. An ID that comes later, larger than
// that leader, is a live node's that joined the epoch late (spliced into the ring after a restart):
// the leader is the largest ID on the list, so it becomes the leader.
func (l *leLann) conclude() {
	if l.home == 0 || len(l.list) < l.home {
		return
	}
	top := 0
	for id := range l.list {
		if id > top && !l.suspected[id] {
			top = id
		}
	}
	if !l.decided || top != l.leader {
		l.decided = true
		l.decide(top)
	}
}
