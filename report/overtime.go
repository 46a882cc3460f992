package report

// The "Over time" charts, after Maelstrom's rate plots: the messages sent per time bucket, a line per
// message kind (and the drops); the verdict's elections as bars; the faults as lines (kill, stop,
// restart) and shaded bands (pause, partition, link rule) across both. One SVG drawn server-side in
// the style of the resource charts, on the run's time axis (Data.From to Data.To). It stays cheap
// for a big run: the messages are only counted into buckets, a few hundred of them.

import (
	"cmp"
	"fmt"
	"html/template"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
)

// otMaxBuckets is the most buckets the rate chart has; it has more than half as many (the bucket is
// the smallest round width, 1, 2, 2.5 or 5 times a power of ten µs, that keeps within it).
const otMaxBuckets = 200

// overTime is what the charts show, times in µs since the origin.
type overTime struct {
	From, To int64
	// Start is the first bucket's start (From rounded down to a multiple of Bucket); bucket i is
	// [Start+i*Bucket, Start+(i+1)*Bucket).
	Start, Bucket  int64
	N              int // buckets
	Kinds          []Kind
	Counts         [][]int // [kind][bucket]: sends
	Drops          []int   // [bucket]: drops, nil when the run has none
	Sends, Dropped int
	Elections      []otElection
	Lines          []otLine
	Bands          []otBand
}

// otElection is an election of the verdict: from its start to its agreement (Open: it never agreed,
// drawn to the run's end).
type otElection struct {
	N                  int
	From, To           int64
	Messages, Announce int
	Open               bool
	Leader             string
}

// otLine is a fault at one moment: a kill, a stop, a restart.
type otLine struct {
	T     int64
	Op    string
	Label string
}

// otBand is a fault over a stretch: a pause (to the resume), a partition (to the heal), a link rule
// (to the heal, or the next rule of its kind on the link).
type otBand struct {
	From, To int64
	Op       string
	Label    string
}

// overTimeView is the section of the page.
type overTimeView struct {
	SVG     template.HTML
	Bucket  string // "50 ms"
	Buckets int
}

// otBucket picks the bucket width for a span (µs): the smallest of 1, 2, 2.5, 5 times a power of ten
// that makes at most otMaxBuckets buckets (so more than otMaxBuckets/2, each step being at most
// twice the one before; the span rounded out to whole buckets may take one more).
func otBucket(span int64) int64 {
	span = max(span, 1)
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{10, 20, 25, 50} {
			if m == 25 && p == 1 {
				continue // 2.5 µs
			}
			if w := m * p / 10; w > 0 && (span+w-1)/w <= otMaxBuckets {
				return w
			}
		}
	}
}

