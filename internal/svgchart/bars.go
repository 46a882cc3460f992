package svgchart

import (
	"fmt"
	"math"
	"net/url"
	"strings"
)

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
