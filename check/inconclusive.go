package check

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// The outcomes of a verdict (verdict.json's outcome).
const (
	OutcomePass         = "pass"
	OutcomeFail         = "fail"
	OutcomeInconclusive = "inconclusive"
)

// DefaultWindow is the stretch before the end in which an election must still have moved to count
// as progressing, for a cluster.json that states no heartbeat or timeout (the defaults' timeout).
const DefaultWindow = 200 * time.Millisecond

// Inconclusive is what the checker saw of a run that ended while its election was still going:
// the open election's messages against the algorithm's bound, its messages in flight and those of
// the last window, how long the messages took from send to receipt in that window, and the
// nodes' CPU time.
type Inconclusive struct {
	// StartMS is when the open election started; Messages and Announce its sends so far, Bound
	// the algorithm's bound for it.
	StartMS  float64 `json:"start_ms"`
	Messages int     `json:"messages"`
	Announce int     `json:"announce"`
	Bound    int     `json:"bound"`
	// WindowMS is the last stretch of the run looked at: max(3 heartbeats, the timeout).
	WindowMS float64 `json:"window_ms"`
	// InFlight counts the election's messages to a node live at the end that were neither
	// received nor dropped; SentInWindow those sent in the window; LastMS how long before the end
	// the election's last event (a send, a receipt, an elect, a leader) was.
	InFlight     int     `json:"in_flight"`
	SentInWindow int     `json:"sent_in_window"`
	LastMS       float64 `json:"last_ms"`
	// Live counts the live nodes at the end, Undecided those of them at ⊥.
	Live      int `json:"live"`
	Undecided int `json:"undecided"`
	// DeliveryP50MS, DeliveryP99MS and DeliveryMaxMS are the window's receipts' times from send to
	// receipt (null when none was received in it): on one machine a message costs microseconds, and
	// the rest is its receiver waiting to be scheduled.
	DeliveryP50MS *float64 `json:"delivery_p50_ms"`
	DeliveryP99MS *float64 `json:"delivery_p99_ms"`
	DeliveryMaxMS *float64 `json:"delivery_max_ms"`
	// CPUMS is the nodes' CPU time (launcher.jsonl's exited records; 0 when they carry none) over
	// SpanMS, from the first spawn to the last exit.
	CPUMS  float64 `json:"cpu_ms"`
	SpanMS float64 `json:"span_ms"`
	// Extended is the stopping record's detail when the run went on past --duration.
	Extended string `json:"extended,omitempty"`
	// EndedMS, when set, says that the election ended (its agreement, from the run's begin), but
	// later than the termination bound: SlowestMS is the slowest elect's running time to its
	// leader, and MaxGapMS the longest stretch while it was open without a send or receipt of its
	// messages, an elect or a leader. The fields of the window (InFlight … LastMS, the delivery
	// times) are then zero.
	EndedMS   *float64 `json:"ended_ms,omitempty"`
	SlowestMS *float64 `json:"slowest_ms,omitempty"`
	MaxGapMS  *float64 `json:"max_gap_ms,omitempty"`
	// NotReady names the live nodes at ⊥ at the end whose incarnation was spawned but never
	// reported ready (a restart the machine had not brought up yet), when they alone kept the
	// live nodes from agreeing; the fields above are then zero.
	NotReady []NotReady `json:"not_ready,omitempty"`
}

// NotReady is an incarnation spawned, never ready, live at the end (Inconclusive.NotReady).
type NotReady struct {
	Node      int     `json:"node"`
	Inc       int     `json:"inc"`
	SpawnedMS float64 `json:"spawned_ms"` // from the run's begin
}

