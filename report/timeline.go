package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
)

// laneState is what one lane is at a moment.
type laneState struct {
	alive, paused bool
	belief        int // -1: no belief known
}

// cursor walks one lane's sorted stretches forward in time.
type cursor[T any] struct {
	xs       []T
	i        int
	from, to func(T) int64
}

// at returns the stretch covering t (t never decreases between calls).
func (c *cursor[T]) at(t int64) (T, bool) {
	for c.i < len(c.xs) && c.to(c.xs[c.i]) <= t {
		c.i++
	}
	var zero T
	if c.i < len(c.xs) && c.from(c.xs[c.i]) <= t {
		return c.xs[c.i], true
	}
	return zero, false
}

// leaderTimeline sweeps the lanes' incarnations, pauses and beliefs and records who the live nodes
// agreed on: a live leader that believes in itself and that every live node follows. While a
// partition (or a link drop) splits the live nodes into components, it records each component's
// leader instead. A stretch is one state in words: stretches are merged only when their text is
// the same. The checker's verdict is the judgement; this is the picture of it (it applies the kill
// records as the checker does, but takes a partition from its record's time, not its acks). The
// run's orderly stop, from the launcher's stopping to the end, is one last stretch.
func (b *builder) leaderTimeline() {
	n := len(b.d.Lanes)
	incs := make([]cursor[Inc], n)
	paused := make([]cursor[Span], n)
	beliefs := make([]cursor[Belief], n)
	var points []int64
	for l := range n {
		incs[l] = cursor[Inc]{xs: b.incs[l], from: func(x Inc) int64 { return x.From }, to: func(x Inc) int64 { return x.To }}
		for _, x := range b.incs[l] {
			points = append(points, x.From, x.To)
		}
	}
	perLanePaused := make([][]Span, n)
	for _, s := range b.d.Paused {
		perLanePaused[s.Lane] = append(perLanePaused[s.Lane], s)
		points = append(points, s.From, s.To)
	}
	perLaneBelief := make([][]Belief, n)
	for _, x := range b.d.Beliefs {
		perLaneBelief[x.Lane] = append(perLaneBelief[x.Lane], x)
		points = append(points, x.From, x.To)
	}
	for l := range n {
		paused[l] = cursor[Span]{xs: perLanePaused[l], from: func(x Span) int64 { return x.From }, to: func(x Span) int64 { return x.To }}
		beliefs[l] = cursor[Belief]{xs: perLaneBelief[l], from: func(x Belief) int64 { return x.From }, to: func(x Belief) int64 { return x.To }}
	}
	net := b.netChanges()
	for _, c := range net {
		points = append(points, c.t)
	}
	end := b.d.To
	if b.d.Stop != nil {
		end = b.d.Stop.From
	}
	points = append(points, b.d.From, end)
	slices.Sort(points)
	points = slices.Compact(points)
	st := make([]laneState, n)
	prev := make([]laneState, n)
	var rules *netRules
	var comps [][]int
	nc := 0
	first := true
	var segs []LeaderSeg
	for i, t := range points {
		if t < b.d.From || t >= end {
			continue
		}
		changed := false
		for nc < len(net) && net[nc].t <= t {
			rules = net[nc].rules
			nc++
			changed = true
		}
		for l := range n {
			_, alive := incs[l].at(t)
			_, p := paused[l].at(t)
			bel, ok := beliefs[l].at(t)
			st[l] = laneState{alive: alive, paused: alive && p, belief: -1}
			if ok && alive {
				st[l].belief = bel.Leader
			}
			if st[l].alive != prev[l].alive || st[l].paused != prev[l].paused {
				changed = true
			}
		}
		copy(prev, st)
		if changed || first {
			comps = b.components(rules, st)
			first = false
		}
		leader, text, parts := b.agreement(st, comps)
		to := end
		if i+1 < len(points) {
			to = min(points[i+1], end)
		}
		if k := len(segs) - 1; k >= 0 && segs[k].Leader == leader && segs[k].Text == text {
			segs[k].To = to
			continue
		}
		segs = append(segs, LeaderSeg{From: t, To: to, Leader: leader, Text: text, Parts: parts})
	}
	if s := b.d.Stop; s != nil {
		segs = append(segs, LeaderSeg{From: s.From, To: s.To, Text: s.Label, Stop: true})
	}
	b.d.Leaders = segs
}

