package checker

import (
	"fmt"
	"slices"
	"time"
)

// findCycle looks for a cycle that fair delivery does not break: one in which every message and
// timer that stays enabled all along the cycle is taken in it. Such a cycle is a run that never
// ends. It tells the cycle found (nil: none), whether the search ended (false: interrupted), and
// whether it met any cycle at all, fair or not.
//
// It finds the graph's strongly connected components depth-first (Tarjan's algorithm, the states
// made again by their transitions) and judges each that has a cycle as a whole (fairComponent). A
// depth-first search that judged only the cycle closed by each edge back to its stack would miss
// fair cycles: a state is entered once, and the cycle met first through it may be unfair (a message
// left in flight all along it) while another through the same states, met from elsewhere, is fair.
//
// With reduced, it searches the reduced graph: from each state, the persistent set that
// Model.Reduce chooses (without the visibility proviso, which only the every-state invariants
// need). A finite
// graph reduced by persistent sets keeps an infinite path from every state that has one in the
// full graph: take such a path w from s and the persistent set P of s; if w takes a transition p of
// P, p commutes with every transition before it in w (none of them is in P), so p followed by the
// rest of w is a path from s too; if w takes none, every transition of P is independent of all of
// w, so p followed by w is one. Either way a successor that the reduced graph keeps has an
// infinite path, and so on: the reduced graph has an infinite path, that is a cycle. So a reduced
// graph without any cycle proves the full graph has none. A fair cycle found in the reduced graph
// is a fair cycle of the full graph (fairness is judged against every transition enabled, not the
// reduced ones). Only when the reduced graph has cycles and none is fair must the full graph be
// searched (judgeCycles does that). A transition that breaks the model's assumptions
// (Model.Broken: the explorer's reduction rests on them) counts as a cycle met (the proof needs
// them), so that the full graph is searched.
func (x *search[S, T]) findCycle(init S, size int, reduced bool) (*Finding[T], bool, bool) {
	m := x.m
	type frame struct {
		s        S
		evs      []T
		i        int
		num, low uint32 // the state's number in the order entered, and the lowest reached back
		at       int    // where the state is on the stack of components
		self     bool   // a transition leads from the state to itself
	}
	// a state's number, 0 before it is entered, finished once its component is judged
	const finished = ^uint32(0)
	nums := newTable(size)
	numOf := func(fp Fingerprint) uint32 { n, _ := nums.get(fp); return n }
	setNum := nums.set
	next := func(s S) []T { return x.successors(s, reduced) }
	what := "every interleaving"
	if reduced {
		what = "the reduced graph"
	}
	var frames []frame
	var comps []S // Tarjan's stack: the states entered whose component is not judged yet
	count := uint32(0)
	enter := func(s S) {
		count++
		setNum(m.Fingerprint(s), count)
		frames = append(frames, frame{s: s, evs: next(s), num: count, low: count, at: len(comps)})
		comps = append(comps, s)
	}
	enter(init)
	start := x.start
	lastReport, steps, cyclic := time.Now(), 0, false
	for len(frames) > 0 {
		if steps++; steps&0xfff == 0 {
			if x.interrupted() {
				return nil, false, cyclic
			}
			if x.o.Progress != nil && time.Since(lastReport) > 3*time.Second {
				lastReport = time.Now()
				fmt.Fprintf(x.o.Progress, "explore: looking for a cycle over %s: %d states, %v in all\n", what, nums.Len(), time.Since(start).Round(time.Second))
			}
		}
		f := &frames[len(frames)-1]
		if f.i < len(f.evs) {
			ev := f.evs[f.i]
			f.i++
			t := m.Next(f.s, ev)
			if reduced && m.Broken() != "" {
				cyclic = true // the model's assumption broke: the proof does not hold here
			}
			switch n := numOf(m.Fingerprint(t)); {
			case n == 0:
				enter(m.Keep(t))
			case n != finished:
				f.low = min(f.low, n)
				f.self = f.self || m.Fingerprint(t) == m.Fingerprint(f.s)
			}
			continue
		}
		if f.low == f.num { // f.s is the root of a component: the states above it on the stack
			comp := comps[f.at:]
			comps = comps[:f.at]
			for _, s := range comp {
				setNum(m.Fingerprint(s), finished)
			}
			if len(comp) > 1 || f.self {
				cyclic = true
				if lead, cyc := x.fairComponent(comp, reduced); cyc != nil {
					var stem []T
					for _, g := range frames[:len(frames)-1] {
						stem = append(stem, g.evs[g.i-1])
					}
					stem = append(stem, lead...)
					v := &Finding[T]{Violation: m.Endless(len(cyc)), Path: append(stem, cyc...), CycleAt: len(stem)}
					return v, true, true
				}
			}
		}
		low := f.low
		frames = frames[:len(frames)-1]
		if len(frames) > 0 {
			p := &frames[len(frames)-1]
			p.low = min(p.low, low)
		}
	}
	return nil, true, cyclic
}

