package svgchart

// Axes: linear ones with ticks at 1, 2 or 5 times a power of ten, logarithmic ones at the
// mantissas that fit.

import (
	"math"
	"strconv"
	"strings"
)

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

// NiceAbove is the least of 1, 2 or 5 times a power of ten at or above v (1 when v <= 0): a tick
// step that puts at most span/v ticks on a span, or a round top for an axis whose data reach v.
func NiceAbove(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// niceStep is 1, 2 or 5 times a power of ten, near x (NiceAbove's is at or above it).
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
