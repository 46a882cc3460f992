package svgchart

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// parseSVG parses a chart (Verify's parse) and fails the test on what Verify would report.
func parseSVG(t *testing.T, s string) svgDoc {
	t.Helper()
	d, problems, fatal := parse(s)
	for _, p := range problems {
		t.Error(p)
	}
	if fatal {
		t.FailNow()
	}
	return d
}

func (d svgDoc) textsOf(class string) []svgText {
	var out []svgText
	for _, tx := range d.texts {
		if tx.class == class {
			out = append(out, tx)
		}
	}
	return out
}

// checkTicks: the axis's labels are numbers, distinct and increasing, and so are their positions
// (upwards for y).
func checkTicks(t *testing.T, d svgDoc, class string) {
	t.Helper()
	ts := d.textsOf(class)
	if len(ts) < 2 {
		t.Fatalf("%d %q ticks", len(ts), class)
	}
	for i, tx := range ts {
		if _, err := strconv.ParseFloat(strings.TrimSuffix(tx.content, "%"), 64); err != nil {
			t.Errorf("%s tick %q is not a number", class, tx.content)
		}
		if i == 0 {
			continue
		}
		a, _ := strconv.ParseFloat(strings.TrimSuffix(ts[i-1].content, "%"), 64)
		b, _ := strconv.ParseFloat(strings.TrimSuffix(tx.content, "%"), 64)
		if b <= a || ts[i-1].content == tx.content {
			t.Errorf("%s ticks not increasing: %q then %q", class, ts[i-1].content, tx.content)
		}
		if class == "tick x" && tx.x <= ts[i-1].x || class == "tick y" && tx.y >= ts[i-1].y {
			t.Errorf("%s tick %q not placed after %q", class, tx.content, ts[i-1].content)
		}
	}
}

// checkLegend: every entry is drawn, inside the chart, and entries on a row do not overlap.
func checkLegend(t *testing.T, d svgDoc, names ...string) {
	t.Helper()
	var got []svgText
	for _, tx := range d.texts {
		if tx.inLegend {
			got = append(got, tx)
		}
	}
	if len(got) != len(names) {
		t.Fatalf("legend %d entries, want %d (%q)", len(got), len(names), names)
	}
	for i, tx := range got {
		if tx.content != names[i] {
			t.Errorf("legend entry %d %q, want %q", i, tx.content, names[i])
		}
		x0, x1, y0, y1 := tx.extent()
		if x0 < 0 || x1 > d.w || y0 < d.frame[3] || y1 > d.h {
			t.Errorf("legend entry %q at %g..%g × %g..%g: outside the chart below the plot (%g×%g)", tx.content, x0, x1, y0, y1, d.w, d.h)
		}
		if i > 0 && got[i-1].y == tx.y {
			_, px1, _, _ := got[i-1].extent()
			if x0 < px1 {
				t.Errorf("legend entries %q and %q overlap", got[i-1].content, tx.content)
			}
		}
	}
}

func TestCDFChart(t *testing.T) {
	c := CDF{Title: "Failover", XLabel: "failover ms", Series: []Series{
		{Name: "kill", Values: []float64{210, 190, 250, 250, 300, math.NaN()}},
		{Name: "pause", Values: []float64{400, 380, 520}},
		{Name: "stop (none measured)"},
	}, Refs: []Ref{{Value: 200, Label: "timeout"}}}
	s := c.SVG()
	d := parseSVG(t, s)
	checkTicks(t, d, "tick x")
	checkTicks(t, d, "tick y")
	checkLegend(t, d, "kill", "pause", "stop (none measured)")
	if len(d.paths) != 2 {
		t.Fatalf("%d series paths, want 2 (the empty series draws none)", len(d.paths))
	}
	// A step per distinct value, ending at 100% on the right edge.
	if n := strings.Count(d.paths[0], "V"); n != 4 {
		t.Errorf("kill: %d steps, want 4 (190, 210, 250 twice, 300): %s", n, d.paths[0])
	}
	if end, _ := strconv.ParseFloat(d.paths[0][strings.LastIndex(d.paths[0], "H")+1:], 64); math.Abs(end-d.frame[2]) > 0.15 {
		t.Errorf("kill's line does not reach the right edge %g: %s", d.frame[2], d.paths[0])
	}
	if s != c.SVG() {
		t.Error("the same chart rendered twice differs")
	}
	if xs := d.textsOf("tick x"); xs[0].content != "150" || xs[len(xs)-1].content != "550" {
		t.Errorf("x ticks from %q to %q, want 150..550", xs[0].content, xs[len(xs)-1].content)
	}

	// Log axis: powers of ten (and 2, 5) only, increasing.
	c.Log = true
	c.Series[0].Values = []float64{2.1, 3.5, 4}
	d = parseSVG(t, c.SVG())
	checkTicks(t, d, "tick x")
	for _, tx := range d.textsOf("tick x") {
		if m := strings.TrimRight(strings.TrimLeft(tx.content, "0."), "0"); m != "1" && m != "2" && m != "5" {
			t.Errorf("log tick %q", tx.content)
		}
	}
	// A log axis with a zero falls back to a linear one.
	c.Series[0].Values = []float64{0, 3, 9}
	d = parseSVG(t, c.SVG())
	checkTicks(t, d, "tick x")
	if d.textsOf("tick x")[0].content != "0" {
		t.Errorf("log with 0: first tick %q, want a linear axis from 0", d.textsOf("tick x")[0].content)
	}
}

