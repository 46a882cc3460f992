// Package svgchart is a small SVG chart kit for the benches' pages and the run report: an empirical
// CDF, a per-trial scatter and a horizontal bar chart, and the round tick steps the report's own
// time charts take (NiceAbove). Each chart renders to a self-contained <svg> element (no scripts, no
// external fonts or styles) sized by its viewBox, so that a page can scale it to its column.
//
// The layout is computed, not measured: text widths are estimated from the rune count at a
// generous average advance (textWidth), and the margins, the legend's rows and, when needed, the
// chart's width and height grow to hold every label. The output depends on nothing but the input:
// the same chart gives the same bytes. Verify reads a chart back and says what does not fit.
package svgchart

import (
	"slices"
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