// FindCycle is the cycle search on its own (Run makes it when the graph it walked has a cycle):
// over m's reduced graph, or every interleaving, from its initial state; size is about how many
// states m has. It tells the cycle found (nil: none), whether the search ended, and whether it met
// any cycle at all.
func FindCycle[S any, T comparable](m Model[S, T], o Options, size int, reduced bool) (*Finding[T], bool, bool) {
	x := &search[S, T]{m: m, o: o, out: &Outcome[T]{}, start: time.Now(), sp: &spill{}}
	return x.findCycle(m.Init(), size, reduced)
}

// successors lists the transitions the cycle search takes from s: every one enabled, or with
// reduced, the persistent set Model.Reduce chooses (no property is judged in every state here).
func (x *search[S, T]) successors(s S, reduced bool) []T {
	evs := x.m.Enabled(s, nil)
	if reduced {
		evs = x.m.Reduce(s, evs, nil)
	}
	return evs
}

// fairComponent looks for a fair cycle among the states of a strongly connected component comp
// (comp[0] first): it returns the path from comp[0] to the cycle's first state, and the cycle
// (nil: none is fair).
//
// A cycle is unfair when a transition that is not a fault (a delivery, a timer) is enabled in every
// state of it and not taken, or when it takes instant transitions only and time passing would
// change one of its states (Model.Restless): a cycle of deliveries alone takes no time, and the
// explorer's heartbeats come every interval whatever is in flight (the model holds them back only
// to keep the interleavings few), so such a cycle is not a run. So: a set of states connected as a
// component, none of them restless unless one of its transitions is timed, has a fair cycle
// exactly when every transition owed (not a fault) enabled in all of its states is taken by one of
// its transitions: the cycle that goes through all of its states and takes those transitions is
// fair, and if one such is never taken, every cycle in the component leaves it enabled all along.
// The restless states are left out of a component of instant transitions only, and what remains
// is split into components again.
func (x *search[S, T]) fairComponent(comp []S, reduced bool) (lead, cyc []T) {
	m := x.m
	type edge struct {
		to int
		ev T
	}
	index := make(map[Fingerprint]int, len(comp))
	for i, s := range comp {
		index[m.Fingerprint(s)] = i
	}
	out := make([][]edge, len(comp))
	for i, s := range comp {
		for _, ev := range x.successors(s, reduced) {
			if j, ok := index[m.Fingerprint(m.Next(s, ev))]; ok {
				out[i] = append(out[i], edge{j, ev})
			}
		}
	}
	// path finds the shortest path from a to b over the edges between states in member: its
	// transitions, and the state after each.
	path := func(a, b int, member func(int) bool) ([]T, []int) {
		prev := make([]edge, len(comp))
		from := make([]int, len(comp))
		for i := range from {
			from[i] = -1
		}
		from[a] = a
		q := []int{a}
		for len(q) > 0 && from[b] < 0 {
			u := q[0]
			q = q[1:]
			for _, e := range out[u] {
				if member(e.to) && from[e.to] < 0 {
					from[e.to], prev[e.to] = u, e
					q = append(q, e.to)
				}
			}
		}
		var p []T
		var ps []int
		for v := b; v != a; v = from[v] {
			p, ps = append(p, prev[v].ev), append(ps, v)
		}
		slices.Reverse(p)
		slices.Reverse(ps)
		return p, ps
	}
	// path0 is the path from comp[0] to u.
	path0 := func(u int) []T { p, _ := path(0, u, func(int) bool { return true }); return p }
	// enabledOf lists the transitions enabled in comp[u] that fairness owes: all but faults.
	enabled := make([][]T, len(comp))
	enabledOf := func(u int) []T {
		if enabled[u] == nil {
			evs := m.Enabled(comp[u], nil)
			enabled[u] = slices.DeleteFunc(evs, func(e T) bool { return m.Class(e) == Fault })
		}
		return enabled[u]
	}
	// components splits the states in set into strongly connected components over the edges
	// between them, keeping those that have a cycle.
	components := func(set []int) [][]int {
		member := make([]bool, len(comp))
		for _, i := range set {
			member[i] = true
		}
		num, low := make([]int, len(comp)), make([]int, len(comp))
		on := make([]bool, len(comp))
		var stack []int
		var found [][]int
		count := 0
		var visit func(u int)
		visit = func(u int) {
			count++
			num[u], low[u] = count, count
			stack = append(stack, u)
			on[u] = true
			self := false
			for _, e := range out[u] {
				switch {
				case !member[e.to]:
				case num[e.to] == 0:
					visit(e.to)
					low[u] = min(low[u], low[e.to])
				case on[e.to]:
					low[u] = min(low[u], num[e.to])
					self = self || e.to == u
				}
			}
			if low[u] != num[u] {
				return
			}
			k := len(stack) - 1
			for stack[k] != u {
				k--
			}
			c := slices.Clone(stack[k:])
			for _, v := range c {
				on[v] = false
			}
			stack = stack[:k]
			if len(c) > 1 || self {
				found = append(found, c)
			}
		}
		for _, u := range set {
			if num[u] == 0 {
				visit(u)
			}
		}
		return found
	}
	// owner tells which component a state was last put in, by a number of the component's own, so
	// that judging one costs nothing for the states outside it
	owner, judged := make([]int, len(comp)), 0
	var judge func(set []int) (lead, cyc []T)
	judge = func(set []int) (lead, cyc []T) {
		for _, c := range components(set) {
			judged++
			id := judged
			for _, i := range c {
				owner[i] = id
			}
			member := func(u int) bool { return owner[u] == id }
			// the transitions inside c: a timed one, and the kinds taken
			var inside []edge
			timed := false
			for _, u := range c {
				for _, e := range out[u] {
					if member(e.to) {
						inside = append(inside, e)
						timed = timed || m.Class(e.ev) != Instant
					}
				}
			}
			if !timed {
				calm := slices.DeleteFunc(slices.Clone(c), func(u int) bool { return m.Restless(comp[u]) })
				if len(calm) < len(c) {
					if l, cy := judge(calm); cy != nil {
						return l, cy
					}
					continue
				}
			}
			// what stays enabled in every state of c must be taken inside it
			always := slices.Clone(enabledOf(c[0]))
			for _, u := range c[1:] {
				always = slices.DeleteFunc(always, func(e T) bool { return !slices.Contains(enabledOf(u), e) })
			}
			if slices.ContainsFunc(always, func(e T) bool {
				return !slices.ContainsFunc(inside, func(g edge) bool { return g.ev == e })
			}) {
				continue
			}
			// the cycle: from c[0], taking each of those transitions and a timed one if c has one,
			// back to c[0]; then, for each transition that stays enabled all along that walk and is
			// not taken (the walk skips the states of c where it is not), taking it too if c does,
			// or passing through a state of c where it is not enabled. Each transition is missed
			// once at most, so this ends, with a fair cycle.
			type stop struct {
				at    int  // the state the walk goes to
				e     edge // and the transition it takes there
				visit bool // or it only passes through
			}
			var stops []stop
			takeEdge := func(ok func(e T) bool) bool {
				for _, u := range c {
					for _, e := range out[u] {
						if member(e.to) && ok(e.ev) {
							stops = append(stops, stop{at: u, e: e})
							return true
						}
					}
				}
				return false
			}
			for _, a := range always {
				takeEdge(func(e T) bool { return e == a })
			}
			if timed {
				takeEdge(func(e T) bool { return m.Class(e) != Instant })
			}
			if len(stops) == 0 { // any cycle will do: c[0] has one inside c
				takeEdge(func(T) bool { return true })
			}
			for {
				cyc = cyc[:0]
				states := []int{c[0]}
				at := c[0]
				goTo := func(u int) {
					p, ps := path(at, u, member)
					cyc, states = append(cyc, p...), append(states, ps...)
					at = u
				}
				for _, st := range stops {
					goTo(st.at)
					if !st.visit {
						cyc, states = append(cyc, st.e.ev), append(states, st.e.to)
						at = st.e.to
					}
				}
				goTo(c[0])
				var missed []T
				for _, e := range enabledOf(states[0]) {
					if !slices.Contains(cyc, e) && !slices.ContainsFunc(states, func(u int) bool { return !slices.Contains(enabledOf(u), e) }) {
						missed = append(missed, e)
					}
				}
				if len(missed) == 0 {
					return path0(c[0]), cyc
				}
				for _, mi := range missed {
					if !takeEdge(func(e T) bool { return e == mi }) {
						u := slices.IndexFunc(c, func(u int) bool { return !slices.Contains(enabledOf(u), mi) })
						stops = append(stops, stop{at: c[u], visit: true})
					}
				}
			}
		}
		return nil, nil
	}
	set := make([]int, len(comp))
	for i := range set {
		set[i] = i
	}
	return judge(set)
}
