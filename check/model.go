package check

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// forever marks an incarnation or a pause that lasts past everything observed.
const forever = math.MaxInt64

// killSlack: the launcher writes a kill's chaos record after sending the signal, so the victim's
// `exited` record may come first. An incarnation that died on a signal at most this long before a
// kill record is that kill's victim.
const killSlack = int64(100 * time.Millisecond)

// span is a stretch of time [from, to).
type span struct{ from, to int64 }

// incarnation is one process of a node: from its spawn (or first event) to its death.
type incarnation struct {
	node, inc  int
	start, end int64 // end is forever while it runs past the last record
	// died is when it died of itself (exit, stop or kill), not counting a next incarnation that
	// started first; forever when it never did.
	died        int64
	spawn, exit *logs.LaunchRecord
	first, last int // indexes of its first and last event in the node's log; -1 when none
}

// nodeState is what the checker knows about a node at a moment.
type nodeState struct {
	inc    int  // the running incarnation; 0 while dead
	paused bool // SIGSTOPped
	belief int  // its leader; 0 for ⊥
}

func (s nodeState) live() bool { return s.inc > 0 && !s.paused }

// point is the cluster's state from t until the next point.
type point struct {
	t     int64
	state []nodeState // indexed like model.ids
	// net is the rules in force (shared between points: never changed).
	net *netState
	// comps are the live nodes' components while a rule in force can block a link; nil while none
	// can (the live nodes are then one component).
	comps [][]int
}

// evRef is one event in the run's global order.
type evRef struct {
	t    int64 // the event's ts, kept non-decreasing along its file
	node int
	i    int // index in the node's log
}

// sendRef is a send event: node's event i.
type sendRef struct{ node, i int }

// model is a run turned into timelines: each node's incarnations, pauses and beliefs, and the
// network's components, as a list of points in time.
type model struct {
	run        *logs.Run
	ids        []int // the cluster's node IDs, ascending
	index      map[int]int
	begin, end int64
	ts         map[int][]int64 // ts[node][i]: event i's time, kept non-decreasing along the file
	order      []evRef
	// sends finds each message's send by its msg.id (the first, when a run reuses one; dupSends
	// counts the sends that did).
	sends      map[string]sendRef
	dupSends   int
	incs       map[int][]*incarnation
	strayExits []*logs.LaunchRecord // exited records of no spawned incarnation
	faults     []logs.ChaosRecord   // the chaos ops that were applied, by time
	opTime     []int64              // when each fault took effect (a kill: its victim's death)
	paused     map[int][]span
	points     []point
	warn       []string
	// effect[j] is when every node concerned had taken record j's rules (partition, link, heal);
	// accept[j] what each node accepts under partition j (nil for other records).
	effect []int64
	accept []map[int]map[int]bool
	// linkWin[j] is when link rule j was in force at its receiver (to: forever while never removed).
	linkWin map[int]span
}

func newModel(run *logs.Run) *model {
	m := &model{run: run, index: map[int]int{}, ts: map[int][]int64{}, paused: map[int][]span{}, linkWin: map[int]span{}}
	m.ids = run.Cluster.IDs()
	sort.Ints(m.ids)
	for k, id := range m.ids {
		m.index[id] = k
	}
	m.orderEvents()
	m.bounds()
	for _, op := range run.Chaos {
		if op.Error != "" {
			m.warnf("chaos: %s at %s was not applied: %s", opName(op), m.rel(op.TS), op.Error)
			continue
		}
		m.faults = append(m.faults, op)
	}
	sort.SliceStable(m.faults, func(i, j int) bool { return m.faults[i].TS < m.faults[j].TS })
	m.buildIncarnations()
	for _, r := range run.Launcher {
		if r.Ev == logs.LaunchExited && strings.HasPrefix(r.Detail, logs.AgentLost) {
			m.warnf("node %d incarnation %d counts as crashed at %s: %s", r.Node, r.Inc, m.rel(r.TS), r.Detail)
		}
	}
	m.sweep()
	m.unacknowledged()
	return m
}

func (m *model) warnf(format string, args ...any) {
	m.warn = append(m.warn, fmt.Sprintf(format, args...))
}

// log returns node id's log (an empty one when there is none).
func (m *model) log(id int) *logs.NodeLog {
	if nl := m.run.Nodes[id]; nl != nil {
		return nl
	}
	return &logs.NodeLog{Node: id}
}

// where names event i of node id for people: "nodes/3.jsonl:17".
func (m *model) where(id, i int) string {
	if nl := m.log(id); i < len(nl.Line) {
		return logs.NodeLogName(id) + ":" + strconv.Itoa(nl.Line[i])
	}
	return fmt.Sprintf("%s event %d", logs.NodeLogName(id), i+1)
}

