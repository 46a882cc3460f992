package check

// The timeline: the model's changes played in time order into points, and the questions the
// properties ask of it (who is live, who believes what, whether the live nodes agree).

import (
	"cmp"
	"maps"
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
	ref  int // itNet: index in m.faults
	seq  int // its place in the list before sorting
}

// staticItems lists the timeline's changes that do not come from the logs, in the order they are
// played: in time, then kind order, then the order they were listed in (incarnations by node,
// pauses, rules). A node's events are played between them (sweeper.instant). It also finds when
// each link rule was in force, from the rule records alone.
func (m *model) staticItems() {
	var items []item
	for _, id := range m.ids {
		for _, x := range m.incs[id] {
			items = append(items, item{t: x.start, kind: itLive, node: id, inc: x.inc})
			if x.end != forever {
				items = append(items, item{t: x.end, kind: itDie, node: id, inc: x.inc})
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
	// A stable sort, made by seq: pdqsort is faster than a stable merge.
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
	m.items = items
	net := wholeNet
	for _, it := range items {
		if it.kind == itNet {
			net = m.applyNet(net, it, true)
		}
	}
}

// sweeper plays the run's changes in time order (the static items and the nodes' events) and makes
// a point whenever the state changed; it keeps only the latest.
type sweeper struct {
	m        *model
	st       []nodeState
	net      *netState
	pausedAt map[int]int64 // the nodes paused now, since when
	next     int           // the next static item
	pt       *point        // the point in force, nil before the first
	// splitFrom is when the live nodes last came apart into components (-1: they are one now).
	splitFrom int64
}

func newSweeper(m *model) *sweeper {
	return &sweeper{m: m, st: make([]nodeState, len(m.ids)), net: wholeNet, pausedAt: map[int]int64{}, splitFrom: -1}
}

// nextStatic is the time of the next static item; ok false when there is none.
func (sw *sweeper) nextStatic() (int64, bool) {
	if sw.next < len(sw.m.items) {
		return sw.m.items[sw.next].t, true
	}
	return 0, false
}

// instant plays every change at t — the static items of kinds before itEvent, the events, the
// pauses — and returns the new point, or nil when nothing changed.
func (sw *sweeper) instant(t int64, evs []*mEvent) *point {
	m, items := sw.m, sw.m.items
	changed := false
	for ; sw.next < len(items) && items[sw.next].t == t && items[sw.next].kind < itEvent; sw.next++ {
		changed = sw.apply(items[sw.next], nil) || changed
	}
	for _, e := range evs {
		changed = sw.apply(item{t: t, kind: itEvent, node: e.node, inc: e.Inc}, e) || changed
	}
	for ; sw.next < len(items) && items[sw.next].t == t; sw.next++ {
		changed = sw.apply(items[sw.next], nil) || changed
	}
	if !changed {
		return nil
	}
	pt := &point{t: t, state: slices.Clone(sw.st), net: sw.net}
	if sw.net.cuts() {
		pt.comps = m.components(sw.net, sw.st)
	}
	switch split := len(pt.comps) >= 2; {
	case split && sw.splitFrom < 0:
		sw.splitFrom = t
	case !split && sw.splitFrom >= 0:
		m.split = append(m.split, span{sw.splitFrom, t})
		sw.splitFrom = -1
	}
	sw.pt = pt
	return pt
}

// finish closes what is still open at the end of everything observed.
func (sw *sweeper) finish() {
	for _, id := range slices.Sorted(maps.Keys(sw.pausedAt)) {
		sw.m.paused[id] = append(sw.m.paused[id], span{sw.pausedAt[id], forever})
	}
	clear(sw.pausedAt)
	if sw.splitFrom >= 0 {
		sw.m.split = append(sw.m.split, span{sw.splitFrom, forever})
		sw.splitFrom = -1
	}
}

// stateAt is the state in force now (after every change so far); a zero state before the first
// point.
func (sw *sweeper) state() []nodeState {
	if sw.pt != nil {
		return sw.pt.state
	}
	return make([]nodeState, len(sw.m.ids))
}

func (sw *sweeper) apply(it item, e *mEvent) bool {
	m := sw.m
	if it.kind == itNet {
		sw.net = m.applyNet(sw.net, it, false)
		return true
	}
	k, ok := m.index[it.node]
	if !ok {
		return false
	}
	s := &sw.st[k]
	unpause := func() {
		if s.paused {
			m.paused[it.node] = append(m.paused[it.node], span{sw.pausedAt[it.node], it.t})
			delete(sw.pausedAt, it.node)
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
		s.paused, sw.pausedAt[it.node] = true, it.t
	case itResume:
		if !s.paused {
			return false
		}
		unpause()
	case itEvent:
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

// running is node id's time not paused in [a, b), as far as the timeline has been played (a pause
// still going counts as lasting for ever).
func (m *model) running(id int, a, b int64) int64 {
	d := b - a
	for _, p := range m.paused[id] {
		if lo, hi := max(a, p.from), min(b, p.to); hi > lo {
			d -= hi - lo
		}
	}
	if from, ok := m.pausedNow(id); ok {
		if lo := max(a, from); b > lo {
			d -= b - lo
		}
	}
	return d
}

// electing is the time in [a, b) that node id's election could make progress: neither paused nor
// in a split network. An election cut off by a partition (a Bully side without a majority keeps
// electing, a ring cut in two cannot close) is not held to the termination bound until the heal.
// It counts what the timeline has played so far (a pause or a split still going lasts for ever).
func (m *model) electing(id int, a, b int64) int64 {
	off := slices.Clone(m.paused[id])
	if from, ok := m.pausedNow(id); ok {
		off = append(off, span{from, forever})
	}
	// The split stretches are in time order: only those that end after a can count.
	k := sort.Search(len(m.split), func(i int) bool { return m.split[i].to > a })
	for ; k < len(m.split) && m.split[k].from < b; k++ {
		off = append(off, m.split[k])
	}
	if m.sweep != nil && m.sweep.splitFrom >= 0 {
		off = append(off, span{m.sweep.splitFrom, forever})
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

// pausedNow tells whether node id is paused at this point of the play, and since when.
func (m *model) pausedNow(id int) (int64, bool) {
	if m.sweep == nil {
		return 0, false
	}
	from, ok := m.sweep.pausedAt[id]
	return from, ok
}