func TestScatterChart(t *testing.T) {
	var kill, pause ScatterSeries
	kill.Name, pause.Name = "kill", "pause"
	for i := range 20 {
		kill.Points = append(kill.Points, Point{X: float64(i), Y: 200 + float64(i*i%37), Href: "kill-" + strconv.Itoa(i) + "/verdict.json"})
		p := Point{X: float64(i), Y: 400 + float64(i)}
		if i%7 == 3 {
			p = Point{X: float64(i), Failed: true, Label: "never agreed"}
		}
		pause.Points = append(pause.Points, p)
	}
	c := Scatter{Title: "Per trial", Series: []ScatterSeries{kill, pause}, Refs: []Ref{{Value: 200, Label: "timeout 200 ms"}}}
	s := c.SVG()
	d := parseSVG(t, s)
	checkTicks(t, d, "tick x")
	checkTicks(t, d, "tick y")
	checkLegend(t, d, "kill", "pause", "failed (no figure)")
	if n := strings.Count(s, `stroke="`+FailColor+`" stroke-width="2.2"`); n != 3+1 {
		t.Errorf("%d red crosses, want 3 failed trials and the legend's", n)
	}
	if n := len(d.circles); n != 20 {
		t.Errorf("%d circles, want kill's 20", n)
	}
	for _, p := range d.circles {
		if p[0] < d.frame[0] || p[0] > d.frame[2] || p[1] < d.frame[1] || p[1] > d.frame[3] {
			t.Errorf("point %v outside the plot %v", p, d.frame)
		}
	}
	if len(d.hrefs) != 20 || d.hrefs[3] != "kill-3/verdict.json" {
		t.Errorf("the points' links: %q", d.hrefs)
	}
	// Links that could run script or load from elsewhere are dropped; relative ones stay, escaped.
	for href, keep := range map[string]bool{"javascript:alert(1)": false, "https://example.com/x": false, "//example.com/x": false,
		"a/b%20c/report.html": true, "./x:y/verdict.json": true, "file:///tmp/run/verdict.json": true, `a"b<c`: true} {
		c := Scatter{Series: []ScatterSeries{{Name: "s", Points: []Point{{X: 1, Y: 1, Href: href}}}}}
		d := parseSVG(t, c.SVG())
		if got := len(d.hrefs) == 1 && d.hrefs[0] == href; got != keep {
			t.Errorf("href %q: links %q, want kept %v", href, d.hrefs, keep)
		}
	}
	if xs := d.textsOf("tick x"); xs[0].content != "0" || xs[len(xs)-1].content != "20" {
		t.Errorf("x ticks %q..%q", xs[0].content, xs[len(xs)-1].content)
	}
	if s != c.SVG() {
		t.Error("not deterministic")
	}
	// One trial, all failed: still a chart.
	one := Scatter{Series: []ScatterSeries{{Name: "kill", Points: []Point{{X: 0, Failed: true}}}}}
	d = parseSVG(t, one.SVG())
	checkTicks(t, d, "tick x")
	checkLegend(t, d, "kill", "failed (no figure)")
}

