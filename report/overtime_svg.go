package report

// The over-time chart drawn: first laid out (otLayout: where the legend, the faults' labels, the
// panels and the elections' bars go), then drawn panel by panel, top to bottom.

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/internal/svgchart"
)

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

// otLegendItem is a line of the legend: a kind of message, or the drops.
type otLegendItem struct {
	color, text, dash string
	x, y              float64 // where it is drawn
}

// otFault is a fault drawn across the panels: a band (from a to b) or a line (at a), with its label
// in the rows above the rate panel.
type otFault struct {
	a, b      int64
	op, label string
	band      bool
	lab       placed
}

// otBar is an election's bar, in its row of the elections' panel.
type otBar struct {
	x0, x1 float64
	row    int
	e      otElection
	lab    placed
}

// otLayout is where everything of the chart goes.
type otLayout struct {
	o      *overTime
	span   float64
	unit   string
	legend []otLegendItem
	faults []otFault
	bars   []otBar
	ticks  []float64 // the time grid, in µs
	// The heights: the fault labels' strip, the rate panel, the elections' panel, the whole chart.
	stripTop, rateTop, rateBot, elTitle, elTop, elBot, h float64
	top                                                  float64 // the rate panel's top value
}

// x is where time t (clamped to the run) is drawn.
func (l *otLayout) x(t int64) float64 {
	pw := otW - otLeft - otRight
	return otLeft + float64(min(max(t, l.o.From), l.o.To)-l.o.From)/l.span*pw
}

// y is where a count is drawn in the rate panel.
func (l *otLayout) y(v int) float64 { return l.rateBot - float64(v)/l.top*otRateH }

func msText(t int64) string { return trimFloat(float64(t)/1000) + " ms" }

// svg draws the charts: a legend, the faults' labels, the rate panel, the elections' panel, each
// with the faults across it, and the time axis.
func (o *overTime) svg() string {
	l := o.layout()
	var b strings.Builder
	l.drawHead(&b)
	l.drawGrid(&b)
	l.drawFaults(&b)
	l.drawRate(&b)
	l.drawElections(&b)
	l.drawTimeAxis(&b)
	b.WriteString(`</svg>`)
	return b.String()
}

// layout places the legend, the faults' labels and the elections' bars, and so the panels.
func (o *overTime) layout() *otLayout {
	l := &otLayout{o: o, span: float64(o.To - o.From), unit: durText(o.Bucket)}
	ly := l.placeLegend()
	rows := l.placeFaults()
	l.stripTop = ly + 10
	l.rateTop = l.stripTop + float64(rows)*otLabelRow + 4
	l.rateBot = l.rateTop + otRateH
	barRows := l.placeBars()
	l.elTitle = l.rateBot + 30
	l.elTop = l.elTitle + 8
	l.elBot = l.elTop + float64(max(barRows, 1))*otBarRow + 4
	l.h = l.elBot + 22

	step := svgchart.NiceAbove(l.span / 8)
	for t := math.Ceil(float64(o.From)/step) * step; t <= float64(o.To); t += step {
		l.ticks = append(l.ticks, t)
	}
	ymax := 0
	for k := range o.Counts {
		ymax = max(ymax, slices.Max(append(o.Counts[k], 0)))
	}
	if o.Drops != nil {
		ymax = max(ymax, slices.Max(o.Drops))
	}
	l.top = svgchart.NiceAbove(max(float64(ymax), 1))
	return l
}

// placeLegend lays out the legend: a line per kind, then the drops; wrapped in rows. It returns
// the last row's baseline.
func (l *otLayout) placeLegend() float64 {
	o := l.o
	for k, kind := range o.Kinds {
		total := 0
		for _, c := range o.Counts[k] {
			total += c
		}
		l.legend = append(l.legend, otLegendItem{color: kind.Color, text: fmt.Sprintf("%s (%s) %d", kind.Name, kind.Role, total)})
	}
	if o.Dropped > 0 {
		l.legend = append(l.legend, otLegendItem{color: "#c62828", text: fmt.Sprintf("drops %d", o.Dropped), dash: "4 2"})
	}
	ly, lx := 36.0, otLeft
	for i := range l.legend {
		it := &l.legend[i]
		w := 24 + float64(len([]rune(it.text)))*otLabelCharW + 12
		if lx+w > otW-otRight && lx > otLeft {
			lx, ly = otLeft, ly+otLegendRow
		}
		it.x, it.y = lx, ly
		lx += w
	}
	if len(l.legend) == 0 {
		ly -= otLegendRow
	}
	return ly
}