// netRules are the network rules in force: each node's partition rule (the peers it accepts from;
// none: it accepts everyone) and the one-way link drops.
type netRules struct {
	accept map[int]map[int]bool
	drops  map[[2]int]bool
}

// blocked tells whether messages from x to y are refused.
func (r *netRules) blocked(x, y int) bool {
	if r.drops[[2]int{x, y}] {
		return true
	}
	if acc, ok := r.accept[y]; ok && !acc[x] {
		return true
	}
	return false
}

// netChange is the rules in force from t (nil: none can block a link).
type netChange struct {
	t     int64
	rules *netRules
}

// netChanges follows chaos.jsonl's partition, link and heal records (DESIGN.md, chaos.jsonl): a
// partition replaces the partition rules, a link drop adds a blocked link, a heal clears both.
func (b *builder) netChanges() []netChange {
	var out []netChange
	var accept map[int]map[int]bool
	drops := map[[2]int]bool{}
	for _, r := range b.run.Chaos {
		if r.Error != "" {
			continue
		}
		switch r.Op {
		case logs.OpPartition:
			accept = map[int]map[int]bool{}
			if len(r.Reach) > 0 {
				for x, peers := range r.Reach {
					acc := map[int]bool{x: true}
					for _, y := range peers {
						acc[y] = true
					}
					accept[x] = acc
				}
			} else {
				for _, g := range r.Groups {
					for _, x := range g {
						if accept[x] == nil {
							accept[x] = map[int]bool{}
						}
						for _, y := range g {
							accept[x][y] = true
						}
					}
				}
			}
		case logs.OpLink:
			if f := strings.Fields(r.Rule); len(f) > 0 && f[0] == "drop" {
				drops[[2]int{r.From, r.To}] = true
			} else {
				continue
			}
		case logs.OpHeal:
			accept, drops = nil, map[[2]int]bool{}
		default:
			continue
		}
		var rules *netRules
		if len(accept) > 0 || len(drops) > 0 {
			rules = &netRules{accept: accept, drops: maps.Clone(drops)}
		}
		out = append(out, netChange{t: b.us(r.TS), rules: rules})
	}
	slices.SortStableFunc(out, func(p, q netChange) int { return cmp.Compare(p.t, q.t) })
	return out
}

// components are the live nodes' components under the rules (lane indexes, each ascending by ID):
// nodes are joined by links open both ways. Nil while no rule can block a link: the live nodes are
// then one component.
func (b *builder) components(r *netRules, st []laneState) [][]int {
	if r == nil {
		return nil
	}
	var live []int
	for l, s := range st {
		if s.alive && !s.paused {
			live = append(live, l)
		}
	}
	seen := make([]bool, len(st))
	var out [][]int
	for _, a := range live {
		if seen[a] {
			continue
		}
		seen[a] = true
		comp := []int{a}
		for q := 0; q < len(comp); q++ {
			x := b.d.Lanes[comp[q]].ID
			for _, l := range live {
				y := b.d.Lanes[l].ID
				if !seen[l] && !r.blocked(x, y) && !r.blocked(y, x) {
					seen[l] = true
					comp = append(comp, l)
				}
			}
		}
		slices.SortFunc(comp, func(p, q int) int { return cmp.Compare(b.d.Lanes[p].ID, b.d.Lanes[q].ID) })
		out = append(out, comp)
	}
	slices.SortFunc(out, func(p, q []int) int { return cmp.Compare(b.d.Lanes[p[0]].ID, b.d.Lanes[q[0]].ID) })
	if len(out) < 2 {
		return nil
	}
	return out
}

// detailNodes is the most nodes whose beliefs a stretch's text lists one by one; beyond it the text
// counts them ("40 follow n6, 3 at ⊥").
const detailNodes = 24

