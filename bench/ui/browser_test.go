package ui

// Tests that drive the page in headless Chromium (chromedp): a run started from the page, its
// leader killed by a click, the new leader on the page, the run directory judged; step mode
// forward and back; an explorer trace stepped through; screenshots of every view. Without
// chromium they are skipped, unless CI=true: then they fail, for CI installs it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/internal/browser"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// chromium finds Debian's chromium.
func chromium(t *testing.T) string {
	t.Helper()
	if p := browser.Path(); p != "" {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no chromium, and CI=true: CI installs it (.ci/run: apt-get install chromium); the browser tests must run")
	}
	t.Skip("no chromium (Debian: apt-get install -y chromium): the page is not driven in a browser")
	return ""
}

// browse opens a headless Chromium on the server's page; the test's end closes the browser.
func browse(t *testing.T, s *Server, limit time.Duration) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1400, 1100),
		chromedp.Flag("enable-precise-memory-info", true),
		// Chromium keeps its singleton socket in a directory of $TMPDIR that it leaves behind.
		chromedp.Env("TMPDIR="+t.TempDir()))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, limit)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	do(t, ctx, chromedp.Navigate(s.URL()), chromedp.WaitVisible(chromedp.ID("start")))
	return ctx
}

// do runs actions in the page, failing the test on an error.
func do(t *testing.T, ctx context.Context, acts ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, acts...); err != nil {
		t.Fatal(err)
	}
}

// js evaluates an expression in the page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// shots is where the screenshots go: $LEADERLAB_SCREENSHOTS, or the test's temporary directory.
func shots(t *testing.T) string {
	if d := os.Getenv("LEADERLAB_SCREENSHOTS"); d != "" {
		_ = os.MkdirAll(d, 0o755)
		return d
	}
	return t.TempDir()
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(shots(t), name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("screenshot: %s", path)
}

// leaderShown waits until the page shows leader id, and returns how long that took.
func leaderShown(t *testing.T, ctx context.Context, sel string, id int, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`%s[data-leader="%d"]`, sel, id)))); err != nil {
		shown, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		t.Fatalf("the page did not show leader %d within %v (it shows %q): %v", id, within, shown, err)
	}
	return time.Since(start)
}

// killLeaderFromThePage starts a 5-node Bully run from the page, clicks the leader's kill, waits for
// the new leader on the page, stops the run and returns its directory.
func killLeaderFromThePage(t *testing.T, s *Server, sim bool, name string) string {
	ctx := browse(t, s, 3*time.Minute)
	do(t, ctx, chromedp.SetValue(chromedp.ID("f-nodes"), "5"), chromedp.SetValue(chromedp.ID("f-seed"), "7"))
	if !sim {
		do(t, ctx, chromedp.Click(chromedp.ID("f-sim")))
	}
	do(t, ctx, chromedp.Click(chromedp.ID("start")))
	leaderShown(t, ctx, "#leader", 5, 30*time.Second)
	screenshot(t, ctx, name+"-before")
	lr := s.current()
	_, c, _ := lr.hand.Run()
	bound := c.TerminationBound.D() // the run's failover bound: an elect ends in a leader within it
	do(t, ctx, chromedp.Click(chromedp.CSS(`#net g.node[data-id="5"] circle`)), chromedp.WaitVisible(chromedp.ID("act-kill")))
	clicked := time.Now()
	do(t, ctx, chromedp.Click(chromedp.ID("act-kill")))
	took := leaderShown(t, ctx, "#leader", 4, bound+2*time.Second)
	t.Logf("%s: the page showed the new leader %v after the click on kill (the failover bound is %v)", name, time.Since(clicked).Round(time.Millisecond), bound)
	if !sim {
		for _, r := range chaosRecords(lr) {
			if r.Op == "kill" {
				t.Logf("%s: the kill's SIGKILL went out %v after the click", name, time.Unix(0, r.TS).Sub(clicked).Round(10*time.Microsecond))
			}
		}
	}
	if took > bound {
		t.Errorf("the new leader showed %v after the kill, past the failover bound %v", took, bound)
	}
	screenshot(t, ctx, name+"-after")
	do(t, ctx, chromedp.Click(chromedp.ID("stop")), chromedp.WaitVisible(chromedp.ID("report-link")))
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, name+"-verdict")
	if !strings.Contains(verdict, "PASS") {
		t.Errorf("the page's verdict: %s", verdict)
	}
	dir, _, _ := lr.hand.Run()
	return dir
}

