package check_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// longRun makes a simulated Bully run of n nodes under the nemesis (kills, pauses, restarts,
// partitions) for d, vector clocks on, into a directory, and counts its events.
func longRun(tb testing.TB, n int, d time.Duration) (string, int) {
	tb.Helper()
	cfg := launcher.DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Duration = "bully", n, d
	cfg.Nemesis, cfg.Seed, cfg.SeedSet = "kill,pause,restart,partition", 33, true
	cfg.Sim, cfg.Out = true, filepath.Join(tb.TempDir(), "run")
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	dir, _, err := launcher.RunDir(context.Background(), cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := logs.OpenStream(dir)
	if err != nil {
		tb.Fatal(err)
	}
	events := 0
	for _, id := range s.Nodes {
		r, err := s.Node(id)
		if err != nil {
			tb.Fatal(err)
		}
		for {
			if _, _, err := r.Next(); err != nil {
				break
			}
			events++
		}
		r.Close()
	}
	return dir, events
}

// peakHeap runs fn and returns the most heap its objects took meanwhile (live and not yet swept:
// what the process's memory follows), sampled every millisecond, and the bytes it allocated.
func peakHeap(fn func()) (peak, alloc uint64) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	return peak, after.TotalAlloc - before.TotalAlloc
}

// BenchmarkCheckLongRun measures the memory per event of checking a long run: its logs streamed
// (CheckStream of the directory, as leaderlab check does) and held (ReadRun, then Check). 40 nodes,
// LEADERLAB_BENCH_RUN of simulated time (default 1m; the figure is 10m). It reports the
// peak heap and the bytes allocated, per event and in all; wall-clock figures are go test's.
func BenchmarkCheckLongRun(b *testing.B) {
	d := time.Minute
	if s := os.Getenv("LEADERLAB_BENCH_RUN"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			b.Fatal(err)
		}
	}
	dir, events := longRun(b, 40, d)
	for _, c := range []struct {
		name  string
		check func() error
	}{
		{"streamed", func() error {
			s, err := logs.OpenStream(dir)
			if err == nil {
				_, err = check.CheckStream(s, check.Options{})
			}
			return err
		}},
		{"held", func() error {
			run, err := logs.ReadRun(dir)
			if err == nil {
				check.Check(run, check.Options{})
			}
			return err
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var peak, alloc uint64
			for b.Loop() {
				var err error
				p, a := peakHeap(func() { err = c.check() })
				if err != nil {
					b.Fatal(err)
				}
				peak, alloc = max(peak, p), a
			}
			b.ReportMetric(float64(events), "events")
			b.ReportMetric(float64(peak)/float64(events), "peak-heap-B/event")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(alloc)/float64(events), "alloc-B/event")
			b.Logf("%s: %d events, peak heap %.1f MB (%.0f B/event), %.0f B allocated per event",
				c.name, events, float64(peak)/(1<<20), float64(peak)/float64(events), float64(alloc)/float64(events))
		})
	}
}

// TestCheckMemoryIsBoundedByTheNodes: checking a run streamed takes about the same memory whether
// it lasts 15s or 60s of simulated time (4 times the events): what grows with the run is its faults,
// elections and overlaps, which the verdict lists, not its events.
func TestCheckMemoryIsBoundedByTheNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates two runs of 30 nodes")
	}
	var peaks [2]uint64
	var counts [2]int
	for i, d := range []time.Duration{15 * time.Second, 60 * time.Second} {
		dir, events := longRun(t, 30, d)
		p, _ := peakHeap(func() {
			s, err := logs.OpenStream(dir)
			if err == nil {
				_, err = check.CheckStream(s, check.Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		peaks[i], counts[i] = p, events
		t.Logf("%v: %d events, peak heap %.1f MB (%.0f B/event)", d, events, float64(p)/(1<<20), float64(p)/float64(events))
	}
	if counts[1] < 3*counts[0] {
		t.Fatalf("the long run has %d events, the short one %d: not long enough to tell", counts[1], counts[0])
	}
	// Held in memory these runs take kilobytes per event; streamed, the longer one may take a
	// little more (more elections and overlaps to list) but nowhere near its share of events.
	if peaks[1] > 2*peaks[0]+(8<<20) {
		t.Errorf("peak heap %.1f MB for %d events, %.1f MB for %d: it grows with the events",
			float64(peaks[1])/(1<<20), counts[1], float64(peaks[0])/(1<<20), counts[0])
	}
}
