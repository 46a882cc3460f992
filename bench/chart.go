package bench

// A small SVG chart kit for the benches' pages: an empirical CDF, a per-trial scatter and a
// horizontal bar chart. Each chart renders to a self-contained <svg> element (no scripts, no
// external fonts or styles) sized by its viewBox, so that a page can scale it to its column.
//
// The layout is computed, not measured: text widths are estimated from the rune count at a
// generous average advance (textWidth), and the margins, the legend's rows and, when needed, the
// chart's width and height grow to hold every label. The output depends on nothing but the input:
// the same chart gives the same bytes.

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Series is a named sample, for a CDF.
type Series struct {
	Name   string
	Values []float64 // NaN and ±Inf are left out
}

// Ref is a reference value drawn across a chart (a timeout, a bound), labelled.
type Ref struct {
	Value float64
	Label string
}

// CDF is an empirical distribution chart: for each series, the fraction of its values at or below
// x, a step line.
type CDF struct {
	Title  string
	XLabel string // default "ms"
	YLabel string // default "fraction at or below x"
	// Log asks for a logarithmic x axis; it falls back to a linear one when a value is not
	// positive.
	Log    bool
	Series []Series
	Refs   []Ref // vertical lines, drawn when they fall within the data's axis
}

// Point is one trial of a scatter.
type Point struct {
	X, Y float64
	// Failed marks a trial with no figure: it is drawn as a red cross in a band above the plot,
	// at its X, whatever its Y.
	Failed bool
	Label  string // the tooltip
	Href   string // when set, the point links there
}

// ScatterSeries is a named set of points, drawn in one colour and marker shape.
type ScatterSeries struct {
	Name   string
	Points []Point
}

// Scatter plots trials: x = the trial's number, y = its figure.
type Scatter struct {
	Title  string
	XLabel string // default "trial"
	YLabel string // default "ms"
	Series []ScatterSeries
	Refs   []Ref // horizontal lines, drawn when they fall within the data's axis
}

// BarGroup is one measure over every category (its Values are in the categories' order).
type BarGroup struct {
	Name   string
	Values []float64 // NaN: no figure (drawn as "n/a")
	Color  string    // "#rrggbb", or "" for the palette's
}

// Bars is a horizontal bar chart: a band per category, a bar per group within it. Values are
// taken as non-negative (a negative one is drawn as 0 and labelled with its value).
type Bars struct {
	Title      string
	XLabel     string // the value axis
	Categories []string
	Groups     []BarGroup
	// Stacked draws one bar per category, the groups' values end to end (parts of a whole, such as
	// runs by outcome), labelled inside when they fit and with their total at the end.
	Stacked bool
}

// Palette holds the series' colours: the Okabe–Ito colours (distinguishable by colour-blind
// readers) without the yellow, too faint on white, and without the vermilion, which FailColor
// takes; then two dark neutrals. Past its end, series repeat the colours with dashed lines.
var Palette = []string{"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#555555", "#8c564b"}

// FailColor marks failed trials.
const FailColor = "#d62728"

var dashes = []string{"", "6 3", "2 3", "8 3 2 3"}

const (
	chartWidth  = 640.0
	plotHeight  = 240.0
	fontSize    = 12.0
	titleSize   = 14.0
	charAdvance = 0.64 // the advance of other characters, in ems
	tickLen     = 4.0
	pad         = 8.0
	legendRow   = 18.0
	legendSwat  = 22.0 // the legend's line or marker sample, and its gap to the text
	legendGap   = 16.0 // between two legend items in a row
	failBand    = 18.0 // a scatter's band for failed trials, above the plot
)

// SeriesColor and SeriesDash give series i's colour and dash pattern ("" for a solid line).
func SeriesColor(i int) string { return Palette[i%len(Palette)] }
func SeriesDash(i int) string  { return dashes[(i/len(Palette))%len(dashes)] }