// chaosRecords reads a real live run's chaos.jsonl so far.
func chaosRecords(lr *liveRun) []logs.ChaosRecord {
	dir, _, _ := lr.hand.Run()
	b, _ := os.ReadFile(filepath.Join(dir, rundir.ChaosFile))
	var out []logs.ChaosRecord
	for _, line := range strings.Split(string(b), "\n") {
		var r logs.ChaosRecord
		if json.Unmarshal([]byte(line), &r) == nil {
			out = append(out, r)
		}
	}
	return out
}

// judged checks that the run directory's chaos.jsonl has the kill of 5, that cluster.json's
// schedule has it (for run --replay), and that check passes the run.
func judged(t *testing.T, dir string) {
	t.Helper()
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	kill := false
	for _, r := range run.Chaos {
		if r.Op == "kill" && len(r.Targets) == 1 && r.Targets[0] == 5 && r.Error == "" {
			kill = true
		}
	}
	if !kill {
		t.Errorf("%s/chaos.jsonl has no kill of node 5: %+v", dir, run.Chaos)
	}
	c, _ := rundir.Load(dir)
	if !strings.Contains(c.Chaos, "kill 5") {
		t.Errorf("cluster.json's chaos %q lacks the hand kill (run --replay would not make it)", c.Chaos)
	}
	v, code, err := launcher.CheckVerdict(dir, io.Discard)
	if err != nil || code != launcher.ExitOK || v.Result() != check.OutcomePass {
		t.Errorf("check %s: exit %d, %v", dir, code, err)
	}
}

// A simulated 5-node Bully run started from the page: the leader killed by a click, the new
// leader on the page within the failover bound, the kill in chaos.jsonl, and check passes it.
func TestBrowserLiveSimKillLeader(t *testing.T) {
	s := newTestServer(t)
	judged(t, killLeaderFromThePage(t, s, true, "live-sim"))
}

// buildLeaderlab builds the leaderlab binary (the nodes of a real run run it).
func buildLeaderlab(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "leaderlab")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// The same on real processes.
func TestBrowserLiveRealKillLeader(t *testing.T) {
	chromium(t)
	s, err := New(Config{Runs: filepath.Join(t.TempDir(), "runs"), Binary: buildLeaderlab(t)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	defer s.Close()
	judged(t, killLeaderFromThePage(t, s, false, "live-real"))
}

// nodeStates reads the step view's node states from the picture: "1:electing 2:idle ...".
func nodeStates(t *testing.T, ctx context.Context) string {
	return js[string](t, ctx, `[...document.querySelectorAll('#s-net g.node')].map(g => g.dataset.id + ':' + g.dataset.st).join(' ')`)
}

// Step mode: deliver messages one at a time (firing a timer when none is in flight) until the page
// shows a leader, then back one step: the page shows the state before that step.
func TestBrowserStepDeliverThenBack(t *testing.T) {
	s := newTestServer(t)
	ctx := browse(t, s, 2*time.Minute)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="step"]`)),
		chromedp.SetValue(chromedp.ID("s-algo"), "chang-roberts"), chromedp.SetValue(chromedp.ID("s-nodes"), "5"),
		chromedp.Click(chromedp.ID("s-start")), chromedp.WaitVisible(chromedp.ID("s-bar")))
	var before, after string
	for k := 0; ; k++ {
		if k > 200 {
			t.Fatal("no leader after 200 steps")
		}
		if leader := js[string](t, ctx, `document.getElementById('s-leader').dataset.leader`); leader != "0" {
			after = nodeStates(t, ctx)
			t.Logf("leader %s shown after %d steps: %s", leader, k, after)
			break
		}
		before = nodeStates(t, ctx)
		done := js[int](t, ctx, `document.querySelectorAll('#s-done li').length`)
		sel := `button.deliver:not([disabled])`
		if js[int](t, ctx, `document.querySelectorAll('button.deliver:not([disabled])').length`) == 0 {
			sel = `button.fire`
		}
		do(t, ctx, chromedp.Click(chromedp.CSS(sel)))
		// the page has taken the step once the list of what was done grew
		do(t, ctx, chromedp.WaitVisible(chromedp.CSS(fmt.Sprintf(`#s-done li:nth-child(%d)`, done+1))))
	}
	t.Logf("the steps taken: %s", js[string](t, ctx, `[...document.querySelectorAll('#s-done li')].map(li => li.textContent).join('; ')`))
	screenshot(t, ctx, "step-leader")
	do(t, ctx, chromedp.Click(chromedp.ID("s-back")), chromedp.WaitVisible(chromedp.CSS(`#s-leader[data-leader="0"]`)))
	if got := nodeStates(t, ctx); got != before {
		t.Errorf("back one step shows %q, want the earlier state %q (after the step: %q)", got, before, after)
	}
	screenshot(t, ctx, "step-back")
}

