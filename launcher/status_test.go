package launcher

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

func TestStatusLine(t *testing.T) {
	ids := func(from, to int) []int {
		var out []int
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	// Half the nodes follow 250 and the other half elect, every other ID: lists of 125 each.
	big := map[int][]int{}
	for id := 1; id <= 250; id++ {
		big[250*(id%2)] = append(big[250*(id%2)], id)
	}
	for _, c := range []struct {
		name  string
		s     status
		width int
		want  string
	}{
		{"before any answer", status{Elapsed: 30 * time.Millisecond, Up: 5, Total: 5}, 80,
			"+0.0s | 5/5 up | no node answers yet"},
		{"agreed", status{Elapsed: 3456 * time.Millisecond, Up: 5, Total: 5, Answered: true, Groups: map[int][]int{5: {5, 1, 2, 3, 4}}}, 80,
			"+3.5s | 5/5 up | leader 5: 1-5"},
		{"failover under way", status{Elapsed: 1005 * time.Millisecond, Up: 4, Total: 5, Answered: true,
			Groups: map[int][]int{0: {3}, 4: {1, 2, 4}}, LastFault: "+1.002s kill 5 (leader)"}, 100,
			"+1.0s | 4/5 up | leader 4: 1,2,4; electing: 3 | last fault +1.002s kill 5 (leader)"},
		{"split brain and a pause", status{Elapsed: 2600 * time.Millisecond, Up: 3, Paused: 1, Total: 5, Answered: true,
			Groups: map[int][]int{5: {5}, 2: {1, 2}, 4: {4}}, LastFault: "+2.501s pause 3"}, 100,
			"+2.6s | 3/5 up, 1 paused | leader 5: 5; leader 4: 4; leader 2: 1,2 | last fault +2.501s pause 3"},
		{"nobody answers", status{Elapsed: time.Second, Total: 3, Answered: true, Groups: map[int][]int{}}, 80,
			"+1.0s | 0/3 up | no node answers"},
		{"the last fault is cut first", status{Elapsed: 1005 * time.Millisecond, Up: 4, Total: 5, Answered: true,
			Groups: map[int][]int{0: {3}, 4: {1, 2, 4}}, LastFault: "+1.002s kill 5 (leader)"}, 60,
			"+1.0s | 4/5 up | leader 4: 1,2,4; electing: 3 | last fault …"},
		{"lists give way to counts", status{Elapsed: 9 * time.Second, Up: 250, Total: 256, Answered: true, Groups: big,
			LastFault: "+8.000s partition 1-128|129-256"}, 110,
			"+9.0s | 250/256 up | leader 250: 125 nodes; electing: 125 nodes | last fault +8.000s partition 1-128|129-256"},
		{"then the line is cut", status{Elapsed: 9 * time.Second, Up: 250, Total: 256, Answered: true, Groups: big,
			LastFault: "+8.000s partition 1-128|129-256"}, 60,
			"+9.0s | 250/256 up | leader 250: 125 nodes; electing: 125 n…"},
		{"a narrow terminal", status{Elapsed: time.Second, Up: 5, Total: 5, Answered: true, Groups: map[int][]int{5: ids(1, 5)}}, 12,
			"+1.0s | 5/5…"},
	} {
		got := statusLine(c.s, c.width)
		if got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > c.width {
			t.Errorf("%s: %d columns, width %d", c.name, n, c.width)
		}
	}
}

func TestIDRanges(t *testing.T) {
	for in, want := range map[string]string{
		"1":                "1",
		"1 2":              "1,2",
		"3 1 2":            "1-3",
		"1 2 4":            "1,2,4",
		"1 2 3 5 7 8 9 10": "1-3,5,7-10",
	} {
		var ids []int
		for _, f := range strings.Fields(in) {
			ids = append(ids, atoi(t, f))
		}
		if got := idRanges(ids); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

func atoi(t *testing.T, s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// A live console keeps its status line last: a line printed meanwhile clears it, goes above, and
// the status line is drawn again; clear removes it. A console that is not live prints lines only.
func TestConsole(t *testing.T) {
	var buf bytes.Buffer
	c := &console{w: &buf, live: true, width: func() int { return 40 }}
	c.println("leaderlab: 5/5 nodes ready in 20ms")
	s := status{Elapsed: time.Second, Up: 5, Total: 5, Answered: true, Groups: map[int][]int{5: {1, 2, 3, 4, 5}}}
	c.show(s)
	c.println("leaderlab: +1.002s kill 5 (leader)")
	s.Up, s.LastFault = 4, "+1.002s kill 5 (leader)"
	c.show(s)
	c.clear()
	c.println("leaderlab: +5.001s stopping the nodes")
	want := "leaderlab: 5/5 nodes ready in 20ms\n" +
		"\r+1.0s | 5/5 up | leader 5: 1-5\x1b[K" +
		"\r\x1b[Kleaderlab: +1.002s kill 5 (leader)\n+1.0s | 5/5 up | leader 5: 1-5" +
		"\r+1.0s | 4/5 up | leader 5: 1-5 | last …\x1b[K" +
		"\r\x1b[K" +
		"leaderlab: +5.001s stopping the nodes\n"
	if got := buf.String(); got != want {
		t.Errorf("live console wrote\n%q\nwant\n%q", got, want)
	}

	buf.Reset()
	plain := newConsole(&buf)
	plain.println("a line")
	plain.show(s)
	plain.clear()
	if plain.live || buf.String() != "a line\n" {
		t.Errorf("a buffer's console: live %v, wrote %q", plain.live, buf.String())
	}
}

// /dev/null is a character device but no terminal: the status line is for terminals only.
func TestNotATerminal(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	if newConsole(f).live {
		t.Error("/dev/null counts as a terminal")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if newConsole(w).live {
		t.Error("a pipe counts as a terminal")
	}
}

func TestVClockChoice(t *testing.T) {
	for _, c := range []struct {
		mode string
		n    int
		on   bool
	}{
		{VClockAuto, 5, true}, {VClockAuto, wire.AutoClockNodes, true}, {VClockAuto, wire.AutoClockNodes + 1, false},
		{"", 5, true}, {VClockOn, 256, true}, {VClockOff, 3, false},
	} {
		if got := vclockOn(c.mode, c.n); got != c.on {
			t.Errorf("--vclock %q with %d nodes: on = %v", c.mode, c.n, got)
		}
	}
	cfg := DefaultConfig()
	cfg.VClock = "yes"
	if err := cfg.validate(); err == nil || !strings.Contains(err.Error(), "Config.VClock") {
		t.Errorf("--vclock yes: %v", err)
	}

	// cluster.json records the choice; the run's own options stay as they were.
	cfg = DefaultConfig()
	cfg.Nodes, cfg.Chaos, cfg.Options = 65, "", map[string]string{"x": "y"}
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.cluster.Options[wire.ClockOption] != "off" || p.cluster.Options["x"] != "y" || len(cfg.Options) != 1 {
		t.Errorf("65 nodes, auto: options %v (config's %v)", p.cluster.Options, cfg.Options)
	}
	cfg.VClock = VClockOn
	if p, _ = resolve(cfg); p.cluster.Options[wire.ClockOption] != "on" {
		t.Errorf("--vclock on: options %v", p.cluster.Options)
	}
}

// A replay keeps the run's choice, whatever the threshold says now.
func TestReplayKeepsVClock(t *testing.T) {
	dir := t.TempDir()
	c := &rundir.Cluster{ClusterID: "abc", Algo: "bully", Topology: "mesh", Placement: "ascending", Ring: []int{1, 2},
		InitiatorsSpec: "all", Initiators: []int{1, 2},
		Nodes:   []rundir.Node{{ID: 1, Addr: "127.0.0.1:4001"}, {ID: 2, Addr: "127.0.0.1:4002"}},
		Options: map[string]string{wire.ClockOption: "off"}}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := ReplayConfig(dir, DefaultConfig())
	if err != nil || cfg.VClock != VClockOff {
		t.Errorf("replay of a run with vclock off: %q, %v", cfg.VClock, err)
	}
}

// TestProgressView: the progress line off a terminal names the nodes in ranges, and dates the view
// by the nodes' own changes when the poll that saw it came much later.
func TestProgressView(t *testing.T) {
	st := map[int]wire.CtlReply{}
	for id := 1; id <= 1000; id++ {
		st[id] = wire.CtlReply{Node: id, Leader: 1000}
	}
	st[7] = wire.CtlReply{Node: 7}
	if got, want := describe(st), "leader 1000: nodes 1-6,8-1000; electing: 7"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	r := &runner{plan: &plan{cluster: &rundir.Cluster{}}, begin: time.Now().Add(-4 * time.Second)}
	st[3] = wire.CtlReply{Node: 3, Leader: 1000, Since: r.begin.Add(700 * time.Millisecond).UnixNano()}
	st[9] = wire.CtlReply{Node: 9, Leader: 1000, Since: r.begin.Add(500 * time.Millisecond).UnixNano()}
	if got := r.viewSince(st); !strings.HasPrefix(got, "+0.700s (seen +4.0") {
		t.Errorf("viewSince = %q, want +0.700s (seen +4.0…s)", got)
	}
	st[3] = wire.CtlReply{Node: 3, Leader: 1000, Since: time.Now().UnixNano()}
	if got := r.viewSince(st); strings.Contains(got, "seen") {
		t.Errorf("viewSince of a fresh view = %q, want the poll's time alone", got)
	}
}

func TestDetectorScale(t *testing.T) {
	for _, c := range []struct {
		perHost     int
		answerWaits bool
		want        int
	}{{1, false, 1}, {100, false, 1}, {101, false, 2}, {256, false, 3}, {1000, false, 10}, {2000, false, 20},
		{100, true, 1}, {101, true, 2}, {150, true, 3}, {200, true, 4}, {500, true, 25}} {
		if got := DetectorScale(c.perHost, c.answerWaits); got != c.want {
			t.Errorf("DetectorScale(%d, %v) = %d, want %d", c.perHost, c.answerWaits, got, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Chaos, cfg.ScaleDetector = "chang-roberts", 300, "", true
	p, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.cluster.Heartbeat.D() != 150*time.Millisecond || p.cluster.Timeout.D() != 600*time.Millisecond || p.cluster.Grace.D() != 600*time.Millisecond {
		t.Errorf("300 nodes on a host: heartbeat %v timeout %v grace %v, want 150ms 600ms 600ms", p.cluster.Heartbeat, p.cluster.Timeout, p.cluster.Grace)
	}
	cfg.Sim = true
	if p, err = resolve(cfg); err != nil || p.cluster.Heartbeat.D() != 50*time.Millisecond {
		t.Errorf("a simulated run is not scaled: %v %v", p.cluster.Heartbeat, err)
	}
}

// The console writes the ring order compactly, in its order: runs of consecutive IDs as ranges.
func TestRingShown(t *testing.T) {
	for _, tc := range []struct {
		ring []int
		want string
	}{
		{[]int{1, 2, 3, 4, 5}, "[1-5]"},
		{[]int{5, 4, 3, 2, 1}, "[5-1]"},
		{[]int{3, 1, 2, 5, 4}, "[3 1 2 5 4]"},
		{[]int{7, 1, 2, 3, 6, 5, 4}, "[7 1-3 6-4]"},
		{seqOf(1000), "[1-1000]"},
	} {
		if got := ringShown(tc.ring); got != tc.want {
			t.Errorf("ringShown(%v) = %q, want %q", tc.ring, got, tc.want)
		}
	}
	zig := make([]int, 40) // no run at all: the start, and what is left out
	for i := range zig {
		zig[i] = (i*7)%40 + 1
	}
	if got := ringShown(zig); !strings.HasSuffix(got, "… and 24 more in cluster.json]") {
		t.Errorf("ringShown of 40 scattered IDs = %q", got)
	}
}

func seqOf(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}