// placeFaults puts the faults' labels in rows above the rate panel, and returns how many rows
// they take.
func (l *otLayout) placeFaults() int {
	o := l.o
	ends := make([]float64, otLabelRows)
	for i := range ends {
		ends[i] = math.Inf(-1)
	}
	for _, b := range o.Bands {
		l.faults = append(l.faults, otFault{a: b.From, b: b.To, op: b.Op, label: strings.TrimSpace(b.Label), band: true})
	}
	for _, ln := range o.Lines {
		l.faults = append(l.faults, otFault{a: ln.T, b: ln.T, op: ln.Op, label: strings.TrimSpace(ln.Label)})
	}
	slices.SortStableFunc(l.faults, func(p, q otFault) int { return cmp.Compare(p.a, q.a) })
	rows := 0
	for i := range l.faults {
		f := &l.faults[i]
		f.lab = rowFit(ends, l.x(f.a)+3, shortLabel(f.label), 1, otW-1)
		if f.lab.ok {
			rows = max(rows, f.lab.row+1)
		}
	}
	return rows
}

// placeBars puts the elections' bars in rows: a bar goes in the first row where it does not
// overlap another. It returns how many rows they take.
func (l *otLayout) placeBars() int {
	l.bars = make([]otBar, len(l.o.Elections))
	barEnds := []float64{}
	for i, e := range l.o.Elections {
		x0, x1 := l.x(e.From), max(l.x(e.To), l.x(e.From)+2)
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
		l.bars[i] = otBar{x0: x0, x1: x1, row: r, e: e}
	}
	for r := range barEnds {
		l.labelBars(r)
	}
	return len(barEnds)
}

// labelBars places the labels of row r's bars: inside the bar when it fits, else right of it, else
// left, else none (the bar's tooltip says it all).
func (l *otLayout) labelBars(r int) {
	bars := l.bars
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

// drawHead opens the SVG and draws the title and the legend.
func (l *otLayout) drawHead(b *strings.Builder) {
	o := l.o
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart over-time" id="over-time-chart" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="%s" data-bucket-us="%d" data-buckets="%d" data-from="%d" data-to="%d">`,
		otW, l.h, otW, l.h, svgEsc("messages sent per "+l.unit+" by kind, the elections and the faults over the run"), o.Bucket, o.N, o.From, o.To)
	b.WriteString(`<defs><pattern id="ot-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#fdecea"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c62828" stroke-width="1.6"/></pattern></defs>`)
	fmt.Fprintf(b, `<text x="%.0f" y="14" class="chart-title">%s</text>`, otLeft, svgEsc("Message rate: messages sent / "+l.unit+", by kind"))
	fmt.Fprintf(b, `<text x="%.0f" y="14" class="tick" text-anchor="end">%s</text>`, otW-otRight, svgEsc(fmt.Sprintf("%d buckets of %s; %d messages", o.N, l.unit, o.Sends)))
	for _, it := range l.legend {
		dash := ""
		if it.dash != "" {
			dash = ` stroke-dasharray="` + it.dash + `"`
		}
		fmt.Fprintf(b, `<g class="ot-legend"><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="2"%s/><text x="%.1f" y="%.1f" class="tick ot-legend-text">%s</text></g>`,
			it.x, it.x+20, it.y-4, it.y-4, svgEsc(it.color), dash, it.x+24, it.y, svgEsc(it.text))
	}
}

// drawGrid draws the time grid across both panels and the value grid of the rate panel.
func (l *otLayout) drawGrid(b *strings.Builder) {
	for _, t := range l.ticks {
		px := l.x(int64(t))
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/><line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/>`,
			px, px, l.rateTop, l.rateBot, px, px, l.elTop, l.elBot)
	}
	yticks := []float64{0, l.top}
	if math.Mod(l.top, 2) == 0 {
		yticks = []float64{0, l.top / 2, l.top}
	}
	for _, v := range yticks {
		py := l.rateBot - v/l.top*otRateH
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="grid"/><text x="%.0f" y="%.1f" class="tick" text-anchor="end">%s</text>`,
			otLeft, otW-otRight, py, py, otLeft-4, py+4, trimFloat(v))
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.1f" class="tick ot-unit" text-anchor="middle" transform="rotate(-90 %.0f %.1f)">%s</text>`,
		12.0, (l.rateTop+l.rateBot)/2, 12.0, (l.rateTop+l.rateBot)/2, svgEsc("msgs / "+l.unit))
}