// orderEvents lists every event of the cluster's nodes in time order. A clock that steps back inside
// a file does not reorder that file: its events keep their file order.
func (m *model) orderEvents() {
	total, sends := 0, 0
	for _, id := range m.ids {
		total += len(m.log(id).Events)
		for _, e := range m.log(id).Events {
			if e.Ev == logs.EvSend && e.Msg != nil {
				sends++
			}
		}
	}
	m.order = make([]evRef, 0, total)
	m.sends = make(map[string]sendRef, sends)
	for _, id := range m.ids {
		for i, e := range m.log(id).Events {
			if e.Ev != logs.EvSend || e.Msg == nil {
				continue
			}
			if _, dup := m.sends[e.Msg.ID]; dup {
				m.dupSends++
				if m.dupSends == 1 {
					m.warnf("%s: msg.id %q was sent before (ids should be unique in the run)", m.where(id, i), e.Msg.ID)
				}
				continue
			}
			m.sends[e.Msg.ID] = sendRef{id, i}
		}
	}
	if m.dupSends > 1 {
		m.warnf("%d sends reuse a msg.id", m.dupSends)
	}
	for _, id := range m.ids {
		nl := m.log(id)
		ts := make([]int64, len(nl.Events))
		var last int64
		warned := false
		for i, e := range nl.Events {
			t := e.TS
			if i > 0 && t < last {
				if !warned {
					m.warnf("%s: ts goes back %s; the file's order is kept", m.where(id, i), fmtDur(last-t))
					warned = true
				}
				t = last
			}
			ts[i], last = t, t
		}
		m.ts[id] = ts
	}
	if moved, most := m.causalOrder(); moved > 0 {
		m.warnf("%d recv events came before their send by up to %s (clocks of different hosts, after the offsets of cluster.json were taken off): they are ordered after the send, as the logical clocks say", moved, fmtDur(most))
	}
	m.merge()
}

// merge puts every event in m.order: in time, then by node (m.ids ascending), then by place in the
// node's log. Each node's times are non-decreasing, so this is a merge of sorted lists, made with
// a heap of each node's next event (a sort of a million refs took twice as long).
func (m *model) merge() {
	type head struct {
		t    int64
		node int
		i    int
		ts   []int64
	}
	less := func(a, b *head) bool { return a.t < b.t || (a.t == b.t && a.node < b.node) }
	h := make([]head, 0, len(m.ids))
	for _, id := range m.ids {
		if ts := m.ts[id]; len(ts) > 0 {
			h = append(h, head{t: ts[0], node: id, ts: ts})
		}
	}
	down := func(k int) {
		for {
			c := 2*k + 1
			if c >= len(h) {
				return
			}
			if c+1 < len(h) && less(&h[c+1], &h[c]) {
				c++
			}
			if !less(&h[c], &h[k]) {
				return
			}
			h[k], h[c] = h[c], h[k]
			k = c
		}
	}
	for k := len(h)/2 - 1; k >= 0; k-- {
		down(k)
	}
	for len(h) > 0 {
		top := &h[0]
		m.order = append(m.order, evRef{t: top.t, node: top.node, i: top.i})
		if top.i++; top.i < len(top.ts) {
			top.t = top.ts[top.i]
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
}

// causalOrder moves every recv that the wall clocks put before its send (nodes on different hosts,
// whose clock offset is known only within the round trip that measured it) to its send's time, and
// the receiver's later events with it, until no recv precedes its send: the logical clocks' order,
// where the wall clocks are not precise enough. It returns how many recvs moved and the most one
// moved.
func (m *model) causalOrder() (moved int, most int64) {
	for pass := 0; pass <= len(m.ids); pass++ {
		changed := false
		for _, id := range m.ids {
			ts := m.ts[id]
			var last int64
			for i, e := range m.log(id).Events {
				t := max(ts[i], last)
				if e.Ev == logs.EvRecv && e.Msg != nil {
					if r, ok := m.sends[e.Msg.ID]; ok && t < m.ts[r.node][r.i] {
						s := m.ts[r.node][r.i]
						if pass == 0 || ts[i] < s {
							moved++
							most = max(most, s-t)
						}
						t = s
					}
				}
				if t != ts[i] {
					ts[i], changed = t, true
				}
				last = t
			}
		}
		if !changed {
			break
		}
	}
	return moved, most
}

// bounds finds the time origin (the launcher's begin) and the end of observation (its stopping).
func (m *model) bounds() {
	begin, end := int64(0), int64(0)
	for _, r := range m.run.Launcher {
		if r.Ev == logs.LaunchBegin && begin == 0 {
			begin = r.TS
		}
		if r.Ev == logs.LaunchStopping && end == 0 {
			end = r.TS
		}
	}
	if begin == 0 {
		if len(m.order) > 0 {
			begin = m.order[0].t
		}
		m.warnf("launcher.jsonl has no begin record: times are counted from the first event")
	}
	m.begin = begin // rel() needs it from here on
	if end == 0 {
		end = begin
		if len(m.order) > 0 {
			end = m.order[len(m.order)-1].t
		}
		m.warnf("launcher.jsonl has no stopping record: the run is judged up to its last event (%s)", m.rel(end))
	}
	m.end = end
}

// incOf returns node id's incarnation inc, nil if none.
func (m *model) incOf(id, inc int) *incarnation {
	for _, x := range m.incs[id] {
		if x.inc == inc {
			return x
		}
	}
	return nil
}

func (m *model) buildIncarnations() {
	m.incs = map[int][]*incarnation{}
	for i := range m.run.Launcher {
		r := &m.run.Launcher[i]
		switch r.Ev {
		case logs.LaunchSpawned:
			if m.incOf(r.Node, r.Inc) != nil {
				m.warnf("launcher.jsonl spawns node %d incarnation %d twice", r.Node, r.Inc)
				continue
			}
			m.incs[r.Node] = append(m.incs[r.Node], &incarnation{node: r.Node, inc: r.Inc, start: r.TS, end: forever, spawn: r, first: -1, last: -1})
		case logs.LaunchExited:
			x := m.incOf(r.Node, r.Inc)
			if x == nil || x.exit != nil {
				m.strayExits = append(m.strayExits, r)
				continue
			}
			x.exit = r
		}
	}
	for _, id := range m.ids {
		for i, e := range m.log(id).Events {
			t := m.ts[id][i]
			x := m.incOf(id, e.Inc)
			if x == nil {
				x = &incarnation{node: id, inc: e.Inc, start: t, end: forever, first: -1, last: -1}
				m.incs[id] = append(m.incs[id], x)
			}
			if x.first < 0 {
				x.first = i
			}
			x.last = i
			x.start = min(x.start, t)
		}
	}
	for _, id := range m.ids {
		xs := m.incs[id]
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].start < xs[j].start })
		for k, x := range xs {
			end := int64(forever)
			if x.exit != nil {
				end = x.exit.TS
			}
			if t, ok := m.stopOf(x); ok {
				end = min(end, t) // a node that logged stop takes no further part
			}
			x.died = max(end, x.start)
			if k+1 < len(xs) {
				end = min(end, xs[k+1].start)
			}
			x.end = max(end, x.start)
		}
	}
	m.opTime = make([]int64, len(m.faults))
	pausedAt := map[int]int64{}
	for j, op := range m.faults {
		m.opTime[j] = op.TS
		switch op.Op {
		case logs.OpKill, logs.OpStop:
			for _, id := range op.Targets {
				if x := m.victim(id, op.TS); x != nil {
					x.end = max(min(x.end, op.TS), x.start)
					x.died = max(min(x.died, op.TS), x.start)
					m.opTime[j] = min(m.opTime[j], x.end)
				}
			}
		case "pause":
			for _, id := range op.Targets {
				pausedAt[id] = op.TS
			}
		case "resume":
			// The launcher writes a resume's record after the SIGCONT; the node's first event after
			// its pause shows when it really ran again.
			for _, id := range op.Targets {
				if from, ok := pausedAt[id]; ok {
					if t, ok := m.firstEventAfter(id, from); ok && t < m.opTime[j] {
						m.opTime[j] = t
					}
				}
			}
		}
	}
}

