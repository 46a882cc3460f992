package report

// A long run is not drawn whole: an hour of 50 nodes is millions of events, which neither the
// page nor the memory that would hold them can take. Its logs are streamed (logs.Stream) twice: once
// for what the diagram draws — the state of every node (starts, stops, elects, leaders: the lanes,
// the beliefs, the leader timeline) and every event inside a budget of windows (the elections in
// order, the overlaps beyond the grace, the end when agreement failed) — and once, after the diagram
// is laid out, to count every message into the overview strip and the rates over time.

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// DrawWhole is the most events a run may have for the report to draw it whole; DrawBudget is how
// many of a longer run's it draws in windows.
const (
	DrawWhole  = 400_000
	DrawBudget = 200_000
)

// drawWhole and drawBudget are DrawWhole and DrawBudget, lowered by tests.
var drawWhole, drawBudget = DrawWhole, DrawBudget

// windowLead is how far before a window its sends are read, for the recvs in it: a message delayed
// by a link rule may take that long.
const windowLead = int64(2e9)

// longRun is a run drawn in windows.
type longRun struct {
	s       *logs.Stream
	events  int
	windows []nsSpan
}

type nsSpan struct{ from, to int64 }

// eachEvent reads node id's log from its start, handing fn each event (valid during the call) and
// its line; it returns the log's torn lines.
func eachEvent(s *logs.Stream, id int, fn func(e *logs.Event, line int)) ([]logs.TornLine, error) {
	r, err := s.Node(id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	for {
		e, line, err := r.Next()
		if err == io.EOF {
			return r.Torn(), nil
		}
		if err != nil {
			return nil, err
		}
		fn(e, line)
	}
}

// copyEvent is a copy of e that keeps its msg (a reader's event lives until its next one).
func copyEvent(e *logs.Event) logs.Event {
	c := *e
	if e.Msg != nil {
		m := *e.Msg
		c.Msg = &m
	}
	return c
}

// countLines counts the lines of the run's node logs without decoding them.
func countLines(s *logs.Stream) (int, error) {
	n := 0
	buf := make([]byte, 256<<10)
	for _, id := range s.Nodes {
		f, err := os.Open(rundir.NodeLog(s.Run.Dir, id))
		if err != nil {
			return 0, err
		}
		for {
			k, err := f.Read(buf)
			n += bytes.Count(buf[:k], []byte{'\n'})
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return 0, err
			}
		}
		f.Close()
	}
	return n, nil
}

// drawWindows picks the stretches a long run's diagram draws, within DrawBudget events (an event
// per send, recv and mark: about three per message): the elections in order, from their start to
// their agreement (or the next one's start), then each overlap beyond the grace and, when agreement
// failed, the last two seconds before the end.
func drawWindows(v *check.Verdict) []nsSpan {
	var out []nsSpan
	used := 0
	els := v.Metrics.Elections
	for i, e := range els {
		to := v.EndNS
		if i+1 < len(els) {
			to = els[i+1].StartNS
		}
		if e.EndNS != nil {
			to = min(to, *e.EndNS)
		}
		cost := 3*(e.Messages+e.Announce) + 100
		if used+cost > drawBudget && len(out) > 0 {
			break
		}
		used += cost
		out = append(out, nsSpan{e.StartNS - 50e6, max(to, e.StartNS) + 50e6})
	}
	for _, o := range v.Metrics.Overlaps {
		if o.BeyondGrace {
			at := v.BeginNS + int64(o.AtMS*1e6)
			out = append(out, nsSpan{at - 200e6, at + int64(o.MS*1e6) + 200e6})
		}
	}
	for _, p := range v.Properties {
		if p.Name == check.PropAgreement && !p.OK {
			out = append(out, nsSpan{v.EndNS - 2e9, v.EndNS})
		}
	}
	slices.SortFunc(out, func(a, b nsSpan) int { return cmp.Compare(a.from, b.from) })
	merged := out[:0]
	for _, w := range out {
		if n := len(merged); n > 0 && w.from <= merged[n-1].to {
			merged[n-1].to = max(merged[n-1].to, w.to)
			continue
		}
		merged = append(merged, w)
	}
	return merged
}