// An explorer counterexample opened from the traces view and stepped through: every step's
// beliefs are the trace's.
func TestBrowserExplorerTrace(t *testing.T) {
	s := newTestServer(t)
	out := filepath.Join(s.cfg.Runs, "explore-bully")
	cmd := exec.Command(buildLeaderlab(t), "explore", "-a", "bully", "-n", "3", "--timers", "async", "--max-states", "20000", "--out", out)
	if b, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(b), "MessageBound") {
		t.Fatalf("explore found no MessageBound violation: %v\n%s", err, b)
	}
	ctx := browse(t, s, 2*time.Minute)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="traces"]`)), chromedp.WaitVisible(chromedp.CSS(`button.open-trace`)))
	screenshot(t, ctx, "traces")
	n := js[int](t, ctx, `[...document.querySelectorAll('#trace-list tr')].findIndex(r => r.textContent.includes('MessageBound'))`)
	if n < 1 {
		t.Fatalf("no MessageBound row in the traces view")
	}
	do(t, ctx, chromedp.Click(chromedp.CSS(fmt.Sprintf(`#trace-list tr:nth-child(%d) button.open-trace`, n+1))),
		chromedp.WaitVisible(chromedp.CSS(`#trace-steps li[data-n="4"]`)),
		chromedp.Click(chromedp.CSS(`#trace-steps li[data-n="4"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#trace-steps li.at[data-n="4"]`)))
	differs := js[int](t, ctx, `document.querySelectorAll('#trace-steps li.differs').length`)
	if states := nodeStates(t, ctx); differs != 0 || states != "1:electing 2:electing 3:leader" {
		t.Errorf("after step 4 of the trace: %d steps differ from the trace, states %q (want 1 and 2 electing, 3 leading)", differs, states)
	}
	screenshot(t, ctx, "trace-step4")
}

// The runs view lists the runs, and each run's report opens from it.
func TestBrowserRunsAndReport(t *testing.T) {
	s := newTestServer(t)
	cfg := launcher.DefaultConfig()
	cfg.Sim, cfg.Seed, cfg.SeedSet = true, 3, true
	cfg.Out = filepath.Join(s.cfg.Runs, "sim-bully")
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	if _, err := launcher.Launch(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	ctx := browse(t, s, time.Minute)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="runs"]`)), chromedp.WaitVisible(chromedp.CSS(`#runs-table a`)))
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("runs-table")))
	if err != nil || !strings.Contains(text, "PASS") || !strings.Contains(text, "sim-bully") {
		t.Errorf("the runs view: %q (%v)", text, err)
	}
	screenshot(t, ctx, "runs")
	href := js[string](t, ctx, `document.querySelector('#runs-table a').href`)
	do(t, ctx, chromedp.Navigate(href), chromedp.WaitVisible(chromedp.ID("diagram")))
	screenshot(t, ctx, "report")
}
