package svgchart

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Verify reads a chart back as a browser would lay it out and says what is wrong with it: not XML,
// no viewBox, a coordinate outside the viewBox, or a text whose estimated extent (textWidth) leaves
// it. The charts' own tests and those of the pages that hold them call it on every chart they draw.
func Verify(svg string) error {
	_, problems, _ := parse(svg)
	errs := make([]error, len(problems))
	for i, p := range problems {
		errs[i] = errors.New(p)
	}
	return errors.Join(errs...)
}

// svgText is a <text> element as laid out.
type svgText struct {
	class, anchor, transform string
	x, y, size               float64
	content                  string
	inLegend                 bool
}

// svgDoc is what the checks need of a chart.
type svgDoc struct {
	w, h  float64
	texts []svgText
	// frame is the plot area (the last unfilled rect with the frame's stroke).
	frame [4]float64
	// markers are the centres of the scatter's markers (circles) and the series' paths.
	circles [][2]float64
	paths   []string
	hrefs   []string
}

var numRe = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?`)

// parseSVG parses a chart as XML and checks that every coordinate it draws at lies inside the
// viewBox, texts with their estimated extent.
func parse(s string) (d svgDoc, problems []string, fatal bool) {
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	fatalf := func(format string, args ...any) (svgDoc, []string, bool) {
		errorf(format, args...)
		return d, problems, true
	}
	dec := xml.NewDecoder(strings.NewReader(s))
	var stack []xml.StartElement
	var cur *svgText
	legendDepth := -1
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fatalf("not XML: %v\n%s", err, s)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			stack = append(stack, tok)
			attr := map[string]string{}
			for _, a := range tok.Attr {
				attr[a.Name.Local] = a.Value
			}
			f := func(k string) float64 {
				v, err := strconv.ParseFloat(attr[k], 64)
				if err != nil {
					errorf("<%s %s=%q>: %v", tok.Name.Local, k, attr[k], err)
					fatal = true
				}
				return v
			}
			inX := func(what string, v float64) {
				if v < 0 || v > d.w || math.IsNaN(v) {
					errorf("<%s> %s = %g outside 0..%g", tok.Name.Local, what, v, d.w)
				}
			}
			inY := func(what string, v float64) {
				if v < 0 || v > d.h || math.IsNaN(v) {
					errorf("<%s> %s = %g outside 0..%g", tok.Name.Local, what, v, d.h)
				}
			}
			if attr["class"] == "legend" {
				legendDepth = len(stack)
			}
			switch tok.Name.Local {
			case "svg":
				if len(stack) != 1 {
					return fatalf("nested svg")
				}
				vb := strings.Fields(attr["viewBox"])
				if len(vb) != 4 || vb[0] != "0" || vb[1] != "0" {
					return fatalf("viewBox %q", attr["viewBox"])
				}
				d.w, _ = strconv.ParseFloat(vb[2], 64)
				d.h, _ = strconv.ParseFloat(vb[3], 64)
				if d.w <= 0 || d.h <= 0 || attr["width"] != vb[2] || attr["height"] != vb[3] {
					return fatalf("svg size %v", attr)
				}
			case "line":
				inX("x1", f("x1"))
				inX("x2", f("x2"))
				inY("y1", f("y1"))
				inY("y2", f("y2"))
			case "rect":
				x, y, w, h := f("x"), f("y"), f("width"), f("height")
				if w < 0 || h < 0 {
					errorf("rect of negative size %v", attr)
				}
				inX("x", x)
				inX("x+width", x+w)
				inY("y", y)
				inY("y+height", y+h)
				if attr["fill"] == "none" && attr["stroke"] == "#999" {
					d.frame = [4]float64{x, y, x + w, y + h}
				}
			case "circle":
				cx, cy, r := f("cx"), f("cy"), f("r")
				inX("cx-r", cx-r)
				inX("cx+r", cx+r)
				inY("cy-r", cy-r)
				inY("cy+r", cy+r)
				if legendDepth < 0 {
					d.circles = append(d.circles, [2]float64{cx, cy})
				}
			case "path":
				p := attr["d"]
				if strings.Trim(p, "MLHVZ0123456789. -") != "" {
					errorf("path with commands beyond absolute M L H V Z: %q", p)
				}
				// Coordinates: after M and L pairs (x y); after H an x, after V a y.
				for _, seg := range regexp.MustCompile(`[MLHV][^MLHVZ]*`).FindAllString(p, -1) {
					ns := numRe.FindAllString(seg, -1)
					for i, n := range ns {
						v, _ := strconv.ParseFloat(n, 64)
						switch {
						case seg[0] == 'H', (seg[0] == 'M' || seg[0] == 'L') && i%2 == 0:
							inX("path x", v)
						default:
							inY("path y", v)
						}
					}
				}
				if attr["class"] == "series" {
					d.paths = append(d.paths, p)
				}
			case "text":
				cur = &svgText{class: attr["class"], anchor: attr["text-anchor"], transform: attr["transform"], x: f("x"), y: f("y"), size: fontSize,
					inLegend: legendDepth >= 0}
				if s := attr["font-size"]; s != "" {
					cur.size = f("font-size")
				}
			case "a":
				d.hrefs = append(d.hrefs, attr["href"])
			}
			if fatal { // a coordinate that is not a number
				return d, problems, true
			}
		case xml.CharData:
			if cur != nil {
				cur.content += string(tok)
			}
		case xml.EndElement:
			if tok.Name.Local == "text" && cur != nil {
				d.texts = append(d.texts, *cur)
				cur = nil
			}
			if len(stack) == legendDepth {
				legendDepth = -1
			}
			stack = stack[:len(stack)-1]
		}
	}
	if d.w == 0 {
		return fatalf("no svg element")
	}
	for _, tx := range d.texts {
		x0, x1, y0, y1 := tx.extent()
		if x0 < 0 || x1 > d.w || y0 < 0 || y1 > d.h {
			errorf("text %q (%s) at %g..%g × %g..%g leaves the %g×%g viewBox", tx.content, tx.class, x0, x1, y0, y1, d.w, d.h)
		}
	}
	return d, problems, false
}

// extent is the text's estimated box: its width by textWidth, ascent 0.8 em, descent 0.3 em.
func (tx svgText) extent() (x0, x1, y0, y1 float64) {
	w := textWidth(tx.content, tx.size)
	if tx.class == "title" {
		w = textWidth(tx.content, titleSize) * 1.1
	}
	if strings.HasPrefix(tx.transform, "rotate(-90") {
		// Turned a quarter to the left about (x, y), anchored in the middle.
		return tx.x - 0.8*tx.size, tx.x + 0.3*tx.size, tx.y - w/2, tx.y + w/2
	}
	switch tx.anchor {
	case "middle":
		x0 = tx.x - w/2
	case "end":
		x0 = tx.x - w
	default:
		x0 = tx.x
	}
	return x0, x0 + w, tx.y - 0.8*tx.size, tx.y + 0.3*tx.size
}