// firstEventAfter returns the time of node id's first event after t.
func (m *model) firstEventAfter(id int, t int64) (int64, bool) {
	ts := m.ts[id]
	i := sort.Search(len(ts), func(i int) bool { return ts[i] > t })
	if i == len(ts) {
		return 0, false
	}
	return ts[i], true
}

// stopOf returns the time of the first stop event of incarnation x.
func (m *model) stopOf(x *incarnation) (int64, bool) {
	if x.first < 0 {
		return 0, false
	}
	evs := m.log(x.node).Events
	for i := x.first; i <= x.last; i++ {
		if evs[i].Inc == x.inc && evs[i].Ev == logs.EvStop {
			return m.ts[x.node][i], true
		}
	}
	return 0, false
}

// victim is the incarnation of node id that a kill recorded at t ended.
func (m *model) victim(id int, t int64) *incarnation {
	var x *incarnation
	for _, y := range m.incs[id] {
		if y.start <= t {
			x = y
		}
	}
	switch {
	case x == nil:
		return nil
	case x.end >= t:
		return x
	case x.exit != nil && x.exit.Signal != "" && x.end >= t-killSlack:
		return x
	}
	return nil
}

// rel formats t as milliseconds since the run's begin: "1203.5ms".
func (m *model) rel(t int64) string { return fmtDur(t - m.begin) }

// fmtDur formats a duration in milliseconds, to a tenth: "312ms", "0.4ms", "-2ms".
func fmtDur(ns int64) string { return strconv.FormatFloat(roundMS(ns, 10), 'f', -1, 64) + "ms" }

// roundMS converts ns to milliseconds rounded to 1/per.
func roundMS(ns int64, per float64) float64 {
	return math.Round(float64(ns)/1e6*per) / per
}

// opName renders a chaos op for people: "kill 5", "heal".
func opName(op logs.ChaosRecord) string {
	if len(op.Targets) == 0 {
		return op.Op
	}
	return op.Op + " " + joinIDs(op.Targets, ",")
}

func joinIDs(ids []int, sep string) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += sep
		}
		s += strconv.Itoa(id)
	}
	return s
}
