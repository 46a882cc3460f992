package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
)

// svgElem is an element of a parsed SVG: its name, attributes and the text directly in it.
type svgElem struct {
	Name  string
	Attr  map[string]string
	Text  string
	Title string // the text of its <title> child
}

func (e svgElem) hasClass(c string) bool { return strings.Contains(" "+e.Attr["class"]+" ", " "+c+" ") }

func (e svgElem) int(t *testing.T, name string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(e.Attr[name], 10, 64)
	if err != nil {
		t.Fatalf("<%s class=%q> has %s=%q: %v", e.Name, e.Attr["class"], name, e.Attr[name], err)
	}
	return n
}

// parseSVG parses an SVG strictly as XML and lists its elements in document order.
func parseSVG(t *testing.T, svg string) []svgElem {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	dec.Strict = true
	var out []svgElem
	var stack []int
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{Name: tok.Name.Local, Attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.Attr[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			i := stack[len(stack)-1]
			out[i].Text += string(tok)
			if out[i].Name == "title" && len(stack) > 1 {
				out[stack[len(stack)-2]].Title += string(tok)
			}
		}
	}
	if len(out) == 0 || out[0].Name != "svg" {
		t.Fatal("no <svg>")
	}
	return out
}

var overTimeRe = regexp.MustCompile(`(?s)<svg xmlns="http://www.w3.org/2000/svg" class="chart over-time".*?</svg>`)