// textWidth estimates the width of s in px at the given font size: an advance per rune, on the
// generous side of common sans-serif faces (DejaVu Sans, Helvetica, Segoe UI), wider for capitals,
// m and w, and a full em for East Asian wide characters and emoji.
func textWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r == 'M' || r == 'W' || r == '@' || r == '%' || r == 'm' || r == 'w':
			w += 0.98
		case r >= 'A' && r <= 'Z':
			w += 0.76
		case r >= 0x1100 && (r <= 0x115f || r >= 0x2e80 && r <= 0xa4cf || r >= 0xac00 && r <= 0xd7a3 || r >= 0xf900 && r <= 0xfaff ||
			r >= 0xfe30 && r <= 0xfe4f || r >= 0xff00 && r <= 0xff60 || r >= 0xffe0 && r <= 0xffe6 || r >= 0x1f300 && r <= 0x1faff || r >= 0x20000):
			w += 1
		default:
			w += charAdvance
		}
	}
	return w * size
}

// esc makes s safe as XML character data or an attribute value: the five markup characters are
// escaped and characters XML does not allow become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&#34;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteRune(' ')
		case r < 0x20 || (r >= 0xd800 && r <= 0xdfff) || r == 0xfffe || r == 0xffff || r == utf8.RuneError:
			b.WriteRune('\ufffd')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// num writes a coordinate: one decimal, never "-0.0".
func num(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		return "0.0"
	}
	return s
}

