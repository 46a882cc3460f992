package election

// RSDP: the Replica State Discovery Protocol of Toliupa et al. (2024) (section 2.2–2.3) running the
// leader-election reducer (section 3). The paper runs it over AMQP's fanout (broadcast) and direct
// exchanges; here a broadcast is one message to every other node over the mesh's TCP links, and a
// direct message is one message on one link.
//
// Phases, each under the node's inter-phase mutex (one phase at a time touches the reducer):
//
//	DEBATES  take the mutex; broadcast hello; collect the status replies (until every peer the
//	         failure detector does not suspect has answered, or the status timeout); aggregateState;
//	         broadcast share with the aggregate (the node's own share goes into its own buffer, as a
//	         fanout queue bound by the sender receives its own message); release.
//	SHARE    buffer incoming shares for the share window; then take the mutex, aggregateShareState
//	         (latest, popular or ranked), sanitizeShareState, shouldReload, updateState; release.
//	         One departure from the paper: a SHARE whose window ends while DEBATES waits for its
//	         replies is applied at once, not after them. The paper's DEBATES holds the mutex across
//	         that wait, which only a multi-threaded engine needs (here every input is one step, and
//	         DEBATES touches the reducer only when it aggregates); holding the SHARE kept a node on
//	         its old leader for up to a status timeout more whenever a peer it waited for had gone
//	         silent (a resumed leader beside the one elected in its pause for T + a heartbeat, seeds
//	         300017, 920510, 921340).
//	CLOSE    a node that shuts down (SIGTERM: InStop) broadcasts close; a receiver takes the mutex
//	         and runs aggregateCloseState. A node that dies without one (SIGKILL, a partition) is
//	         closed by the failure detector's verdict (InSuspect), through the same reducer call.
//
// Message kinds and fields:
//
//	hello   Round: the synchronization session.
//	status  Round: the session of the hello it answers. IDs, Cand: the sender's members and leader
//	        (informative: the leader reducer derives its state from who answered).
//	share   Round: the session. IDs: the aggregated members (ascending); Cand: the aggregated leader.
//	close   no fields: the sender is leaving.
//
// Sessions. The paper's DEBATES is one replica's; a session here is cluster-wide, numbered like a
// Lamport clock: a node opens session max-seen+1 (at start, when its resync timer fires, when it
// trusts a peer again, when a node it does not count as a member says hello, when a peer's
// heartbeat names another leader than its own), and a node that
// receives a hello of a session newer than its own takes part in it (its own hello, status replies,
// its own share). So one session costs what the paper's consensus model counts: every replica
// broadcasts hello and share and answers every hello, 3N(N−1) messages (eq. 16), and every share
// buffer holds up to N shares, which the popular and ranked votes need. Shares of a session older
// than the node's own are stale and dropped. Repeated sessions every --rsdp-resync recover from lost
// messages (section 2.4's "repeatable synchronization sessions").
//
// Timers: "status" (the status timeout: Config.ElectionTimeout), "share" (the share window),
// "resync".
//
// A broadcast goes to every other node but those closed (by their close or the detector's verdict),
// as a fanout exchange delivers to the queues still bound. A closed node comes back by saying hello
// itself (a restart) or by being trusted again (its heartbeats resume after a partition), which
// opens a session that counts it.
//
// Failure-detector plan: heartbeats to every other node, every member watched: self-regulated
// mutual health evaluation (section 4.1). The node's driver may instead take verdicts from observer
// processes (section 4.2, 4.3); they arrive as InSuspect all the same.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/internal/field"
)

// RSDP message kinds and timers.
const (
	RSDPHello  = "hello"
	RSDPStatus = "status"
	RSDPShare  = "share"
	RSDPClose  = "close"

	rsdpTimerStatus = "status"
	rsdpTimerShare  = "share"
	rsdpTimerResync = "resync"
)

// Option names RSDP reads from Config.Options (cluster.json's options).
const (
	OptRSDPMode        = "rsdp-mode"
	OptRSDPShareWindow = "rsdp-share-window"
	OptRSDPResync      = "rsdp-resync"
)

// RSDP defaults.
const (
	DefaultRSDPShareWindow = 25 * time.Millisecond
	DefaultRSDPResync      = time.Second
)

