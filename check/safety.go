package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// uniqueness: no two live nodes of one component believe in themselves at the same time for longer
// than the grace (while the network is whole, the live nodes are one component). Every overlap is
// reported. Leaders in different components at the same time are no violation: each such stretch
// is a split-brain window. split is the time counted as split brain: the whole of each window, and
// the part of each overlap beyond the grace (a moment that is both is counted once); without
// partitions or link drops it is the overlaps' time beyond the grace, as it always was.
func (c *checker) uniqueness() (p Property, overlaps []Overlap, windows []SplitBrain, split int64) {
	p = Property{Name: PropUniqueness}
	overlaps, windows = []Overlap{}, []SplitBrain{}
	var open, win *span
	nodes, leaders := map[int]bool{}, map[int]bool{}
	var partitioned, unknown, windowed int64
	var problems, limited []string
	// The faults under which the algorithm does not promise uniqueness (election.Limit): an
	// overlap is its documented limit when such a fault was in force during it (or up to a grace
	// before it began: the suspicion it caused takes a timeout), and the overlap ended within a
	// grace after the fault was gone.
	limits, why := c.limitsOf(PropUniqueness)
	recovery := c.recoveryOf(PropUniqueness)
	limitOn, limitEnd := false, int64(-1) // in force now; when it last stopped being in force
	// A link delay hides heartbeats only if it stretches a gap between two of them to the timeout.
	minDelay := int64(c.run.Cluster.Timeout.D() - c.run.Cluster.Heartbeat.D())
	sawLimit := false
	// PausedPeer: when a node last began a pause, and the pause that can excuse the open overlap
	// (-1: none)
	lastPause, pauseAt := int64(-1), int64(-1)
	closeOverlap := func() {
		if open == nil {
			return
		}
		d := open.to - open.from
		ov := Overlap{AtMS: roundMS(open.from-c.begin, 1000), MS: roundMS(d, 1000), BeyondGrace: d > int64(c.grace), Nodes: sortedKeys(nodes)}
		if ov.BeyondGrace {
			what := fmt.Sprintf("nodes %s for %s from %s", joinIDs(ov.Nodes, ","), fmtDur(d), c.rel(open.from))
			// The session a pause holds up waits from the later of the pause and its own start (the
			// overlap's: a trust, a resume) — a pause just before the overlap holds up the session
			// that begins with it for the whole wait (bench chaos --sim --swarm, RSDP seed 20261765:
			// 3 paused 55ms before 5 resumed; the others' session waited T and the share window
			// from 5's trust, 226ms, ending 281ms after the pause).
			byPause := limits[PausedPeer] && pauseAt >= 0 && open.to-max(pauseAt, open.from) <= max(int64(c.grace), recovery)
			if byPause || sawLimit && (limitOn || open.to-limitEnd <= max(int64(c.grace), recovery)) {
				limited = append(limited, what)
			} else {
				problems = append(problems, what)
			}
		}
		overlaps = append(overlaps, ov)
		open = nil
		sawLimit = false
		pauseAt = -1
		clear(nodes)
	}
	closeWindow := func() {
		if win == nil {
			return
		}
		windowed += win.to - win.from
		windows = append(windows, SplitBrain{AtMS: roundMS(win.from-c.begin, 1000), MS: roundMS(win.to-win.from, 1000), Leaders: sortedKeys(leaders)})
		win = nil
		clear(leaders)
	}
	for i, pt := range c.points {
		// Judged from the first point, not from the begin: the launcher writes its begin record
		// after telling the nodes, so the first election may start a little before it.
		from, to := pt.t, c.end
		if i+1 < len(c.points) {
			to = min(c.points[i+1].t, c.end)
		}
		if from >= to {
			continue
		}
		on := len(limits) > 0 && pt.net.inForce(limits, c.faults, minDelay)
		if !on && limits["clock"] {
			on = c.clockBeyond(from, to)
		}
		if !on && limits[PartialPartition] && pt.comps != nil {
			on = pt.net.partial(pt.comps)
		}
		if on != limitOn {
			if !on {
				// a delay rule acts until the messages it held have arrived
				limitEnd = from
				if limits["link delay"] && i > 0 {
					limitEnd += c.points[i-1].net.drain(c.faults)
				}
			}
			limitOn = on
		}
		newPause := false
		if i > 0 {
			for k, st := range pt.state {
				if st.paused && !c.points[i-1].state[k].paused {
					newPause = true
				}
			}
		}
		if newPause {
			lastPause = from
		}
		if pt.net.unknown != 0 {
			unknown += to - from
			closeOverlap()
			closeWindow()
			continue
		}
		comps := pt.comps
		if comps == nil {
			comps = [][]int{c.ids}
		}
		if len(comps) >= 2 {
			partitioned += to - from
		}
		var selfish, heads []int
		sides := 0
		for _, comp := range comps {
			var in []int
			for _, id := range comp {
				if k, ok := c.index[id]; ok && pt.state[k].live() && pt.state[k].belief == id {
					in = append(in, id)
				}
			}
			if len(in) > 0 {
				sides++
				heads = append(heads, in...)
			}
			if len(in) >= 2 {
				selfish = append(selfish, in...)
			}
		}
		if sides >= 2 {
			if win == nil {
				win = &span{from: from}
			}
			win.to = to
			for _, id := range heads {
				leaders[id] = true
			}
		} else {
			closeWindow()
		}
		if len(selfish) == 0 {
			closeOverlap()
		} else {
			if open == nil {
				open = &span{from: from}
				sawLimit = limitOn || (limitEnd >= 0 && from-limitEnd <= int64(c.grace))
				if lastPause >= 0 && from-lastPause <= int64(c.grace) {
					pauseAt = lastPause
				}
			} else if newPause && (from-open.from <= int64(c.grace) || sawLimit) {
				pauseAt = from // a young overlap, or one a declared fault covers, that a pause prolongs
			}
			sawLimit = sawLimit || limitOn
			open.to = to
			for _, id := range selfish {
				nodes[id] = true
			}
		}
		switch {
		case win != nil:
			split += to - from
		case open != nil:
			split += max(0, to-max(from, open.from+int64(c.grace)))
		}
	}
	closeOverlap()
	closeWindow()

	grace := "the grace of " + c.grace.String()
	switch {
	case len(problems) > 0:
		p.Detail = fmt.Sprintf("%s longer than %s: %s", plural(len(problems), "overlap", "overlaps"), grace, listed(problems))
		if len(limited) > 0 {
			p.Detail += fmt.Sprintf("; and %s under a fault the algorithm does not promise uniqueness under (%s): %s",
				plural(len(limited), "overlap", "overlaps"), why, listed(limited))
		}
	case len(limited) > 0:
		p.Detail = fmt.Sprintf("%s longer than %s, each while a fault the algorithm does not promise uniqueness under was in force: %s",
			plural(len(limited), "overlap", "overlaps"), grace, listed(limited))
		p.Limit = "the algorithm's documented limit: " + why
	case len(overlaps) == 0 && partitioned > 0:
		p.OK = true
		p.Detail = "no two live nodes of one component believed in themselves at the same time"
	case len(overlaps) == 0:
		p.OK = true
		p.Detail = "no two live nodes believed in themselves at the same time"
	default:
		p.OK = true
		longest := slices.MaxFunc(overlaps, func(a, b Overlap) int { return cmpFloat(a.MS, b.MS) })
		p.Detail = fmt.Sprintf("%s of self-believing nodes, all within %s (longest: nodes %s for %gms from %gms)",
			plural(len(overlaps), "overlap", "overlaps"), grace, joinIDs(longest.Nodes, ","), longest.MS, longest.AtMS)
	}
	if partitioned > 0 {
		p.Detail += fmt.Sprintf("; judged per component while the network was split (%s)", fmtDur(partitioned))
	}
	if len(windows) > 0 {
		longest := slices.MaxFunc(windows, func(a, b SplitBrain) int { return cmpFloat(a.MS, b.MS) })
		p.Detail += fmt.Sprintf("; %s across components, not violations (%s in all; longest: leaders %s for %gms from %gms)",
			plural(len(windows), "split-brain window", "split-brain windows"), fmtDur(windowed), joinIDs(longest.Leaders, ","), longest.MS, longest.AtMS)
	}
	if unknown > 0 {
		p.Detail += fmt.Sprintf("; not judged while a partition of unknown sides was in force (%s)", fmtDur(unknown))
	}
	return p, overlaps, windows, split
}

