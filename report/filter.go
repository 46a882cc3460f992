package report

import (
	"fmt"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// ExportWindow chooses what an export takes of a run: some nodes, and a stretch of time measured
// from the run's begin (From 0 and To 0 mean its start and its end). A ShiViz log of a 128-node run
// is over 100 MB, which ShiViz cannot open; a window of it can be.
type ExportWindow struct {
	Nodes    []int // nil: every node
	From, To time.Duration
}

// Whole tells whether the window takes the whole run.
func (w ExportWindow) Whole() bool { return len(w.Nodes) == 0 && w.From == 0 && w.To == 0 }

// Windowed is a copy of run holding only the window's events: the other nodes' logs are left out
// and the events outside the stretch dropped. A message whose send or recv falls outside is then
// half a message: the exports write such a recv as a local event (ExportStats.Unmatched), and the
// clocks they compute start from the window's first events.
func Windowed(run *logs.Run, w ExportWindow) (*logs.Run, error) {
	if w.To != 0 && w.To <= w.From {
		return nil, fmt.Errorf("the window ends (%v) before it starts (%v)", w.To, w.From)
	}
	for _, id := range w.Nodes {
		if run.Nodes[id] == nil {
			return nil, fmt.Errorf("node %d is not in the run (its nodes are %v)", id, run.Cluster.IDs())
		}
	}
	if w.Whole() {
		return run, nil
	}
	origin := runOrigin(run)
	from, to := origin+int64(w.From), int64(1<<63-1)
	if w.To != 0 {
		to = origin + int64(w.To)
	}
	out := *run
	out.Nodes = make(map[int]*logs.NodeLog, len(run.Nodes))
	for id, nl := range run.Nodes {
		if w.Nodes != nil && !slices.Contains(w.Nodes, id) {
			continue
		}
		kept := &logs.NodeLog{Node: nl.Node, Torn: nl.Torn}
		for i, e := range nl.Events {
			if e.TS < from || e.TS > to {
				continue
			}
			kept.Events = append(kept.Events, e)
			if nl.Line != nil {
				kept.Line = append(kept.Line, nl.Line[i])
			}
		}
		out.Nodes[id] = kept
	}
	return &out, nil
}