func init() {
	Register(Algorithm{
		Name:        "rsdp",
		Limits:      rsdpLimits,
		Topologies:  []string{"mesh"},
		New:         newRSDP,
		Kinds:       []string{RSDPHello, RSDPStatus, RSDPShare},
		Announce:    []string{RSDPClose},
		Bound:       rsdpBound,
		FIFO:        false,
		AnswerWaits: true,
		Options:     []string{OptRSDPMode, OptRSDPShareWindow, OptRSDPResync},
		CheckOptions: func(options map[string]string, n int) error {
			return rsdpOptions(options)
		},
		Doc: "RSDP (Toliupa et al. 2024): hello/status/share sessions through the leader-election reducer; --rsdp-mode latest|popular|ranked",
	})
}

// rsdpBound: RSDP states no bound for an election: its sessions repeat every --rsdp-resync, so an
// election's window holds as many sessions as fit in it. One session costs 3N(N−1) (eq. 16); `bench
// rsdp` measures that per session.
func rsdpBound(n, initiators int) (int, bool) { return 0, false }

// RSDPSessionMessages is eq. 16/29: the messages of one synchronization session among n replicas.
func RSDPSessionMessages(n int) int { return 3 * n * (n - 1) }

type rsdp struct {
	self   int
	others []int
	red    *LeaderReducer
	init   bool // an initiator: opens a session at start
	rnd    interface{ Float64() float64 }

	statusTimeout, shareWindow, resync time.Duration

	started bool
	round   int // the session this node last took part in
	seen    int // the highest session number seen on any message

	debating  bool // DEBATES holds the inter-phase mutex
	statusBuf []Report[LeaderState]
	expect    map[int]bool

	shareBuf   []Report[LeaderState]
	shareArmed bool
	closeBuf   []int // closes waiting for the mutex
	again      bool  // open another session once this one ends
	// uncounted are nodes whose hello we took while not counting them as members, but a share
	// waiting in the window did (see recv): checked again when the window ends
	uncounted []int

	suspected map[int]bool
	// now is the driver's clock of the input being handled; sessionAt when this node last opened
	// or joined a session (see heartbeat).
	now, sessionAt time.Duration
	told           int // the leader last reported to the driver (EffLeader), 0 = ⊥
	planned        bool
	watch          []int // the watch list of the last plan

	out []Effect
}

func newRSDP(c Config) (Machine, error) {
	if c.Topology != "" && c.Topology != "mesh" {
		return nil, fmt.Errorf("rsdp: topology %q: RSDP broadcasts over a mesh only", c.Topology)
	}
	if c.ElectionTimeout <= 0 {
		return nil, fmt.Errorf("rsdp: ElectionTimeout %v (the status timeout): want a positive duration", c.ElectionTimeout)
	}
	mode := c.Options[OptRSDPMode]
	if mode == "" {
		mode = RSDPLatest
	}
	red, err := NewLeaderReducer(c.Self, mode, QuorumOf(len(c.IDs)))
	if err != nil {
		return nil, fmt.Errorf("rsdp: %w", err)
	}
	r := &rsdp{self: c.Self, red: red, init: c.Initiator, statusTimeout: c.ElectionTimeout,
		shareWindow: DefaultRSDPShareWindow, resync: DefaultRSDPResync,
		expect: map[int]bool{}, suspected: map[int]bool{}}
	if c.Rand != nil {
		r.rnd = c.Rand
	}
	if v, ok := c.Options[OptRSDPShareWindow]; ok {
		if r.shareWindow, err = time.ParseDuration(v); err != nil || r.shareWindow < 0 {
			return nil, fmt.Errorf("rsdp: %s %q: want a duration ≥ 0 such as 25ms", OptRSDPShareWindow, v)
		}
	}
	if v, ok := c.Options[OptRSDPResync]; ok {
		if r.resync, err = time.ParseDuration(v); err != nil || r.resync < 0 {
			return nil, fmt.Errorf("rsdp: %s %q: want a duration ≥ 0 such as 1s (0: no periodic resync)", OptRSDPResync, v)
		}
	}
	found := false
	for i, id := range c.IDs {
		if i > 0 && id <= c.IDs[i-1] {
			return nil, fmt.Errorf("rsdp: IDs %v: want distinct IDs in ascending order", c.IDs)
		}
		if id == c.Self {
			found = true
		} else {
			r.others = append(r.others, id)
		}
	}
	if !found {
		return nil, fmt.Errorf("rsdp: Self %d is not among IDs %v", c.Self, c.IDs)
	}
	return r, nil
}

func (r *rsdp) Leader() int       { return r.red.leader }
func (r *rsdp) Participant() bool { return r.started && r.red.leader == 0 }

// Reducer exposes the leader reducer (for tests and the simulator's assertions).
func (r *rsdp) Reducer() *LeaderReducer { return r.red }

func (r *rsdp) Step(in Input) []Effect { return r.StepInto(nil, in) }

