package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html/template"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// graphRun hand-makes a run of a synchronous algorithm on the network spec over IDs 1..n in
// ascending ring order. Every node starts and floods its neighbours in pulse 1; pulse k starts at
// (k-1)·10+1 ms. Node dead (0: none) is killed at 15 ms, in pulse 2, so its neighbours never start
// pulse 3; at 60 ms the live nodes follow the highest live ID, but node 3 elects and stays at ⊥.
// The launcher stops the run at 100 ms.
func graphRun(t testing.TB, spec string, n, pulses, dead int) *logs.Run {
	t.Helper()
	ring := make([]int, n)
	nodes := make([]rundir.Node, n)
	for i := range ring {
		ring[i] = i + 1
		nodes[i] = rundir.Node{ID: i + 1, Addr: "graph:" + strconv.Itoa(i+1)}
	}
	var edges [][2]int
	if topology.IsGraph(spec) {
		pos, err := topology.Generate(spec, n, 1)
		if err != nil {
			t.Fatal(err)
		}
		edges = topology.OnIDs(pos, ring)
	}
	c := rundir.Cluster{Version: rundir.Version, ClusterID: "graph", Algo: "floodmax", Topology: spec, Edges: edges, Placement: "ascending",
		Ring: ring, InitiatorsSpec: "all", Nodes: nodes, Heartbeat: rundir.Duration(50 * time.Millisecond), Timeout: rundir.Duration(200 * time.Millisecond),
		Settle: rundir.Duration(time.Second), Duration: rundir.Duration(100 * time.Millisecond), Grace: rundir.Duration(200 * time.Millisecond),
		TerminationBound: rundir.Duration(4 * time.Second), Seed: 1, Options: map[string]string{"sync": "alpha"}}
	net, err := c.Net()
	if err != nil {
		t.Fatalf("the test's own cluster: %v", err)
	}
	const base = sim.DefaultBase
	at := func(d time.Duration) int64 { return base + int64(d) }
	run := &logs.Run{Cluster: c, Nodes: map[int]*logs.NodeLog{}}
	run.Launcher = append(run.Launcher, logs.LaunchRecord{TS: at(0), Ev: logs.LaunchBegin})
	evs := map[int][]logs.Event{}
	add := func(id int, d time.Duration, e logs.Event) {
		e.TS, e.Node, e.Inc = at(d), id, 1
		evs[id] = append(evs[id], e)
	}
	waits := map[int]bool{}
	if dead != 0 {
		for _, q := range net.Neighbours(dead) {
			waits[q] = true
		}
	}
	top := 0
	for _, id := range ring {
		if id != dead {
			top = max(top, id)
		}
	}
	seq := 0
	for _, id := range ring {
		run.Launcher = append(run.Launcher, logs.LaunchRecord{TS: at(0), Ev: logs.LaunchSpawned, Node: id, Inc: 1, Pid: 1000 + id})
		add(id, 0, logs.Event{Ev: logs.EvStart, Algo: "floodmax", Pid: 1000 + id})
		for k := 1; k <= pulses; k++ {
			if k > 2 && (id == dead || waits[id]) {
				break
			}
			add(id, time.Duration(k-1)*10*time.Millisecond+time.Millisecond, logs.Event{Ev: logs.EvPulse, Pulse: k})
		}
		for _, q := range net.Neighbours(id) {
			seq++
			m := &election.Message{ID: strconv.Itoa(id) + ".1." + strconv.Itoa(seq), Kind: "flood", Round: 1, Cand: id}
			add(id, 2*time.Millisecond, logs.Event{Ev: logs.EvSend, To: q, Msg: m})
			add(q, 3*time.Millisecond, logs.Event{Ev: logs.EvRecv, From: id, Msg: m})
		}
		switch {
		case id == dead:
			run.Launcher = append(run.Launcher, logs.LaunchRecord{TS: at(15 * time.Millisecond), Ev: logs.LaunchExited, Node: id, Inc: 1, Pid: 1000 + id, Signal: "killed"})
			continue
		case id == 3:
			add(id, 60*time.Millisecond, logs.Event{Ev: logs.EvElect, Round: 2})
		default:
			add(id, 60*time.Millisecond, logs.Event{Ev: logs.EvLeader, Leader: top})
		}
		add(id, 101*time.Millisecond, logs.Event{Ev: logs.EvStop, Reason: "terminated"})
	}
	run.Launcher = append(run.Launcher, logs.LaunchRecord{TS: at(100 * time.Millisecond), Ev: logs.LaunchStopping},
		logs.LaunchRecord{TS: at(102 * time.Millisecond), Ev: logs.LaunchEnd})
	for _, id := range ring {
		es := evs[id]
		// In time order, as a node writes them (a recv at 3 ms comes after the pulse at 1 ms).
		for i := 1; i < len(es); i++ {
			for j := i; j > 0 && es[j].TS < es[j-1].TS; j-- {
				es[j], es[j-1] = es[j-1], es[j]
			}
		}
		for i := range es {
			es[i].LC = uint64(i + 1)
		}
		run.Nodes[id] = &logs.NodeLog{Node: id, Events: es}
	}
	return run
}

