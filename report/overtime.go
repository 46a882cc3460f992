package report

// The "Over time" charts, after Maelstrom's rate plots: the messages sent per time bucket, a line per
// message kind (and the drops); the verdict's elections as bars; the faults as lines (kill, stop,
// restart) and shaded bands (pause, partition, link rule) across both. One SVG drawn server-side in
// the style of the resource charts, on the run's time axis (Data.From to Data.To). It stays cheap
// for a big run: the messages are only counted into buckets, a few hundred of them.

import (
	"cmp"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/internal/svgchart"
	"github.com/leaderlab/leaderlab/logs"
)

// otMaxBuckets is the most buckets the rate chart has; it has more than half as many (the bucket is
// the smallest round width, 1, 2, 2.5 or 5 times a power of ten µs, that keeps within it).
const otMaxBuckets = 200

// overTime is what the charts show, times in µs since the origin.
type overTime struct {
	From, To int64
	// Start is the first bucket's start (From rounded down to a multiple of Bucket); bucket i is
	// [Start+i*Bucket, Start+(i+1)*Bucket).
	Start, Bucket  int64
	N              int // buckets
	Kinds          []Kind
	Counts         [][]int // [kind][bucket]: sends
	Drops          []int   // [bucket]: drops, nil when the run has none
	Sends, Dropped int
	Elections      []otElection
	Lines          []otLine
	Bands          []otBand
}

// otElection is an election of the verdict: from its start to its agreement (Open: it never agreed,
// drawn to the run's end).
type otElection struct {
	N                  int
	From, To           int64
	Messages, Announce int
	Open               bool
	Leader             string
}

// otLine is a fault at one moment: a kill, a stop, a restart.
type otLine struct {
	T     int64
	Op    string
	Label string
}

// otBand is a fault over a stretch: a pause (to the resume), a partition (to the heal), a link rule
// (to the heal, or the next rule of its kind on the link).
type otBand struct {
	From, To int64
	Op       string
	Label    string
}

// overTimeView is the section of the page.
type overTimeView struct {
	SVG     template.HTML
	Bucket  string // "50 ms"
	Buckets int
}

// otBucket picks the bucket width for a span (µs): the smallest of 1, 2, 2.5, 5 times a power of ten
// that makes at most otMaxBuckets buckets (so more than otMaxBuckets/2, each step being at most
// twice the one before; the span rounded out to whole buckets may take one more).
func otBucket(span int64) int64 {
	span = max(span, 1)
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{10, 20, 25, 50} {
			if m == 25 && p == 1 {
				continue // 2.5 µs
			}
			if w := m * p / 10; w > 0 && (span+w-1)/w <= otMaxBuckets {
				return w
			}
		}
	}
}

