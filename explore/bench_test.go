package explore

import (
	"testing"
)

// BenchmarkExplore measures whole searches with one worker (the GC takes the other core when there
// is one). It reports distinct states per second and the heap per state at the end of the search.
// `go test -run '^$' -bench 'Explore$' ./explore/`
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
		bc.c.Workers = 1
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

// BenchmarkExploreWorkers measures Franklin at N = 5 with a crash (536,065 states), the acceptance
// check's search, with one worker and with two, and with two whose tables spill past 64 MB: states
// per second, and the most bytes on disk. `go test -run '^$' -bench ExploreWorkers -benchtime 1x
// ./explore/`; the speed-up is the ratio of the states/s (on a machine whose cores are free).
func BenchmarkExploreWorkers(b *testing.B) {
	for _, bc := range []struct {
		name    string
		workers int
		memory  uint64
	}{{"workers-1", 1, 0}, {"workers-2", 2, 0}, {"workers-2-spill-64MB", 2, 64 << 20}} {
		b.Run("franklin-n5-crash1/"+bc.name, func(b *testing.B) {
			c := DefaultConfig("franklin", 5)
			c.Crashes, c.Workers, c.MaxMemory, c.SpillDir = 1, bc.workers, bc.memory, b.TempDir()
			var states int
			var disk int64
			for i := 0; i < b.N; i++ {
				x, err := New(c)
				if err != nil {
					b.Fatal(err)
				}
				r := x.Run()
				if !r.Complete || len(r.Violations) > 0 {
					b.Fatalf("complete %v, %d violations", r.Complete, len(r.Violations))
				}
				states += r.Distinct
				disk = max(disk, r.SpillPeak)
			}
			b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(disk), "disk-bytes")
		})
	}
}