// The stall and late lines of the grid's verdict, as the checker words them.
const (
	gridStall = "pulse 3 never completed: node 5 died at 15ms in pulse 2; its neighbours 2, 4, 6, 8 waited (a synchronizer waits for every neighbour: it is not fault-tolerant)"
	gridLate  = "node 2 received node 1's flood of pulse 1 at 11ms, in its pulse 2"
)

// graphVerdict is a verdict for graphRun: top leads; with sync, the synchronizer's measures of a
// stalled run with late messages.
func graphVerdict(top int, sync bool) *check.Verdict {
	v := &check.Verdict{Leader: &top, Algo: "floodmax", BeginNS: sim.DefaultBase, EndNS: sim.DefaultBase + int64(100*time.Millisecond),
		GraceMS: 200, TerminationBoundMS: 4000, SettleMS: 1000, OK: true}
	if sync {
		v.OK = false
		v.Properties = []check.Property{{Name: check.PropPulses, OK: false, Detail: gridStall}}
		v.Metrics.Sync = &check.SyncMetrics{Synchronizer: "alpha", Pulses: 3, Reached: 2, PulseMS: 10, PulsesPerSecond: 100,
			Messages: 24, Acks: 24, Control: 24, ByKind: map[string]int{"ack": 24, "safe": 24}, ControlPerPulse: 12, ExpectedPerPulse: 12, Ratio: 1,
			Late: []string{gridLate}, LateCount: 3, Stall: gridStall}
	}
	return v
}

// renderRun renders a run and its verdict into a page.
func renderRun(t testing.TB, run *logs.Run, v *check.Verdict) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, &Input{Dir: "/runs/graph", Run: run, Verdict: v, VerdictFrom: rundir.VerdictFile}); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var netSVGRe = regexp.MustCompile(`(?s)<svg class="net" id="network-graph".*?</svg>`)

// netSVG is the network's picture in a page; the test fails when there is none or when it is not
// well-formed XML (an SVG a browser would refuse or draw wrong).
func netSVG(t *testing.T, page string) string {
	t.Helper()
	svg := netSVGRe.FindString(page)
	if svg == "" {
		t.Fatal("the page has no network picture")
	}
	dec := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("the network picture is not well-formed XML: %v", err)
		}
	}
	return svg
}

// section is the page's <section id="id">, or "".
func section(page, id string) string {
	i := strings.Index(page, `<section id="`+id+`"`)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</section>")
	return page[i : i+j]
}

var nodeRe = regexp.MustCompile(`<g class="node n-(\w+)" data-id="(\d+)"><title>[^<]*</title><circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"/>`)

type drawnNode struct {
	state string
	x, y  float64
	r     float64
	g     string // the node's whole <g>
}

// drawnNodes reads the nodes of a network picture by ID.
func drawnNodes(t *testing.T, svg string) map[int]drawnNode {
	t.Helper()
	out := map[int]drawnNode{}
	for _, loc := range nodeRe.FindAllStringSubmatchIndex(svg, -1) {
		m := func(k int) string { return svg[loc[2*k]:loc[2*k+1]] }
		id, _ := strconv.Atoi(m(2))
		x, _ := strconv.ParseFloat(m(3), 64)
		y, _ := strconv.ParseFloat(m(4), 64)
		r, _ := strconv.ParseFloat(m(5), 64)
		end := strings.Index(svg[loc[0]:], "</g>")
		out[id] = drawnNode{state: m(1), x: x, y: y, r: r, g: svg[loc[0] : loc[0]+end]}
	}
	return out
}

