package report

import (
	"bufio"
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/rundir"
)

//go:embed assets/report.html.tmpl assets/report.css assets/report.js
var assets embed.FS

// pageTmpl is parsed on first use: parsed when the package was initialised, it cost 2,500
// allocations at the start of every process of the binary, every node's included.
var pageTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report.html.tmpl").Funcs(template.FuncMap{
		"ms":    func(us int64) string { return trimFloat(float64(us)/1000) + " ms" },
		"brief": brief,
	}).ParseFS(assets, "assets/report.html.tmpl"))
})

// page is what the template renders.
type page struct {
	Name        string
	Dir         string
	Generated   string
	Cluster     rundir.Cluster
	Verdict     *check.Verdict
	VerdictFrom string
	Leader      string
	Props       []propRow
	First       *Violation
	Warnings    []string
	Elections   []electionRow
	Failovers   []failoverRow
	Overlaps    []overlapRow // the overlaps and the split-brain windows, by time
	SplitWins   int
	Leaders     []LeaderSeg
	RingNote    string // how the lanes follow the ring, when they do
	Kinds       []Kind
	Messages    int
	Drops       int
	Charts      template.HTML
	OverTime    *overTimeView
	Resources   []ResourceRow
	NodeStats   []check.NodeStats
	ChaosLines  []string
	CSS         template.CSS
	JS          template.JS
	Data        template.JS

	// Network is the cluster's graph (nil for a mesh); Sync the synchronizer's measures (nil for
	// an algorithm that does not act in pulses).
	Network *network
	Sync    *syncView
}

type propRow struct {
	check.Property
	Where *Violation
}

type electionRow struct {
	N                    int
	From, To             int64
	Start, Took          string
	Messages, Announce   int
	ByKind, Bound, Ratio string
	Over                 bool
	Initiators, Faults   int
	Leader               string
}

type failoverRow struct {
	Fault, Took, Leader string
	From, To            int64
	Never               bool
}

// overlapRow is a row of the split-brain table: an overlap of self-believing nodes within one
// component, or (Split) a split-brain window, when two or more components each had a leader.
type overlapRow struct {
	From, To    int64
	Split       bool
	Nodes       string
	Lanes       string
	MS          string
	BeyondGrace bool
}

// brief shortens a property's detail for the callout at the top: its first clause when it is long
// (the table under it has the whole detail).
func brief(s string) string {
	if len(s) <= 240 {
		return s
	}
	if i := strings.Index(s, "; "); i > 0 && i < 240 {
		return s[:i] + "; … (the whole detail is in the table)"
	}
	return s[:strings.LastIndex(s[:240], " ")] + " … (the whole detail is in the table)"
}

// WriteHTML renders the report of in to w.
func WriteHTML(w io.Writer, in *Input) error {
	name := filepath.Base(filepath.Clean(in.Dir))
	d := BuildData(in.Run, in.Verdict, name)
	if in.long != nil {
		counts, err := in.long.rates(d)
		if err != nil {
			return fmt.Errorf("report: read the run again for its rates: %w", err)
		}
		d.counts = counts
	}
	return writePage(w, in, d)
}

func writePage(w io.Writer, in *Input, d *Data) error {
	css, err := assets.ReadFile("assets/report.css")
	if err != nil {
		return err
	}
	js, err := assets.ReadFile("assets/report.js")
	if err != nil {
		return err
	}
	// encoding/json escapes <, > and & inside strings, so the JSON cannot end its <script> element.
	data, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("report: encode the diagram's data: %w", err)
	}
	v := in.Verdict
	p := &page{
		Name:        d.Run,
		Dir:         in.Dir,
		Generated:   time.Now().UTC().Format(time.RFC3339),
		Cluster:     in.Run.Cluster,
		Verdict:     v,
		VerdictFrom: in.VerdictFrom,
		Leader:      "none agreed",
		Warnings:    append(slices.Clone(v.Warnings), in.Warnings...),
		Leaders:     d.Leaders,
		Kinds:       d.Kinds,
		Messages:    len(d.Msgs.S),
		NodeStats:   v.Metrics.NodeStats,
		CSS:         template.CSS(css),
		JS:          template.JS(js),
		Data:        template.JS(data),
		First:       firstViolation(d.Violations),
	}
	for _, y := range d.Marks.Y {
		if y == markType("drop") {
			p.Drops++
		}
	}
	if c := d.counts; c != nil {
		p.Messages, p.Drops = c.sends, c.dropped
	}
	if v.Leader != nil {
		p.Leader = fmt.Sprintf("n%d", *v.Leader)
	}
	for _, prop := range v.Properties {
		row := propRow{Property: prop}
		for i := range d.Violations {
			if d.Violations[i].Property == prop.Name {
				row.Where = &d.Violations[i]
			}
		}
		p.Props = append(p.Props, row)
	}
	for _, line := range strings.Split(in.Run.Cluster.Chaos, "\n") {
		if strings.TrimSpace(line) != "" {
			p.ChaosLines = append(p.ChaosLines, line)
		}
	}
	p.Elections = electionRows(v, d)
	p.Failovers = failoverRows(v, d)
	p.Overlaps, p.SplitWins = overlapRows(v, d)
	if d.Order == "ring" {
		ids := make([]string, len(d.Lanes))
		for i, l := range d.Lanes {
			ids[i] = strconv.Itoa(l.ID)
		}
		if len(ids) > 40 {
			ids = append(ids[:40], "…")
		}
		p.RingNote = "Lanes in ring order (cluster.json's ring), top to bottom, wrapping from the last to the first: " + strings.Join(ids, " → ")
	}
	p.Charts, p.Resources = resourceCharts(in.Resources, d)
	p.OverTime = buildOverTime(d, v).view()
	p.Network = buildNetwork(&in.Run.Cluster, d, v)
	p.Sync = buildSync(v)
	bw := bufio.NewWriterSize(w, 256<<10)
	if err := pageTmpl().Execute(bw, p); err != nil {
		return fmt.Errorf("report: render: %w", err)
	}
	return bw.Flush()
}

