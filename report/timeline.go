package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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
// agreed on: a live leader that believes in itself and that every live node follows. The checker's
// verdict is the judgement; this is the picture of it (it does not apply the checker's finer rules,
// such as a killed node's last events racing its kill record).
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
	points = append(points, b.d.From, b.d.To)
	slices.Sort(points)
	points = slices.Compact(points)
	st := make([]laneState, n)
	var segs []LeaderSeg
	for i, t := range points {
		if t < b.d.From || t >= b.d.To {
			continue
		}
		for l := range n {
			_, alive := incs[l].at(t)
			_, p := paused[l].at(t)
			bel, ok := beliefs[l].at(t)
			st[l] = laneState{alive: alive, paused: alive && p, belief: -1}
			if ok && alive {
				st[l].belief = bel.Leader
			}
		}
		leader, text := b.agreement(st)
		end := b.d.To
		if i+1 < len(points) {
			end = min(points[i+1], b.d.To)
		}
		if k := len(segs) - 1; k >= 0 && segs[k].Leader == leader && (leader == 0 || segs[k].Text == text) {
			segs[k].To = end
			continue
		}
		segs = append(segs, LeaderSeg{From: t, To: end, Leader: leader, Text: text})
	}
	b.d.Leaders = segs
}

// agreement returns the leader the live nodes agree on (0 for none) and the state in words.
func (b *builder) agreement(st []laneState) (int, string) {
	live := 0
	leader := -1
	agreed := true
	for _, s := range st {
		if !s.alive || s.paused {
			continue
		}
		live++
		switch {
		case s.belief <= 0:
			agreed = false
		case leader == -1:
			leader = s.belief
		case leader != s.belief:
			agreed = false
		}
	}
	if live > 0 && agreed && leader > 0 {
		if l, ok := b.lane[leader]; ok && st[l].alive && !st[l].paused && st[l].belief == leader {
			return leader, fmt.Sprintf("n%d leads: all %d live nodes follow it", leader, live)
		}
	}
	parts := make([]string, len(st))
	for l, s := range st {
		id := b.d.Lanes[l].ID
		switch {
		case !s.alive:
			parts[l] = fmt.Sprintf("%d:dead", id)
		case s.paused:
			parts[l] = fmt.Sprintf("%d:paused", id)
		case s.belief <= 0:
			parts[l] = fmt.Sprintf("%d→⊥", id)
		default:
			parts[l] = fmt.Sprintf("%d→%d", id, s.belief)
		}
	}
	if live == 0 {
		return 0, "no live node: " + strings.Join(parts, " ")
	}
	return 0, "no agreement: " + strings.Join(parts, " ")
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

func (b *builder) violation(p logs.Property) (Violation, bool) {
	all := make([]int, len(b.d.Lanes))
	for i := range all {
		all[i] = i
	}
	v := Violation{Property: p.Name, Text: p.Detail, Lanes: all}
	switch p.Name {
	case logs.PropAgreement:
		v.From, v.To = b.d.End, b.d.End
		for _, s := range b.d.Leaders {
			if s.From <= b.d.End && b.d.End <= s.To {
				v.From = s.From
			}
		}
		return v, true
	case logs.PropUniqueness:
		for _, o := range b.d.Overlaps {
			if o.BeyondGrace {
				v.From, v.To, v.Lanes = o.From, o.To, o.Lanes
				return v, true
			}
		}
	case logs.PropTermination:
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
	case logs.PropIntegrity:
		orphan := markType("orphan")
		for i, y := range b.d.Marks.Y {
			if y == orphan {
				t := b.d.Marks.T[i]
				v.From, v.To, v.Lanes = t, t, []int{b.d.Marks.L[i]}
				return v, true
			}
		}
	case logs.PropComplexity:
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
