package svgchart

// The canvas every chart draws on: the frame, the title and axis labels, the legend, ticks, markers.

import (
	"fmt"
	"math"
	"strings"
)

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
