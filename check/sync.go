package check

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/topology"
)

// PropPulses is the synchronizer's property, judged for synchronous algorithms only: pulse safety
// (no message of the algorithm reaches a node after the node started the next pulse), every live
// node ran every pulse (or why not: the stalled pulse, the node that died in it, its neighbours
// that waited), and the control messages against the synchronizer's formula.
const PropPulses = "pulses"

// SyncMetrics measure a run of a synchronous algorithm over a synchronizer (Aguirre Janampa et
// al.'s ABD, α, β, γ).
type SyncMetrics struct {
	Synchronizer string `json:"synchronizer"`
	// Pulses is how many pulses the algorithm runs at every node; Reached the highest pulse every
	// live node started (Pulses when the run completed).
	Pulses  int `json:"pulses"`
	Reached int `json:"reached"`
	// PulseMS is the mean time from one pulse's first start to the next pulse's first start
	// (pulses 1..Reached), and PulsesPerSecond its inverse: the synchronizer's speed.
	PulseMS         float64 `json:"pulse_ms"`
	PulsesPerSecond float64 `json:"pulses_per_second"`
	// Messages counts the algorithm's messages; Acks the acks; Init the initialisation's messages
	// (start, the trees' join/accept/reject/built); Control the rest of the control messages (safe,
	// next, cluster safe, ready) of the pulses every live node finished but the last (1..Pulses-1
	// when the run completed, 1..Reached-1 when it stalled); ByKind every synchronizer message by
	// kind.
	Messages int            `json:"messages"`
	Acks     int            `json:"acks"`
	Init     int            `json:"init"`
	Control  int            `json:"control"`
	ByKind   map[string]int `json:"by_kind"`
	// ControlPerPulse is Control per pulse it covers; ExpectedPerPulse the formula's figure
	// (election.SyncControl), and Ratio the first over the second (1 when they agree).
	ControlPerPulse  float64 `json:"control_per_pulse"`
	ExpectedPerPulse int     `json:"expected_per_pulse"`
	Ratio            float64 `json:"ratio"`
	// Late lists (the first few of) the messages that arrived after their receiver had started the
	// next pulse: a broken synchronizer (ABD with a delay beyond δ). LateCount counts them all.
	Late      []string `json:"late,omitempty"`
	LateCount int      `json:"late_count"`
	// Stall says which pulse never completed, and why, when some live node did not run every pulse.
	Stall string `json:"stall,omitempty"`
}

// maxLate is how many late messages the verdict names.
const maxLate = 10

// pulses judges the synchronizer and measures it; ok is false (and the property absent) when the
// algorithm does not act in pulses.
func (c *checker) pulses() (Property, *SyncMetrics, bool) {
	ps := c.pls
	if ps == nil {
		return Property{}, nil, false
	}
	p := Property{Name: PropPulses, OK: true}
	sm := ps.sm
	if ps.err != "" {
		p.OK, p.Detail = false, ps.err
		return p, sm, true
	}
	theory, net := ps.theory, ps.net
	first, last, lastStart, perPulse := ps.first, ps.last, ps.lastStart, ps.perPulse
	slices.SortFunc(ps.late, func(a, b lateRecv) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i)) })
	for _, l := range ps.late {
		sm.Late = append(sm.Late, l.text)
	}
	// Completion: every node that is live at the end ran every pulse.
	sm.Reached = sm.Pulses
	var waiting []int
	for _, id := range c.ids {
		if c.liveAt(id, c.end) && !c.pausedAt(id, c.end) && last[id] < sm.Pulses {
			waiting = append(waiting, id)
			sm.Reached = min(sm.Reached, last[id])
		}
	}
	// Control per pulse over the pulses every live node finished (all but the last when the run
	// completed; those before the stalled one when it did not).
	sm.Control = 0
	for k := 1; k < sm.Reached; k++ {
		sm.Control += perPulse[k]
	}
	if d := sm.Reached - 1; d > 0 {
		sm.ControlPerPulse = float64(sm.Control) / float64(d)
		if sm.ExpectedPerPulse > 0 {
			sm.Ratio = sm.ControlPerPulse / float64(sm.ExpectedPerPulse)
		} else if sm.Control == 0 {
			sm.Ratio = 1
		}
	}
	if f, ok := first[1]; ok && sm.Reached > 1 {
		if g, ok := first[sm.Reached]; ok {
			sm.PulseMS = roundMS((g-f)/int64(sm.Reached-1), 1000)
			if sm.PulseMS > 0 {
				sm.PulsesPerSecond = 1000 / sm.PulseMS
			}
		}
	}
	var parts []string
	if len(waiting) > 0 {
		// Pulses still starting near the end (within ten pulses' time, or a second) were not stalled:
		// the run ended before they were done.
		going := lastStart > 0 && c.end-lastStart < max(int64(10*sm.PulseMS*1e6), int64(time.Second))
		for _, id := range c.ids {
			going = going && c.liveAt(id, c.end) && !c.pausedAt(id, c.end)
		}
		if going {
			sm.Stall = fmt.Sprintf("the run ended in pulse %d of %d while the pulses were still going (no node died or was paused; the last pulse began %s before the end): the run was too short for its rounds",
				sm.Reached, sm.Pulses, fmtDur(c.end-lastStart))
		} else {
			sm.Stall = c.stall(sm.Reached, waiting, last, net.Neighbours, sm.Synchronizer == "abd")
		}
		p.OK = false
		parts = append(parts, sm.Stall)
	} else {
		parts = append(parts, fmt.Sprintf("every live node ran pulses 1..%d (%s per pulse)", sm.Pulses, fmtDur(int64(sm.PulseMS*1e6))))
	}
	if sm.LateCount > 0 {
		p.OK = false
		parts = append(parts, fmt.Sprintf("pulse safety broken: %s arrived after the receiver had started its next pulse: %s",
			plural(sm.LateCount, "message", "messages"), strings.Join(sm.Late, "; ")))
	} else {
		parts = append(parts, "pulse safety held (no message arrived after its receiver's next pulse)")
	}
	parts = append(parts, c.controlJudged(sm, perPulse, theory, len(waiting) == 0 && len(c.faults) == 0, &p))
	p.Detail = strings.Join(parts, "; ")
	return p, sm, true
}