// agreement returns the leader the live nodes agree on (0 for none) and the state in words; while
// the live nodes are split into components (comps, lane indexes), each component's leader instead,
// as parts: "1,2,3 → 3 | 4,5,6 → 6".
func (b *builder) agreement(st []laneState, comps [][]int) (int, string, []Part) {
	if len(b.byID) != len(st) {
		b.byID = make([]int, len(st))
		for l := range b.byID {
			b.byID[l] = l
		}
		slices.SortFunc(b.byID, func(p, q int) int { return cmp.Compare(b.d.Lanes[p].ID, b.d.Lanes[q].ID) })
	}
	byID := b.byID
	var dead, paused []int
	live := 0
	for _, l := range byID {
		switch s := st[l]; {
		case !s.alive:
			dead = append(dead, b.d.Lanes[l].ID)
		case s.paused:
			paused = append(paused, b.d.Lanes[l].ID)
		default:
			live++
		}
	}
	if len(comps) > 1 {
		parts := make([]Part, len(comps))
		texts := make([]string, len(comps))
		for i, c := range comps {
			ids := make([]int, len(c))
			for k, l := range c {
				ids[k] = b.d.Lanes[l].ID
			}
			parts[i] = Part{IDs: ids, Leader: b.agreed(st, c)}
			switch other := b.followed(st, c); {
			case parts[i].Leader > 0:
				texts[i] = fmt.Sprintf("%s → %d", idList(ids), parts[i].Leader)
			case other > 0:
				texts[i] = fmt.Sprintf("%s: follow %d, cut off from it", idList(ids), other)
			default:
				texts[i] = fmt.Sprintf("%s: no agreement (%s)", idList(ids), b.beliefsText(st, c))
			}
		}
		text := strings.Join(texts, " | ")
		if len(paused) > 0 {
			text += "; paused: " + idList(paused)
		}
		if len(dead) > 0 {
			text += "; dead: " + idList(dead)
		}
		return 0, text, parts
	}
	if leader := b.agreed(st, byID); leader > 0 {
		return leader, fmt.Sprintf("n%d leads: all %d live nodes follow it", leader, live), nil
	}
	if live == 0 {
		return 0, "no live node: " + b.beliefsText(st, byID), nil
	}
	return 0, "no agreement: " + b.beliefsText(st, byID), nil
}

// agreed is the leader that every live node of lanes follows and that follows itself, or 0.
func (b *builder) agreed(st []laneState, lanes []int) int {
	leader, n := -1, 0
	for _, l := range lanes {
		s := st[l]
		if !s.alive || s.paused {
			continue
		}
		n++
		switch {
		case s.belief <= 0:
			return 0
		case leader == -1:
			leader = s.belief
		case leader != s.belief:
			return 0
		}
	}
	if n == 0 || leader <= 0 {
		return 0
	}
	if l, ok := b.lane[leader]; ok && slices.Contains(lanes, l) && st[l].alive && !st[l].paused && st[l].belief == leader {
		return leader
	}
	return 0
}

// followed is the one leader every live node of lanes follows when it is not among them (or does
// not follow itself), else 0.
func (b *builder) followed(st []laneState, lanes []int) int {
	leader := -1
	for _, l := range lanes {
		s := st[l]
		if !s.alive || s.paused {
			continue
		}
		if s.belief <= 0 || (leader != -1 && leader != s.belief) {
			return 0
		}
		leader = s.belief
	}
	return max(leader, 0)
}