// inconclusive decides whether a run that did not pass ended while its election was still going,
// and what was seen of it (nil when it is a failure). It is inconclusive when
//   - the only failed properties are agreement, because the live nodes did not agree yet at the
//     end (no wrong leader, no fault too close to the end, no cut in force, no declared limit),
//     and termination, because elects of nodes that ran to the end still waited for a leader;
//     uniqueness, integrity, complexity and pulses held;
//   - the run is real (a simulated run's time is virtual: its machine cannot fall behind) and has an
//     end (the launcher's stopping record), and the last election is open at it;
//   - that election's messages + announcements are within the algorithm's bound (past it, the
//     election is a livelock, not a slow machine; with no bound the two cannot be told apart);
//   - it was moving at the end: an event of the election in the last window (max(3 heartbeats,
//     the timeout)) and messages in flight or sent in that window. A stall — nothing in flight,
//     nothing sent for a window — stays a failure.
//
// It is inconclusive too when elects ended in their leader, but later than the termination bound,
// and the elections they belong to ended within the algorithm's bound and never stood still for a
// window while open: the machine was slow, the algorithm did what it must (late below). With elects
// still open at the end as well, the last election must pass the checks above too.
func (c *checker) inconclusive(props []Property, openAtEnd bool, els []*electionAcc) *Inconclusive {
	for _, p := range props {
		switch {
		case p.OK:
		case p.Name == PropAgreement && c.undecided:
		case p.Name == PropTermination && openAtEnd:
		default:
			return nil
		}
	}
	stopping := c.stoppingRecord()
	if stopping == nil || !c.algOK || c.run.Cluster.World == rundir.WorldSim {
		return nil
	}
	if nr := c.notReadyAtEnd(); nr != nil {
		nr.Extended = stopping.Detail
		return nr
	}
	if len(els) == 0 {
		return nil
	}
	w := c.window()
	if len(c.terms.late) > 0 {
		late := c.late(els, w)
		if late != nil && c.terms.open == 0 && !propOK(props, PropAgreement) {
			late = nil // every elect was answered, yet the live nodes do not agree: not a slow machine's
		}
		if late == nil || c.terms.open == 0 {
			if late != nil {
				late.Extended = stopping.Detail
				late.CPUMS, late.SpanMS = c.nodesCPU()
			}
			return late
		}
	}
	e := els[len(els)-1]
	if e.EndNS != nil || e.Bound == nil || e.Messages+e.Announce > *e.Bound {
		return nil
	}
	in := &Inconclusive{StartMS: roundMS(e.StartNS-c.begin, 1000), Messages: e.Messages, Announce: e.Announce,
		Bound: *e.Bound, WindowMS: roundMS(w, 1000), Extended: stopping.Detail}
	st := c.endState()
	in.countLive(st)
	from := c.end - w
	last, delays, err := c.lastElection(e.StartNS, from, st, in)
	if err != nil {
		return nil // the logs were read once already: they cannot have gone bad since but by a hand
	}
	if last < from || in.InFlight+in.SentInWindow == 0 {
		return nil
	}
	in.LastMS = roundMS(c.end-last, 1000)
	if len(delays) > 0 {
		slices.Sort(delays)
		q := func(f float64) *float64 {
			x := roundMS(delays[min(len(delays)-1, int(f*float64(len(delays))))], 1000)
			return &x
		}
		in.DeliveryP50MS, in.DeliveryP99MS, in.DeliveryMaxMS = q(0.5), q(0.99), q(1)
	}
	in.CPUMS, in.SpanMS = c.nodesCPU()
	return in
}

// late judges the elects answered past the termination bound: each one's election (the last to
// start by its leader) ended, no later than that leader, within the algorithm's bound, and while
// open never went a window w without an event of its own. It returns what is told of the last of
// those elections and the slowest of the elects, or nil when one of them fails the test.
func (c *checker) late(els []*electionAcc, w int64) *Inconclusive {
	var last *electionAcc
	var slowest int64
	for _, l := range c.terms.late {
		i := -1
		for j, e := range els {
			if e.StartNS <= l.tl {
				i = j
			}
		}
		if i < 0 {
			return nil
		}
		e := els[i]
		if e.EndNS == nil || *e.EndNS < l.tl || e.Bound == nil || e.Messages+e.Announce > *e.Bound || e.maxGap > w {
			return nil
		}
		if last == nil || e.StartNS > last.StartNS {
			last = e
		}
		slowest = max(slowest, l.run)
	}
	in := &Inconclusive{StartMS: roundMS(last.StartNS-c.begin, 1000), Messages: last.Messages, Announce: last.Announce,
		Bound: *last.Bound, WindowMS: roundMS(w, 1000)}
	ended, slow, gap := roundMS(*last.EndNS-c.begin, 1000), roundMS(slowest, 1000), roundMS(last.maxGap, 1000)
	in.EndedMS, in.SlowestMS, in.MaxGapMS = &ended, &slow, &gap
	in.countLive(c.endState())
	return in
}

// countLive counts the live nodes of st, and those of them at ⊥.
func (in *Inconclusive) countLive(st []nodeState) {
	for _, s := range st {
		if s.live() {
			in.Live++
			if s.belief == 0 {
				in.Undecided++
			}
		}
	}
}

// propOK tells whether property name held among props.
func propOK(props []Property, name string) bool {
	for _, p := range props {
		if p.Name == name {
			return p.OK
		}
	}
	return false
}

