package check

// The timeline: the model's changes played in time order into points, and the questions the
// properties ask of it (who is live, who believes what, whether the live nodes agree).

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/leaderlab/leaderlab/logs"
)

type itemKind uint8

// At one moment, deaths come before births (a restart at the instant of a kill) and changes of
// liveness before the events they bound; but a pause comes after the events of its instant: a node
// that logged at the moment it was stopped logged before it stopped (the simulator's virtual clock
// gives both the same time), and its event must not be read as a sign it runs again (seed 920984).
const (
	itDie itemKind = iota
	itLive
	itNet
	itResume
	itEvent
	itPause
)

type item struct {
	t    int64
	kind itemKind
	node int // itNet: the node that takes the rules (0: a partition of unknown sides)
	inc  int
	ref  int // itEvent: index in the node's log; itNet: index in m.faults
	seq  int // its place in the list before sorting
}

// sweep plays the run's changes in time order and records a point whenever the state changed.
func (m *model) sweep() {
	// A node's events other than elect and leader change its state only by showing that it runs
	// when chaos.jsonl says it was paused: for a node never paused they are left out, which keeps
	// a million-message run's sweep to its beliefs.
	maybePaused := map[int]bool{}
	for _, op := range m.faults {
		if op.Op == logs.OpPause {
			for _, id := range op.Targets {
				maybePaused[id] = true
			}
		}
	}
	var items []item
	for _, id := range m.ids {
		for _, x := range m.incs[id] {
			items = append(items, item{t: x.start, kind: itLive, node: id, inc: x.inc})
			if x.end != forever {
				items = append(items, item{t: x.end, kind: itDie, node: id, inc: x.inc})
			}
		}
		all := maybePaused[id]
		for i, e := range m.log(id).Events {
			if all || e.Ev == logs.EvElect || e.Ev == logs.EvLeader {
				items = append(items, item{t: m.ts[id][i], kind: itEvent, node: id, inc: e.Inc, ref: i})
			}
		}
	}
	for j, op := range m.faults {
		switch op.Op {
		case logs.OpPause, logs.OpResume:
			kind := map[string]itemKind{logs.OpPause: itPause, logs.OpResume: itResume}[op.Op]
			for _, id := range op.Targets {
				items = append(items, item{t: m.opTime[j], kind: kind, node: id})
			}
		}
	}
	netItems, effect := m.netItems()
	m.effect = effect
	items = append(items, netItems...)
	// In time, then kind order, then the order they were listed in (a stable sort, made by seq:
	// pdqsort is several times faster than a stable merge on the million items of a large run).
	for i := range items {
		items[i].seq = i
	}
	slices.SortFunc(items, func(a, b item) int {
		if a.t != b.t {
			return cmp.Compare(a.t, b.t)
		}
		if a.kind != b.kind {
			return cmp.Compare(a.kind, b.kind)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	st := make([]nodeState, len(m.ids))
	net := wholeNet
	pausedAt := map[int]int64{}
	for i := 0; i < len(items); {
		t, changed := items[i].t, false
		for ; i < len(items) && items[i].t == t; i++ {
			if items[i].kind == itNet {
				net, changed = m.applyNet(net, items[i]), true
				continue
			}
			changed = m.apply(items[i], st, pausedAt) || changed
		}
		if changed {
			pt := point{t: t, state: slices.Clone(st), net: net}
			if net.cuts() {
				pt.comps = m.components(net, st)
			}
			m.points = append(m.points, pt)
		}
	}
	for id, from := range pausedAt {
		m.paused[id] = append(m.paused[id], span{from, forever})
	}
}

func (m *model) apply(it item, st []nodeState, pausedAt map[int]int64) bool {
	k, ok := m.index[it.node]
	if !ok {
		return false
	}
	s := &st[k]
	unpause := func() {
		if s.paused {
			m.paused[it.node] = append(m.paused[it.node], span{pausedAt[it.node], it.t})
			delete(pausedAt, it.node)
			s.paused = false
		}
	}
	switch it.kind {
	case itLive:
		unpause()
		*s = nodeState{inc: it.inc}
	case itDie:
		if s.inc != it.inc {
			return false
		}
		unpause()
		*s = nodeState{}
	case itPause:
		if s.inc == 0 || s.paused {
			return false
		}
		s.paused, pausedAt[it.node] = true, it.t
	case itResume:
		if !s.paused {
			return false
		}
		unpause()
	case itEvent:
		e := m.log(it.node).Events[it.ref]
		if s.inc != e.Inc {
			return false // an event of a dead incarnation tells nothing about the node now
		}
		changed := s.paused
		unpause() // a node that logs runs, whatever chaos.jsonl says
		if e.Ev != logs.EvElect && e.Ev != logs.EvLeader {
			return changed
		}
		b := 0
		if e.Ev == logs.EvLeader {
			b = e.Leader
		}
		if s.belief == b {
			return changed
		}
		s.belief = b
	}
	return true
}

// at returns the index of the point in force at t (the last one at or before t), -1 if none.
func (m *model) at(t int64) int {
	return sort.Search(len(m.points), func(i int) bool { return m.points[i].t > t }) - 1
}

// stateAt returns the state at t (after every change at t). Before the first point every node is
// dead: a zero state.
func (m *model) stateAt(t int64) []nodeState {
	if i := m.at(t); i >= 0 {
		return m.points[i].state
	}
	return make([]nodeState, len(m.ids))
}

// agreed tells whether the live nodes agree on one leader that is live (and so believes itself).
func (m *model) agreed(st []nodeState) (int, bool) {
	l, any := 0, false
	for _, s := range st {
		if !s.live() {
			continue
		}
		if s.belief == 0 || (any && s.belief != l) {
			return 0, false
		}
		l, any = s.belief, true
	}
	if !any {
		return 0, false
	}
	k, ok := m.index[l]
	if !ok || !st[k].live() {
		return 0, false
	}
	return l, true
}

// running is node id's time not paused in [a, b).
func (m *model) running(id int, a, b int64) int64 {
	d := b - a
	for _, p := range m.paused[id] {
		if lo, hi := max(a, p.from), min(b, p.to); hi > lo {
			d -= hi - lo
		}
	}
	return d
}

// electing is the time in [a, b) that node id's election could make progress: neither paused nor
// in a split network. An election cut off by a partition (a Bully side without a majority keeps
// electing, a ring cut in two cannot close) is not held to the termination bound until the heal.
func (m *model) electing(id int, a, b int64) int64 {
	var off []span
	for _, p := range m.paused[id] {
		off = append(off, span{p.from, p.to})
	}
	for i, pt := range m.points {
		to := int64(math.MaxInt64)
		if i+1 < len(m.points) {
			to = m.points[i+1].t
		}
		if len(pt.comps) >= 2 {
			off = append(off, span{pt.t, to})
		}
	}
	sort.Slice(off, func(i, j int) bool { return off[i].from < off[j].from })
	d, cur := b-a, a
	for _, s := range off {
		lo, hi := max(cur, s.from), min(b, s.to)
		if hi > lo {
			d -= hi - lo
			cur = hi
		}
	}
	return d
}