func TestBarsChart(t *testing.T) {
	cats := []string{"bully n=5", "hirschberg-sinclair n=16", "rsdp n=8"}
	c := Bars{Title: "Split brain", XLabel: "ms", Categories: cats, Groups: []BarGroup{
		{Name: "mean", Values: []float64{12.5, 0, math.NaN()}},
		{Name: "max", Values: []float64{800, 1234.5, 3}, Color: "#ff0000"},
	}}
	s := c.SVG()
	d := parseSVG(t, s)
	checkTicks(t, d, "tick x")
	checkLegend(t, d, "mean", "max")
	for i, tx := range d.textsOf("category") {
		if tx.content != cats[i] {
			t.Errorf("category %q, want %q", tx.content, cats[i])
		}
	}
	if !strings.Contains(s, `fill="#ff0000"`) || !strings.Contains(s, ">n/a</text>") {
		t.Error("the group's colour or the n/a label is missing")
	}
	c.Stacked = true
	d = parseSVG(t, c.SVG())
	checkTicks(t, d, "tick x")
	vals := d.textsOf("value")
	if last := vals[len(vals)-1].content; last != "3" {
		t.Errorf("rsdp's stacked total %q, want 3", last)
	}
	if c.SVG() != c.SVG() {
		t.Error("not deterministic")
	}
	// A colour is never copied into an attribute unchecked.
	c.Groups[1].Color = `red" onload="x`
	if strings.Contains(c.SVG(), "onload") {
		t.Error("a bad colour went into the SVG")
	}
}

// Text of every kind is escaped, characters XML forbids replaced, and long names widen the chart
// instead of leaving it.
func TestChartsEscapeAndFit(t *testing.T) {
	nasty := `<script>alert("x")</script> & 'q' ` + "\x01\x7f\ufffe"
	long := strings.Repeat("a-very-long-series-name ", 8)
	charts := map[string]string{
		"cdf": CDF{Title: nasty + long, XLabel: nasty + long, YLabel: nasty + long, Series: []Series{{Name: nasty, Values: []float64{1, 2}}, {Name: long, Values: []float64{3}}},
			Refs: []Ref{{Value: 1.5, Label: nasty}}}.SVG(),
		"scatter": Scatter{Title: nasty, XLabel: nasty, YLabel: nasty, Series: []ScatterSeries{{Name: nasty + long, Points: []Point{{X: 1, Y: 2, Label: nasty, Href: `a"b<c`}}}}}.SVG(),
		"bars":    Bars{Title: nasty, XLabel: nasty, Categories: []string{nasty, long}, Groups: []BarGroup{{Name: nasty, Values: []float64{1, 2}}}}.SVG(),
	}
	for name, s := range charts {
		t.Run(name, func(t *testing.T) {
			if strings.Contains(s, "<script") || strings.Contains(s, `"x")`) {
				t.Errorf("unescaped text in:\n%s", s)
			}
			d := parseSVG(t, s)
			if d.w <= chartWidth && name != "bars" {
				t.Errorf("width %g: the long names did not widen the chart", d.w)
			}
			found := false
			for _, tx := range d.texts {
				if strings.HasPrefix(tx.content, `<script>alert("x")</script> & 'q' `) {
					found = true
				}
			}
			if !found {
				t.Error("the text does not read back as written")
			}
		})
	}
}

func TestEmptyCharts(t *testing.T) {
	for name, s := range map[string]string{
		"cdf":     CDF{Title: "none"}.SVG(),
		"scatter": Scatter{Title: "none"}.SVG(),
		"bars":    Bars{Title: "none"}.SVG(),
		"nan":     CDF{Series: []Series{{Name: "x", Values: []float64{math.NaN(), math.Inf(1)}}}}.SVG(),
	} {
		d := parseSVG(t, s)
		if !strings.Contains(s, ">no data</text>") {
			t.Errorf("%s: no 'no data'", name)
		}
		checkTicks(t, d, "tick x")
	}
}

// Axes over many ranges: the domain holds the data, the ticks increase, their labels are
// distinct, and there are neither too few nor too many.
func TestAxes(t *testing.T) {
	ranges := [][2]float64{{0, 1}, {0, 0}, {5, 5}, {-3, -3}, {0.001, 0.0013}, {190, 320}, {1, 1e6}, {-50, 7}, {0.3, 0.30000001},
		{12345, 12399}, {2, 3}, {0, 1e-9}, {999, 1001}, {1e9, 3e9}}
	for _, r := range ranges {
		for _, integral := range []bool{false, true} {
			a := linearAxis(r[0], r[1], 5, integral)
			checkAxis(t, a, r[0], r[1])
			if integral && len(a.ticks) > 1 && a.ticks[1]-a.ticks[0] < 1 {
				t.Errorf("integral axis for %v steps by %g", r, a.ticks[1]-a.ticks[0])
			}
		}
		if r[0] > 0 {
			a := logAxis(r[0], r[1])
			checkAxis(t, a, r[0], r[1])
		}
	}
	if a := logAxis(1.2, 198); a.lo != 1 || a.hi != 200 || strings.Join(a.labels, " ") != "1 10 100" {
		t.Errorf("log axis of 1.2..198: %g..%g %q", a.lo, a.hi, a.labels)
	}
}