// lastElection reads the run twice more (in order, up to the end) for what the last election,
// open since start, did: its last event, its messages sent in the window (from the window's start)
// and in flight at the end to a node live then (sent, neither received nor dropped), and how long
// the window's receipts of its messages took from their send. The first pass finds the election's
// sends and the window's recvs, the second which of the sends were settled and when the recvs'
// messages were sent: a few thousand ids at most (the election is within its bound), whatever the
// length of the run.
func (c *checker) lastElection(start, from int64, st []nodeState, in *Inconclusive) (last int64, delays []int64, err error) {
	own := func(e *mEvent) bool {
		return e.Msg != nil && (c.alg.IsElection(e.Msg.Kind) || c.alg.IsAnnounce(e.Msg.Kind))
	}
	flying := map[string]int{} // its sends to a node live at the end, by msg.id
	type recvAt struct {
		id string
		t  int64
	}
	var window []recvAt
	last = -1
	if err := c.eachUpToEnd(func(e *mEvent) {
		if e.t < start {
			return
		}
		switch {
		case e.Ev == logs.EvSend && own(e):
			last = e.t
			if e.t >= from {
				in.SentInWindow++
			}
			if k, ok := c.index[e.To]; ok && st[k].live() {
				flying[e.Msg.ID]++
			}
		case e.Ev == logs.EvRecv && own(e):
			last = e.t
			if c.sends.match(e.Msg.ID).ok && e.t >= from {
				window = append(window, recvAt{e.Msg.ID, e.t})
			}
		case e.Ev == logs.EvElect || e.Ev == logs.EvLeader:
			last = e.t
		}
	}); err != nil {
		return 0, nil, err
	}
	if last < from || len(flying)+in.SentInWindow == 0 {
		return last, nil, nil
	}
	sentAt := map[string]int64{}
	for _, r := range window {
		sentAt[r.id] = 0
	}
	settled := map[string]bool{} // received or dropped
	class := newSendClass()
	if err := c.eachUpToEnd(func(e *mEvent) {
		if e.Msg == nil {
			return
		}
		switch e.Ev {
		case logs.EvRecv, logs.EvDrop:
			if _, ok := flying[e.Msg.ID]; ok {
				settled[e.Msg.ID] = true
			}
		case logs.EvSend:
			_, _, ranged := class.ranged(e.node, e.Msg.ID)
			if _, ok := sentAt[e.Msg.ID]; ok {
				if mt := c.sends.match(e.Msg.ID); (mt.ref >= 0 && mt.node == e.node && mt.ref == e.i) || (mt.ref < 0 && ranged && mt.node == e.node) {
					sentAt[e.Msg.ID] = e.t
				}
			}
		}
	}); err != nil {
		return 0, nil, err
	}
	for id, n := range flying {
		if !settled[id] {
			in.InFlight += n
		}
	}
	for _, r := range window {
		delays = append(delays, r.t-sentAt[r.id])
	}
	return last, delays, nil
}

// eachUpToEnd reads the run in order (the play's) up to the end, an event at a time.
func (c *checker) eachUpToEnd(fn func(*mEvent)) error {
	g, err := newMerger(c.stream, c.ids, c.causal, c.sends)
	if err != nil {
		return err
	}
	defer g.close()
	for {
		t, evs, err := g.instant()
		if err == io.EOF || (err == nil && t > c.end) {
			return nil
		}
		if err != nil {
			return err
		}
		for _, e := range evs {
			fn(e)
		}
	}
}

// window is the stretch before the end in which a progressing election must have moved: a few
// heartbeats, and at least the failure detector's timeout.
func (c *checker) window() int64 {
	cl := &c.run.Cluster
	w := max(3*cl.Heartbeat.D(), cl.Timeout.D())
	if w <= 0 {
		w = DefaultWindow
	}
	return int64(w)
}

// stoppingRecord is the launcher's stopping record, nil when the run has none (an explorer's
// trace: it never ended, it was cut where the violation was).
func (c *checker) stoppingRecord() *logs.LaunchRecord {
	for i := range c.run.Launcher {
		if r := &c.run.Launcher[i]; r.Ev == logs.LaunchStopping {
			return r
		}
	}
	return nil
}

// nodesCPU sums the nodes' CPU time from launcher.jsonl's exited records, over the span from the
// first spawn to the last exit (ms).
func (c *checker) nodesCPU() (cpu, span float64) {
	first, last := int64(0), int64(0)
	for _, r := range c.run.Launcher {
		if _, node := c.index[r.Node]; !node {
			continue
		}
		switch r.Ev {
		case logs.LaunchSpawned:
			if first == 0 || r.TS < first {
				first = r.TS
			}
		case logs.LaunchExited:
			cpu += r.CPUMS
			last = max(last, r.TS)
		}
	}
	if cpu == 0 || first == 0 || last <= first {
		return 0, 0
	}
	return cpu, roundMS(last-first, 1000)
}