// The fixture's "Over time" chart: buckets that add up to every send (and every drop), the kill at
// 1s as a line and the partition 3.2s-3.5s and the pause as bands on both charts, one bar per
// election of the verdict, the time labels inside the drawing; after the diagram.
func TestOverTimeOfFixture(t *testing.T) {
	dir, run := writeFixture(t)
	page, d := pageData(t, dir)
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	evs := countEvents(run)
	sec := func(id string) int { return strings.Index(page, `<section id="`+id+`"`) }
	if !(sec("diagram-section") < sec("over-time") && sec("over-time") < sec("leaders") && sec("over-time") < sec("resources")) {
		t.Error("the Over time section is not between the diagram and the tables")
	}
	svg := overTimeRe.FindString(page)
	if svg == "" {
		t.Fatal("no Over time chart in the page")
	}
	els := parseSVG(t, svg)
	root := els[0]
	buckets, bucket := int(root.int(t, "data-buckets")), root.int(t, "data-bucket-us")
	if buckets < 100 || buckets > otMaxBuckets+1 {
		t.Errorf("%d buckets, want 100-200", buckets)
	}
	if span := d.To - d.From; int64(buckets)*bucket < span || int64(buckets-2)*bucket > span {
		t.Errorf("%d buckets of %d µs for a run of %d µs", buckets, bucket, span)
	}
	if !strings.Contains(svg, "messages sent / "+durText(bucket)) || !strings.Contains(page, "Messages sent per "+durText(bucket)) {
		t.Errorf("the chart does not say its unit (messages / %s)", durText(bucket))
	}

	// The rate: a line per kind in the kind's colour, and the drops.
	sends, drops, lines := 0, 0, 0
	for _, e := range els {
		if !e.hasClass("ot-rate") {
			continue
		}
		counts := strings.Fields(e.Attr["data-counts"])
		if len(counts) != buckets || len(strings.Fields(e.Attr["points"])) != buckets {
			t.Errorf("the %s line has %d counts and %d points, want one per bucket (%d)", e.Attr["data-kind"], len(counts), len(strings.Fields(e.Attr["points"])), buckets)
		}
		sum := 0
		for _, c := range counts {
			n, _ := strconv.Atoi(c)
			sum += n
		}
		if int64(sum) != e.int(t, "data-total") {
			t.Errorf("the %s line's counts add up to %d, its total says %s", e.Attr["data-kind"], sum, e.Attr["data-total"])
		}
		if e.hasClass("ot-drops") {
			drops += sum
			continue
		}
		lines++
		sends += sum
		for _, k := range d.Kinds {
			if k.Name == e.Attr["data-kind"] && (k.Count != sum || k.Color != e.Attr["stroke"]) {
				t.Errorf("the %s line: %d messages in %s, want %d in %s", k.Name, sum, e.Attr["stroke"], k.Count, k.Color)
			}
		}
	}
	if lines != len(d.Kinds) || sends != evs[logs.EvSend] || sends != len(d.Msgs.S) {
		t.Errorf("%d lines adding up to %d sends, want %d lines and every send (%d)", lines, sends, len(d.Kinds), evs[logs.EvSend])
	}
	if drops != evs[logs.EvDrop] {
		t.Errorf("the drops line adds up to %d, want %d", drops, evs[logs.EvDrop])
	}

	// The faults, on both charts.
	find := func(class string) map[string][]svgElem {
		out := map[string][]svgElem{}
		for _, e := range els {
			if e.hasClass(class) {
				out[e.Attr["data-panel"]] = append(out[e.Attr["data-panel"]], e)
			}
		}
		return out
	}
	for what, c := range map[string]struct {
		class    string
		from, to time.Duration
	}{
		"the kill":      {"ot-kill", time.Second, time.Second},
		"the restart":   {"ot-restart", 2 * time.Second, 2 * time.Second},
		"the pause":     {"ot-pause", 2500 * time.Millisecond, 2800 * time.Millisecond},
		"the partition": {"ot-partition", fixturePartAt, fixtureHealAt},
	} {
		got := find(c.class)
		for _, panel := range []string{"rate", "elections"} {
			if len(got[panel]) != 1 {
				t.Errorf("%s: %d on the %s chart, want 1", what, len(got[panel]), panel)
				continue
			}
			e := got[panel][0]
			if !near(e.int(t, "data-a"), c.from) || !near(e.int(t, "data-b"), c.to) {
				t.Errorf("%s on the %s chart: %s-%s µs, want %v-%v", what, panel, e.Attr["data-a"], e.Attr["data-b"], c.from, c.to)
			}
		}
	}
	kill := find("ot-kill")["rate"]
	if len(kill) == 1 {
		x := root2x(t, root, kill[0].int(t, "data-a"))
		if x1, _ := strconv.ParseFloat(kill[0].Attr["x1"], 64); x1 < x-1 || x1 > x+1 {
			t.Errorf("the kill line is drawn at x=%.1f, want %.1f (1000 ms)", x1, x)
		}
	}
	labels := map[string]bool{}
	for _, e := range els {
		if e.hasClass("ot-fault-label") {
			labels[e.Text] = true
		}
	}
	for _, want := range []string{"kill 5", "restart 5", "pause 3", "partition 1,2 | 3-5"} {
		if !labels[want] {
			t.Errorf("no fault label %q (labels %v)", want, labels)
		}
	}

	// An election bar per election of the verdict, labelled #k with its messages (election and
	// announce kinds) when there is room.
	var bars []svgElem
	for _, e := range els {
		if e.hasClass("ot-election") {
			bars = append(bars, e)
		}
	}
	want := in.Verdict.Metrics.Elections
	if len(bars) != len(want) || len(want) == 0 {
		t.Fatalf("%d election bars, want %d", len(bars), len(want))
	}
	for i, e := range bars {
		w := want[i]
		open := w.EndNS == nil
		if e.int(t, "data-n") != int64(i+1) || e.int(t, "data-a") != d.Elections[i].From || e.int(t, "data-b") != d.Elections[i].To ||
			(e.Attr["data-open"] == "1") != open || e.hasClass("ot-open") != open || e.int(t, "data-messages") != int64(w.Messages+w.Announce) {
			t.Errorf("election bar %d: %v, want %+v", i+1, e.Attr, d.Elections[i])
		}
		if !strings.Contains(e.Title, fmt.Sprintf("election #%d:", i+1)) {
			t.Errorf("election bar %d's tooltip %q", i+1, e.Title)
		}
	}
	for _, e := range els {
		if e.hasClass("ot-election-label") {
			n := e.int(t, "data-n")
			if e.Text != fmt.Sprintf("#%d · %d msgs", n, want[n-1].Messages+want[n-1].Announce) {
				t.Errorf("election label %q", e.Text)
			}
		}
	}

	// Every label stays inside the drawing.
	checkLabelsInside(t, els)
}