func checkAxis(t *testing.T, a axis, lo, hi float64) {
	t.Helper()
	if a.lo > min(lo, hi) || a.hi < max(lo, hi) || a.lo >= a.hi {
		t.Errorf("%v: domain %g..%g does not hold %g..%g", a.log, a.lo, a.hi, lo, hi)
	}
	if len(a.ticks) < 2 || len(a.ticks) > 12 || len(a.labels) != len(a.ticks) {
		t.Errorf("%g..%g (log %v): %d ticks %q", lo, hi, a.log, len(a.ticks), a.labels)
	}
	seen := map[string]bool{}
	for i, l := range a.labels {
		if seen[l] {
			t.Errorf("%g..%g: label %q twice in %q", lo, hi, l, a.labels)
		}
		seen[l] = true
		if v, err := strconv.ParseFloat(l, 64); err != nil || math.Abs(v-a.ticks[i]) > 1e-9*math.Max(1, math.Abs(v)) {
			t.Errorf("%g..%g: label %q for tick %g", lo, hi, l, a.ticks[i])
		}
		if i > 0 && a.ticks[i] <= a.ticks[i-1] {
			t.Errorf("%g..%g: ticks %v not increasing", lo, hi, a.ticks)
		}
	}
}

func TestFormatValueAndQuantiles(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 3: "3", 1264.2: "1264", 12.34: "12.3", 2.256: "2.26", 0.01234: "0.0123", math.NaN(): "n/a"} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%g) = %q, want %q", v, got, want)
		}
	}
	p50, p90, mx := Quantiles([]float64{5, 1, 4, 2, 3, 6, 7, 8, 9, 10})
	if p50 != 5 || p90 != 9 || mx != 10 {
		t.Errorf("quantiles %g %g %g, want 5 9 10", p50, p90, mx)
	}
}

// Random charts, from a fixed seed: whatever the data and the names, everything stays inside, the
// ticks increase and the legend is whole.
func TestRandomCharts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	word := func() string {
		b := make([]rune, r.IntN(40))
		for i := range b {
			b[i] = rune("abcdefghijklmnopqrstuvwxyz -=<>&é日"[r.IntN(34)])
		}
		return string(b)
	}
	for i := range 200 {
		scale := math.Pow(10, float64(r.IntN(9)-3))
		var cdf []Series
		var sc []ScatterSeries
		var names []string
		for s := range 1 + r.IntN(9) {
			name := word()
			names = append(names, name)
			var vs []float64
			ss := ScatterSeries{Name: name}
			for j := range r.IntN(30) {
				v := r.ExpFloat64() * scale
				vs = append(vs, v)
				ss.Points = append(ss.Points, Point{X: float64(j), Y: v, Failed: r.IntN(8) == 0})
			}
			cdf = append(cdf, Series{Name: name, Values: vs})
			sc = append(sc, ss)
			_ = s
		}
		c := CDF{Title: word(), XLabel: word(), YLabel: word(), Log: r.IntN(2) == 0, Series: cdf}
		d := parseSVG(t, c.SVG())
		checkTicks(t, d, "tick x")
		checkTicks(t, d, "tick y")
		checkLegend(t, d, names...)
		s := Scatter{Title: word(), XLabel: word(), YLabel: word(), Series: sc}
		d = parseSVG(t, s.SVG())
		checkTicks(t, d, "tick x")
		checkTicks(t, d, "tick y")
		b := Bars{Title: word(), XLabel: word(), Stacked: i%2 == 0, Categories: names}
		for range 1 + r.IntN(3) {
			g := BarGroup{Name: word()}
			for range names {
				g.Values = append(g.Values, r.Float64()*scale*100)
			}
			b.Groups = append(b.Groups, g)
		}
		d = parseSVG(t, b.SVG())
		checkTicks(t, d, "tick x")
		if t.Failed() {
			t.Fatalf("chart set %d", i)
		}
	}
}
