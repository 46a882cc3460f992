//go:build linux

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	stdhtml "html"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/internal/browser"
	"github.com/leaderlab/leaderlab/logs"
)

// chromiumPath finds Debian's chromium; tests that need a browser skip without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := browser.Path(); p != "" {
		return p
	}
	t.Skip("no chromium (Debian: apt-get install -y chromium): the page's script is not run in a browser")
	return ""
}

const windowW, windowH = 1400, 1000

// chromium runs headless Chromium with a fresh profile on the page and returns its stdout. The
// browser's processes are a process group of their own, killed as one when it runs too long.
func chromium(t *testing.T, page string, args ...string) []byte {
	t.Helper()
	bin := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir(),
		"--window-size=" + strconv.Itoa(windowW) + "," + strconv.Itoa(windowH)}, args...)
	cmd := exec.CommandContext(ctx, bin, append(full, "file://"+page)...)
	// Chromium keeps its singleton socket in a directory of $TMPDIR that it leaves behind.
	cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v; its stderr ends:\n%s", err, tail(stderr.String(), 2000))
	}
	return stdout.Bytes()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// attr reads an attribute of the diagram's <svg> in a dumped DOM.
func attr(t *testing.T, dom, name string) int {
	t.Helper()
	m := regexp.MustCompile(`<svg id="diagram"[^>]*\s` + name + `="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the diagram has no %s: was it rendered by the script?", name)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// wholeRun is the page's address fragment for a view of the whole run (#view=FROM,TO in ms).
func wholeRun(d *Data) string {
	return fmt.Sprintf("#view=%.3f,%.3f", float64(d.From)/1000, float64(d.To)/1000)
}

func countClass(dom, class string) int {
	return len(regexp.MustCompile(`class="`+class+`[" ]`).FindAllStringIndex(dom, -1))
}

// The page's script draws the fixture: its lanes, an arrow per message, the faults and the
// partition, a marker per event.
func TestChromiumRendersFixture(t *testing.T) {
	chromiumPath(t)
	dir, run := writeFixture(t)
	_, d := pageData(t, dir)
	// The page opens on the first election; this test looks at the whole run.
	dom := string(chromium(t, filepath.Join(dir, "report.html")+wholeRun(d), "--dump-dom"))
	if attr(t, dom, "data-rendered") != 1 {
		t.Fatal("the diagram was not rendered")
	}
	evs := countEvents(run)
	checks := []struct {
		what      string
		got, want int
	}{
		{"lanes", countClass(dom, "lane"), 5},
		{"arrows", countClass(dom, "msg"), evs[logs.EvSend]},
		{"data-arrows", attr(t, dom, "data-arrows"), evs[logs.EvSend]},
		{"bundles", countClass(dom, "bundle"), 0},
		{"fault lines", countClass(dom, "fault"), len(run.Chaos)},
		{"partitions", countClass(dom, "partition"), 1},
		{"paused stretches", countClass(dom, "paused"), 1},
		// node 5's restart; the first incarnations start before the begin, left of the view
		{"incarnation marks", countClass(dom, "inc"), 1},
		{"event markers", countClass(dom, "mark"), len(d.Marks.T)},
		{"drop markers", countClass(dom, "mark mark-drop"), evs[logs.EvDrop]},
		{"leader markers", countClass(dom, "mark mark-leader"), evs[logs.EvLeader]},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d in the rendered DOM, want %d", c.what, c.got, c.want)
		}
	}
	if countClass(dom, "band") == 0 || countClass(dom, "dead") == 0 {
		t.Error("no belief bands or dead stretches drawn")
	}
	if m := regexp.MustCompile(`<p id="notice"[^>]*>([^<]*)</p>`).FindStringSubmatch(dom); m == nil || m[1] != "" {
		t.Errorf("notice %q: nothing is bundled at this size", m)
	}
}

// At 20,000 messages the whole-run view bundles the arrows, says so, and loses none: the bundles'
// counts add up to every message.
func TestChromiumBundlesAndSaysSo(t *testing.T) {
	chromiumPath(t)
	dir := filepath.Join(t.TempDir(), "synth")
	writeSynth(t, dir, 16, 20000)
	_, d := pageData(t, dir)
	dom := string(chromium(t, filepath.Join(dir, "report.html")+wholeRun(d), "--dump-dom"))
	bundles := attr(t, dom, "data-bundles")
	if bundles == 0 || attr(t, dom, "data-arrows") != 0 || countClass(dom, "bundle") != bundles {
		t.Fatalf("bundles %d (drawn %d), arrows %d: want bundles only", bundles, countClass(dom, "bundle"), attr(t, dom, "data-arrows"))
	}
	total := 0
	for _, m := range regexp.MustCompile(`class="bundle"[^>]*data-n="(\d+)"`).FindAllStringSubmatch(dom, -1) {
		n, _ := strconv.Atoi(m[1])
		total += n
	}
	if total != 20000 || attr(t, dom, "data-in-view") != 20000 {
		t.Errorf("the bundles hold %d messages of the %d in view, want 20000", total, attr(t, dom, "data-in-view"))
	}
	if !strings.Contains(dom, "Bundled: the 20,000 messages in view are drawn as") {
		t.Error("the page does not say that it bundled the arrows")
	}
}

func TestChromiumScreenshot(t *testing.T) {
	chromiumPath(t)
	dir, _ := writeFixture(t)
	if _, err := WriteFile(dir, must(Load(dir))); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	chromium(t, filepath.Join(dir, "report.html")+"#view=995,1030", "--screenshot="+shot, "--hide-scrollbars")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != windowW || b.Dy() != windowH {
		t.Errorf("screenshot %v, want %dx%d", b, windowW, windowH)
	}
	colours := map[uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y += 4 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 4 {
			r, g, b, _ := img.At(x, y).RGBA()
			colours[r>>11<<10|g>>11<<5|b>>11] = true
		}
	}
	if len(colours) < 30 {
		t.Errorf("the screenshot has %d colours: a blank page?", len(colours))
	}
	if out := os.Getenv("LEADERLAB_SCREENSHOT"); out != "" {
		b, _ := os.ReadFile(shot)
		os.WriteFile(out, b, 0o644)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// driveScript is appended to a copy of a report: it records what the diagram shows as it opens,
// then acts as a user would (a click on a message kind in the legend, on it again, on a lane's name,
// on the hidden-lanes bar's button, on "whole run") and records each result, as JSON in
// <pre id="drive">. For every view it measures the axis labels' boxes in the browser.
const driveScript = `<script>
(function () {
  var svg = document.getElementById("diagram"), D = JSON.parse(document.getElementById("report-data").textContent), out = {};
  function snap(name) {
    var W = +svg.getAttribute("viewBox").split(" ")[2], left = 1e9, right = -1e9, kinds = {}, lanes = {};
    document.querySelectorAll("#diagram .layer-axis text").forEach(function (t) {
      var b = t.getBBox(); left = Math.min(left, b.x); right = Math.max(right, b.x + b.width);
    });
    document.querySelectorAll("#diagram .msg").forEach(function (a) {
      var i = +a.getAttribute("data-i"); kinds[D.msgs.k[i]] = 1; lanes[D.msgs.f[i]] = 1; lanes[D.msgs.t[i]] = 1;
    });
    out[name] = { view: svg.getAttribute("data-view"), arrows: document.querySelectorAll("#diagram .msg").length,
      bundles: +svg.getAttribute("data-bundles"), splits: document.querySelectorAll("#diagram .splitbrain").length,
      stops: document.querySelectorAll("#diagram .runstop").length, lanes: document.querySelectorAll("#diagram .lane").length,
      kinds: Object.keys(kinds).map(Number), arrowLanes: Object.keys(lanes).map(Number), width: W, axisLeft: left, axisRight: right,
      hiddenBar: !document.getElementById("hidden-lanes").hidden, opened: document.getElementById("opened").textContent };
  }
  var render = window.leaderlabReport.render;
  snap("initial");
  document.querySelector('.toolbar button[data-act="fit"]').click(); render(); snap("whole");
  var kind = document.querySelector("#legend .item.kind"); out.kind = +kind.getAttribute("data-kind");
  kind.click(); snap("kindHidden");
  kind.click(); snap("kindShown");
  var hit = document.querySelector('#diagram .lanehit[data-lane="1"]');
  hit.dispatchEvent(new PointerEvent("pointerdown", { bubbles: true, button: 0 })); snap("laneHidden");
  document.querySelector("#hidden-lanes button").click(); snap("laneShown");
  var ot = document.getElementById("over-time-chart"), otW = +ot.getAttribute("viewBox").split(" ")[2], otL = 1e9, otR = -1e9;
  var otBox = ot.getBoundingClientRect(), otK = otW / otBox.width;
  ot.querySelectorAll("text").forEach(function (t) {
    var b = t.getBoundingClientRect(); otL = Math.min(otL, (b.left - otBox.left) * otK); otR = Math.max(otR, (b.right - otBox.left) * otK);
  });
  out.overTimeText = [otL, otR, otW];
  var bar = ot.querySelector('.ot-election[data-n="1"]'); out.overTimeBar = [+bar.getAttribute("data-a"), +bar.getAttribute("data-b")];
  bar.dispatchEvent(new MouseEvent("click", { bubbles: true })); render(); snap("overTimeClick");
  var pre = document.createElement("pre"); pre.id = "drive"; pre.textContent = JSON.stringify(out); document.body.appendChild(pre);
})();
</script>`

type driveView struct {
	View       string  `json:"view"`
	Arrows     int     `json:"arrows"`
	Bundles    int     `json:"bundles"`
	Splits     int     `json:"splits"`
	Stops      int     `json:"stops"`
	Lanes      int     `json:"lanes"`
	Kinds      []int   `json:"kinds"`
	ArrowLanes []int   `json:"arrowLanes"`
	Width      float64 `json:"width"`
	AxisLeft   float64 `json:"axisLeft"`
	AxisRight  float64 `json:"axisRight"`
	HiddenBar  bool    `json:"hiddenBar"`
	Opened     string  `json:"opened"`
}

// drive renders the report of dir, runs driveScript on it in Chromium and returns what it recorded:
// the views, the message kind it hid, and what it measured of the Over time chart (overTimeText: the
// left and right of its texts' boxes and its width; overTimeBar: election #1's bar's data-a, data-b).
func drive(t *testing.T, dir string) (map[string]driveView, int, map[string][]float64) {
	t.Helper()
	html, _ := pageData(t, dir)
	page := filepath.Join(dir, "drive.html")
	if err := os.WriteFile(page, []byte(strings.Replace(html, "</body>", driveScript+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, page, "--dump-dom"))
	m := regexp.MustCompile(`<pre id="drive">([^<]*)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("the driving script left no result: did the page's script fail?")
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdhtml.UnescapeString(m[1])), &out); err != nil {
		t.Fatal(err)
	}
	views := map[string]driveView{}
	measured := map[string][]float64{}
	kind := 0
	for k, raw := range out {
		if k == "kind" {
			json.Unmarshal(raw, &kind)
			continue
		}
		if strings.HasPrefix(k, "overTime") && k != "overTimeClick" {
			var xs []float64
			json.Unmarshal(raw, &xs)
			measured[k] = xs
			continue
		}
		var v driveView
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		views[k] = v
	}
	return views, kind, measured
}