// root2x is where the chart draws time t (µs).
func root2x(t *testing.T, root svgElem, us int64) float64 {
	from, to := root.int(t, "data-from"), root.int(t, "data-to")
	return otLeft + float64(us-from)/float64(to-from)*(otW-otLeft-otRight)
}

// checkLabelsInside checks that every text of the chart is inside its width (at about 6 units a
// character, a 10 px font's width or more).
func checkLabelsInside(t *testing.T, els []svgElem) {
	t.Helper()
	var w float64
	fmt.Sscanf(els[0].Attr["viewBox"], "0 0 %g", &w)
	for _, e := range els {
		if e.Name != "text" || e.Attr["transform"] != "" {
			continue
		}
		x, _ := strconv.ParseFloat(e.Attr["x"], 64)
		n := float64(len([]rune(e.Text))) * 6
		left := map[string]float64{"": x, "start": x, "middle": x - n/2, "end": x - n}[e.Attr["text-anchor"]]
		if left < 0 || left+n > w {
			t.Errorf("the label %q spans %.1f..%.1f, outside the chart's 0..%.0f", e.Text, left, left+n, w)
		}
	}
}

// Kind names and fault labels are the run's text: escaped, so that the SVG stays XML and shows them
// as they are; an election that never agreed is hatched.
func TestOverTimeEscapes(t *testing.T) {
	end := int64(900_000_000)
	leader := 2
	d := &Data{From: 0, To: 2_000_000, End: 1_500_000,
		Kinds: []Kind{{Name: `<b>"ok"&amp;`, Color: "#1b9e77", Role: "election", Count: 3}},
		Msgs:  Msgs{S: []int64{10, 500_000, 1_999_999}, K: []int{0, 0, 0}},
		Lanes: []Lane{{ID: 1, Label: "n1"}, {ID: 2, Label: "n2"}},
		Faults: []Fault{{T: 100_000, Op: "kill", Label: "kill <1>"}, {T: 200_000, Op: "link", Label: `link 1->2 delay 5ms "x"`},
			{T: 300_000, Op: "link", Label: "link 1->2 delay 9ms"}, {T: 400_000, Op: "pause", Label: "pause 1"}, {T: 1_200_000, Op: "heal", Label: "heal"},
			{T: 1_300_000, Op: "stop", Label: "stop 2", Error: "no such process"}},
		Paused:     []Span{{Lane: 0, From: 400_000, To: 700_000}, {Lane: 1, From: 400_000, To: 700_000}},
		Partitions: []Partition{{From: 800_000, To: 1_200_000, Label: "partition 1 | 2 <&>"}},
		Elections:  []Window{{From: 50_000, To: 900_000}, {From: 1_100_000, To: 1_500_000}},
	}
	v := &check.Verdict{Metrics: check.Metrics{Elections: []check.Election{{StartNS: 50_000_000, EndNS: &end, Messages: 2, Leader: &leader}, {StartNS: 1_100_000_000, Messages: 1}}}}
	o := buildOverTime(d, v)
	svg := o.svg()
	els := parseSVG(t, svg)
	if strings.Contains(svg, "<b>") || strings.Contains(svg, "<1>") || strings.Contains(svg, "<&>") {
		t.Error("a text is not escaped")
	}
	texts := map[string]bool{}
	for _, e := range els {
		texts[e.Text] = true
	}
	for _, want := range []string{`<b>"ok"&amp; (election) 3`, "kill <1>", `link 1->2 delay 5ms "x"`, "partition 1 | 2 <&>", "pause 1,2"} {
		if !texts[want] {
			t.Errorf("no text %q", want)
		}
	}
	// The first link rule lasts until the second of its kind on its link, which lasts until the heal;
	// the stop that failed is not drawn.
	var links [][2]int64
	for _, e := range els {
		if e.hasClass("ot-link") && e.Attr["data-panel"] == "rate" {
			links = append(links, [2]int64{e.int(t, "data-a"), e.int(t, "data-b")})
		}
		if e.hasClass("ot-stop") {
			t.Error("a fault that was not applied is drawn")
		}
	}
	if fmt.Sprint(links) != "[[200000 300000] [300000 1200000]]" {
		t.Errorf("link bands %v", links)
	}
	var open []bool
	for _, e := range els {
		if e.hasClass("ot-election") {
			open = append(open, e.hasClass("ot-open") && e.Attr["fill"] == "url(#ot-hatch)")
		}
	}
	if fmt.Sprint(open) != "[false true]" {
		t.Errorf("elections drawn open: %v, want the second only", open)
	}
	checkLabelsInside(t, els)
}