// drawFaults draws the faults: bands under everything, lines, and their labels above the rate
// panel.
func (l *otLayout) drawFaults(b *strings.Builder) {
	for _, f := range l.faults {
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
		}{{"rate", l.rateTop, l.rateBot}, {"elections", l.elTop, l.elBot}} {
			top := panel.top
			if panel.name == "rate" && f.lab.ok {
				top = l.stripTop + float64(f.lab.row)*otLabelRow
			}
			if f.band {
				x0, x1 := l.x(f.a), l.x(f.b)
				fmt.Fprintf(b, `<rect class="ot-band ot-%s" data-panel="%s" data-a="%d" data-b="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="0.13" stroke="%s" stroke-opacity="0.45"><title>%s</title></rect>`,
					svgEsc(f.op), panel.name, f.a, f.b, x0, panel.top, max(x1-x0, 1), panel.bot-panel.top, c, c, svgEsc(what))
				if top < panel.top {
					fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-opacity="0.6" class="ot-tick"/>`, x0, x0, top, panel.top, c)
				}
			} else {
				fmt.Fprintf(b, `<line class="ot-line ot-%s" data-panel="%s" data-a="%d" data-b="%d" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"><title>%s</title></line>`,
					svgEsc(f.op), panel.name, f.a, f.a, l.x(f.a), l.x(f.a), top, panel.bot, c, svgEsc(what))
			}
		}
		if f.lab.ok {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="tick ot-fault-label" fill="%s" style="fill:%s" data-a="%d" data-b="%d">%s<title>%s</title></text>`,
				f.lab.x, l.stripTop+float64(f.lab.row)*otLabelRow+9, c, c, f.a, f.b, svgEsc(f.lab.text), svgEsc(what))
		}
	}
}

// drawRate draws the rate panel: a hover target per bucket with sends or drops, then a line per
// kind, then the drops.
func (l *otLayout) drawRate(b *strings.Builder) {
	o := l.o
	bx := func(i int) float64 { return l.x(o.Start + int64(i)*o.Bucket) }
	for i := range o.N {
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
		fmt.Fprintf(b, `<rect class="ot-hit" data-a="%d" data-b="%d" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#000" fill-opacity="0"><title>%s</title></rect>`,
			a, z, x0, l.rateTop, max(x1-x0, 0.5), otRateH, svgEsc(text))
	}
	for k, kind := range o.Kinds {
		l.drawPoly(b, "ot-rate", kind.Color, "", kind.Name, o.Counts[k])
	}
	if o.Drops != nil {
		l.drawPoly(b, "ot-rate ot-drops", "#c62828", "4 2", "drops", o.Drops)
	}
}

// drawPoly draws one series of counts per bucket as a line through the buckets' middles.
func (l *otLayout) drawPoly(b *strings.Builder, class, color, dash, name string, vals []int) {
	o := l.o
	var pts strings.Builder
	total := 0
	var cs strings.Builder
	for i, v := range vals {
		mid := o.Start + int64(i)*o.Bucket + o.Bucket/2
		fmt.Fprintf(&pts, "%.1f,%.1f ", l.x(mid), l.y(v))
		if i > 0 {
			cs.WriteByte(' ')
		}
		fmt.Fprint(&cs, v)
		total += v
	}
	if dash != "" {
		dash = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(b, `<polyline class="%s" data-kind="%s" data-total="%d" data-counts="%s" fill="none" stroke="%s"%s points="%s"><title>%s</title></polyline>`,
		class, svgEsc(name), total, cs.String(), svgEsc(color), dash, strings.TrimSpace(pts.String()), svgEsc(fmt.Sprintf("%s: %d, per %s", name, total, l.unit)))
}

// drawElections draws the elections' panel: a bar per election of the verdict.
func (l *otLayout) drawElections(b *strings.Builder) {
	fmt.Fprintf(b, `<text x="%.0f" y="%.1f" class="chart-title">%s</text>`, otLeft, l.elTitle,
		svgEsc("Elections of the verdict: a bar from its start to the agreement, #k · its messages (election and announce kinds); hatched: never agreed"))
	if len(l.bars) == 0 {
		fmt.Fprintf(b, `<text x="%.0f" y="%.1f" class="tick">no election in the verdict</text>`, otLeft+4, l.elTop+otBarH)
	}
	for _, br := range l.bars {
		e := br.e
		by := l.elTop + 2 + float64(br.row)*otBarRow
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
		fmt.Fprintf(b, `<rect class="%s" data-n="%d" data-a="%d" data-b="%d" data-open="%d" data-messages="%d" x="%.1f" y="%.1f" width="%.1f" height="%.0f" fill="%s" stroke="%s"%s><title>%s</title></rect>`,
			class, e.N, e.From, e.To, open, e.Messages+e.Announce, br.x0, by, br.x1-br.x0, otBarH, fill, stroke, dash, svgEsc(what))
		if br.lab.ok {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="tick ot-election-label" data-n="%d">%s<title>%s</title></text>`,
				br.lab.x, by+otBarH-2.5, e.N, svgEsc(br.lab.text), svgEsc(what))
		}
	}
}

// drawTimeAxis draws the time axis under each panel: the labels are moved in at the ends, never
// cut.
func (l *otLayout) drawTimeAxis(b *strings.Builder) {
	fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="ot-axis" stroke="#8a93a3"/>`, otLeft, otW-otRight, l.rateBot, l.rateBot)
	fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f" class="ot-axis" stroke="#8a93a3"/>`, otLeft, otW-otRight, l.elBot, l.elBot)
	for _, t := range l.ticks {
		label := trimFloat(t/1000) + " ms"
		px, anchor := inside(l.x(int64(t)), label, otW)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="tick ot-time" text-anchor="%s">%s</text>`, px, l.rateBot+13, anchor, label)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" class="tick ot-time" text-anchor="%s">%s</text>`, px, l.elBot+14, anchor, label)
	}
}
