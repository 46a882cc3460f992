package check

// The first pass over the run: what the timeline needs to know of each node's log before it can be
// played in time order (its incarnations, their first events and stops, the times a resumed node
// logged again), the run's message ids, and the findings that concern a log alone (its clocks, its
// unknown events, its last counters). It keeps a few numbers per node and incarnation, and the sent
// msg.ids as ranges.

import (
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/leaderlab/leaderlab/logs"
)

// nodeIndex is what the first pass learns of one node's log.
type nodeIndex struct {
	events int
	incs   []*incIndex // in the order of their first event
	// tsBack is the first "ts goes back" warning of the log ("" when its times never go back).
	tsBack   string
	lastBase int64
	// clockErr is checkClocks' finding: an incarnation or a Lamport clock that goes back.
	clockErr          string
	prevInc           int
	prevLC            uint64
	unknown           []unknownEv // the first event of each unknown kind, warned as unknownEvents does
	unknownSeen       map[string]bool
	stats             *NodeStats // the last stats event
	torn              []logs.TornLine
	after             []afterQuery // firstEventAfter's questions, by from
	nextAfter         int
	firstT, lastT     int64
	hasFirst, hasLast bool
}

type unknownEv struct{ ev, where string }

// incIndex is one incarnation as its node's log shows it.
type incIndex struct {
	inc                    int
	first, last, firstLine int
	firstT                 int64 // its first event's time in the order
	stopT                  int64 // its first stop event's, when stopped
	stopped                bool
}

func (ni *nodeIndex) inc(inc int) *incIndex {
	for _, x := range ni.incs {
		if x.inc == inc {
			return x
		}
	}
	return nil
}

// afterQuery asks for a node's first event after from (a resume record's: when it really ran).
type afterQuery struct {
	from int64
	t    int64
	ok   bool
}

var knownEvents = map[string]bool{logs.EvStart: true, logs.EvSend: true, logs.EvRecv: true, logs.EvDrop: true, logs.EvSuspect: true,
	logs.EvTrust: true, logs.EvElect: true, logs.EvLeader: true, logs.EvPulse: true, logs.EvStop: true, logs.EvStats: true, logs.EvVerdict: true}

// scan makes the first pass. It reads the run in the wall clocks' order and, when a recv came
// before its send there (or some msg.id was sent twice, which changes which send a recv is
// matched with), again in the causal order, which the timeline will be played in.
func (m *model) scan(queries map[int][]int64) error {
	m.sends = newSentSet()
	early := map[string]int64{} // recvs whose send has not come yet: the earliest one's time
	late := false
	if err := m.scanPass(false, queries, func(e *mEvent) {
		if e.Msg == nil {
			return
		}
		switch e.Ev {
		case logs.EvSend:
			if t, ok := early[e.Msg.ID]; ok {
				late = late || t < e.t
				delete(early, e.Msg.ID)
			}
			h, seq, ranged := m.class.ranged(e.node, e.Msg.ID)
			m.sends.add(e.node, e.i, e.Msg.ID, h, seq, ranged)
		case logs.EvRecv:
			if t, ok := early[e.Msg.ID]; (!ok || e.t < t) && !m.sends.has(e.Msg.ID) {
				early[e.Msg.ID] = e.t
			}
		}
	}); err != nil {
		return err
	}
	if reused := m.sends.reusedIDs(); len(reused) > 0 {
		if err := m.firstSends(reused); err != nil {
			return err
		}
		late = true
	}
	if !late {
		return nil
	}
	m.causal = true
	return m.scanPass(true, queries, nil)
}

// scanPass reads the run once in order, filling the node indexes; each is also handed to also.
func (m *model) scanPass(causal bool, queries map[int][]int64, also func(*mEvent)) error {
	m.nodes = map[int]*nodeIndex{}
	for _, id := range m.ids {
		ni := &nodeIndex{unknownSeen: map[string]bool{}}
		for _, from := range queries[id] {
			ni.after = append(ni.after, afterQuery{from: from})
		}
		sort.SliceStable(ni.after, func(a, b int) bool { return ni.after[a].from < ni.after[b].from })
		m.nodes[id] = ni
	}
	g, err := newMerger(m.stream, m.ids, causal, m.sends)
	if err != nil {
		return m.logsErr(err)
	}
	defer g.close()
	m.class = newSendClass()
	first := true
	for {
		t, evs, err := g.instant()
		if err == io.EOF {
			break
		}
		if err != nil {
			return m.logsErr(err)
		}
		if first {
			m.firstT, m.hasEvents, first = t, true, false
		}
		m.lastT = t
		for _, e := range evs {
			m.scanEvent(e)
			if also != nil {
				also(e)
			}
		}
	}
	for id, torn := range g.torn {
		m.nodes[id].torn = torn
	}
	m.moved, m.most = g.moved, g.most
	return nil
}