// StepInto is Step appending to dst (WithStepInto).
func (r *rsdp) StepInto(dst []Effect, in Input) []Effect {
	r.out = dst
	r.now = in.Now
	switch in.Kind {
	case InStart:
		r.started = true
		r.out = append(r.out, Effect{Kind: EffElect})
		r.plan()
		if r.init {
			r.open()
		}
	case InRecv:
		if r.started {
			r.recv(in.From, in.Msg)
		}
	case InTimer:
		r.timer(in.Timer)
	case InSuspect:
		r.suspect(in.From)
	case InTrust:
		if r.suspected[in.From] {
			delete(r.suspected, in.From)
			if r.started {
				// Re-admit it: a session counts whoever answers. Open one even when a share already
				// counts it as a member again (the others never lost it): while we held it dead,
				// what it said did not reach us (a one-way link fault, a loss) and it may lead the
				// others beside our own leader, which only a session of both sides reconciles.
				r.open()
			}
		}
	case InHeartbeat:
		r.heartbeat(in.From, in.Claim)
	case InStop:
		if r.started {
			for _, p := range r.others {
				if !r.suspected[p] {
					r.send(p, Message{Kind: RSDPClose})
				}
			}
		}
	}
	out := r.out
	r.out = nil // the caller owns the buffer
	return out
}

func (r *rsdp) send(to int, m Message) {
	r.out = append(r.out, Effect{Kind: EffSend, To: to, Msg: m})
}

func (r *rsdp) setTimer(name string, d time.Duration) {
	r.out = append(r.out, Effect{Kind: EffSetTimer, Timer: name, After: d})
}

// plan: heartbeats to every other node, every other member watched (section 4.1).
func (r *rsdp) plan() {
	watch := make([]int, 0, len(r.others))
	for _, p := range r.others {
		if len(r.red.members) == 0 || slices.Contains(r.red.members, p) {
			watch = append(watch, p)
		}
	}
	if r.planned && slices.Equal(watch, r.watch) {
		return
	}
	r.planned, r.watch = true, watch
	r.out = append(r.out, Effect{Kind: EffHeartbeat, HeartbeatTo: slices.Clone(r.others), Watch: slices.Clone(watch)})
}

// open starts a new session (DEBATES); while one holds the mutex, another follows it.
func (r *rsdp) open() {
	if r.debating {
		r.again = true
		return
	}
	r.debates(max(r.seen, r.round) + 1)
}

// debates runs this node's DEBATES phase in session s: take the mutex, broadcast hello.
func (r *rsdp) debates(s int) {
	r.round, r.seen = s, max(r.seen, s)
	r.sessionAt = r.now
	r.debating = true
	r.statusBuf = append(r.statusBuf[:0], Report[LeaderState]{From: r.self, State: r.red.State()})
	clear(r.expect)
	for _, p := range r.others {
		if !r.suspected[p] {
			r.expect[p] = true
			r.send(p, Message{Kind: RSDPHello, Round: s})
		}
	}
	if len(r.expect) == 0 {
		r.endDebates()
		return
	}
	r.setTimer(rsdpTimerStatus, r.statusTimeout)
}

// endDebates aggregates the status replies, broadcasts the share and releases the mutex.
func (r *rsdp) endDebates() {
	r.out = append(r.out, Effect{Kind: EffCancelTimer, Timer: rsdpTimerStatus})
	agg := r.red.AggregateState(r.statusBuf)
	r.report()
	for _, p := range r.others {
		if !r.suspected[p] {
			r.send(p, Message{Kind: RSDPShare, Round: r.round, IDs: slices.Clone(agg.Members), Cand: agg.Leader})
		}
	}
	r.buffer(r.self, agg)
	r.debating = false
	r.statusBuf = r.statusBuf[:0]
	if r.resync > 0 {
		d := r.resync
		if r.rnd != nil {
			d += time.Duration(r.rnd.Float64() * float64(r.resync) / 10)
		}
		r.setTimer(rsdpTimerResync, d)
	}
	r.release()
	if r.again {
		r.again = false
		r.open()
	}
}

// release runs what waited for the inter-phase mutex while DEBATES held it: the closes. A session
// they want is queued (again) by open.
func (r *rsdp) release() {
	if len(r.closeBuf) > 0 {
		r.close(r.closeBuf)
		r.closeBuf = r.closeBuf[:0]
	}
}