// The partitioned run of the user's report, in a browser: the page opens on the first election with
// its arrows in sight, "whole run" shows everything with the split-brain window shaded and the run's
// stop, axis labels stay inside the drawing, and the legend and the lane names filter the arrows.
func TestChromiumViewsTheVerdict(t *testing.T) {
	chromiumPath(t)
	dir, _, _ := partitionRun(t)
	_, d := pageData(t, dir)
	views, kind, measured := drive(t, dir)
	first, whole := views["initial"], views["whole"]
	if first.View != fmt.Sprintf("%d,%d", d.Initial.From, d.Initial.To) || first.Arrows == 0 || first.Bundles != 0 || !strings.Contains(first.Opened, "election #1") {
		t.Errorf("the page opens on %+v, want election #1 (%+v) with its arrows", first, d.Initial)
	}
	if whole.View != fmt.Sprintf("%d,%d", d.From, d.To) || whole.Arrows != len(d.Msgs.S) || whole.Splits != len(d.SplitBrain) || whole.Splits == 0 || whole.Stops != 1 {
		t.Errorf("\"whole run\" shows %+v, want %d arrows, %d split-brain window(s), the stop", whole, len(d.Msgs.S), len(d.SplitBrain))
	}
	for name, v := range views {
		if v.AxisLeft < 0 || v.AxisRight > v.Width {
			t.Errorf("%s: the axis labels span %.1f..%.1f, outside the drawing's 0..%.0f", name, v.AxisLeft, v.AxisRight, v.Width)
		}
	}
	if h := views["kindHidden"]; slices.Contains(h.Kinds, kind) || h.Arrows == 0 || h.Arrows >= whole.Arrows {
		t.Errorf("with kind %d hidden: %+v", kind, h)
	}
	if v := views["kindShown"]; v.Arrows != whole.Arrows {
		t.Errorf("kind %d shown again: %d arrows, want %d", kind, v.Arrows, whole.Arrows)
	}
	if h := views["laneHidden"]; h.Lanes != len(d.Lanes)-1 || slices.Contains(h.ArrowLanes, 1) || !h.HiddenBar || h.Arrows == 0 {
		t.Errorf("with lane 1 hidden: %+v", h)
	}
	if v := views["laneShown"]; v.Lanes != len(d.Lanes) || v.Arrows != whole.Arrows || v.HiddenBar {
		t.Errorf("lane 1 shown again: %+v", v)
	}
	// The Over time chart: its labels inside it as the browser lays them out; a click on election
	// #1's bar shows it in the diagram.
	if x := measured["overTimeText"]; len(x) != 3 || x[0] < 0 || x[1] > x[2] {
		t.Errorf("the Over time chart's texts span %v, outside the drawing", x)
	}
	var a, b int64
	fmt.Sscanf(views["overTimeClick"].View, "%d,%d", &a, &b)
	if bar := measured["overTimeBar"]; len(bar) != 2 || float64(a) > bar[0] || float64(b) < bar[1] || b-a > d.To-d.From {
		t.Errorf("a click on election #1's bar %v shows %s in the diagram", bar, views["overTimeClick"].View)
	}
}