// FormatValue renders a figure for a label: whole numbers as such, others to 3 significant digits
// (at least one decimal below 100).
func FormatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case math.Abs(v) >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case math.Abs(v) >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// finite returns the finite values of xs, sorted.
func finite(xs []float64) []float64 {
	var out []float64
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// axis maps a domain onto a pixel range and knows its ticks.
type axis struct {
	lo, hi   float64 // the domain
	log      bool
	ticks    []float64
	labels   []string
	p0, p1   float64 // pixels of lo and hi
	integral bool
}

func (a *axis) px(v float64) float64 {
	var f float64
	if a.log {
		f = (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	} else {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	return a.p0 + f*(a.p1-a.p0)
}

func (a *axis) maxLabelWidth() float64 {
	w := 0.0
	for _, l := range a.labels {
		w = max(w, textWidth(l, fontSize))
	}
	return w
}

// niceStep is 1, 2 or 5 times a power of ten, near x.
func niceStep(x float64) float64 {
	e := math.Floor(math.Log10(x))
	f := x / math.Pow(10, e)
	var m float64
	switch {
	case f < 1.5:
		m = 1
	case f < 3:
		m = 2
	case f < 7:
		m = 5
	default:
		m = 10
	}
	return m * math.Pow(10, e)
}

// decimals is how many decimals a tick step needs.
func decimals(step float64) int {
	for d := 0; d < 15; d++ {
		s := step * math.Pow(10, float64(d))
		if s >= 0.5 && math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 15
}

// linearAxis is a domain holding [lo, hi], widened to whole multiples of a 1-2-5 step, with about
// target ticks. An empty range is widened around its value (never below 0 when lo ≥ 0).
// integral keeps the step at 1 or more.
func linearAxis(lo, hi float64, target int, integral bool) axis {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		d := math.Max(math.Abs(lo)*0.1, 1)
		if lo >= 0 && lo-d < 0 {
			lo, hi = 0, max(hi+d, 1)
		} else {
			lo, hi = lo-d, hi+d
		}
	}
	step := niceStep((hi - lo) / float64(target))
	if integral {
		step = math.Max(step, 1)
	}
	// Whole multiples of step around the data, allowing for rounding (lo/step may land a hair
	// above a whole number that is lo's own multiple).
	k0, k1 := math.Floor(lo/step), math.Ceil(hi/step)
	if k0*step > lo {
		k0--
	} else if (k0+1)*step <= lo {
		k0++
	}
	if k1*step < hi {
		k1++
	} else if (k1-1)*step >= hi {
		k1--
	}
	if k1 <= k0 {
		k1 = k0 + 1
	}
	a := axis{lo: k0 * step, hi: k1 * step, integral: integral}
	d := decimals(step)
	for k := k0; k <= k1; k++ {
		v := k * step
		a.ticks = append(a.ticks, v)
		l := strconv.FormatFloat(v, 'f', d, 64)
		if strings.TrimLeft(l, "-0.") == "" {
			l = strings.TrimPrefix(l, "-")
		}
		a.labels = append(a.labels, l)
	}
	return a
}

var logMantissas = [][]float64{{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}

// logAxis is a logarithmic domain holding [lo, hi] (both > 0) with the ticks of the sparsest
// mantissa set (1; 1-2-5; 1…9) that gives at least three. The domain is widened to the next
// values of that set, or of 1-2-5 when the set is the powers of ten alone (1 to 200, not 1000).
func logAxis(lo, hi float64) axis {
	if hi < lo {
		lo, hi = hi, lo
	}
	if hi == lo {
		lo, hi = lo/2, hi*2
	}
	var best axis
	for i, ms := range logMantissas {
		snap := logMantissas[max(i, 1)]
		dlo, dhi := snapLog(lo, snap, false), snapLog(hi, snap, true)
		a := axis{lo: dlo, hi: dhi, log: true}
		for e := int(math.Floor(math.Log10(dlo))) - 1; e <= int(math.Ceil(math.Log10(dhi)))+1; e++ {
			for _, m := range ms {
				t := roundSig(m * math.Pow10(e))
				if t >= dlo*(1-1e-9) && t <= dhi*(1+1e-9) {
					a.ticks = append(a.ticks, t)
					a.labels = append(a.labels, strconv.FormatFloat(t, 'f', -1, 64))
				}
			}
		}
		best = a
		if len(a.ticks) >= 3 {
			break
		}
	}
	return best
}

func roundSig(v float64) float64 {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return r
}

// snapLog is the largest value m·10^e (m in ms) at or below v, or the smallest at or above it.
func snapLog(v float64, ms []float64, up bool) float64 {
	e := int(math.Floor(math.Log10(v)))
	var cands []float64
	for _, d := range []int{e - 1, e, e + 1} {
		for _, m := range ms {
			cands = append(cands, roundSig(m*math.Pow10(d)))
		}
	}
	if up {
		for _, c := range cands {
			if c >= v*(1-1e-12) {
				return c
			}
		}
		return cands[len(cands)-1]
	}
	best := cands[0]
	for _, c := range cands {
		if c <= v*(1+1e-12) {
			best = c
		}
	}
	return best
}

// legendItem is one entry of a legend: a line, a marker or a block in a colour.
type legendItem struct {
	name   string
	color  string
	dash   string
	marker string // "", a marker shape, or "cross" (failed) or "block" (a bar)
}

func (l legendItem) width() float64 { return legendSwat + textWidth(l.name, fontSize) }

// legendRows packs the items into rows no wider than w.
func legendRows(items []legendItem, w float64) [][]legendItem {
	var rows [][]legendItem
	var row []legendItem
	used := 0.0
	for _, it := range items {
		iw := it.width()
		if len(row) > 0 && used+legendGap+iw > w {
			rows = append(rows, row)
			row, used = nil, 0
		}
		if len(row) > 0 {
			used += legendGap
		}
		row = append(row, it)
		used += iw
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// canvas is a chart being written: its size, its plot area and the SVG text.
type canvas struct {
	b                        strings.Builder
	w, h                     float64
	left, right, top, bottom float64 // the plot area's edges, in px
}

// frame lays out a chart with the given axes' labels: it sets the margins from the tick labels
// (ylab: the widest y tick label), grows the width for the title, the x label and the legend, and
// the plot's height for the y label. extraTop is room above the plot (a scatter's failed band);
// minLeft a lower bound of the left margin (a bar chart's category labels). It returns the
// legend's rows.
func (c *canvas) frame(title, xlabel, ylabel string, ylab, xlabLast, extraTop, minLeft, ph float64, items []legendItem) [][]legendItem {
	left := pad + fontSize + 6 + ylab + tickLen + 4
	if ylabel == "" {
		left = pad + ylab + tickLen + 4
	}
	left = max(left, minLeft)
	right := max(16, xlabLast/2+pad)
	w := chartWidth
	w = max(w, textWidth(title, titleSize)*1.1+2*pad)
	w = max(w, left+right+textWidth(xlabel, fontSize)+2*pad)
	for _, it := range items {
		w = max(w, it.width()+2*pad+left)
	}
	ph = max(ph, textWidth(ylabel, fontSize)+2*pad)
	rows := legendRows(items, w-left-pad)
	top := pad + titleSize + 10 + extraTop
	bottom := tickLen + fontSize + 6 // tick labels
	if xlabel != "" {
		bottom += fontSize + 8
	}
	if len(rows) > 0 {
		bottom += 8 + float64(len(rows))*legendRow
	}
	bottom += pad
	c.w, c.h = math.Ceil(w), math.Ceil(top+ph+bottom)
	c.left, c.right, c.top, c.bottom = left, c.w-right, top, top+ph
	fmt.Fprintf(&c.b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s" font-family="system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif" font-size="%s">`,
		num(c.w), num(c.h), num(c.w), num(c.h), esc(title), num(fontSize))
	fmt.Fprintf(&c.b, "\n<title>%s</title>\n", esc(title))
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(c.w), num(c.h))
	if title != "" {
		fmt.Fprintf(&c.b, `<text class="title" x="%s" y="%s" text-anchor="middle" font-size="%s" font-weight="600" fill="#222">%s</text>`+"\n",
			num(c.w/2), num(pad+titleSize), num(titleSize), esc(title))
	}
	if ylabel != "" {
		x, y := pad+fontSize-2, c.top+(c.bottom-c.top)/2
		fmt.Fprintf(&c.b, `<text class="ylabel" x="%s" y="%s" text-anchor="middle" transform="rotate(-90 %s %s)" fill="#333">%s</text>`+"\n",
			num(x), num(y), num(x), num(y), esc(ylabel))
	}
	if xlabel != "" {
		fmt.Fprintf(&c.b, `<text class="xlabel" x="%s" y="%s" text-anchor="middle" fill="#333">%s</text>`+"\n",
			num(c.left+(c.right-c.left)/2), num(c.bottom+tickLen+fontSize+6+fontSize+4), esc(xlabel))
	}
	return rows
}

// legend draws the rows under the x label.
func (c *canvas) legend(rows [][]legendItem) {
	if len(rows) == 0 {
		return
	}
	y := c.h - pad - float64(len(rows))*legendRow + legendRow/2
	c.b.WriteString(`<g class="legend">` + "\n")
	for _, row := range rows {
		x := c.left
		for _, it := range row {
			cy := y
			switch it.marker {
			case "":
				fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.5"%s/>`,
					num(x), num(cy), num(x+16), num(cy), it.color, dashAttr(it.dash))
			case "block":
				fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="14" height="10" fill="%s"/>`, num(x+1), num(cy-5), it.color)
			default:
				c.marker(it.marker, x+8, cy, it.color)
			}
			fmt.Fprintf(&c.b, `<text x="%s" y="%s" dominant-baseline="central" fill="#222">%s</text>`+"\n", num(x+legendSwat), num(cy), esc(it.name))
			x += it.width() + legendGap
		}
		y += legendRow
	}
	c.b.WriteString("</g>\n")
}

func dashAttr(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

var shapes = []string{"circle", "square", "triangle", "diamond"}

// marker draws a shape centred on (x, y).
func (c *canvas) marker(shape string, x, y float64, color string) {
	switch shape {
	case "square":
		fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="7" height="7" fill="%s"/>`, num(x-3.5), num(y-3.5), color)
	case "triangle":
		fmt.Fprintf(&c.b, `<path d="M%s %sL%s %sL%s %sZ" fill="%s"/>`, num(x), num(y-4.5), num(x+4.5), num(y+3.5), num(x-4.5), num(y+3.5), color)
	case "diamond":
		fmt.Fprintf(&c.b, `<path d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"/>`, num(x), num(y-5), num(x+5), num(y), num(x), num(y+5), num(x-5), num(y), color)
	case "cross":
		fmt.Fprintf(&c.b, `<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2.2" fill="none"/>`,
			num(x-4), num(y-4), num(x+4), num(y+4), num(x-4), num(y+4), num(x+4), num(y-4), FailColor)
	default:
		fmt.Fprintf(&c.b, `<circle cx="%s" cy="%s" r="3.8" fill="%s"/>`, num(x), num(y), color)
	}
}

// xTicks draws the x axis's ticks, labels and grid lines.
func (c *canvas) xTicks(a *axis) {
	c.b.WriteString(`<g class="xticks" fill="#333">` + "\n")
	for i, t := range a.ticks {
		x := a.px(t)
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, num(x), num(c.top), num(x), num(c.bottom))
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#666"/>`, num(x), num(c.bottom), num(x), num(c.bottom+tickLen))
		fmt.Fprintf(&c.b, `<text class="tick x" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x), num(c.bottom+tickLen+fontSize+2), esc(a.labels[i]))
	}
	c.b.WriteString("</g>\n")
}

// yTicks draws the y axis's ticks, labels and grid lines.
func (c *canvas) yTicks(a *axis) {
	c.b.WriteString(`<g class="yticks" fill="#333">` + "\n")
	for i, t := range a.ticks {
		y := a.px(t)
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#e3e3e3"/>`, num(c.left), num(y), num(c.right), num(y))
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#666"/>`, num(c.left-tickLen), num(y), num(c.left), num(y))
		fmt.Fprintf(&c.b, `<text class="tick y" x="%s" y="%s" text-anchor="end" dominant-baseline="central">%s</text>`+"\n", num(c.left-tickLen-3), num(y), esc(a.labels[i]))
	}
	c.b.WriteString("</g>\n")
}

// box draws the plot area's frame.
func (c *canvas) box() {
	fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>`+"\n",
		num(c.left), num(c.top), num(c.right-c.left), num(c.bottom-c.top))
}

func (c *canvas) noData() {
	fmt.Fprintf(&c.b, `<text x="%s" y="%s" text-anchor="middle" fill="#777">no data</text>`+"\n",
		num(c.left+(c.right-c.left)/2), num(c.top+(c.bottom-c.top)/2))
}

func (c *canvas) end() string {
	c.b.WriteString("</svg>\n")
	return c.b.String()
}

// SVG renders the CDF.
func (ch CDF) SVG() string {
	xlabel, ylabel := ch.XLabel, ch.YLabel
	if xlabel == "" {
		xlabel = "ms"
	}
	if ylabel == "" {
		ylabel = "fraction at or below x"
	}
	series := make([][]float64, len(ch.Series))
	var all []float64
	for i, s := range ch.Series {
		series[i] = finite(s.Values)
		all = append(all, series[i]...)
	}
	data := len(all)
	all = finite(all)
	log := ch.Log && len(all) > 0 && all[0] > 0
	var xa axis
	switch {
	case len(all) == 0:
		xa = linearAxis(0, 1, 5, false)
	case log:
		xa = logAxis(all[0], all[len(all)-1])
	default:
		xa = linearAxis(all[0], all[len(all)-1], 6, false)
	}
	ya := linearAxis(0, 1, 4, false)
	ya.labels = []string{"0", "25%", "50%", "75%", "100%"}
	ya.ticks = []float64{0, 0.25, 0.5, 0.75, 1}
	var items []legendItem
	for i, s := range ch.Series {
		items = append(items, legendItem{name: s.Name, color: SeriesColor(i), dash: SeriesDash(i)})
	}
	var c canvas
	rows := c.frame(ch.Title, xlabel, ylabel, ya.maxLabelWidth(), textWidth(xa.labels[len(xa.labels)-1], fontSize), 0, 0, plotHeight, items)
	xa.p0, xa.p1 = c.left, c.right
	ya.p0, ya.p1 = c.bottom, c.top
	c.xTicks(&xa)
	c.yTicks(&ya)
	c.refs(ch.Refs, &xa, true)
	if data == 0 {
		c.noData()
	}
	for i, vs := range series {
		if len(vs) == 0 {
			continue
		}
		var d strings.Builder
		fmt.Fprintf(&d, "M%s %s", num(c.left), num(c.bottom))
		n := float64(len(vs))
		for j, v := range vs {
			if j+1 < len(vs) && vs[j+1] == v {
				continue // a run of equal values is one step
			}
			x := xa.px(v)
			fmt.Fprintf(&d, "H%sV%s", num(x), num(ya.px(float64(j+1)/n)))
		}
		fmt.Fprintf(&d, "H%s", num(c.right))
		fmt.Fprintf(&c.b, `<path class="series" d="%s" fill="none" stroke="%s" stroke-width="2" stroke-linejoin="round"%s><title>%s</title></path>`+"\n",
			d.String(), SeriesColor(i), dashAttr(SeriesDash(i)), esc(cdfTooltip(ch.Series[i].Name, vs)))
	}
	c.box()
	c.legend(rows)
	return c.end()
}

// cdfTooltip sums a series up: its count and p50, p90 and max.
func cdfTooltip(name string, sorted []float64) string {
	p50, p90, mx := Quantiles(sorted)
	return fmt.Sprintf("%s: n=%d, p50 %s, p90 %s, max %s", name, len(sorted), FormatValue(p50), FormatValue(p90), FormatValue(mx))
}

// refs draws reference lines: vertical on the x axis (vertical true), horizontal on the y axis.
func (c *canvas) refs(refs []Ref, a *axis, vertical bool) {
	for _, r := range refs {
		if math.IsNaN(r.Value) || math.IsInf(r.Value, 0) || r.Value < a.lo || r.Value > a.hi || (a.log && r.Value <= 0) {
			continue
		}
		p := a.px(r.Value)
		if vertical {
			fmt.Fprintf(&c.b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888" stroke-dasharray="4 3"/>`, num(p), num(c.top), num(p), num(c.bottom))
			// The label goes on the side of the line with more room, clipped to the plot.
			anchor, x := "start", p+3
			if p-c.left > c.right-p {
				anchor, x = "end", p-3
			}
			fmt.Fprintf(&c.b, `<text class="ref" x="%s" y="%s" text-anchor="%s" fill="#666" font-size="11" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`+"\n", num(x), num(c.top+12), anchor, esc(r.Label))
		} else {
			fmt.Fprintf(&c.b, `<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="#888" stroke-dasharray="4 3"/>`, num(c.left), num(p), num(c.right), num(p))
			fmt.Fprintf(&c.b, `<text class="ref" x="%s" y="%s" text-anchor="end" fill="#666" font-size="11" stroke="#fff" stroke-width="3" paint-order="stroke">%s</text>`+"\n", num(c.right-3), num(p-3), esc(r.Label))
		}
	}
}

// SVG renders the scatter.
func (ch Scatter) SVG() string {
	xlabel, ylabel := ch.XLabel, ch.YLabel
	if xlabel == "" {
		xlabel = "trial"
	}
	if ylabel == "" {
		ylabel = "ms"
	}
	var xs, ys []float64
	anyFailed := false
	for _, s := range ch.Series {
		for _, p := range s.Points {
			if !math.IsNaN(p.X) && !math.IsInf(p.X, 0) {
				xs = append(xs, p.X)
			}
			if p.Failed || math.IsNaN(p.Y) || math.IsInf(p.Y, 0) {
				anyFailed = true
			} else {
				ys = append(ys, p.Y)
			}
		}
	}
	xs, ys = finite(xs), finite(ys)
	xa := linearAxis(0, 1, 5, true)
	if len(xs) > 0 {
		xa = linearAxis(xs[0], xs[len(xs)-1], 8, true)
	}
	ya := linearAxis(0, 1, 5, false)
	if len(ys) > 0 {
		ya = linearAxis(min(0, ys[0]), ys[len(ys)-1], 5, false)
	}
	var items []legendItem
	for i, s := range ch.Series {
		items = append(items, legendItem{name: s.Name, color: SeriesColor(i), marker: shapes[i%len(shapes)]})
	}
	extra := 0.0
	ylab := ya.maxLabelWidth()
	if anyFailed {
		items = append(items, legendItem{name: "failed (no figure)", color: FailColor, marker: "cross"})
		extra = failBand
		ylab = max(ylab, textWidth("failed", fontSize))
	}
	var c canvas
	rows := c.frame(ch.Title, xlabel, ylabel, ylab, textWidth(xa.labels[len(xa.labels)-1], fontSize), extra, 0, plotHeight, items)
	// Markers stay off the frame: the domain maps to the plot less a margin.
	xa.p0, xa.p1 = c.left+8, c.right-8
	ya.p0, ya.p1 = c.bottom-6, c.top+6
	c.xTicks(&xa)
	c.yTicks(&ya)
	c.refs(ch.Refs, &ya, false)
	failY := c.top - failBand/2
	if anyFailed {
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-opacity="0.4" stroke-dasharray="3 3"/>`,
			num(c.left), num(c.top-failBand), num(c.right), num(c.top-failBand), FailColor)
		fmt.Fprintf(&c.b, `<text class="fail-label" x="%s" y="%s" text-anchor="end" dominant-baseline="central" fill="%s">failed</text>`+"\n",
			num(c.left-tickLen-3), num(failY), FailColor)
	}
	if len(xs) == 0 {
		c.noData()
	}
	// Series side by side at one trial number are set apart by a few pixels.
	ns := float64(len(ch.Series))
	dodge := min(4, (xa.px(xa.lo+1)-xa.px(xa.lo))/(ns+1))
	for i, s := range ch.Series {
		off := (float64(i) - (ns-1)/2) * dodge
		fmt.Fprintf(&c.b, `<g class="series" fill="%s">`+"\n", SeriesColor(i))
		for _, p := range s.Points {
			if math.IsNaN(p.X) || math.IsInf(p.X, 0) {
				continue
			}
			x := xa.px(p.X) + off
			failed := p.Failed || math.IsNaN(p.Y) || math.IsInf(p.Y, 0)
			href := safeHref(p.Href)
			if href != "" {
				fmt.Fprintf(&c.b, `<a href="%s">`, esc(href))
			}
			c.b.WriteString("<g>")
			if failed {
				c.marker("cross", x, failY, FailColor)
			} else {
				c.marker(shapes[i%len(shapes)], x, ya.px(p.Y), SeriesColor(i))
			}
			label := p.Label
			if label == "" {
				label = s.Name + " " + FormatValue(p.X) + ": " + FormatValue(p.Y)
			}
			fmt.Fprintf(&c.b, "<title>%s</title></g>", esc(label))
			if href != "" {
				c.b.WriteString("</a>")
			}
			c.b.WriteString("\n")
		}
		c.b.WriteString("</g>\n")
	}
	c.box()
	c.legend(rows)
	return c.end()
}

// SVG renders the bar chart.
func (ch Bars) SVG() string {
	var vals []float64
	if ch.Stacked {
		for ci := range ch.Categories {
			vals = append(vals, ch.total(ci))
		}
	} else {
		for _, g := range ch.Groups {
			vals = append(vals, g.Values...)
		}
	}
	vals = finite(vals)
	hi := 1.0
	if len(vals) > 0 {
		hi = max(vals[len(vals)-1], 0)
	}
	if hi == 0 {
		hi = 1
	}
	xa := linearAxis(0, hi, 5, false)
	catw := 0.0
	for _, cat := range ch.Categories {
		catw = max(catw, textWidth(cat, fontSize))
	}
	var items []legendItem
	for i, g := range ch.Groups {
		items = append(items, legendItem{name: g.Name, color: barColor(g, i), marker: "block"})
	}
	ng := max(1, len(ch.Groups))
	barH := 13.0
	if ch.Stacked {
		ng, barH = 1, 18
	}
	band := float64(ng)*barH + 10
	ph := max(60, band*float64(len(ch.Categories)))
	// Value labels sit past the bars' ends: the widest must fit right of the axis's end.
	valw := 0.0
	for _, v := range vals {
		valw = max(valw, textWidth(FormatValue(v), 11))
	}
	var c canvas
	rows := c.frame(ch.Title, ch.XLabel, "", 0, max(textWidth(xa.labels[len(xa.labels)-1], fontSize), 2*(valw+6)), 0, pad+catw+8, ph, items)
	xa.p0, xa.p1 = c.left, c.right
	c.xTicks(&xa)
	if len(ch.Categories) == 0 || len(ch.Groups) == 0 {
		c.noData()
	}
	for ci, cat := range ch.Categories {
		y0 := c.top + float64(ci)*band + 5
		fmt.Fprintf(&c.b, `<text class="category" x="%s" y="%s" text-anchor="end" dominant-baseline="central" fill="#222">%s</text>`+"\n",
			num(c.left-6), num(y0+float64(ng)*barH/2), esc(cat))
		if ch.Stacked {
			ch.stack(&c, &xa, ci, y0, barH)
			continue
		}
		for gi, g := range ch.Groups {
			v := math.NaN()
			if ci < len(g.Values) {
				v = g.Values[ci]
			}
			y := y0 + float64(gi)*barH
			w := 0.0
			if !math.IsNaN(v) && !math.IsInf(v, 0) && v > 0 {
				w = xa.px(v) - c.left
			}
			tip := cat + ", " + g.Name + ": " + FormatValue(v)
			fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
				num(c.left), num(y+1), num(w), num(barH-2), barColor(g, gi), esc(tip))
			fmt.Fprintf(&c.b, `<text class="value" x="%s" y="%s" dominant-baseline="central" font-size="11" fill="#333">%s</text>`+"\n",
				num(c.left+w+4), num(y+barH/2), esc(FormatValue(v)))
		}
	}
	c.box()
	c.legend(rows)
	return c.end()
}

// total is the sum of a category's finite, positive values.
func (ch Bars) total(ci int) float64 {
	t := 0.0
	for _, g := range ch.Groups {
		if ci < len(g.Values) && g.Values[ci] > 0 && !math.IsInf(g.Values[ci], 0) {
			t += g.Values[ci]
		}
	}
	return t
}

// stack draws category ci's stacked bar at y.
func (ch Bars) stack(c *canvas, xa *axis, ci int, y, barH float64) {
	cat := ch.Categories[ci]
	x := c.left
	sum := 0.0
	for gi, g := range ch.Groups {
		v := math.NaN()
		if ci < len(g.Values) {
			v = g.Values[ci]
		}
		if !(v > 0) || math.IsInf(v, 0) {
			continue
		}
		sum += v
		x1 := xa.px(sum)
		fmt.Fprintf(&c.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s</title></rect>`,
			num(x), num(y+1), num(x1-x), num(barH-2), barColor(g, gi), esc(cat+", "+g.Name+": "+FormatValue(v)))
		if l := FormatValue(v); textWidth(l, 11)+6 <= x1-x {
			fmt.Fprintf(&c.b, `<text class="value" x="%s" y="%s" text-anchor="middle" dominant-baseline="central" font-size="11" fill="#fff">%s</text>`,
				num((x+x1)/2), num(y+barH/2), esc(l))
		}
		c.b.WriteString("\n")
		x = x1
	}
	fmt.Fprintf(&c.b, `<text class="value" x="%s" y="%s" dominant-baseline="central" font-size="11" fill="#333">%s</text>`+"\n",
		num(x+4), num(y+barH/2), esc(FormatValue(sum)))
}

// safeHref keeps links that are relative or file: URLs (what RunHref makes); others, which could
// run script (javascript:) or load from the network, are dropped.
func safeHref(h string) string {
	u, err := url.Parse(h)
	if err != nil || (u.Scheme != "" && u.Scheme != "file") || (u.Scheme == "" && u.Host != "") {
		return ""
	}
	return h
}

func barColor(g BarGroup, i int) string {
	if validColor(g.Color) {
		return g.Color
	}
	return SeriesColor(i)
}

// validColor accepts "#rgb" and "#rrggbb" only: a colour goes into an attribute unescaped.
func validColor(s string) bool {
	if len(s) != 4 && len(s) != 7 || s[0] != '#' {
		return false
	}
	for _, r := range s[1:] {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// Quantiles returns p50, p90 and the maximum of xs (nearest rank; zeros when xs is empty).
func Quantiles(xs []float64) (p50, p90, mx float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	rank := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.5), rank(0.9), s[len(s)-1]
}