func (r *rsdp) recv(from int, m Message) {
	if m.Round > r.seen {
		r.seen = m.Round
	}
	switch m.Kind {
	case RSDPHello:
		r.send(from, Message{Kind: RSDPStatus, Round: m.Round, IDs: slices.Clone(r.red.members), Cand: r.red.leader})
		switch {
		case m.Round > r.round:
			// a newer session: take part in it. A session of our own still collecting is abandoned,
			// which releases the mutex: the closes that waited for it run first.
			if r.debating {
				r.release()
			}
			r.again = false
			r.debating = false
			r.debates(m.Round)
		case !slices.Contains(r.red.members, from) && !r.debating:
			// a node we do not count (restarted, or back from a partition) with an old session
			// number: open a new session that counts it. If a share waiting in the window counts
			// it, the window's end decides, a session's worth of messages sooner (seed 920510: a
			// resumed leader's hello met shares that already counted it).
			if r.pendingCounts(from) {
				r.uncounted = append(r.uncounted, from)
				break
			}
			r.open()
		}
	case RSDPStatus:
		if r.debating && m.Round == r.round {
			r.statusBuf = append(r.statusBuf, Report[LeaderState]{From: from, State: LeaderState{Members: m.IDs, Leader: m.Cand}})
			delete(r.expect, from)
			if len(r.expect) == 0 {
				r.endDebates()
			}
		}
	case RSDPShare:
		if m.Round < r.round {
			return // a share of a session this node has moved past
		}
		r.buffer(from, LeaderState{Members: slices.Clone(m.IDs), Leader: m.Cand})
	case RSDPClose:
		r.suspected[from] = true
		r.closing(from)
	}
}

// buffer adds a share to the SHARE phase's buffer, opening the share window if it is closed.
func (r *rsdp) buffer(from int, s LeaderState) {
	r.shareBuf = append(r.shareBuf, Report[LeaderState]{From: from, State: s})
	if !r.shareArmed {
		r.shareArmed = true
		r.setTimer(rsdpTimerShare, r.shareWindow)
	}
}

func (r *rsdp) timer(name string) {
	switch name {
	case rsdpTimerStatus:
		if r.debating {
			r.endDebates() // who has not answered by now is not counted
		}
	case rsdpTimerShare:
		// Applied at once, even while DEBATES waits for its status replies (see the header).
		r.shareArmed = false
		r.flushShare()
	case rsdpTimerResync:
		if r.started && !r.debating {
			r.open()
		}
	}
}

// pendingCounts tells whether a share waiting in the window counts p as a member.
func (r *rsdp) pendingCounts(p int) bool {
	for _, rep := range r.shareBuf {
		if slices.Contains(rep.State.Members, p) {
			return true
		}
	}
	return false
}

// recount: the hellos of nodes we did not count, whose session waited for the share window. If
// the window's state still does not count one, open the session now.
func (r *rsdp) recount() {
	left := r.uncounted
	r.uncounted = r.uncounted[:0]
	if r.debating {
		return // a session is under way already: it counts whoever answers
	}
	for _, p := range left {
		if !slices.Contains(r.red.members, p) && !r.suspected[p] {
			r.open()
			return
		}
	}
}

// flushShare is the SHARE phase proper: aggregate, sanitize, decide whether to reload, update.
func (r *rsdp) flushShare() {
	defer r.recount()
	buf := r.shareBuf
	r.shareBuf = nil
	agg, ok := r.red.AggregateShareState(buf)
	if !ok {
		return
	}
	s, ok := r.red.SanitizeShareState(agg)
	if !ok || !r.red.ShouldReload(s) {
		return
	}
	r.red.UpdateState(s)
	r.report()
	for _, m := range s.Members {
		if r.suspected[m] {
			// the share counts a node our detector holds dead (a share sent before it died): check
			// again with a session of our own, which only counts who answers
			r.open()
			break
		}
	}
}

// heartbeat: every heartbeat carries its sender's leader. A live peer that names another leader
// than ours means that the last session closed on different leaders at the two (a SHARE lost or
// dropped on its way to some of them: the declared limit while the fault lasts). The periodic
// resync would reconcile them, but only up to --rsdp-resync later, long after the fault is gone;
// a session now does it at once. Not more than one per half status timeout opened or joined here:
// right after a session, heartbeats sent before their sender closed it still name the old leader,
// and while a fault keeps splitting the sessions, a session per heartbeat would flood the mesh.
func (r *rsdp) heartbeat(from, claim int) {
	if !r.started || r.debating || claim == 0 || claim == r.red.leader || r.suspected[from] || r.suspected[claim] {
		return
	}
	if r.round > 0 && r.now-r.sessionAt < r.statusTimeout/2 {
		return
	}
	r.open()
}