func sortedKeys(set map[int]bool) []int {
	out := make([]int, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// termination: every elect at a node ends in a leader at that node, in the same incarnation, within
// the termination bound of the node's running time (not paused, and not while the network was split
// by a partition, which can keep a side from ever electing until the heal) — unless the node died
// or the run ended first. Consecutive elects without a leader between them are one obligation, judged from the
// first. openAtEnd tells whether every problem is an elect still waiting for its leader at a node
// that ran to the end (the run's end came first: inconclusive when the election was progressing).
func (c *checker) termination() (p Property, openAtEnd bool) {
	p = Property{Name: PropTermination}
	var problems []string
	openAtEnd = true
	answered, cut := 0, 0
	var slowest int64
	bound := int64(c.term)
	for _, id := range c.ids {
		evs := c.log(id).Events
		for _, x := range c.incs[id] {
			if x.first < 0 {
				continue
			}
			cutoff := min(x.end, c.end)
			pending := -1
			judge := func(tl int64) {
				t0 := c.ts[id][pending]
				if tl <= cutoff {
					run := c.electing(id, t0, tl)
					slowest = max(slowest, run)
					answered++
					if run > bound {
						openAtEnd = false
						problems = append(problems, fmt.Sprintf("node %d: elect at %s (%s) ended in a leader only after %s of running time",
							id, c.rel(t0), c.where(id, pending), fmtDur(run)))
					}
					return
				}
				run := c.electing(id, t0, cutoff)
				if run <= bound {
					cut++
					return
				}
				why := "by the end"
				if x.end < c.end {
					why = "before it died"
					openAtEnd = false
				}
				problems = append(problems, fmt.Sprintf("node %d: elect at %s (%s) had no leader after %s of running time %s",
					id, c.rel(t0), c.where(id, pending), fmtDur(run), why))
			}
			for i := x.first; i <= x.last; i++ {
				e, t := &evs[i], c.ts[id][i]
				switch {
				case e.Inc != x.inc:
				case e.Ev == logs.EvElect && pending < 0 && t < cutoff:
					pending = i
				case e.Ev == logs.EvLeader && pending >= 0:
					judge(t)
					pending = -1
				}
			}
			if pending >= 0 {
				judge(forever)
			}
		}
	}
	bnd := "the bound of " + c.term.String()
	switch {
	case len(problems) > 0:
		p.Detail = fmt.Sprintf("%s beyond %s: %s", plural(len(problems), "elect", "elects"), bnd, listed(problems))
	case answered == 0 && cut == 0:
		p.OK = true
		p.Detail = "no node elected"
	default:
		p.OK = true
		p.Detail = fmt.Sprintf("%s ended in a leader within %s (slowest: %s of running time)",
			plural(answered, "elect", "elects"), bnd, fmtDur(slowest))
		if cut > 0 {
			p.Detail += fmt.Sprintf("; %s cut short by a death or the end", plural(cut, "elect was", "elects were"))
		}
	}
	return p, openAtEnd
}

// recoveryOf is the longest Recovery of the algorithm's limits on prop (ns; 0 for none).
func (c *checker) recoveryOf(prop string) int64 {
	if !c.algOK || c.alg.Limits == nil {
		return 0
	}
	var out int64
	for _, l := range c.alg.Limits(c.run.Cluster.Options) {
		if l.Property == prop && l.Recovery != nil {
			out = max(out, int64(l.Recovery(c.timing())))
		}
	}
	return out
}

// limitsOf returns the fault kinds under which the run's algorithm does not promise prop, and why.
func (c *checker) limitsOf(prop string) (map[string]bool, string) {
	if !c.algOK || c.alg.Limits == nil {
		return nil, ""
	}
	kinds := map[string]bool{}
	var whys []string
	for _, l := range c.alg.Limits(c.run.Cluster.Options) {
		if l.Property != prop {
			continue
		}
		for _, k := range l.Faults {
			kinds[k] = true
		}
		whys = append(whys, l.Why)
	}
	if kinds["clock"] {
		if named := c.clockBeyondText(); named != "" {
			whys = append(whys, named)
		}
	}
	return kinds, strings.Join(whys, "; ")
}