// durText renders a bucket width: "50 ms", "2.5 s", "500 µs".
func durText(us int64) string {
	switch {
	case us >= 1_000_000:
		return trimFloat(float64(us)/1e6) + " s"
	case us >= 1000:
		return trimFloat(float64(us)/1000) + " ms"
	}
	return fmt.Sprintf("%d µs", us)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// buildOverTime counts the messages into buckets and places the elections and faults, from Data
// (the faults as the diagram has them) and the verdict (nil: no elections).
func buildOverTime(d *Data, v *check.Verdict) *overTime {
	o := &overTime{From: d.From, To: max(d.To, d.From+1), Kinds: d.Kinds}
	o.Bucket = otBucket(o.To - o.From)
	o.Start = floorDiv(o.From, o.Bucket) * o.Bucket
	n := int(max((o.To-o.Start+o.Bucket-1)/o.Bucket, 1))
	o.N = n
	bucket := func(t int64) int { return min(max(int((t-o.Start)/o.Bucket), 0), n-1) }
	o.Counts = make([][]int, len(d.Kinds))
	for k := range o.Counts {
		o.Counts[k] = make([]int, n)
	}
	for i, s := range d.Msgs.S {
		if k := d.Msgs.K[i]; k >= 0 && k < len(o.Counts) {
			o.Counts[k][bucket(s)]++
			o.Sends++
		}
	}
	drop := markType("drop")
	for i, y := range d.Marks.Y {
		if y != drop {
			continue
		}
		if o.Drops == nil {
			o.Drops = make([]int, n)
		}
		o.Drops[bucket(d.Marks.T[i])]++
		o.Dropped++
	}
	if v != nil {
		for i, e := range v.Metrics.Elections {
			el := otElection{N: i + 1, Messages: e.Messages, Announce: e.Announce, Open: e.EndNS == nil, Leader: "none agreed"}
			if i < len(d.Elections) {
				el.From, el.To = d.Elections[i].From, d.Elections[i].To
			} else {
				el.From, el.To = (e.StartNS-d.Origin)/1000, d.End
				if e.EndNS != nil {
					el.To = (*e.EndNS - d.Origin) / 1000
				}
			}
			el.To = max(el.To, el.From)
			if e.Leader != nil {
				el.Leader = fmt.Sprintf("n%d", *e.Leader)
			}
			o.Elections = append(o.Elections, el)
		}
	}
	o.faults(d)
	return o
}

// faults turns the diagram's faults into lines and bands: the pauses are Data.Paused (one band for
// the nodes paused together), the partitions Data.Partitions, a link rule lasts until the next heal
// or the next rule of its kind on its link; the other applied faults are lines.
func (o *overTime) faults(d *Data) {
	linkKey := func(label string) string {
		f := strings.Fields(label)
		return strings.Join(f[:min(len(f), 3)], " ") // "link 1->2 delay"
	}
	for i, f := range d.Faults {
		if f.Error != "" {
			continue
		}
		switch f.Op {
		case logs.OpPause, logs.OpResume, logs.OpPartition, logs.OpHeal:
		case logs.OpLink:
			to, key := d.To, linkKey(f.Label)
			for j, g := range d.Faults {
				if j == i || g.Error != "" || g.T < f.T || (g.T == f.T && j < i) || g.T >= to {
					continue
				}
				if g.Op == logs.OpHeal || (g.Op == logs.OpLink && linkKey(g.Label) == key) {
					to = g.T
				}
			}
			o.Bands = append(o.Bands, otBand{From: f.T, To: max(to, f.T), Op: logs.OpLink, Label: f.Label})
		default:
			o.Lines = append(o.Lines, otLine{T: f.T, Op: f.Op, Label: f.Label})
		}
	}
	type span struct{ a, b int64 }
	var order []span
	paused := map[span][]string{}
	for _, p := range d.Paused {
		k := span{p.From, p.To}
		if paused[k] == nil {
			order = append(order, k)
		}
		paused[k] = append(paused[k], strings.TrimPrefix(d.Lanes[p.Lane].Label, "n"))
	}
	for _, k := range order {
		o.Bands = append(o.Bands, otBand{From: k.a, To: k.b, Op: logs.OpPause, Label: "pause " + strings.Join(paused[k], ",")})
	}
	for _, p := range d.Partitions {
		o.Bands = append(o.Bands, otBand{From: p.From, To: max(p.To, p.From), Op: logs.OpPartition, Label: p.Label})
	}
	slices.SortStableFunc(o.Bands, func(a, b otBand) int { return cmp.Compare(a.From, b.From) })
	slices.SortStableFunc(o.Lines, func(a, b otLine) int { return cmp.Compare(a.T, b.T) })
}

// otColor is a fault's colour, as the diagram draws it.
func otColor(op string) string {
	switch op {
	case logs.OpKill:
		return "#c62828"
	case logs.OpRestart:
		return "#2e7d32"
	case logs.OpPause, logs.OpResume:
		return "#ef6c00"
	case logs.OpPartition, logs.OpHeal:
		return "#6a1b9a"
	case logs.OpLink:
		return "#1565c0"
	}
	return "#455a64"
}

// The geometry of the charts, in the SVG's units (pixels at full size).
const (
	otW, otLeft, otRight = 1200.0, 56.0, 14.0
	otRateH              = 150.0 // the rate panel
	otLabelRow           = 12.0  // a row of fault labels
	otLabelRows          = 4
	otBarH, otBarRow     = 12.0, 16.0 // an election's bar, and its row's pitch
	otBarRows            = 8
	otLabelCharW         = tickCharW // a generous width of a character at 10 px
	otLegendRow          = 16.0
)

// svgEsc escapes a text for the SVG (which is XML as well as HTML).
func svgEsc(s string) string { return template.HTMLEscapeString(s) }

func (o *overTime) view() *overTimeView {
	return &overTimeView{SVG: template.HTML(o.svg()), Bucket: durText(o.Bucket), Buckets: o.N}
}

// otLabelMax is the most characters a fault's label has on the chart (its tooltip has all of it).
const otLabelMax = 40

var idListRe = regexp.MustCompile(`\d+(?:,\d+)+`)

// shortLabel shortens a fault's label for the chart: runs of consecutive IDs as ranges ("partition
// 1-20 | 21-40"), and at most otLabelMax characters.
func shortLabel(s string) string {
	s = idListRe.ReplaceAllStringFunc(s, func(list string) string {
		var ids []int
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return list
			}
			ids = append(ids, n)
		}
		var out []string
		for j := 0; j < len(ids); {
			k := j
			for k+1 < len(ids) && ids[k+1] == ids[k]+1 {
				k++
			}
			switch {
			case k >= j+2:
				out = append(out, strconv.Itoa(ids[j])+"-"+strconv.Itoa(ids[k]))
			default:
				for m := j; m <= k; m++ {
					out = append(out, strconv.Itoa(ids[m]))
				}
			}
			j = k + 1
		}
		return strings.Join(out, ",")
	})
	if r := []rune(s); len(r) > otLabelMax {
		s = string(r[:otLabelMax-1]) + "…"
	}
	return s
}