// pulseState is the pulses as the play counted them: each node's pulses, in its log's order, up
// to the end.
type pulseState struct {
	sm        *SyncMetrics
	err       string // why the pulses cannot be judged
	theory    election.SyncTheory
	net       *topology.Topology
	first     map[int]int64 // pulse -> its first start anywhere
	last      map[int]int   // node -> the last pulse its last incarnation started
	lastStart int64         // the latest start of a pulse anywhere
	perPulse  map[int]int
	cur       map[int][2]int // node -> its pulse now, in its incarnation
	late      []lateRecv     // the first late messages in node order
}

type lateRecv struct {
	node, i int
	text    string
}

// pulseStart readies the pulses of a synchronous algorithm.
func (c *checker) pulseStart() {
	if !c.algOK || !c.alg.Synchronous {
		return
	}
	cl := &c.run.Cluster
	ps := &pulseState{sm: &SyncMetrics{Synchronizer: cl.Options[election.OptSync], ByKind: map[string]int{}},
		first: map[int]int64{}, last: map[int]int{}, perPulse: map[int]int{}, cur: map[int][2]int{}}
	c.pls = ps
	net, err := cl.Net()
	if err != nil {
		ps.err = fmt.Sprintf("cluster.json: %v: the pulses cannot be judged", err)
		return
	}
	theory, err := election.SyncControl(ps.sm.Synchronizer, c.ids, net.Edges(), cl.Options)
	if err != nil {
		ps.err = fmt.Sprintf("cluster.json: %v: the pulses cannot be judged", err)
		return
	}
	ps.theory, ps.net = theory, net
	ps.sm.Pulses, ps.sm.ExpectedPerPulse = theory.Pulses, theory.PerPulse
}

// pulseEvent counts an event for the pulses: a message of pulse k received after the receiver
// started pulse k+1 (of the same incarnation) is late.
func (c *checker) pulseEvent(e *mEvent) {
	ps := c.pls
	if ps == nil || ps.err != "" || e.t > c.end {
		return
	}
	sm, id, t := ps.sm, e.node, e.t
	st := ps.cur[id]
	cur, inc := st[0], st[1]
	if e.Inc != inc {
		cur, inc = 0, e.Inc
	}
	defer func() { ps.cur[id] = [2]int{cur, inc} }()
	switch e.Ev {
	case logs.EvPulse:
		cur = e.Pulse
		ps.last[id] = e.Pulse
		ps.lastStart = max(ps.lastStart, t)
		if f, ok := ps.first[e.Pulse]; !ok || t < f {
			ps.first[e.Pulse] = t
		}
	case logs.EvSend:
		if e.Msg == nil {
			return
		}
		k := e.Msg.Kind
		switch {
		case c.alg.IsElection(k):
			sm.Messages++
		case k == election.SyncAck:
			sm.Acks++
			sm.ByKind[k]++
		case slices.Contains(ps.theory.InitKinds, k) || e.Msg.Round == 0: // γ's set-up passes as pulse 0
			sm.Init++
			sm.ByKind[k]++
		default:
			sm.ByKind[k]++
			if e.Msg.Round >= 1 && e.Msg.Round < sm.Pulses {
				ps.perPulse[e.Msg.Round]++
			}
		}
	case logs.EvRecv:
		if e.Msg != nil && c.alg.IsElection(e.Msg.Kind) && cur > e.Msg.Round {
			sm.LateCount++
			ps.late = append(ps.late, lateRecv{node: id, i: e.i, text: fmt.Sprintf("node %d received node %d's %s of pulse %d at %s, in its pulse %d",
				id, e.From, e.Msg.Kind, e.Msg.Round, c.rel(t), cur)})
			slices.SortFunc(ps.late, func(a, b lateRecv) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i)) })
			if len(ps.late) > maxLate {
				ps.late = ps.late[:maxLate]
			}
		}
	}
}