// logsErr is the error to report for a log a reader could not read: the one ReadRun gives.
func (m *model) logsErr(err error) error {
	if canonical := m.stream.Err(); canonical != nil {
		return canonical
	}
	return err
}

func (m *model) scanEvent(e *mEvent) {
	ni := m.nodes[e.node]
	id, i := e.node, e.i
	ni.events = i + 1
	if i > 0 && e.TS < ni.lastBase && ni.tsBack == "" {
		ni.tsBack = fmt.Sprintf("%s: ts goes back %s; the file's order is kept", m.where(id, i, e.line), fmtDur(ni.lastBase-e.TS))
	}
	if i == 0 || e.TS > ni.lastBase {
		ni.lastBase = e.TS
	}
	x := ni.inc(e.Inc)
	if x == nil {
		x = &incIndex{inc: e.Inc, first: i, firstLine: e.line, firstT: e.t}
		ni.incs = append(ni.incs, x)
	}
	x.last = i
	if e.Ev == logs.EvStop && !x.stopped {
		x.stopT, x.stopped = e.t, true
	}
	if i > 0 && ni.clockErr == "" {
		switch {
		case e.Inc < ni.prevInc:
			ni.clockErr = fmt.Sprintf("%s: incarnation %d after %d", m.where(id, i, e.line), e.Inc, ni.prevInc)
		case e.Inc == ni.prevInc && e.LC < ni.prevLC:
			ni.clockErr = fmt.Sprintf("%s: lc %d after %d in incarnation %d", m.where(id, i, e.line), e.LC, ni.prevLC, e.Inc)
		}
	}
	ni.prevInc, ni.prevLC = e.Inc, e.LC
	if !knownEvents[e.Ev] && !ni.unknownSeen[e.Ev] {
		ni.unknownSeen[e.Ev] = true
		ni.unknown = append(ni.unknown, unknownEv{e.Ev, m.where(id, i, e.line)})
	}
	if e.Ev == logs.EvStats && e.Stats != nil {
		ni.stats = &NodeStats{Node: id, Inc: e.Inc, Stats: *e.Stats}
	}
	for ni.nextAfter < len(ni.after) && ni.after[ni.nextAfter].from < e.t {
		ni.after[ni.nextAfter].t, ni.after[ni.nextAfter].ok = e.t, true
		ni.nextAfter++
	}
}

// readLog reads one log (open: the stream's Node or Observer) from its start, handing fn each
// event with its place and line, until fn returns false.
func (m *model) readLog(open func(int) (logs.EventReader, error), id int, fn func(i int, e *logs.Event, line int) bool) error {
	r, err := open(id)
	if err != nil {
		return m.logsErr(err)
	}
	defer r.Close()
	for i := 0; ; i++ {
		e, line, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return m.logsErr(err)
		}
		if !fn(i, e, line) {
			return nil
		}
	}
}

// firstSends finds, for each msg.id sent more than once, its first send in (node ID, place in the
// log) order (the one a recv is matched with), and warns of the reuse as it always did: the first
// send that reused an id, and how many did. It reads the logs one by one.
func (m *model) firstSends(reused map[string]bool) error {
	m.sends.first = map[string]sendRef{}
	for _, id := range m.ids {
		if !slices.Contains(m.stream.Nodes, id) {
			continue
		}
		err := m.readLog(m.stream.Node, id, func(i int, e *logs.Event, line int) bool {
			if e.Ev != logs.EvSend || e.Msg == nil || !reused[e.Msg.ID] {
				return true
			}
			if _, dup := m.sends.first[e.Msg.ID]; !dup {
				m.sends.first[e.Msg.ID] = sendRef{id, i}
				return true
			}
			m.dupSends++
			if m.dupSends == 1 {
				m.dupWarn = fmt.Sprintf("%s: msg.id %q was sent before (ids should be unique in the run)", m.where(id, i, line), e.Msg.ID)
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// sendWhere names a send for people: the event of node mt.node that a recv of id is matched with
// (its place is looked up in the node's log: a ranged id's is not kept).
func (m *model) sendWhere(id string, mt match) string {
	where := logs.NodeLogName(mt.node)
	class := newSendClass()
	m.readLog(m.stream.Node, mt.node, func(i int, e *logs.Event, line int) bool {
		if e.Ev != logs.EvSend || e.Msg == nil {
			return true
		}
		_, _, ranged := class.ranged(mt.node, e.Msg.ID)
		if (mt.ref >= 0 && i == mt.ref) || (mt.ref < 0 && ranged && e.Msg.ID == id) {
			where = m.where(mt.node, i, line)
			return false
		}
		return true
	})
	return where
}