// in tells whether t falls in a window, or, with lead, within windowLead before one.
func (lr *longRun) in(t int64, lead bool) bool {
	i := sort.Search(len(lr.windows), func(i int) bool { return lr.windows[i].to >= t })
	if i == len(lr.windows) {
		return false
	}
	from := lr.windows[i].from
	if lead {
		from -= windowLead
	}
	return t >= from
}

// drawn reads what the diagram of a long run draws (see the top of this file) into a Run.
func (lr *longRun) drawn() (*logs.Run, error) {
	s := lr.s
	run := *s.Run
	run.Nodes = map[int]*logs.NodeLog{}
	settled := map[string]bool{} // the msg.ids received or dropped inside a window
	sentIn := map[string]bool{}  // and those sent there, or just before
	for _, id := range s.Nodes {
		nl := &logs.NodeLog{Node: id}
		var at []int // each kept event's place in the log
		keep := func(e *logs.Event, line, i int) {
			nl.Events = append(nl.Events, copyEvent(e))
			nl.Line = append(nl.Line, line)
			at = append(at, i)
		}
		seenInc := map[int]bool{}
		type placed struct {
			e       logs.Event
			line, i int
		}
		var lo, hi *placed
		i := -1
		torn, err := eachEvent(s, id, func(e *logs.Event, line int) {
			i++
			switch {
			case lr.in(e.TS, false):
				keep(e, line, i)
				if e.Msg != nil && (e.Ev == logs.EvRecv || e.Ev == logs.EvDrop) {
					settled[e.Msg.ID] = true
				}
				if e.Ev == logs.EvSend && e.Msg != nil {
					sentIn[e.Msg.ID] = true
				}
			case e.Ev == logs.EvSend && e.Msg != nil && lr.in(e.TS, true):
				keep(e, line, i)
				sentIn[e.Msg.ID] = true
			case e.Ev == logs.EvStart || e.Ev == logs.EvStop || e.Ev == logs.EvElect || e.Ev == logs.EvLeader || !seenInc[e.Inc]:
				keep(e, line, i)
			default:
				// The earliest and the latest event left out bound the diagram's time axis: they
				// are kept as events of no kind, drawn as nothing.
				if lo == nil || e.TS < lo.e.TS {
					lo = &placed{logs.Event{TS: e.TS, Node: e.Node, Inc: e.Inc, LC: e.LC, Ev: "bound"}, line, i}
				}
				if hi == nil || e.TS > hi.e.TS {
					hi = &placed{logs.Event{TS: e.TS, Node: e.Node, Inc: e.Inc, LC: e.LC, Ev: "bound"}, line, i}
				}
			}
			seenInc[e.Inc] = true
		})
		if err != nil {
			return nil, err
		}
		nl.Torn = torn
		for _, x := range []*placed{lo, hi} {
			if x == nil || (lo == hi && x == hi) {
				continue
			}
			// in its place in the log
			k := sort.SearchInts(at, x.i)
			nl.Events = slices.Insert(nl.Events, k, x.e)
			nl.Line = slices.Insert(nl.Line, k, x.line)
			at = slices.Insert(at, k, x.i)
		}
		run.Nodes[id] = nl
	}
	// A send just before a window is drawn only if its message arrives in it; a recv in a window
	// whose send was not read is left out rather than drawn as an orphan.
	for _, nl := range run.Nodes {
		kept := nl.Events[:0]
		lines := nl.Line[:0]
		for i, e := range nl.Events {
			switch {
			case e.Ev == logs.EvSend && e.Msg != nil && !lr.in(e.TS, false) && !settled[e.Msg.ID]:
				continue
			case e.Ev == logs.EvRecv && e.Msg != nil && !sentIn[e.Msg.ID]:
				continue
			}
			kept = append(kept, e)
			lines = append(lines, nl.Line[i])
		}
		nl.Events, nl.Line = kept, lines
	}
	return &run, nil
}