// A fault's label on the chart is short: runs of IDs as ranges, cut at otLabelMax characters.
func TestOverTimeShortLabels(t *testing.T) {
	long := "partition " + joinInts([]int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}, ",") + " | 21,22,23,25,27,28"
	for in, want := range map[string]string{
		"kill 5":                "kill 5",
		"partition 1,2 | 3,4,5": "partition 1,2 | 3-5",
		long:                    "partition 1-20 | 21-23,25,27,28",
		"link 1->2 delay 20ms":  "link 1->2 delay 20ms",
		"stop " + joinInts([]int{1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27}, ","): "stop 1,3,5,7,9,11,13,15,17,19,21,23,25,…",
	} {
		if got := shortLabel(in); got != want {
			t.Errorf("shortLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// The bucket is round and the run has 100 to 200 of them, whatever its length.
func TestOverTimeBuckets(t *testing.T) {
	for _, span := range []int64{1, 999, 1000, 5_258_000, 5_000_000, 7_777_777, 60_000_000, 3_600_000_000, 86_400_000_000} {
		w := otBucket(span)
		n := (span + w - 1) / w
		if n > otMaxBuckets || (span >= 200 && n <= otMaxBuckets/2) {
			t.Errorf("a span of %d µs: %d buckets of %d µs", span, n, w)
		}
	}
	if got := durText(otBucket(5_258_000)); got != "50 ms" {
		t.Errorf("the bucket of a 5.258 s run is %s, want 50 ms", got)
	}
}

// A run of 500,000 messages: counted into buckets, a chart of a few tens of kB, made in well under a
// second.
func TestOverTimeBigRun(t *testing.T) {
	const n = 500_000
	d := &Data{From: -2_000, To: 120_000_000, End: 119_000_000,
		Kinds: []Kind{{Name: "a", Color: "#1b9e77"}, {Name: "b", Color: "#d95f02"}, {Name: "c", Color: "#7570b3"}},
		Msgs:  Msgs{S: make([]int64, n), K: make([]int, n)}}
	for i := range n {
		d.Msgs.S[i] = int64(i) * 240
		d.Msgs.K[i] = i % 3
	}
	v := &check.Verdict{}
	for i := range 300 {
		end := int64(i)*400_000_000 + 20_000_000
		v.Metrics.Elections = append(v.Metrics.Elections, check.Election{StartNS: int64(i) * 400_000_000, EndNS: &end, Messages: 40})
		d.Elections = append(d.Elections, Window{From: int64(i) * 400_000, To: end / 1000})
	}
	for i := range 200 {
		d.Faults = append(d.Faults, Fault{T: int64(i) * 600_000, Op: "kill", Label: "kill " + strconv.Itoa(i%9)})
	}
	start := time.Now()
	svg := buildOverTime(d, v).svg()
	took := time.Since(start)
	els := parseSVG(t, svg)
	total := 0
	for _, e := range els {
		if e.hasClass("ot-rate") {
			total += int(e.int(t, "data-total"))
		}
	}
	if total != n {
		t.Errorf("the lines add up to %d, want %d", total, n)
	}
	if len(svg) > 400<<10 || took > time.Second {
		t.Errorf("%d messages: a chart of %d bytes in %v", n, len(svg), took)
	}
	checkLabelsInside(t, els)
	t.Logf("%d messages: chart of %d kB in %v", n, len(svg)>>10, took)
}
