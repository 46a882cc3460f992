package logs

import (
	"fmt"
	"slices"
)

// judgePartitions: uniqueness is judged only while the network is whole. Judging "at most one per
// side" during a partition needs only this switch and the per-component loop below, once partitions
// are applied and recorded with their groups.
const judgePartitions = false

// uniqueness: while the network is whole, no two live nodes believe in themselves at the same time
// for longer than the grace. Every overlap is reported; split is the time overlaps lasted beyond
// the grace, summed.
func (c *checker) uniqueness() (p Property, overlaps []Overlap, split int64) {
	p = Property{Name: PropUniqueness}
	overlaps = []Overlap{}
	var open *span
	nodes := map[int]bool{}
	var partitioned int64
	var problems []string
	closeOverlap := func() {
		if open == nil {
			return
		}
		d := open.to - open.from
		ov := Overlap{AtMS: roundMS(open.from-c.begin, 1000), MS: roundMS(d, 1000), BeyondGrace: d > int64(c.grace)}
		for id := range nodes {
			ov.Nodes = append(ov.Nodes, id)
		}
		slices.Sort(ov.Nodes)
		if ov.BeyondGrace {
			split += d - int64(c.grace)
			problems = append(problems, fmt.Sprintf("nodes %s for %s from %s", joinIDs(ov.Nodes, ","), fmtDur(d), c.rel(open.from)))
		}
		overlaps = append(overlaps, ov)
		open = nil
		clear(nodes)
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
		comps := pt.comps
		if comps != nil && !judgePartitions {
			partitioned += to - from
			closeOverlap()
			continue
		}
		if comps == nil {
			comps = [][]int{c.ids}
		}
		var selfish []int
		for _, comp := range comps {
			var in []int
			for _, id := range comp {
				if k, ok := c.index[id]; ok && pt.state[k].live() && pt.state[k].belief == id {
					in = append(in, id)
				}
			}
			if len(in) >= 2 {
				selfish = append(selfish, in...)
			}
		}
		if len(selfish) == 0 {
			closeOverlap()
			continue
		}
		if open == nil {
			open = &span{from: from}
		}
		open.to = to
		for _, id := range selfish {
			nodes[id] = true
		}
	}
	closeOverlap()

	grace := "the grace of " + c.grace.String()
	switch {
	case len(problems) > 0:
		p.Detail = fmt.Sprintf("%s longer than %s: %s", plural(len(problems), "overlap", "overlaps"), grace, listed(problems))
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
		p.Detail += fmt.Sprintf("; not judged while the network was partitioned (%s)", fmtDur(partitioned))
	}
	return p, overlaps, split
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
// the termination bound of the node's running (not paused) time — unless the node died or the run
// ended first. Consecutive elects without a leader between them are one obligation, judged from the
// first.
func (c *checker) termination() Property {
	p := Property{Name: PropTermination}
	var problems []string
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
					run := c.running(id, t0, tl)
					slowest = max(slowest, run)
					answered++
					if run > bound {
						problems = append(problems, fmt.Sprintf("node %d: elect at %s (%s) ended in a leader only after %s of running time",
							id, c.rel(t0), c.where(id, pending), fmtDur(run)))
					}
					return
				}
				run := c.running(id, t0, cutoff)
				if run <= bound {
					cut++
					return
				}
				why := "by the end"
				if x.end < c.end {
					why = "before it died"
				}
				problems = append(problems, fmt.Sprintf("node %d: elect at %s (%s) had no leader after %s of running time %s",
					id, c.rel(t0), c.where(id, pending), fmtDur(run), why))
			}
			for i := x.first; i <= x.last; i++ {
				e, t := &evs[i], c.ts[id][i]
				switch {
				case e.Inc != x.inc:
				case e.Ev == EvElect && pending < 0 && t < cutoff:
					pending = i
				case e.Ev == EvLeader && pending >= 0:
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
	return p
}