// durText renders a bucket width: "50 ms", "2.5 s", "500 µs".
func durText(us int64) string {
	switch {
	case us >= 1_000_000:
		return trimFloat(float64(us)/1e6) + " s"
	case us >= 1000:
		return trimFloat(float64(us)/1000) + " ms"
	}
	return fmt.Sprintf("%d µs", us)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// buildOverTime counts the messages into buckets and places the elections and faults, from Data
// (the faults as the diagram has them) and the verdict (nil: no elections).
func buildOverTime(d *Data, v *check.Verdict) *overTime {
	o := &overTime{From: d.From, To: max(d.To, d.From+1), Kinds: d.Kinds}
	o.Bucket = otBucket(o.To - o.From)
	o.Start = floorDiv(o.From, o.Bucket) * o.Bucket
	n := int(max((o.To-o.Start+o.Bucket-1)/o.Bucket, 1))
	o.N = n
	bucket := func(t int64) int { return min(max(int((t-o.Start)/o.Bucket), 0), n-1) }
	o.Counts = make([][]int, len(d.Kinds))
	for k := range o.Counts {
		o.Counts[k] = make([]int, n)
	}
	switch c := d.counts; {
	case c != nil && c.n == n:
		// a long run: every message, not only those of the diagram's windows
		o.Counts, o.Drops, o.Sends, o.Dropped = c.byKind, c.drops, c.sends, c.dropped
	default:
		for i, s := range d.Msgs.S {
			if k := d.Msgs.K[i]; k >= 0 && k < len(o.Counts) {
				o.Counts[k][bucket(s)]++
				o.Sends++
			}
		}
		drop := markType("drop")
		for i, y := range d.Marks.Y {
			if y != drop {
				continue
			}
			if o.Drops == nil {
				o.Drops = make([]int, n)
			}
			o.Drops[bucket(d.Marks.T[i])]++
			o.Dropped++
		}
	}
	if v != nil {
		for i, e := range v.Metrics.Elections {
			el := otElection{N: i + 1, Messages: e.Messages, Announce: e.Announce, Open: e.EndNS == nil, Leader: "none agreed"}
			if i < len(d.Elections) {
				el.From, el.To = d.Elections[i].From, d.Elections[i].To
			} else {
				el.From, el.To = (e.StartNS-d.Origin)/1000, d.End
				if e.EndNS != nil {
					el.To = (*e.EndNS - d.Origin) / 1000
				}
			}
			el.To = max(el.To, el.From)
			if e.Leader != nil {
				el.Leader = fmt.Sprintf("n%d", *e.Leader)
			}
			o.Elections = append(o.Elections, el)
		}
	}
	o.faults(d)
	return o
}

// faults turns the diagram's faults into lines and bands: the pauses are Data.Paused (one band for
// the nodes paused together), the partitions Data.Partitions, a link rule lasts until the next heal
// or the next rule of its kind on its link; the other applied faults are lines.
func (o *overTime) faults(d *Data) {
	linkKey := func(label string) string {
		f := strings.Fields(label)
		return strings.Join(f[:min(len(f), 3)], " ") // "link 1->2 delay"
	}
	for i, f := range d.Faults {
		if f.Error != "" {
			continue
		}
		switch f.Op {
		case logs.OpPause, logs.OpResume, logs.OpPartition, logs.OpHeal:
		case logs.OpLink:
			to, key := d.To, linkKey(f.Label)
			for j, g := range d.Faults {
				if j == i || g.Error != "" || g.T < f.T || (g.T == f.T && j < i) || g.T >= to {
					continue
				}
				if g.Op == logs.OpHeal || (g.Op == logs.OpLink && linkKey(g.Label) == key) {
					to = g.T
				}
			}
			o.Bands = append(o.Bands, otBand{From: f.T, To: max(to, f.T), Op: logs.OpLink, Label: f.Label})
		case logs.OpClock:
			if band, ok := clockBand(d, i); ok {
				o.Bands = append(o.Bands, band)
			} else {
				o.Lines = append(o.Lines, otLine{T: f.T, Op: f.Op, Label: f.Label})
			}
		default:
			o.Lines = append(o.Lines, otLine{T: f.T, Op: f.Op, Label: f.Label})
		}
	}
	type span struct{ a, b int64 }
	var order []span
	paused := map[span][]string{}
	for _, p := range d.Paused {
		k := span{p.From, p.To}
		if paused[k] == nil {
			order = append(order, k)
		}
		paused[k] = append(paused[k], strings.TrimPrefix(d.Lanes[p.Lane].Label, "n"))
	}
	for _, k := range order {
		o.Bands = append(o.Bands, otBand{From: k.a, To: k.b, Op: logs.OpPause, Label: "pause " + strings.Join(paused[k], ",")})
	}
	for _, p := range d.Partitions {
		o.Bands = append(o.Bands, otBand{From: p.From, To: max(p.To, p.From), Op: logs.OpPartition, Label: p.Label})
	}
	slices.SortStableFunc(o.Bands, func(a, b otBand) int { return cmp.Compare(a.From, b.From) })
	slices.SortStableFunc(o.Lines, func(a, b otLine) int { return cmp.Compare(a.T, b.T) })
}

// otColor is a fault's colour, as the diagram draws it.
func otColor(op string) string {
	switch op {
	case logs.OpKill:
		return "#c62828"
	case logs.OpRestart:
		return "#2e7d32"
	case logs.OpPause, logs.OpResume:
		return "#ef6c00"
	case logs.OpPartition, logs.OpHeal:
		return "#6a1b9a"
	case logs.OpLink:
		return "#1565c0"
	case logs.OpClock:
		return "#00838f"
	}
	return "#455a64"
}

// The geometry of the charts, in the SVG's units (pixels at full size).
const (
	otW, otLeft, otRight = 1200.0, 56.0, 14.0
	otRateH              = 150.0 // the rate panel
	otLabelRow           = 12.0  // a row of fault labels
	otLabelRows          = 4
	otBarH, otBarRow     = 12.0, 16.0 // an election's bar, and its row's pitch
	otBarRows            = 8
	otLabelCharW         = tickCharW // a generous width of a character at 10 px
	otLegendRow          = 16.0
)

// svgEsc escapes a text for the SVG (which is XML as well as HTML).
func svgEsc(s string) string { return template.HTMLEscapeString(s) }

func (o *overTime) view() *overTimeView {
	return &overTimeView{SVG: template.HTML(o.svg()), Bucket: durText(o.Bucket), Buckets: o.N}
}

// otLabelMax is the most characters a fault's label has on the chart (its tooltip has all of it).
const otLabelMax = 40

var idListRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\d+(?:,\d+)+`) })

// shortLabel shortens a fault's label for the chart: runs of consecutive IDs as ranges ("partition
// 1-20 | 21-40"), and at most otLabelMax characters.
func shortLabel(s string) string {
	s = idListRe().ReplaceAllStringFunc(s, func(list string) string {
		var ids []int
		for _, f := range strings.Split(list, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				return list
			}
			ids = append(ids, n)
		}
		var out []string
		for j := 0; j < len(ids); {
			k := j
			for k+1 < len(ids) && ids[k+1] == ids[k]+1 {
				k++
			}
			switch {
			case k >= j+2:
				out = append(out, strconv.Itoa(ids[j])+"-"+strconv.Itoa(ids[k]))
			default:
				for m := j; m <= k; m++ {
					out = append(out, strconv.Itoa(ids[m]))
				}
			}
			j = k + 1
		}
		return strings.Join(out, ",")
	})
	if r := []rune(s); len(r) > otLabelMax {
		s = string(r[:otLabelMax-1]) + "…"
	}
	return s
}

// clockBand is the stretch in which clock fault i of d is in force on its nodes: a rate or a bump
// until the next reset or rate of one of them (a restart too: a clock fault lives in its process)
// or the end, a strobe for its length. A reset is a line, not a band (ok false).
func clockBand(d *Data, i int) (otBand, bool) {
	f := d.Faults[i]
	words := strings.Fields(f.Label) // clock <ids> <kind> ...
	if len(words) < 3 || words[2] == "reset" {
		return otBand{}, false
	}
	to := d.To
	if words[2] == "strobe" && len(words) >= 8 {
		if length, err := time.ParseDuration(words[7]); err == nil {
			to = min(to, f.T+length.Microseconds())
		}
	} else {
		for j, g := range d.Faults {
			if j == i || g.Error != "" || g.T < f.T || (g.T == f.T && j < i) || g.T >= to || !sharesNode(f.Targets, g.Targets) {
				continue
			}
			gw := strings.Fields(g.Label)
			if g.Op == logs.OpRestart || g.Op == logs.OpKill || g.Op == logs.OpStop ||
				(g.Op == logs.OpClock && len(gw) >= 3 && (gw[2] == "reset" || gw[2] == "rate")) {
				to = g.T
			}
		}
	}
	return otBand{From: f.T, To: max(to, f.T), Op: logs.OpClock, Label: f.Label}, true
}

// sharesNode tells whether two target lists have a node in common.
func sharesNode(a, b []int) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}
