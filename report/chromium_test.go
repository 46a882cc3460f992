//go:build linux

package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// chromiumPath finds Debian's chromium; tests that need a browser skip without it.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
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

func countClass(dom, class string) int {
	return len(regexp.MustCompile(`class="`+class+`[" ]`).FindAllStringIndex(dom, -1))
}

// The page's script draws the fixture: its lanes, an arrow per message, the faults and the
// partition, a marker per event.
func TestChromiumRendersFixture(t *testing.T) {
	chromiumPath(t)
	dir, run := writeFixture(t)
	_, d := pageData(t, dir)
	dom := string(chromium(t, filepath.Join(dir, "report.html"), "--dump-dom"))
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
	if _, err := WriteFile(dir, must(Load(dir))); err != nil {
		t.Fatal(err)
	}
	dom := string(chromium(t, filepath.Join(dir, "report.html"), "--dump-dom"))
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