// placed is a label placed in a row of labels.
type placed struct {
	x    float64
	row  int
	text string
	ok   bool
}

// rowFit places a label of text starting at x (moved in so that it stays within [lo, hi]) in the
// first of rows whose last label ends before it; ok is false when none has room.
func rowFit(ends []float64, x float64, text string, lo, hi float64) placed {
	w := float64(len([]rune(text))) * otLabelCharW
	x = max(min(x, hi-w), lo)
	for r := range ends {
		if ends[r] <= x {
			ends[r] = x + w + 6
			return placed{x: x, row: r, text: text, ok: true}
		}
	}
	return placed{text: text}
}

// svg draws the charts: a legend, the faults' labels, the rate panel, the elections' panel, each
// with the faults across it, and the time axis.
func (o *overTime) svg() string {
	pw := otW - otLeft - otRight
	span := float64(o.To - o.From)
	x := func(t int64) float64 { return otLeft + float64(min(max(t, o.From), o.To)-o.From)/span*pw }
	msText := func(t int64) string { return trimFloat(float64(t)/1000) + " ms" }
	n := o.N
	unit := durText(o.Bucket)

	// The legend: a line per kind, then the drops; wrapped in rows.
	type legendItem struct {
		color, text, dash string
	}
	var items []legendItem
	for k, kind := range o.Kinds {
		total := 0
		for _, c := range o.Counts[k] {
			total += c
		}
		items = append(items, legendItem{kind.Color, fmt.Sprintf("%s (%s) %d", kind.Name, kind.Role, total), ""})
	}
	if o.Dropped > 0 {
		items = append(items, legendItem{"#c62828", fmt.Sprintf("drops %d", o.Dropped), "4 2"})
	}
	type legendPos struct{ x, y float64 }
	var lpos []legendPos
	ly, lx := 36.0, otLeft
	for _, it := range items {
		w := 24 + float64(len([]rune(it.text)))*otLabelCharW + 12
		if lx+w > otW-otRight && lx > otLeft {
			lx, ly = otLeft, ly+otLegendRow
		}
		lpos = append(lpos, legendPos{lx, ly})
		lx += w
	}
	if len(items) == 0 {
		ly -= otLegendRow
	}

	// The faults' labels, in rows above the rate panel.
	ends := make([]float64, otLabelRows)
	for i := range ends {
		ends[i] = math.Inf(-1)
	}
	type fault struct {
		a, b      int64
		op, label string
		band      bool
		lab       placed
	}
	var fs []fault
	for _, b := range o.Bands {
		fs = append(fs, fault{a: b.From, b: b.To, op: b.Op, label: strings.TrimSpace(b.Label), band: true})
	}
	for _, l := range o.Lines {
		fs = append(fs, fault{a: l.T, b: l.T, op: l.Op, label: strings.TrimSpace(l.Label)})
	}
	slices.SortStableFunc(fs, func(p, q fault) int { return cmp.Compare(p.a, q.a) })
	rows := 0
	for i := range fs {
		fs[i].lab = rowFit(ends, x(fs[i].a)+3, shortLabel(fs[i].label), 1, otW-1)
		if fs[i].lab.ok {
			rows = max(rows, fs[i].lab.row+1)
		}
	}
	stripTop := ly + 10
	rateTop := stripTop + float64(rows)*otLabelRow + 4
	rateBot := rateTop + otRateH

	// The elections' bars, in rows: a bar goes in the first row where it does not overlap another.
	type bar struct {
		x0, x1 float64
		row    int
		e      otElection
		lab    placed
	}
	bars := make([]bar, len(o.Elections))
	barEnds := []float64{}
	for i, e := range o.Elections {
		x0, x1 := x(e.From), max(x(e.To), x(e.From)+2)
		r := slices.IndexFunc(barEnds, func(end float64) bool { return end+2 <= x0 })
		if r < 0 && len(barEnds) < otBarRows {
			barEnds, r = append(barEnds, 0), len(barEnds)
		} else if r < 0 {
			r = 0
			for j := range barEnds {
				if barEnds[j] < barEnds[r] {
					r = j
				}
			}
		}
		barEnds[r] = max(barEnds[r], x1)
		bars[i] = bar{x0: x0, x1: x1, row: r, e: e}
	}
	// Their labels: inside the bar when it fits, else right of it, else left, else none (the bar's
	// tooltip says it all).
	for r := range barEnds {
		var idx []int
		for i := range bars {
			if bars[i].row == r {
				idx = append(idx, i)
			}
		}
		lastEnd := 1.0
		for j, i := range idx {
			b := &bars[i]
			text := fmt.Sprintf("#%d · %d msgs", b.e.N, b.e.Messages+b.e.Announce)
			w := float64(len([]rune(text))) * otLabelCharW
			next := otW - 1
			if j+1 < len(idx) {
				next = bars[idx[j+1]].x0 - 3
			}
			switch {
			case b.x1-b.x0 >= w+6 && b.x0+3 >= lastEnd:
				b.lab = placed{x: b.x0 + 3, text: text, ok: true}
			case b.x1+3+w <= next && b.x1+3 >= lastEnd:
				b.lab = placed{x: b.x1 + 3, text: text, ok: true}
			case b.x0-3-w >= lastEnd:
				b.lab = placed{x: b.x0 - 3 - w, text: text, ok: true}
			}
			if b.lab.ok {
				lastEnd = max(b.lab.x+w+4, b.x1)
			} else {
				lastEnd = max(lastEnd, b.x1)
			}
		}
	}
	elTitle := rateBot + 30
	elTop := elTitle + 8
	elBot := elTop + float64(max(len(barEnds), 1))*otBarRow + 4
	h := elBot + 22

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart over-time" id="over-time-chart" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s" data-bucket-us="%d" data-buckets="%d" data-from="%d" data-to="%d">`,
		otW, h, otW, h, svgEsc("messages sent per "+unit+" by kind, the elections and the faults over the run"), o.Bucket, n, o.From, o.To)
	b.WriteString(`<defs><pattern id="ot-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdecea"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c62828" stroke-width="1.6"/></pattern></defs>`)
	fmt.Fprintf(&b, `<text x="%.0f" y="14" class="chart-title">%s</text>`, otLeft, svgEsc("Message rate: messages sent / "+unit+", by kind"))
	fmt.Fprintf(&b, `<text x="%.0f" y="14" class="tick" text-anchor="end">%s</text>`, otW-otRight, svgEsc(fmt.Sprintf("%d buckets of %s; %d messages", n, unit, o.Sends)))
	for i, it := range items {
		p := lpos[i]
		dash := ""
		if it.dash != "" {
			dash = ` stroke-dasharray="` + it.dash + `"`
		}
		fmt.Fprintf(&b, `<g class="ot-legend"><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%.1f" y="%.1f" class="tick ot-legend-text">%s</text></g>`,
			p.x, p.x+20, p.y-4, p.y-4, svgEsc(it.color), dash, p.x+24, p.y, svgEsc(it.text))
	}

	// The time grid and the value grid.
	step := svgchart.NiceAbove(span / 8)
	var ticks []float64
	for t := math.Ceil(float64(o.From)/step) * step; t <= float64(o.To); t += step {
		ticks = append(ticks, t)
	}
	for _, t := range ticks {
		px := x(int64(t))
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`,
			px, px, rateTop, rateBot, px, px, elTop, elBot)
	}
	ymax := 0
	for k := range o.Counts {
		ymax = max(ymax, slices.Max(append(o.Counts[k], 0)))
	}
	if o.Drops != nil {
		ymax = max(ymax, slices.Max(o.Drops))
	}
	top := svgchart.NiceAbove(max(float64(ymax), 1))
	y := func(v int) float64 { return rateBot - float64(v)/top*otRateH }
	yticks := []float64{0, top}
	if math.Mod(top, 2) == 0 {
		yticks = []float64{0, top / 2, top}
	}
	for _, v := range yticks {
		py := rateBot - v/top*otRateH
		fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="grid"/><text x="%.0f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			otLeft, otW-otRight, py, py, otLeft-4, py+4, trimFloat(v))
	}
	fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="tick ot-unit" text-anchor="middle" transform="rotate(-90 %.0f %.1f)">%s</text>`,
		12.0, (rateTop+rateBot)/2, 12.0, (rateTop+rateBot)/2, svgEsc("msgs / "+unit))

	// The faults: bands under everything, lines, and their labels above the rate panel.
	for _, f := range fs {
		c := otColor(f.op)
		var what string
		if f.band {
			what = fmt.Sprintf("%s, %s – %s", f.label, msText(f.a), msText(f.b))
		} else {
			what = fmt.Sprintf("%s at %s", f.label, msText(f.a))
		}
		for _, panel := range []struct {
			name     string
			top, bot float64
		}{{"rate", rateTop, rateBot}, {"elections", elTop, elBot}} {
			top := panel.top
			if panel.name == "rate" && f.lab.ok {
				top = stripTop + float64(f.lab.row)*otLabelRow
			}
			if f.band {
				x0, x1 := x(f.a), x(f.b)
				fmt.Fprintf(&b, `<rect class="ot-band ot-%s" data-panel="%s" data-a="%d" data-b="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.13" stroke="%s" stroke-opacity="0.45"><title>%s</title></rect>`,
					svgEsc(f.op), panel.name, f.a, f.b, x0, panel.top, max(x1-x0, 1), panel.bot-panel.top, c, c, svgEsc(what))
				if top < panel.top {
					fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-opacity="0.6" class="ot-tick"/>`, x0, x0, top, panel.top, c)
				}
			} else {
				fmt.Fprintf(&b, `<line class="ot-line ot-%s" data-panel="%s" data-a="%d" data-b="%d" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"><title>%s</title></line>`,
					svgEsc(f.op), panel.name, f.a, f.a, x(f.a), x(f.a), top, panel.bot, c, svgEsc(what))
			}
		}
		if f.lab.ok {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick ot-fault-label" fill="%s" style="fill:%s" data-a="%d" data-b="%d">%s<title>%s</title></text>`,
				f.lab.x, stripTop+float64(f.lab.row)*otLabelRow+9, c, c, f.a, f.b, svgEsc(f.lab.text), svgEsc(what))
		}
	}

	// The rate: a hover target per bucket with sends or drops, then a line per kind, then the drops.
	bx := func(i int) float64 { return x(o.Start + int64(i)*o.Bucket) }
	for i := range n {
		sent, parts := 0, []string(nil)
		for k := range o.Counts {
			if c := o.Counts[k][i]; c > 0 {
				sent += c
				parts = append(parts, fmt.Sprintf("%s %d", o.Kinds[k].Name, c))
			}
		}
		dropped := 0
		if o.Drops != nil {
			dropped = o.Drops[i]
		}
		if sent == 0 && dropped == 0 {
			continue
		}
		a, z := o.Start+int64(i)*o.Bucket, o.Start+int64(i+1)*o.Bucket
		text := fmt.Sprintf("%s – %s: %d sent", msText(a), msText(z), sent)
		if len(parts) > 0 {
			text += " (" + strings.Join(parts, ", ") + ")"
		}
		if dropped > 0 {
			text += fmt.Sprintf(", %d dropped", dropped)
		}
		x0, x1 := bx(i), bx(i+1)
		fmt.Fprintf(&b, `<rect class="ot-hit" data-a="%d" data-b="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#000" fill-opacity="0"><title>%s</title></rect>`,
			a, z, x0, rateTop, max(x1-x0, 0.5), otRateH, svgEsc(text))
	}
	poly := func(class, color, dash, name string, vals []int) {
		var pts strings.Builder
		total := 0
		var cs strings.Builder
		for i, v := range vals {
			mid := o.Start + int64(i)*o.Bucket + o.Bucket/2
			fmt.Fprintf(&pts, "%.1f,%.1f ", x(mid), y(v))
			if i > 0 {
				cs.WriteByte(' ')
			}
			fmt.Fprint(&cs, v)
			total += v
		}
		if dash != "" {
			dash = ` stroke-dasharray="` + dash + `"`
		}
		fmt.Fprintf(&b, `<polyline class="%s" data-kind="%s" data-total="%d" data-counts="%s" fill="none" stroke="%s"%s points="%s"><title>%s</title></polyline>`,
			class, svgEsc(name), total, cs.String(), svgEsc(color), dash, strings.TrimSpace(pts.String()), svgEsc(fmt.Sprintf("%s: %d, per %s", name, total, unit)))
	}
	for k, kind := range o.Kinds {
		poly("ot-rate", kind.Color, "", kind.Name, o.Counts[k])
	}
	if o.Drops != nil {
		poly("ot-rate ot-drops", "#c62828", "4 2", "drops", o.Drops)
	}

	// The elections.
	fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="chart-title">%s</text>`, otLeft, elTitle,
		svgEsc("Elections of the verdict: a bar from its start to the agreement, #k · its messages (election and announce kinds); hatched: never agreed"))
	if len(bars) == 0 {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" class="tick">no election in the verdict</text>`, otLeft+4, elTop+otBarH)
	}
	for _, br := range bars {
		e := br.e
		by := elTop + 2 + float64(br.row)*otBarRow
		took := "never agreed"
		class, fill, stroke, dash := "ot-election", "#c5cae9", "#3949ab", ""
		if e.Open {
			class, fill, stroke, dash = "ot-election ot-open", "url(#ot-hatch)", "#c62828", ` stroke-dasharray="3 2"`
		} else {
			took = "took " + msText(e.To-e.From)
		}
		what := fmt.Sprintf("election #%d: %s – %s, %s; %d messages (%d election, %d announce); leader %s", e.N, msText(e.From), msText(e.To), took, e.Messages+e.Announce, e.Messages, e.Announce, e.Leader)
		open := 0
		if e.Open {
			open = 1
		}
		fmt.Fprintf(&b, `<rect class="%s" data-n="%d" data-a="%d" data-b="%d" data-open="%d" data-messages="%d" x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s" stroke="%s"%s><title>%s</title></rect>`,
			class, e.N, e.From, e.To, open, e.Messages+e.Announce, br.x0, by, br.x1-br.x0, otBarH, fill, stroke, dash, svgEsc(what))
		if br.lab.ok {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick ot-election-label" data-n="%d">%s<title>%s</title></text>`,
				br.lab.x, by+otBarH-2.5, e.N, svgEsc(br.lab.text), svgEsc(what))
		}
	}

	// The time axis, under the elections: the labels are moved in at the ends, never cut.
	fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="ot-axis" stroke="#8a93a3"/>`, otLeft, otW-otRight, rateBot, rateBot)
	fmt.Fprintf(&b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="ot-axis" stroke="#8a93a3"/>`, otLeft, otW-otRight, elBot, elBot)
	for _, t := range ticks {
		label := trimFloat(t/1000) + " ms"
		px, anchor := inside(x(int64(t)), label, otW)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick ot-time" text-anchor="%s">%s</text>`, px, rateBot+13, anchor, label)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" class="tick ot-time" text-anchor="%s">%s</text>`, px, elBot+14, anchor, label)
	}
	b.WriteString(`</svg>`)
	return b.String()
}