// rates counts every message of a long run into the overview strip and the rates over time of a
// diagram laid out from its windows.
func (lr *longRun) rates(d *Data) (*overTimeCounts, error) {
	s := lr.s
	s.VC = logs.VCSkim // read (and checked) once already
	defer func() { s.VC = logs.VCCheck }()
	o := &overTime{From: d.From, To: max(d.To, d.From+1)}
	o.Bucket = otBucket(o.To - o.From)
	o.Start = floorDiv(o.From, o.Bucket) * o.Bucket
	n := int(max((o.To-o.Start+o.Bucket-1)/o.Bucket, 1))
	bucket := func(t int64) int { return min(max(int((t-o.Start)/o.Bucket), 0), n-1) }
	kinds := map[string]int{}
	for i, k := range d.Kinds {
		kinds[k.Name] = i
		d.Kinds[i].Count = 0
	}
	alg, algOK := lookupAlgo(d.Algo)
	counts := &overTimeCounts{n: n, byKind: make([][]int, len(d.Kinds))}
	for k := range counts.byKind {
		counts.byKind[k] = make([]int, n)
	}
	d.Density = make([]int, DensityBins)
	span := max(d.To-d.From, 1)
	for _, id := range s.Nodes {
		_, err := eachEvent(s, id, func(e *logs.Event, _ int) {
			t := (e.TS - d.Origin) / 1000
			switch {
			case e.Ev == logs.EvSend && e.Msg != nil:
				k, ok := kinds[e.Msg.Kind]
				if !ok {
					k = len(d.Kinds)
					kinds[e.Msg.Kind] = k
					role := "other"
					switch {
					case algOK && alg.IsAnnounce(e.Msg.Kind):
						role = "announce"
					case algOK && alg.IsElection(e.Msg.Kind):
						role = "election"
					}
					d.Kinds = append(d.Kinds, Kind{Name: e.Msg.Kind, Role: role, Color: kindPalette[k%len(kindPalette)]})
					counts.byKind = append(counts.byKind, make([]int, n))
				}
				d.Kinds[k].Count++
				counts.byKind[k][bucket(t)]++
				counts.sends++
				d.Density[min(max(int((t-d.From)*DensityBins/span), 0), DensityBins-1)]++
			case e.Ev == logs.EvDrop:
				if counts.drops == nil {
					counts.drops = make([]int, n)
				}
				counts.drops[bucket(t)]++
				counts.dropped++
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return counts, nil
}

// overTimeCounts are the whole run's messages counted into the rates' buckets.
type overTimeCounts struct {
	n              int
	byKind         [][]int
	drops          []int
	sends, dropped int
}

// longNote says on the page what a long run's diagram leaves out.
func (lr *longRun) longNote(drawn int) string {
	return fmt.Sprintf("a long run (%d events): the diagram draws %d of them, in %d windows (the elections in order from the first, overlaps beyond the grace, the end when agreement failed) and every node's starts, stops, elects and leaders; the overview strip and the rates over time count every message",
		lr.events, drawn, len(lr.windows))
}

// Export is the run, or the window of it, that an export (--shiviz, --perfetto) takes: Windowed of
// the run read whole; of a long run, the window read from its logs (vector clocks kept), which must
// then be a window: millions of events are more than ShiViz or Perfetto can open.
func (in *Input) Export(w ExportWindow) (*logs.Run, error) {
	if in.long == nil {
		return Windowed(in.Run, w)
	}
	if w.Whole() {
		return nil, fmt.Errorf("the run has %d events, more than an export can show: take a window of it (--from, --to) or some nodes (--nodes)", in.long.events)
	}
	if w.To != 0 && w.To <= w.From {
		return nil, fmt.Errorf("the window ends (%v) before it starts (%v)", w.To, w.From)
	}
	s := in.long.s
	for _, id := range w.Nodes {
		if !slices.Contains(s.Nodes, id) {
			return nil, fmt.Errorf("node %d is not in the run (its nodes are %v)", id, s.Run.Cluster.IDs())
		}
	}
	begin := runOrigin(in.Run)
	from, to := begin+int64(w.From), int64(1<<63-1)
	if w.To != 0 {
		to = begin + int64(w.To)
	}
	s.VC = logs.VCKeep
	defer func() { s.VC = logs.VCCheck }()
	out := *s.Run
	out.Nodes = map[int]*logs.NodeLog{}
	for _, id := range s.Nodes {
		if w.Nodes != nil && !slices.Contains(w.Nodes, id) {
			continue
		}
		kept := &logs.NodeLog{Node: id}
		torn, err := eachEvent(s, id, func(e *logs.Event, line int) {
			if e.TS >= from && e.TS <= to {
				kept.Events = append(kept.Events, copyEvent(e))
				kept.Line = append(kept.Line, line)
			}
		})
		if err != nil {
			return nil, err
		}
		kept.Torn = torn
		out.Nodes[id] = kept
	}
	return &out, nil
}
