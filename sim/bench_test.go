package sim

import (
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/topology"
)

// BenchmarkBullyElectionN64 measures whole elections among 64 nodes from a cold start, every node
// an initiator (n²-1 = 4,095 messages each), the bare machines: "events" keeps the event
// log (every send and recv, as a real node writes it), "counters" only the counters (NoEvents). It
// reports elections per second of wall time and per second of CPU time (the process's, GC included:
// the figure of one core, whatever else the machine runs).
func BenchmarkBullyElectionN64(b *testing.B) {
	b.Run("events", func(b *testing.B) { benchElections(b, DefaultConfig("bully", 64)) })
	cfg := DefaultConfig("bully", 64)
	cfg.NoEvents = true
	b.Run("counters", func(b *testing.B) { benchElections(b, cfg) })
}

func benchElections(b *testing.B, cfg Config) {
	b.ReportAllocs()
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cfg.Seed = int64(i)
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		s.RunFor(30 * time.Millisecond)
		if l, ok := s.Converged(); !ok || l != 64 {
			b.Fatalf("seed %d: no agreement on 64 after 30ms", i)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "elections/s")
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "elections/cpu-s")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBullyFailoverN64 measures the election that follows a leader's SIGKILL in a cluster of
// 64 that has settled, every survivor told of it at once (as the link reset tells a node's detector:
// they all hold an election). Building and settling the cluster is not timed. It reports failovers
// per second of CPU time and the messages each cost.
func BenchmarkBullyFailoverN64(b *testing.B) {
	cfg := DefaultConfig("bully", 64)
	b.ReportAllocs()
	msgs := 0
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		cfg.Seed = int64(i)
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		s.RunFor(100 * time.Millisecond)
		before := s.Messages()
		b.StartTimer()
		cpu0 := cpuTime()
		s.Crash(64)
		for id := 1; id < 64; id++ {
			if err := s.Inject(id, election.Input{Kind: election.InSuspect, From: 64}); err != nil {
				b.Fatal(err)
			}
		}
		s.RunFor(30 * time.Millisecond)
		cpu += cpuTime() - cpu0
		if l, ok := s.Converged(); !ok || l != 63 {
			b.Fatalf("failover %d: no agreement on 63", i)
		}
		msgs += s.Messages() - before
	}
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "failovers/cpu-s")
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/failover")
}

// BenchmarkRingElectionN64 measures whole elections of every ring algorithm among 64 nodes from a
// cold start, every node an initiator, the IDs placed at random (a new placement per election):
// "events" keeps the event log; "counters" only the counters (NoEvents): the election alone, as
// `leaderlab bench complexity` runs it. It reports elections per second of wall and of CPU time, and the messages
// (election + announcement) each cost.
func BenchmarkRingElectionN64(b *testing.B) {
	for _, a := range ringAlgos() {
		b.Run(a.name(), func(b *testing.B) {
			for _, mode := range []string{"events", "counters"} {
				b.Run(mode, func(b *testing.B) {
					cfg := DefaultConfig(a.Name, 64)
					cfg.Topology = a.topo
					if mode == "counters" {
						cfg.NoEvents = true
					}
					benchRingElections(b, cfg)
				})
			}
		})
	}
}

func benchRingElections(b *testing.B, cfg Config) {
	b.ReportAllocs()
	msgs := 0
	cpu0 := cpuTime()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		cfg.Seed = int64(i)
		order, err := topology.Place(cfg.N, topology.Random, cfg.Seed)
		if err != nil {
			b.Fatal(err)
		}
		cfg.Order, cfg.Placement = order, topology.Random
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for {
			s.RunFor(5 * time.Millisecond)
			if l, ok := s.Converged(); ok && l == cfg.N {
				break
			}
			if s.Now() > 10*time.Second {
				b.Fatalf("seed %d: no agreement on %d after 10s", i, cfg.N)
			}
		}
		msgs += s.Messages()
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "elections/s")
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "elections/cpu-s")
	b.ReportMetric(float64(msgs)/float64(b.N), "msgs/election")
}