// reason is the verdict's reason for people, with what the checker saw.
func (in *Inconclusive) reason() string {
	var b strings.Builder
	if len(in.NotReady) > 0 {
		b.WriteString("inconclusive: a restarted node was not up when the run ended; the machine fell behind")
		if in.Extended != "" {
			fmt.Fprintf(&b, " (%s)", in.Extended)
		}
		var names []string
		for _, x := range in.NotReady {
			names = append(names, fmt.Sprintf("node %d (incarnation %d, spawned at %gms)", x.Node, x.Inc, x.SpawnedMS))
		}
		fmt.Fprintf(&b, ": %s never reported ready; the other %d live nodes agree", strings.Join(names, ", "), in.Live-len(in.NotReady))
		in.writeCPU(&b)
		return b.String()
	}
	if in.EndedMS != nil {
		b.WriteString("inconclusive: the election ended, but later than the termination bound; the machine fell behind")
		if in.Extended != "" {
			fmt.Fprintf(&b, " (%s)", in.Extended)
		}
		fmt.Fprintf(&b, ": the election from %gms to %gms sent %d+%d messages of its bound %d and never stood still for %s (its longest pause: %s); its slowest elect took %s of running time",
			in.StartMS, *in.EndedMS, in.Messages, in.Announce, in.Bound, msDur(in.WindowMS), msDur(*in.MaxGapMS), msDur(*in.SlowestMS).Round(time.Millisecond))
		in.writeCPU(&b)
		return b.String()
	}
	b.WriteString("inconclusive: still electing when the run ended; the machine fell behind")
	if in.Extended != "" {
		fmt.Fprintf(&b, " (%s)", in.Extended)
	}
	fmt.Fprintf(&b, ": the election open since %gms had sent %d+%d messages of its bound %d",
		in.StartMS, in.Messages, in.Announce, in.Bound)
	fmt.Fprintf(&b, ", %d in flight and %d sent in the last %s", in.InFlight, in.SentInWindow, msDur(in.WindowMS))
	if in.Undecided > 0 {
		fmt.Fprintf(&b, "; %d of %d live nodes at ⊥", in.Undecided, in.Live)
	}
	if in.DeliveryP50MS != nil {
		fmt.Fprintf(&b, "; a message took %gms (median), %gms (p99), %gms (most) from send to receipt in that window",
			*in.DeliveryP50MS, *in.DeliveryP99MS, *in.DeliveryMaxMS)
	}
	in.writeCPU(&b)
	return b.String()
}

// notReadyAtEnd: the live nodes at ⊥ at the end are all incarnations that were spawned but never
// reported ready (launcher.jsonl), and the other live nodes follow one live leader, the highest of
// them. Such a node is not yet part of the cluster: whether it would have joined the agreement is
// unknown, not false (a starved machine brings a restart up late). nil otherwise.
func (c *checker) notReadyAtEnd() *Inconclusive {
	ready := map[[2]int]bool{}
	spawned := map[[2]int]int64{}
	for i := range c.run.Launcher {
		switch r := &c.run.Launcher[i]; r.Ev {
		case logs.LaunchReady:
			ready[[2]int{r.Node, r.Inc}] = true
		case logs.LaunchSpawned:
			spawned[[2]int{r.Node, r.Inc}] = r.TS
		}
	}
	if len(ready) == 0 {
		return nil // a launcher.jsonl that records no readiness at all says nothing of it
	}
	in := &Inconclusive{}
	leader, highest := 0, 0
	for k, s := range c.endState() {
		if !s.live() {
			continue
		}
		in.Live++
		id := c.ids[k]
		key := [2]int{id, s.inc}
		if at, ok := spawned[key]; ok && !ready[key] && s.belief == 0 {
			in.NotReady = append(in.NotReady, NotReady{Node: id, Inc: s.inc, SpawnedMS: roundMS(at-c.begin, 1000)})
			continue
		}
		switch {
		case s.belief == 0, leader != 0 && s.belief != leader:
			return nil // undecided or split among the ready nodes: the usual judgement
		}
		leader, highest = s.belief, max(highest, id)
	}
	if len(in.NotReady) == 0 || leader == 0 || leader != highest {
		return nil
	}
	if k, ok := c.index[leader]; !ok || !c.endState()[k].live() {
		return nil
	}
	in.Undecided = len(in.NotReady)
	in.CPUMS, in.SpanMS = c.nodesCPU()
	return in
}

// writeCPU adds the nodes' CPU time over their span to a reason, when launcher.jsonl had it.
func (in *Inconclusive) writeCPU(b *strings.Builder) {
	if in.CPUMS > 0 {
		fmt.Fprintf(b, "; the nodes used %s of CPU in %s (%.2f cores)",
			msDur(in.CPUMS).Round(time.Millisecond), msDur(in.SpanMS).Round(time.Millisecond), in.CPUMS/in.SpanMS)
	}
}