// controlJudged compares the control messages with the formula: each pulse's exactly, and one ack
// per message, when the run completed with no fault (a fault changes who sends what); otherwise it
// only reports them.
func (c *checker) controlJudged(sm *SyncMetrics, perPulse map[int]int, th election.SyncTheory, judge bool, p *Property) string {
	s := fmt.Sprintf("control %d per pulse against %s = %d (%s)", int(sm.ControlPerPulse+0.5), th.Formula, th.PerPulse, sm.Synchronizer)
	if th.AckPerMessage {
		s += fmt.Sprintf(", %d acks for %d messages", sm.Acks, sm.Messages)
	}
	if sm.Init > 0 {
		s += fmt.Sprintf(", %d to set up", sm.Init)
	}
	if !judge {
		return s + " (not judged: the run had faults or stalled)"
	}
	var off []string
	for k := 1; k < sm.Pulses; k++ {
		if perPulse[k] != th.PerPulse {
			off = append(off, fmt.Sprintf("pulse %d: %d", k, perPulse[k]))
		}
	}
	if th.AckPerMessage && sm.Acks != sm.Messages {
		off = append(off, fmt.Sprintf("%d acks for %d messages", sm.Acks, sm.Messages))
	}
	if len(off) > 0 {
		p.OK = false
		return s + "; off the formula: " + listed(off)
	}
	return s + ", as the formula says"
}

// stall explains pulse k, which the waiting nodes started and never completed (0: some never began): the nodes that died or were paused before it and
// the live neighbours that waited for them, or, when none did, who waited.
func (c *checker) stall(k int, waiting []int, last map[int]int, neighbours func(int) []int, clocked bool) string {
	var why []string
	for _, id := range c.ids {
		gone := ""
		switch {
		case !c.liveAt(id, c.end):
			gone = "died"
			if x := c.lastInc(id); x != nil && x.died != forever {
				gone += " at " + c.rel(x.died)
			}
		case c.pausedAt(id, c.end):
			gone = "was paused"
		default:
			continue
		}
		var nb []string
		for _, q := range neighbours(id) {
			if slices.Contains(waiting, q) {
				nb = append(nb, strconv.Itoa(q))
			}
		}
		in := "before its first pulse"
		if last[id] > 0 {
			in = fmt.Sprintf("in pulse %d", last[id])
		}
		w := ""
		switch len(nb) {
		case 0:
		case 1:
			w = "; its neighbour " + nb[0] + " waited"
		default:
			w = "; its neighbours " + strings.Join(nb, ", ") + " waited"
		}
		why = append(why, fmt.Sprintf("node %d %s %s%s", id, gone, in, w))
	}
	if len(why) == 0 {
		var ws []string
		for _, id := range waiting {
			ws = append(ws, fmt.Sprintf("%d in pulse %d", id, last[id]))
		}
		why = append(why, "no node died; waiting: "+strings.Join(ws, ", ")+" (a message or an ack lost, or a link cut)")
	}
	what := fmt.Sprintf("pulse %d never completed", k)
	if k == 0 {
		what = "pulse 1 never started"
	}
	if clocked { // ABD waits for nobody: its pulses follow its clock
		return fmt.Sprintf("%s: %s (ABD's pulses follow its clock: the run ended before they did)", what, strings.Join(why, "; "))
	}
	return fmt.Sprintf("%s: %s (a synchronizer waits for every neighbour: it is not fault-tolerant)", what, strings.Join(why, "; "))
}

// lastInc is node id's last incarnation, or nil.
func (c *checker) lastInc(id int) *incarnation {
	xs := c.incs[id]
	if len(xs) == 0 {
		return nil
	}
	return xs[len(xs)-1]
}

// pausedAt tells whether node id was paused at t.
func (c *checker) pausedAt(id int, t int64) bool {
	for _, s := range c.paused[id] {
		if s.from <= t && t < s.to {
			return true
		}
	}
	return false
}
