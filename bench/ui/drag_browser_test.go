package ui

import (
	"context"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// A drag across the cluster's picture cuts a partition: a simulated 5-node Bully run, a line drawn
// between nodes 4, 5 (left) and 1, 2, 3 (right) with the mouse, then Heal and Stop. chaos.jsonl has
// the partition with those sides and the heal, and check passes the run.
func TestBrowserLiveSimDragPartition(t *testing.T) {
	s := newTestServer(t)
	ctx := browse(t, s, 3*time.Minute)
	do(t, ctx, chromedp.SetValue(chromedp.ID("f-nodes"), "5"), chromedp.SetValue(chromedp.ID("f-seed"), "7"))
	do(t, ctx, chromedp.Click(chromedp.ID("start")))
	leaderShown(t, ctx, "#leader", 5, 30*time.Second)
	// The picture's box and the nodes' centres, in the page's coordinates.
	geo := js[[]float64](t, ctx, `(() => {
		const c = id => { const r = document.querySelector('#net g.node[data-id="' + id + '"] circle').getBoundingClientRect(); return r.left + r.width / 2; };
		const b = document.querySelector('#net').getBoundingClientRect();
		return [b.top, b.bottom, c(4), c(5), c(1), c(2), c(3)];
	})()`)
	if len(geo) != 7 {
		t.Fatalf("geometry %v", geo)
	}
	left, right := max(geo[2], geo[3]), min(geo[4], geo[5], geo[6])
	if left >= right {
		t.Fatalf("nodes 4 and 5 (x %v, %v) are not left of 1, 2, 3 (x %v, %v, %v): the layout changed", geo[2], geo[3], geo[4], geo[5], geo[6])
	}
	x, top, bottom := (left+right)/2, geo[0]+3, geo[1]-3
	do(t, ctx,
		chromedp.MouseEvent(chromedp.MouseMoved, x, top),
		chromedp.MouseEvent(chromedp.MousePressed, x, top, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(chromedp.MouseMoved, x, (top+bottom)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseMoved, x, bottom, chromedp.ButtonLeft),
		chromedp.MouseEvent(chromedp.MouseReleased, x, bottom, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(chromedp.CSS(`#faults li`))); err != nil {
		t.Fatalf("no fault listed after the drag: %v", err)
	}
	screenshot(t, ctx, "live-sim-drag")
	do(t, ctx, chromedp.Click(chromedp.ID("heal")))
	time.Sleep(300 * time.Millisecond)
	do(t, ctx, chromedp.Click(chromedp.ID("stop")), chromedp.WaitVisible(chromedp.ID("report-link")))
	dir, _, _ := s.current().hand.Run()
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var cut, healed bool
	for _, r := range run.Chaos {
		switch {
		case r.Op == "partition" && r.Error == "" && len(r.Groups) == 2:
			a, b := slices.Sorted(slices.Values(r.Groups[0])), slices.Sorted(slices.Values(r.Groups[1]))
			if a[0] != 1 {
				a, b = b, a
			}
			cut = slices.Equal(a, []int{1, 2, 3}) && slices.Equal(b, []int{4, 5})
		case r.Op == "heal" && r.Error == "":
			healed = true
		}
	}
	if !cut || !healed {
		t.Errorf("%s/chaos.jsonl: partition 1-3|4-5 %v, heal %v: %+v", dir, cut, healed, run.Chaos)
	}
	v, code, err := launcher.CheckVerdict(dir, io.Discard)
	if err != nil || code != launcher.ExitOK || v.Result() != check.OutcomePass {
		t.Errorf("check %s: exit %d, %v", dir, code, err)
	}
}
