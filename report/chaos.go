package report

// Faults, partitions and the verdict's windows, placed on the diagram's time axis.

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// chaos lists the faults and the partitions' stretches.
func (b *builder) chaos() {
	var open *Partition
	for _, r := range b.run.Chaos {
		t := b.us(r.TS)
		f := Fault{T: t, Op: r.Op, Targets: r.Targets, Step: r.Step, Error: r.Error, Label: opLabel(r)}
		if f.Targets == nil {
			f.Targets = []int{}
		}
		b.d.Faults = append(b.d.Faults, f)
		if r.Error != "" {
			continue
		}
		switch r.Op {
		case "partition":
			if open != nil {
				open.To = t
				b.d.Partitions = append(b.d.Partitions, *open)
			}
			open = &Partition{From: t, Label: "partition " + groupsText(r.Groups)}
		case "heal":
			if open != nil {
				open.To = t
				b.d.Partitions = append(b.d.Partitions, *open)
				open = nil
			}
		}
	}
	if open != nil {
		open.To = b.d.To
		b.d.Partitions = append(b.d.Partitions, *open)
	}
}

// opLabel renders a chaos record for a label: "kill 5", "partition 1,2|3,4,5", "heal".
func opLabel(r logs.ChaosRecord) string {
	switch {
	case r.Op == "partition" && len(r.Groups) > 0:
		return "partition " + groupsText(r.Groups)
	case r.Op == logs.OpClock && r.Clock != "":
		return "clock " + joinInts(r.Targets, ",") + " " + r.Clock
	case r.Op == "link" && r.Step != "":
		// The step says which link and what fault better than the targets do.
		if i := strings.Index(r.Step, "link "); i >= 0 {
			return r.Step[i:]
		}
	}
	if len(r.Targets) == 0 {
		return r.Op
	}
	return r.Op + " " + joinInts(r.Targets, ",")
}

func groupsText(groups [][]int) string {
	s := make([]string, len(groups))
	for i, g := range groups {
		s[i] = joinInts(g, ",")
	}
	return strings.Join(s, " | ")
}

func joinInts(ids []int, sep string) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, sep)
}

// metrics turns the verdict's overlaps and elections into windows of the diagram.
func (b *builder) metrics() {
	if b.v == nil {
		return
	}
	begin := b.v.BeginNS
	for _, o := range b.v.Metrics.Overlaps {
		from := b.us(begin) + int64(o.AtMS*1000)
		w := OverlapWin{From: from, To: from + int64(o.MS*1000), BeyondGrace: o.BeyondGrace, Lanes: []int{}}
		for _, id := range o.Nodes {
			if l, ok := b.lane[id]; ok {
				w.Lanes = append(w.Lanes, l)
			}
		}
		b.d.Overlaps = append(b.d.Overlaps, w)
	}
	for _, sb := range b.v.Metrics.SplitBrain {
		from := b.us(begin) + int64(sb.AtMS*1000)
		w := SplitWin{From: from, To: from + int64(sb.MS*1000), Leaders: slices.Clone(sb.Leaders), Lanes: []int{}}
		if w.Leaders == nil {
			w.Leaders = []int{}
		}
		for _, id := range sb.Leaders {
			if l, ok := b.lane[id]; ok {
				w.Lanes = append(w.Lanes, l)
			}
		}
		b.d.SplitBrain = append(b.d.SplitBrain, w)
	}
	for i, e := range b.v.Metrics.Elections {
		to := b.d.End
		if e.EndNS != nil {
			to = b.us(*e.EndNS)
		}
		b.d.Elections = append(b.d.Elections, Window{From: b.us(e.StartNS), To: to, Label: fmt.Sprintf("election #%d", i+1)})
	}
}

// openArrows is the most arrows the diagram's opening window holds: few enough to be told apart.
const openArrows = 400

// initialView picks the window the diagram opens on: the first election with its arrows (or, in a
// run without one, the first fault and the messages that follow it), padded; the whole run when the
// run has neither. An election with more than openArrows messages is cut after the first of them.
func (b *builder) initialView() {
	d := b.d
	d.Initial = Window{From: d.From, To: d.To, Label: "the whole run"}
	M := &d.Msgs
	var a, z int64
	label := ""
	if len(d.Elections) > 0 {
		e := d.Elections[0]
		a, z, label = e.From, max(e.To, e.From), "election #1"
	} else {
		for _, f := range d.Faults {
			if f.Error == "" {
				a, z, label = f.T, f.T, f.Label
				break
			}
		}
	}
	if label == "" {
		if len(M.S) == 0 {
			return
		}
		a, z, label = M.S[0], M.S[0], "the first messages"
	}
	i := sort.Search(len(M.S), func(k int) bool { return M.S[k] >= a })
	j := i
	for j < len(M.S) && M.S[j] <= z && j-i < openArrows {
		j++
	}
	if j == i {
		// Nothing sent inside (a fault): the burst of messages that follows it, within a second.
		for j < len(M.S) && j-i < openArrows && M.S[j]-a <= 1_000_000 && (j == i || M.S[j]-M.S[j-1] <= 20_000) {
			j++
		}
	}
	if j > i {
		last := int64(0)
		for k := i; k < j; k++ {
			last = max(last, M.S[k], M.R[k])
		}
		if j-i == openArrows && j < len(M.S) && M.S[j] <= z {
			z = last // cut: the first openArrows arrows
		} else {
			z = max(z, last)
		}
	}
	w := max(z-a, 2000) // at least 2 ms
	pad := w * 15 / 100
	from, to := max(a-pad, d.From), min(a+w+pad, d.To)
	// The padding may take in more: the window ends before the arrow after the openArrows-th.
	k := sort.Search(len(M.S), func(k int) bool { return M.S[k] >= from })
	if k+openArrows < len(M.S) && M.S[k+openArrows] <= to {
		to = max(M.S[k+openArrows]-1, from+1)
	}
	d.Initial = Window{From: from, To: to, Label: label}
}
