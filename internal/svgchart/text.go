package svgchart

// Text, numbers and escaping: the layout estimates a label's width instead of measuring it.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

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