func TestNetworkOfGrid(t *testing.T) {
	run := graphRun(t, "grid:3x3", 9, 3, 5)
	page := renderRun(t, run, graphVerdict(9, true))
	svg := netSVG(t, page)
	if got := strings.Count(svg, "<circle"); got != 9 {
		t.Errorf("%d node circles, want 9", got)
	}
	if got := strings.Count(svg, `class="edge"`); got != 12 {
		t.Errorf("%d edges, want 12 (a 3×3 grid)", got)
	}
	nodes := drawnNodes(t, svg)
	if len(nodes) != 9 {
		t.Fatalf("%d nodes read from the picture, want 9", len(nodes))
	}
	// Ring position p at row p/3, column p%3, evenly spaced.
	step := nodes[2].x - nodes[1].x
	for id := 1; id <= 9; id++ {
		p := id - 1
		n := nodes[id]
		if math.Abs(n.x-nodes[1].x-float64(p%3)*step) > 0.2 || math.Abs(n.y-nodes[1].y-float64(p/3)*step) > 0.2 || step <= 2*n.r {
			t.Errorf("n%d at (%g, %g), want row %d column %d of a lattice from (%g, %g) by %g", id, n.x, n.y, p/3, p%3, nodes[1].x, nodes[1].y, step)
		}
	}
	// The end states: 9 leads, 5 is dead, 3 believes in no one, the others follow 9.
	want := map[int]string{9: stLeader, 5: stDead, 3: stNone}
	for id := 1; id <= 9; id++ {
		w := want[id]
		if w == "" {
			w = stFollower
		}
		if nodes[id].state != w {
			t.Errorf("n%d drawn as %s, want %s", id, nodes[id].state, w)
		}
	}
	if !strings.Contains(nodes[5].g, `class="cross"`) || strings.Count(svg, `class="cross"`) != 1 {
		t.Error("the dead node has no cross, or another node has one")
	}
	// The last pulse each started: 3 for 1, 3, 7 and 9; 2 for node 5 and the neighbours that waited.
	for id := 1; id <= 9; id++ {
		p := "p3"
		if id%2 == 0 || id == 5 {
			p = "p2"
		}
		if !strings.Contains(nodes[id].g, `<text class="pulse"`) || !strings.Contains(nodes[id].g, ">"+p+"</text>") {
			t.Errorf("n%d is not labelled %s: %s", id, p, nodes[id].g)
		}
	}
	net := section(page, "network")
	for _, s := range []string{"grid:3x3: 9 nodes, 12 links", "the 3×3 lattice", "leader n9: 1", "follows it: 6", "no leader (⊥): 1", "dead at the end: 1"} {
		if !strings.Contains(net, s) {
			t.Errorf("the network section does not say %q", s)
		}
	}

	sync := section(page, "synchronizer")
	if sync == "" {
		t.Fatal("no synchronizer section")
	}
	for _, s := range []string{
		`<p class="stall"><b>Stalled:</b> ` + template.HTMLEscapeString(gridStall),
		"<li>" + template.HTMLEscapeString(gridLate) + "</li>",
		"<b>3 late message(s)</b>", "… and 2 more.",
		"<td>alpha</td>", "2 reached of 3", "10 ms per pulse, 100 pulses per second",
		"12 measured, 12 by the formula (ratio 1.00)", "ack 24, safe 24",
	} {
		if !strings.Contains(sync, s) {
			t.Errorf("the synchronizer section does not show %q", s)
		}
	}

	// Pulses are marks on their lanes, one per pulse event.
	d := BuildData(run, graphVerdict(9, true), "graph")
	marks := 0
	for _, y := range d.Marks.Y {
		if d.Types[y] == logs.EvPulse {
			marks++
		}
	}
	if evs := countEvents(run)[logs.EvPulse]; marks != evs || evs == 0 {
		t.Errorf("%d pulse marks, want one per pulse event (%d)", marks, evs)
	}

	// Still one self-contained page: nothing loaded from elsewhere, the data still embedded.
	if regexp.MustCompile(`(?i)https?://[^"]*\.(js|css)`).MatchString(page) || regexp.MustCompile(`(?i)<(script|link|img|image|use)[^>]+(src|href)=`).MatchString(page) {
		t.Error("the page loads something from elsewhere")
	}
	if !dataRe.MatchString(page) {
		t.Error("the page lost its embedded data")
	}
}