// overlapRows lists the verdict's overlaps and split-brain windows by time (the times of both are
// milliseconds since the begin, the page's origin), and counts the windows.
func overlapRows(v *check.Verdict, d *Data) ([]overlapRow, int) {
	var out []overlapRow
	lanesOf := func(ids []int) string {
		var ls []int
		for _, id := range ids {
			for l, lane := range d.Lanes {
				if lane.ID == id {
					ls = append(ls, l)
				}
			}
		}
		return joinInts(ls, ",")
	}
	for _, o := range v.Metrics.Overlaps {
		from := int64(o.AtMS * 1000)
		out = append(out, overlapRow{From: from, To: from + int64(o.MS*1000), Nodes: joinInts(o.Nodes, ", "), Lanes: lanesOf(o.Nodes),
			MS: trimFloat(o.MS) + " ms", BeyondGrace: o.BeyondGrace})
	}
	for _, w := range v.Metrics.SplitBrain {
		from := int64(w.AtMS * 1000)
		out = append(out, overlapRow{From: from, To: from + int64(w.MS*1000), Split: true, Nodes: joinInts(w.Leaders, ", "), Lanes: lanesOf(w.Leaders),
			MS: trimFloat(w.MS) + " ms"})
	}
	slices.SortStableFunc(out, func(a, b overlapRow) int { return cmp.Compare(a.From, b.From) })
	return out, len(v.Metrics.SplitBrain)
}

func electionRows(v *check.Verdict, d *Data) []electionRow {
	var out []electionRow
	for i, e := range v.Metrics.Elections {
		r := electionRow{N: i + 1, Messages: e.Messages, Announce: e.Announce, Initiators: e.Initiators, Faults: e.Faults,
			Bound: "none", Ratio: "–", Leader: "none agreed", Took: "never agreed"}
		if i < len(d.Elections) {
			r.From, r.To = d.Elections[i].From, d.Elections[i].To
		}
		r.Start = trimFloat(float64(e.StartNS-v.BeginNS)/1e6) + " ms"
		if e.EndNS != nil {
			r.Took = trimFloat(float64(*e.EndNS-e.StartNS)/1e6) + " ms"
		}
		if e.Bound != nil && *e.Bound > 0 {
			r.Bound = fmt.Sprint(*e.Bound)
			r.Ratio = fmt.Sprintf("%.2f", float64(e.Messages+e.Announce)/float64(*e.Bound))
			r.Over = e.Messages+e.Announce > *e.Bound
		}
		if e.Leader != nil {
			r.Leader = fmt.Sprintf("n%d", *e.Leader)
		}
		kinds := make([]string, 0, len(e.ByKind))
		for k := range e.ByKind {
			kinds = append(kinds, k)
		}
		sort.Strings(kinds)
		for j, k := range kinds {
			kinds[j] = fmt.Sprintf("%s %d", k, e.ByKind[k])
		}
		r.ByKind = strings.Join(kinds, ", ")
		out = append(out, r)
	}
	return out
}

func failoverRows(v *check.Verdict, d *Data) []failoverRow {
	var out []failoverRow
	for _, f := range v.Metrics.Failovers {
		r := failoverRow{Fault: f.Fault, From: int64(f.AtMS * 1000), Took: "never agreed again", Leader: "–", Never: f.MS == nil}
		r.To = d.End
		if f.MS != nil {
			r.Took = trimFloat(*f.MS) + " ms"
			r.To = r.From + int64(*f.MS*1000)
		}
		if f.Leader != nil {
			r.Leader = fmt.Sprintf("n%d", *f.Leader)
		}
		out = append(out, r)
	}
	return out
}

// WriteFile writes dir/report.html atomically (a temporary file renamed into place) and returns its
// path.
func WriteFile(dir string, in *Input) (string, error) {
	path := filepath.Join(dir, rundir.ReportFile)
	f, err := os.CreateTemp(dir, ".report-*.html")
	if err != nil {
		return "", fmt.Errorf("write report.html: %w", err)
	}
	tmp := f.Name()
	err = WriteHTML(f, in)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write report.html: %w", err)
	}
	return path, nil
}
