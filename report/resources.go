package report

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/internal/svgchart"
)

// chartPoints is how many points a line of a resource chart keeps at most (samples are averaged into
// that many time buckets: at 100 ms a sample, a 10-minute run keeps its shape).
const chartPoints = 400

// series is one incarnation's samples of one value.
type series struct {
	node, inc int
	t         []int64 // µs since the origin
	v         []float64
}

// ResourceRow sums up one node's samples for the table under the charts.
type ResourceRow struct {
	Node    int
	Color   template.CSS // a colour nodeColor made, not user input
	Samples int
	PeakRSS string
	MeanCPU string
	PeakCPU string
	PeakFDs int32
}

// resourceCharts draws CPU and RSS over time, a line per node incarnation, as two SVG charts; the
// faults are drawn as dashed lines so that a spike can be read against them.
func resourceCharts(samples []Sample, d *Data) (template.HTML, []ResourceRow) {
	if len(samples) == 0 {
		return "", nil
	}
	type key struct{ node, inc int }
	cpu, rss := map[key]*series{}, map[key]*series{}
	var keys []key
	rows := map[int]*ResourceRow{}
	sumCPU := map[int]float64{}
	peakRSS := map[int]uint64{}
	peakCPU := map[int]float64{}
	for _, s := range samples {
		k := key{s.Node, s.Inc}
		if cpu[k] == nil {
			cpu[k], rss[k] = &series{node: s.Node, inc: s.Inc}, &series{node: s.Node, inc: s.Inc}
			keys = append(keys, k)
		}
		t := (s.TS - d.Origin) / 1000
		cpu[k].t, cpu[k].v = append(cpu[k].t, t), append(cpu[k].v, s.CPU)
		rss[k].t, rss[k].v = append(rss[k].t, t), append(rss[k].v, float64(s.RSS)/(1<<20))
		r := rows[s.Node]
		if r == nil {
			r = &ResourceRow{Node: s.Node, Color: template.CSS(nodeColor(s.Node))}
			rows[s.Node] = r
		}
		r.Samples++
		sumCPU[s.Node] += s.CPU
		peakRSS[s.Node] = max(peakRSS[s.Node], s.RSS)
		r.PeakFDs = max(r.PeakFDs, s.FDs)
		peakCPU[s.Node] = max(peakCPU[s.Node], s.CPU)
	}
	slices.SortFunc(keys, func(a, b key) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.inc, b.inc)) })
	var cs, rs []*series
	for _, k := range keys {
		cs, rs = append(cs, cpu[k]), append(rs, rss[k])
	}
	var out []ResourceRow
	for _, r := range rows {
		r.MeanCPU = fmt.Sprintf("%.1f", sumCPU[r.Node]/float64(r.Samples))
		r.PeakRSS = fmt.Sprintf("%.1f MiB", float64(peakRSS[r.Node])/(1<<20))
		r.PeakCPU = fmt.Sprintf("%.1f", peakCPU[r.Node])
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ResourceRow) int { return cmp.Compare(a.Node, b.Node) })
	html := lineChart("CPU, % of one core", "%", cs, d) + lineChart("Resident memory, MiB", "MiB", rs, d)
	return template.HTML(html), out
}

// tickCharW is a generous width of one character of a chart's tick labels (10 px system-ui), in
// the chart's units.
const tickCharW = 7.0

// lineChart renders one chart. Values are plain numbers and colours come from nodeColor, so the
// SVG is built as text without escaping anything user-supplied.
func lineChart(title, unit string, ss []*series, d *Data) string {
	const w, h, left, right, top, bottom = 900.0, 170.0, 56.0, 12.0, 22.0, 24.0
	pw, ph := w-left-right, h-top-bottom
	from, to := d.From, d.To
	for _, s := range ss {
		from, to = min(from, s.t[0]), max(to, s.t[len(s.t)-1])
	}
	ymax := 0.0
	for _, s := range ss {
		for _, v := range s.v {
			ymax = max(ymax, v)
		}
	}
	ymax = svgchart.NiceAbove(max(ymax, 1))
	x := func(t int64) float64 { return left + float64(t-from)/float64(max(to-from, 1))*pw }
	y := func(v float64) float64 { return top + ph - v/ymax*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s">`, w, h, w, h, title)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" class="chart-title">%s</text>`, left, title)
	for i := 0; i <= 2; i++ {
		v := ymax * float64(i) / 2
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="grid"/><text x="%.0f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			left, w-right, y(v), y(v), left-4, y(v)+4, trimFloat(v))
	}
	step := svgchart.NiceAbove(float64(to-from) / 6) // µs
	for t := math.Ceil(float64(from)/step) * step; t <= float64(to); t += step {
		label := trimFloat(t/1000) + " ms"
		px, anchor := inside(x(int64(t)), label, w)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" class="tick" text-anchor="%s">%s</text>`, px, h-6, anchor, label)
	}
	for _, f := range d.Faults {
		if f.Error == "" {
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" class="chart-fault"><title>%s at %s ms</title></line>`,
				x(f.T), x(f.T), top, top+ph, template.HTMLEscapeString(f.Label), trimFloat(float64(f.T)/1000))
		}
	}
	for _, s := range ss {
		t, v := downsample(s.t, s.v, chartPoints)
		var pts strings.Builder
		for i := range t {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(t[i]), y(v[i]))
		}
		fmt.Fprintf(&b, `<polyline class="series" data-node="%d" data-inc="%d" stroke="%s" points="%s"><title>node %d, incarnation %d (%s)</title></polyline>`,
			s.node, s.inc, nodeColor(s.node), strings.TrimSpace(pts.String()), s.node, s.inc, unit)
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// downsample averages the samples into at most n buckets of equal count.
func downsample(t []int64, v []float64, n int) ([]int64, []float64) {
	if len(t) <= n {
		return t, v
	}
	per := (len(t) + n - 1) / n
	var ot []int64
	var ov []float64
	for i := 0; i < len(t); i += per {
		j := min(i+per, len(t))
		var st int64
		var sv float64
		for k := i; k < j; k++ {
			st += t[k]
			sv += v[k]
		}
		ot, ov = append(ot, st/int64(j-i)), append(ov, sv/float64(j-i))
	}
	return ot, ov
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.3f", f)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// inside places a tick label centred on px in a drawing w wide: one that would be cut off by an
// edge is anchored inside it instead (tickCharW is a generous width of a character). It returns
// the label's x and its text-anchor.
func inside(px float64, label string, w float64) (float64, string) {
	half := float64(len(label)) * tickCharW / 2
	switch {
	case px+half > w-1:
		return w - 1, "end"
	case px-half < 1:
		return 1, "start"
	}
	return px, "middle"
}