// A run on a mesh has no network picture, and one of an algorithm without pulses no synchronizer.
func TestNoNetworkForMesh(t *testing.T) {
	dir, _ := writeFixture(t)
	page, d := pageData(t, dir)
	if strings.Contains(page, `<section id="network"`) || strings.Contains(page, "network-graph") {
		t.Error("a mesh run has a network section")
	}
	if strings.Contains(page, `<section id="synchronizer"`) {
		t.Error("a Bully run has a synchronizer section")
	}
	for _, y := range d.Marks.Y {
		if d.Types[y] == logs.EvPulse {
			t.Fatal("a run without pulses has pulse marks")
		}
	}
}

// A torus draws its wrap-around links as stubs at both ends, not lines across the lattice.
func TestNetworkOfTorus(t *testing.T) {
	run := graphRun(t, "torus:3x4", 12, 2, 0)
	svg := netSVG(t, renderRun(t, run, graphVerdict(12, false)))
	if straight, wraps := strings.Count(svg, `class="edge"`), strings.Count(svg, `class="edge wrap"`); straight != 17 || wraps != 7 {
		t.Errorf("%d edges and %d wrapping around, want 17 and 7 (3 rows, 4 columns)", straight, wraps)
	}
	if got := strings.Count(svg, "<circle"); got != 12 {
		t.Errorf("%d node circles, want 12", got)
	}
}

// A tree is layered by depth from Ring[0], each parent over its children.
func TestNetworkOfTree(t *testing.T) {
	run := graphRun(t, "tree:2", 15, 2, 0)
	nodes := drawnNodes(t, netSVG(t, renderRun(t, run, graphVerdict(15, false))))
	if len(nodes) != 15 {
		t.Fatalf("%d nodes, want 15", len(nodes))
	}
	for id := 2; id <= 15; id++ {
		parent := nodes[(id-2)/2+1]
		if nodes[id].y <= parent.y+1 {
			t.Errorf("n%d at y %g is not below its parent n%d at %g", id, nodes[id].y, (id-2)/2+1, parent.y)
		}
	}
	for p := 1; p <= 7; p++ {
		l, r := nodes[2*p], nodes[2*p+1]
		if mid := (l.x + r.x) / 2; math.Abs(nodes[p].x-mid) > 0.2 || l.x >= r.x {
			t.Errorf("n%d at x %g is not centred over its children at %g and %g", p, nodes[p].x, l.x, r.x)
		}
	}
	for id := 8; id <= 15; id++ {
		if nodes[id].y != nodes[8].y {
			t.Errorf("leaf n%d at y %g, want the leaves' layer at %g", id, nodes[id].y, nodes[8].y)
		}
	}
}

// A random graph of 256 nodes: laid out the same every time, every node drawn with a readable
// circle, quickly enough for the report.
func TestNetworkOfLargeRandomGraph(t *testing.T) {
	run := graphRun(t, "random:3", 256, 2, 0)
	v := graphVerdict(256, false)
	start := time.Now()
	svg := netSVG(t, renderRun(t, run, v))
	took := time.Since(start)
	if again := netSVG(t, renderRun(t, run, v)); again != svg {
		t.Error("the layout differs between two renderings of one run")
	}
	nodes := drawnNodes(t, svg)
	if len(nodes) != 256 {
		t.Fatalf("%d nodes, want 256", len(nodes))
	}
	if r := nodes[1].r; r < 4 {
		t.Errorf("circles of radius %g: unreadable", r)
	}
	if got, want := strings.Count(svg, `class="edge"`), len(run.Cluster.Edges); got != want {
		t.Errorf("%d edges, want %d", got, want)
	}
	t.Logf("256 nodes, %d edges: rendered in %v, picture %d bytes", len(run.Cluster.Edges), took, len(svg))
}

// A two-way ring is drawn as a circle in ring order; a one-way ring's links point to successors.
func TestNetworkOfRings(t *testing.T) {
	for _, kind := range []string{topology.BiRing, topology.Ring} {
		run := graphRun(t, kind, 6, 2, 0)
		svg := netSVG(t, renderRun(t, run, graphVerdict(6, false)))
		if got := strings.Count(svg, `class="edge"`); got != 6 {
			t.Errorf("%s: %d links, want 6", kind, got)
		}
		if arrows := strings.Count(svg, `marker-end="url(#net-arrow)"`); (kind == topology.Ring) != (arrows == 6) {
			t.Errorf("%s: %d links with an arrowhead", kind, arrows)
		}
	}
}