// suspect: the failure detector's verdict closes the node as a close message would.
func (r *rsdp) suspect(p int) {
	if r.suspected[p] {
		return
	}
	r.suspected[p] = true
	r.closing(p)
}

// closing runs the CLOSE phase for p, or queues it while DEBATES holds the mutex (the session's
// status collection stops waiting for p at once).
func (r *rsdp) closing(p int) {
	if !r.started {
		return
	}
	if r.debating {
		r.closeBuf = append(r.closeBuf, p)
		if r.expect[p] {
			delete(r.expect, p)
			if len(r.expect) == 0 {
				r.endDebates()
			}
		}
		return
	}
	r.close([]int{p})
}

func (r *rsdp) close(ps []int) {
	r.red.AggregateCloseState(ps)
	r.report()
	r.plan()
}

// report tells the driver the leader when it changed (normalizeState's isLeader is Leader == Self).
func (r *rsdp) report() {
	if l := r.red.leader; l != r.told {
		r.told = l
		if l == 0 {
			r.out = append(r.out, Effect{Kind: EffElect, Round: r.round})
			return
		}
		r.out = append(r.out, Effect{Kind: EffLeader, Leader: l, Round: r.round})
		r.plan()
	}
}

// RSDPOptions makes RSDP's options for cluster.json from the mode and the periods; the error
// names the option by its key ("option rsdp-mode ...", which the CLI writes as its flag) and says
// what is accepted (rsdpOptions).
func RSDPOptions(mode string, shareWindow, resync time.Duration) (map[string]string, error) {
	o := map[string]string{OptRSDPMode: mode, OptRSDPShareWindow: shareWindow.String(), OptRSDPResync: resync.String()}
	return o, rsdpOptions(o)
}

// rsdpOptions checks RSDP's options: the reducer's mode, and the share window and the resync
// period, durations of 0 or more (a resync of 0: none).
func rsdpOptions(options map[string]string) error {
	if mode, ok := options[OptRSDPMode]; ok && !slices.Contains(RSDPModes, mode) {
		return &field.Error{Field: "option " + OptRSDPMode, Value: fmt.Sprintf("%q", mode), Want: "(accepted: latest, popular, ranked)"}
	}
	for _, k := range []string{OptRSDPShareWindow, OptRSDPResync} {
		v, ok := options[k]
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(strings.TrimSpace(v)); err != nil || d < 0 {
			return &field.Error{Field: "option " + k, Value: v, Want: "want a duration ≥ 0 such as 25ms (a resync of 0: none)"}
		}
	}
	return nil
}

// rsdpLimits: besides the detector's, the latest and ranked modes aggregate whatever SHARE messages
// arrive within the window, so under loss or a partition two replicas may close a session on
// different leaders (docs/algorithms.md, "RSDP under loss and partition", has the measured rates).
func rsdpLimits(opts map[string]string) []Limit {
	out := DetectorLimits(opts)
	window := DefaultRSDPShareWindow
	if d, err := time.ParseDuration(opts[OptRSDPShareWindow]); err == nil && d >= 0 {
		window = d
	}
	// Every mode: a session waits up to its status timeout (T) for a peer that has not answered
	// and is not suspected yet. When a node pauses as a session that would end an overlap runs (a
	// restarted or resumed leader's, the one after a heal), the overlap lasts until the detector
	// suspects it and the shares of that session are applied: T + the share window after the
	// pause, a window longer than the default grace (T) (bench chaos --sim seeds 941389, 940252).
	out = append(out, Limit{Property: "uniqueness", Faults: []string{"pause"},
		Why:      "a session waits up to the status timeout for a peer that paused and is not suspected yet, and an overlap it would end lasts until then and the share window",
		Recovery: func(tm Timing) time.Duration { return tm.Heartbeat + tm.T + window }})
	switch opts[OptRSDPMode] {
	case RSDPLatest, RSDPRanked, "":
		out = append(out, Limit{Property: "uniqueness", Faults: []string{"partition", "link drop", "link loss"},
			Why: "RSDP " + cmp.Or(opts[OptRSDPMode], RSDPLatest) + " aggregates the SHARE messages that arrive; under loss or a partition two replicas close on different leaders, until a session after the heal (a heartbeat interval, a status timeout and the share window) closes on one",
			// after the heal the first heartbeat each way (up to an interval later) trusts the other
			// side; the session that trust opens waits a status timeout (T) for the replies, then the
			// share window for the shares (seed 910526: 4 heard 5 again 50ms after the heal)
			Recovery: func(tm Timing) time.Duration { return tm.Heartbeat + tm.T + window }})
	}
	return out
}
