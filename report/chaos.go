package report

// Faults, partitions and the verdict's windows, placed on the diagram's time axis.

import (
	"fmt"
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
	for i, e := range b.v.Metrics.Elections {
		to := b.d.End
		if e.EndNS != nil {
			to = b.us(*e.EndNS)
		}
		b.d.Elections = append(b.d.Elections, Window{From: b.us(e.StartNS), To: to, Label: fmt.Sprintf("election #%d", i+1)})
	}
}