// beliefsText lists the lanes' states ("1→6 2→⊥ 3:dead"), or counts them when there are many.
func (b *builder) beliefsText(st []laneState, lanes []int) string {
	if len(lanes) <= detailNodes {
		parts := make([]string, len(lanes))
		for i, l := range lanes {
			id := b.d.Lanes[l].ID
			switch s := st[l]; {
			case !s.alive:
				parts[i] = fmt.Sprintf("%d:dead", id)
			case s.paused:
				parts[i] = fmt.Sprintf("%d:paused", id)
			case s.belief <= 0:
				parts[i] = fmt.Sprintf("%d→⊥", id)
			default:
				parts[i] = fmt.Sprintf("%d→%d", id, s.belief)
			}
		}
		return strings.Join(parts, " ")
	}
	follow := map[int]int{}
	var dead, paused, bottom int
	for _, l := range lanes {
		switch s := st[l]; {
		case !s.alive:
			dead++
		case s.paused:
			paused++
		case s.belief <= 0:
			bottom++
		default:
			follow[s.belief]++
		}
	}
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(follow)) {
		verb := "follow"
		if follow[id] == 1 {
			verb = "follows"
		}
		parts = append(parts, fmt.Sprintf("%d %s n%d", follow[id], verb, id))
	}
	if bottom > 0 {
		parts = append(parts, fmt.Sprintf("%d at ⊥", bottom))
	}
	if paused > 0 {
		parts = append(parts, fmt.Sprintf("%d paused", paused))
	}
	if dead > 0 {
		parts = append(parts, fmt.Sprintf("%d dead", dead))
	}
	return strings.Join(parts, ", ")
}

// idList writes ascending IDs as "1,2,3", runs of four or more as ranges once the list is long
// ("1-40,42").
func idList(ids []int) string {
	if len(ids) <= 8 {
		return joinInts(ids, ",")
	}
	var parts []string
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if j-i >= 3 {
			parts = append(parts, fmt.Sprintf("%d-%d", ids[i], ids[j]))
		} else {
			for k := i; k <= j; k++ {
				parts = append(parts, strconv.Itoa(ids[k]))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// violations finds, for each property the verdict failed, where in the diagram it can be seen.
func (b *builder) violations() {
	if b.v == nil {
		return
	}
	for _, p := range b.v.Properties {
		if p.OK {
			continue
		}
		if v, ok := b.violation(p); ok {
			b.d.Violations = append(b.d.Violations, v)
		}
	}
}

func (b *builder) violation(p check.Property) (Violation, bool) {
	all := make([]int, len(b.d.Lanes))
	for i := range all {
		all[i] = i
	}
	v := Violation{Property: p.Name, Text: p.Detail, Lanes: all}
	switch p.Name {
	case check.PropAgreement:
		v.From, v.To = b.d.End, b.d.End
		for _, s := range b.d.Leaders {
			if !s.Stop && s.From <= b.d.End && b.d.End <= s.To {
				v.From = s.From
			}
		}
		return v, true
	case check.PropUniqueness:
		for _, o := range b.d.Overlaps {
			if o.BeyondGrace {
				v.From, v.To, v.Lanes = o.From, o.To, o.Lanes
				return v, true
			}
		}
	case check.PropTermination:
		bound := int64(b.v.TerminationBoundMS * 1000)
		var longest *Belief
		for i := range b.d.Beliefs {
			x := &b.d.Beliefs[i]
			if x.Leader != 0 {
				continue
			}
			if x.To-x.From > bound {
				v.From, v.To, v.Lanes = x.From, x.To, []int{x.Lane}
				return v, true
			}
			if longest == nil || x.To-x.From > longest.To-longest.From {
				longest = x
			}
		}
		if longest != nil {
			v.From, v.To, v.Lanes = longest.From, longest.To, []int{longest.Lane}
			return v, true
		}
	case check.PropIntegrity:
		orphan := markType("orphan")
		for i, y := range b.d.Marks.Y {
			if y == orphan {
				t := b.d.Marks.T[i]
				v.From, v.To, v.Lanes = t, t, []int{b.d.Marks.L[i]}
				return v, true
			}
		}
	case check.PropComplexity:
		for i, e := range b.v.Metrics.Elections {
			if e.Faults == 0 && e.Bound != nil && e.Messages+e.Announce > *e.Bound && i < len(b.d.Elections) {
				v.From, v.To = b.d.Elections[i].From, b.d.Elections[i].To
				return v, true
			}
		}
	}
	return v, false
}

// firstViolation is the earliest violation with a place, or nil.
func firstViolation(vs []Violation) *Violation {
	if len(vs) == 0 {
		return nil
	}
	first := slices.MinFunc(vs, func(p, q Violation) int { return cmp.Compare(p.From, q.From) })
	return &first
}
