package check

import (
	"cmp"
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
// partitions or link drops it is the overlaps' time beyond the grace, as it always was. It is
// judged as the points go by (uniqPoint); this is what the play left.
func (c *checker) uniqueness() (p Property, overlaps []Overlap, windows []SplitBrain, split int64) {
	p = Property{Name: PropUniqueness}
	u := c.uniq
	c.limitsOf(PropUniqueness) // as before the play: the clock faults are named here
	u.closeOverlap(c)
	u.closeWindow(c)
	overlaps, windows, split = u.overlaps, u.windows, u.split
	problems, limited, why := u.problems, u.limited, u.why
	partitioned, unknown, windowed := u.partitioned, u.unknown, u.windowed
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

// uniqState is uniqueness as the play has judged it so far.
type uniqState struct {
	open, win      *span
	nodes, leaders map[int]bool
	partitioned    int64
	unknown        int64
	windowed       int64
	problems       []string
	limited        []string
	overlaps       []Overlap
	windows        []SplitBrain
	split          int64
	limits         map[string]bool
	why            string
	recovery       int64
	limitOn        bool
	limitEnd       int64
	minDelay       int64
	sawLimit       bool
	lastPause      int64
	pauseAt        int64
}

// uniqStart readies uniqueness before the play. The faults under which the algorithm does not
// promise uniqueness (election.Limit): an overlap is its documented limit when such a fault was in
// force during it (or up to a grace before it began: the suspicion it caused takes a timeout), and
// the overlap ended within a grace after the fault was gone.
func (c *checker) uniqStart() {
	u := &uniqState{nodes: map[int]bool{}, leaders: map[int]bool{}, overlaps: []Overlap{}, windows: []SplitBrain{}}
	u.limits, u.why = c.limitsOf(PropUniqueness)
	u.recovery = c.recoveryOf(PropUniqueness)
	u.limitEnd = -1 // when it last stopped being in force
	// A link delay hides heartbeats only if it stretches a gap between two of them to the timeout.
	u.minDelay = int64(c.run.Cluster.Timeout.D() - c.run.Cluster.Heartbeat.D())
	// PausedPeer: when a node last began a pause, and the pause that can excuse the open overlap
	// (-1: none)
	u.lastPause, u.pauseAt = -1, -1
	c.uniq = u
}

func (u *uniqState) closeOverlap(c *checker) {
	if u.open == nil {
		return
	}
	open := u.open
	d := open.to - open.from
	ov := Overlap{AtMS: roundMS(open.from-c.begin, 1000), MS: roundMS(d, 1000), BeyondGrace: d > int64(c.grace), Nodes: sortedKeys(u.nodes)}
	if ov.BeyondGrace {
		what := fmt.Sprintf("nodes %s for %s from %s", joinIDs(ov.Nodes, ","), fmtDur(d), c.rel(open.from))
		// The session a pause holds up waits from the later of the pause and its own start (the
		// overlap's: a trust, a resume) — a pause just before the overlap holds up the session
		// that begins with it for the whole wait (bench chaos --sim --swarm, RSDP seed 20261765:
		// 3 paused 55ms before 5 resumed; the others' session waited T and the share window
		// from 5's trust, 226ms, ending 281ms after the pause).
		byPause := u.limits[PausedPeer] && u.pauseAt >= 0 && open.to-max(u.pauseAt, open.from) <= max(int64(c.grace), u.recovery)
		if byPause || u.sawLimit && (u.limitOn || open.to-u.limitEnd <= max(int64(c.grace), u.recovery)) {
			u.limited = append(u.limited, what)
		} else {
			u.problems = append(u.problems, what)
		}
	}
	u.overlaps = append(u.overlaps, ov)
	u.open = nil
	u.sawLimit = false
	u.pauseAt = -1
	clear(u.nodes)
}

func (u *uniqState) closeWindow(c *checker) {
	if u.win == nil {
		return
	}
	u.windowed += u.win.to - u.win.from
	u.windows = append(u.windows, SplitBrain{AtMS: roundMS(u.win.from-c.begin, 1000), MS: roundMS(u.win.to-u.win.from, 1000), Leaders: sortedKeys(u.leaders)})
	u.win = nil
	clear(u.leaders)
}

// uniqPoint judges the stretch of point pt, [pt.t, to) (to: the next point's time, or the end);
// prev is the point before it (nil for the first).
func (c *checker) uniqPoint(pt, prev *point, to int64) {
	u := c.uniq
	// Judged from the first point, not from the begin: the launcher writes its begin record
	// after telling the nodes, so the first election may start a little before it.
	from := pt.t
	to = min(to, c.end)
	if from >= to {
		return
	}
	on := len(u.limits) > 0 && pt.net.inForce(u.limits, c.faults, u.minDelay)
	if !on && u.limits["clock"] {
		on = c.clockBeyond(from, to)
	}
	if !on && u.limits[PartialPartition] && pt.comps != nil {
		on = pt.net.partial(pt.comps)
	}
	if on != u.limitOn {
		if !on {
			// a delay rule acts until the messages it held have arrived
			u.limitEnd = from
			if u.limits["link delay"] && prev != nil {
				u.limitEnd += prev.net.drain(c.faults)
			}
		}
		u.limitOn = on
	}
	// newPause: a node began a pause now. back: a node runs again now (resumed, restarted) while
	// another is still paused: it has not judged that peer, which paused while it was not running,
	// and a session it opens waits up to T for it.
	newPause, back, pausedNow := false, false, false
	if prev != nil {
		for k, st := range pt.state {
			if st.paused && !prev.state[k].paused {
				newPause = true
			}
			if st.live() && !prev.state[k].live() {
				back = true
			}
			pausedNow = pausedNow || st.paused
		}
	}
	if newPause {
		u.lastPause = from
	}
	if pt.net.unknown != 0 {
		u.unknown += to - from
		u.closeOverlap(c)
		u.closeWindow(c)
		return
	}
	comps := pt.comps
	if comps == nil {
		comps = [][]int{c.ids}
	}
	if len(comps) >= 2 {
		u.partitioned += to - from
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
		if u.win == nil {
			u.win = &span{from: from}
		}
		u.win.to = to
		for _, id := range heads {
			u.leaders[id] = true
		}
	} else {
		u.closeWindow(c)
	}
	if len(selfish) == 0 {
		u.closeOverlap(c)
	} else {
		if u.open == nil {
			u.open = &span{from: from}
			u.sawLimit = u.limitOn || (u.limitEnd >= 0 && from-u.limitEnd <= int64(c.grace))
			if u.lastPause >= 0 && from-u.lastPause <= int64(c.grace) {
				u.pauseAt = u.lastPause
			} else if back && pausedNow {
				// The overlap begins as a node comes back beside a peer paused since before: its
				// session waits for that peer from now (RSDP seed 20262554: 4 resumed while 2 was
				// paused; 4 and 5 overlapped 225ms, within T and the share window of 4's resume).
				u.pauseAt = from
			}
		} else if newPause && (from-u.open.from <= int64(c.grace) || u.sawLimit) {
			u.pauseAt = from // a young overlap, or one a declared fault covers, that a pause prolongs
		}
		u.sawLimit = u.sawLimit || u.limitOn
		u.open.to = to
		for _, id := range selfish {
			u.nodes[id] = true
		}
	}
	switch {
	case u.win != nil:
		u.split += to - from
	case u.open != nil:
		u.split += max(0, to-max(from, u.open.from+int64(c.grace)))
	}
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
// that ran to the end (the run's end came first) or one whose leader came late (termState.late):
// inconclusive when the election was progressing and kept within its bound (inconclusive.go).
// The elects are judged as the play goes by (termEvent); this is what it left.
func (c *checker) termination() (p Property, openAtEnd bool) {
	p = Property{Name: PropTermination}
	ts := c.terms
	slices.SortFunc(ts.problems, func(a, b termProblem) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.inc, b.inc), cmp.Compare(a.i, b.i))
	})
	problems := make([]string, len(ts.problems))
	for i, pr := range ts.problems {
		problems[i] = pr.text
	}
	openAtEnd, answered, cut, slowest := ts.openAtEnd, ts.answered, ts.cut, ts.slowest
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

// termState is termination as the play has judged it so far.
type termState struct {
	// pending is each incarnation's elect still waiting for its leader (by its incarnation).
	pending   map[*incarnation]termPending
	problems  []termProblem
	openAtEnd bool
	answered  int
	cut       int
	slowest   int64
	// late are the elects whose leader came, but past the bound; open counts those that still
	// waited at the end at a node that ran to it.
	late []termLate
	open int
}

// termLate is an elect answered late: at t0, its leader at tl, after run of running time.
type termLate struct {
	t0, tl, run int64
}

type termPending struct {
	t0      int64
	i, line int
}

// termProblem is a problem with where it was, for the order the detail lists them in: by node,
// incarnation (by start) and place in the log.
type termProblem struct {
	node, inc, i int
	text         string
}

func (c *checker) termStart() {
	c.terms = &termState{pending: map[*incarnation]termPending{}, openAtEnd: true}
}

// termEvent follows a node's elects and leaders (events of its incarnation x) as the play goes by.
func (c *checker) termEvent(e *mEvent, x *incarnation) {
	ts := c.terms
	pend, ok := ts.pending[x]
	switch {
	case e.Ev == logs.EvElect && !ok && e.t < min(x.end, c.end):
		ts.pending[x] = termPending{t0: e.t, i: e.i, line: e.line}
	case e.Ev == logs.EvLeader && ok:
		c.termJudge(x, pend, e.t)
		delete(ts.pending, x)
	}
}

// termJudge judges the pending elect of incarnation x answered at tl (forever: never).
func (c *checker) termJudge(x *incarnation, pend termPending, tl int64) {
	ts := c.terms
	id := x.node
	bound := int64(c.term)
	cutoff := min(x.end, c.end)
	t0 := pend.t0
	where := c.where(id, pend.i, pend.line)
	problem := func(text string) {
		ts.problems = append(ts.problems, termProblem{node: c.index[id], inc: c.incPos(x), i: pend.i, text: text})
	}
	if tl <= cutoff {
		run := c.electing(id, t0, tl)
		ts.slowest = max(ts.slowest, run)
		ts.answered++
		if run > bound {
			ts.late = append(ts.late, termLate{t0: t0, tl: tl, run: run})
			problem(fmt.Sprintf("node %d: elect at %s (%s) ended in a leader only after %s of running time",
				id, c.rel(t0), where, fmtDur(run)))
		}
		return
	}
	run := c.electing(id, t0, cutoff)
	if run <= bound {
		ts.cut++
		return
	}
	why := "by the end"
	if x.end < c.end {
		why = "before it died"
		ts.openAtEnd = false
	} else {
		ts.open++
	}
	problem(fmt.Sprintf("node %d: elect at %s (%s) had no leader after %s of running time %s",
		id, c.rel(t0), where, fmtDur(run), why))
}

// termFinish judges the elects no leader answered.
func (c *checker) termFinish() {
	for _, id := range c.ids {
		for _, x := range c.incs[id] {
			if pend, ok := c.terms.pending[x]; ok {
				c.termJudge(x, pend, forever)
			}
		}
	}
	c.terms.pending = nil
}

// incPos is x's place among its node's incarnations (by start).
func (c *checker) incPos(x *incarnation) int {
	return slices.Index(c.incs[x.node], x)
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
