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
	firstLine   int // the line of its first event (0: not known)
	firstT      int64
	stopT       int64 // its first stop event's time, when stopped
	stopped     bool
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

// model is a run turned into timelines: each node's incarnations, pauses and beliefs, and the
// network's components, played in time order as a sequence of points (timeline.go). The logs are
// never held: a first pass (scan.go) learns what the timeline needs of them, and the properties
// are judged in a second, as the points and the events go by (pass.go).
type model struct {
	// run holds the run's records; its logs are read through stream.
	run        *logs.Run
	stream     *logs.Stream
	ids        []int // the cluster's node IDs, ascending
	index      map[int]int
	begin, end int64
	// nodes is what the first pass learnt of each node's log (cluster.json's nodes).
	nodes map[int]*nodeIndex
	// sends holds every msg.id sent (the first send of each, when a run reuses one; dupSends
	// counts the sends that did, dupWarn names the first).
	sends    *sentSet
	class    *sendClass
	dupSends int
	dupWarn  string
	// causal: the run is played in the causal order (a recv came before its send on the wall
	// clocks); moved recvs were moved to their send's time, by up to most.
	causal      bool
	moved       int
	most        int64
	hasEvents   bool
	firstT      int64 // the first and last events' times in the order
	lastT       int64
	incs        map[int][]*incarnation
	strayExits  []*logs.LaunchRecord // exited records of no spawned incarnation
	faults      []logs.ChaosRecord   // the chaos ops that were applied, by time
	opTime      []int64              // when each fault took effect (a kill: its victim's death)
	resumeAfter map[[2]int]int       // fault j and node -> its firstEventAfter question
	warn        []string
	// effect[j] is when every node concerned had taken record j's rules (partition, link, heal).
	effect []int64
	// linkWin[j] is when link rule j was in force at its receiver (to: forever while never removed).
	linkWin map[int]span
	// items are the timeline's changes that do not come from the logs (incarnations, pauses, rules).
	items []item
	// sweep plays the timeline (the second pass); paused and split are the stretches it has
	// played in which each node was paused and the live nodes were split into components.
	sweep  *sweeper
	paused map[int][]span
	split  []span
	// unacked lists, by rule record, the live nodes that did not acknowledge it.
	unacked map[int][]int
	// accJ's accepts, computed again for each partition record the play comes to.
	accCache map[int]map[int]bool
	accJ     int
}

// newModel reads a run's records and makes the first pass over its logs (an error: they cannot be
// read). The second, in which the timeline is played, is the checker's (pass.go).
func newModel(s *logs.Stream) (*model, error) {
	run := s.Run
	m := &model{run: run, stream: s, index: map[int]int{}, linkWin: map[int]span{}, paused: map[int][]span{}}
	m.ids = run.Cluster.IDs()
	sort.Ints(m.ids)
	for k, id := range m.ids {
		m.index[id] = k
	}
	var faults []logs.ChaosRecord
	for _, op := range run.Chaos {
		if op.Error == "" {
			faults = append(faults, op)
		}
	}
	sort.SliceStable(faults, func(i, j int) bool { return faults[i].TS < faults[j].TS })
	queries := resumeQueries(faults)
	if err := m.scan(queries); err != nil {
		return nil, err
	}
	m.orderWarnings()
	m.bounds()
	for _, op := range run.Chaos {
		if op.Error != "" {
			m.warnf("chaos: %s at %s was not applied: %s", opName(op), m.rel(op.TS), op.Error)
		}
	}
	m.faults = faults
	m.buildIncarnations()
	for _, r := range run.Launcher {
		if r.Ev == logs.LaunchExited && strings.HasPrefix(r.Detail, logs.AgentLost) {
			m.warnf("node %d incarnation %d counts as crashed at %s: %s", r.Node, r.Inc, m.rel(r.TS), r.Detail)
		}
	}
	m.staticItems()
	return m, nil
}

func (m *model) warnf(format string, args ...any) {
	m.warn = append(m.warn, fmt.Sprintf(format, args...))
}

// where names event i of node id for people: "nodes/3.jsonl:17" (line is its line in the file, 0
// when not known).
func (m *model) where(id, i, line int) string {
	if line > 0 {
		return logs.NodeLogName(id) + ":" + strconv.Itoa(line)
	}
	return fmt.Sprintf("%s event %d", logs.NodeLogName(id), i+1)
}

// orderWarnings says what the first pass found of the order: msg.ids sent twice, times that go back
// in a file, recvs that the wall clocks put before their send.
func (m *model) orderWarnings() {
	if m.dupSends > 0 {
		m.warnf("%s", m.dupWarn)
	}
	if m.dupSends > 1 {
		m.warnf("%d sends reuse a msg.id", m.dupSends)
	}
	for _, id := range m.ids {
		if w := m.nodes[id].tsBack; w != "" {
			m.warnf("%s", w)
		}
	}
	if m.moved > 0 {
		m.warnf("%d recv events came before their send by up to %s (clocks of different hosts, after the offsets of cluster.json were taken off): they are ordered after the send, as the logical clocks say", m.moved, fmtDur(m.most))
	}
}

// resumeQueries lists, for each resume record, the nodes whose first event after their pause will
// tell when they ran again (buildIncarnations): node -> the pauses' times.
func resumeQueries(faults []logs.ChaosRecord) map[int][]int64 {
	out := map[int][]int64{}
	pausedAt := map[int]int64{}
	for _, op := range faults {
		switch op.Op {
		case logs.OpPause:
			for _, id := range op.Targets {
				pausedAt[id] = op.TS
			}
		case logs.OpResume:
			for _, id := range op.Targets {
				if from, ok := pausedAt[id]; ok {
					out[id] = append(out[id], from)
				}
			}
		}
	}
	return out
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
		if m.hasEvents {
			begin = m.firstT
		}
		m.warnf("launcher.jsonl has no begin record: times are counted from the first event")
	}
	m.begin = begin // rel() needs it from here on
	if end == 0 {
		end = begin
		if m.hasEvents {
			end = m.lastT
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
		for _, xi := range m.nodes[id].incs {
			x := m.incOf(id, xi.inc)
			if x == nil {
				x = &incarnation{node: id, inc: xi.inc, start: xi.firstT, end: forever, first: -1, last: -1}
				m.incs[id] = append(m.incs[id], x)
			}
			x.first, x.last, x.firstLine, x.firstT = xi.first, xi.last, xi.firstLine, xi.firstT
			x.stopT, x.stopped = xi.stopT, xi.stopped
			// The times of a node's log never go back: its first event is its earliest.
			x.start = min(x.start, xi.firstT)
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

// firstEventAfter returns the time of node id's first event after t, one of the times the first
// pass was asked about (resumeQueries).
func (m *model) firstEventAfter(id int, t int64) (int64, bool) {
	ni := m.nodes[id]
	if ni == nil {
		return 0, false
	}
	i := sort.Search(len(ni.after), func(i int) bool { return ni.after[i].from >= t })
	if i == len(ni.after) || ni.after[i].from != t {
		return 0, false
	}
	return ni.after[i].t, ni.after[i].ok
}

// stopOf returns the time of the first stop event of incarnation x.
func (m *model) stopOf(x *incarnation) (int64, bool) {
	if x.first < 0 {
		return 0, false
	}
	return x.stopT, x.stopped
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
