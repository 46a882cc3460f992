package ui

// The figures of the lab's page (docs/ui.md): how many events a second the page takes in without
// falling behind, and its memory after a 5-minute run. A measurement, not a check: it runs only
// with LEADERLAB_UI_FIGURES=1 and prints what it measured.

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func post(t *testing.T, s *Server, path, body string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://"+s.Addr().String()+path, strings.NewReader(body))
	req.Header.Set(TokenHeader, s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s %s: HTTP %d %s", path, body, resp.StatusCode, b)
	}
	return string(b)
}

type pageStats struct {
	Events    int     `json:"events"`
	Batches   int     `json:"batches"`
	MaxLagMs  float64 `json:"maxLagMs"`
	HeapBytes float64 `json:"heap"`
}

func TestPageFigures(t *testing.T) {
	if os.Getenv("LEADERLAB_UI_FIGURES") != "1" {
		t.Skip("a measurement: LEADERLAB_UI_FIGURES=1 runs it")
	}
	s := newTestServer(t)
	ctx := browse(t, s, 20*time.Minute)
	read := func() pageStats {
		return js[pageStats](t, ctx, `({events: labStats.events, batches: labStats.batches, maxLagMs: labStats.maxLagMs, heap: performance.memory.usedJSHeapSize})`)
	}
	// The throughput: a 200-node Chang-Roberts election with the worst ID placement (n(n+1)/2 + n
	// messages, two events each) at a virtual pace that sends more and more events a second.
	for _, speed := range []float64{0.01, 0.05, 0.2, 1} {
		js[any](t, ctx, `labStats.events = 0; labStats.maxLagMs = 0; labStats.batches = 0; 0`)
		post(t, s, "/api/live", fmt.Sprintf(`{"algo": "chang-roberts", "nodes": 200, "ids": "worst", "sim": true, "seed": 1, "speed": %v}`, speed))
		js[any](t, ctx, `watch(); 0`)
		start := time.Now()
		leaderShown(t, ctx, "#leader", 200, 10*time.Minute)
		took := time.Since(start)
		st := read()
		lr := s.current()
		post(t, s, "/api/live/stop", `{}`)
		for lr.end == nil {
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("speed %v: %d events in %v: %.0f events/s; the page's longest lag behind the server %.0f ms; pages cut off %d; heap %.1f MB",
			speed, st.Events, took.Round(time.Millisecond), float64(st.Events)/took.Seconds(), st.MaxLagMs, lr.dropped, st.HeapBytes/1e6)
	}
	// Five minutes of a 200-node Chang-Roberts run, its leader killed every 20 s.
	js[any](t, ctx, `labStats.events = 0; labStats.maxLagMs = 0; 0`)
	post(t, s, "/api/live", `{"algo": "chang-roberts", "nodes": 200, "ids": "random", "sim": true, "seed": 2}`)
	js[any](t, ctx, `watch(); 0`)
	start := time.Now()
	for k := 0; time.Since(start) < 5*time.Minute; k++ {
		time.Sleep(20 * time.Second)
		l := js[int](t, ctx, `+document.getElementById('leader').dataset.leader`)
		if l > 0 && k < 12 {
			post(t, s, "/api/live/fault", fmt.Sprintf(`{"action": "kill %d"}`, l))
		}
	}
	_ = chromedp.Do(ctx, chromedp.Sleep(2*time.Second))
	js[any](t, ctx, `window.gc && gc(); 0`)
	st := read()
	t.Logf("5 minutes: %d events, the page's longest lag %.0f ms, heap %.1f MB", st.Events, st.MaxLagMs, st.HeapBytes/1e6)
	post(t, s, "/api/live/stop", `{}`)
}
