package svgchart

import (
	"fmt"
	"strings"
)

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
