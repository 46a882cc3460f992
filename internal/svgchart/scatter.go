package svgchart

import (
	"fmt"
	"math"
)

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
