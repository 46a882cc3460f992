package explore

import (
	"testing"
)

// BenchmarkExplore measures whole searches on one core's worth of work (the search is one
// goroutine; the GC takes the other core when there is one). It reports distinct states per second
// and the heap per state at the end of the search. `go test -run '^$' -bench Explore ./explore/`
func BenchmarkExplore(b *testing.B) {
	for _, bc := range []struct {
		name string
		c    Config
	}{
		{"bully-n5-full", func() Config { c := DefaultConfig("bully", 5); c.NoReduction = true; return c }()},
		{"bully-n6", DefaultConfig("bully", 6)},
		{"bully-n4-crash1", func() Config { c := DefaultConfig("bully", 4); c.Crashes = 1; return c }()},
		{"peterson-n4-crash1-restart1", func() Config { c := DefaultConfig("peterson", 4); c.Crashes, c.Restarts = 1, 1; return c }()},
		{"hirschberg-sinclair-n4-crash1", func() Config { c := DefaultConfig("hirschberg-sinclair", 4); c.Crashes = 1; return c }()},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var states int
			var heap uint64
			for i := 0; i < b.N; i++ {
				x, err := New(bc.c)
				if err != nil {
					b.Fatal(err)
				}
				r := x.Run()
				if !r.Complete || len(r.Violations) > 0 {
					b.Fatalf("complete %v, %d violations", r.Complete, len(r.Violations))
				}
				states += r.Distinct
				heap = r.HeapBytes / uint64(r.Distinct)
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(heap), "heapB/state")
		})
	}
}
