package node

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// BenchmarkRelay: the node's own cost of one message of a Chang-Roberts worst case, the message
// that dominates its 501,500 at N = 1000: a frame from the predecessor handed over by the
// transport (handler.Message), through the link rules (none), logged as a recv, stepped through
// the machine, forwarded (logged as a send, encoded into a frame). The sub-benchmarks add the
// parts one by one: "machine" writes no line, "lines" encodes them (logs.AppendEvent) without
// writing, "log" writes each with its write(2) to a file, as a node does. The transport's socket
// I/O is BenchmarkTCPSend's (wire), the write(2) alone BenchmarkEventLogWrite's (logs).
func BenchmarkRelay(b *testing.B) {
	for _, c := range []struct {
		name string
		sink func(b *testing.B) EventSink
	}{
		{"machine", func(*testing.B) EventSink { return nullSink{} }},
		{"lines", func(*testing.B) EventSink { return &lineSink{} }},
		{"log", func(b *testing.B) EventSink {
			w, err := logs.OpenWriter(filepath.Join(b.TempDir(), "2.jsonl"))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { w.Close() })
			return w
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			n, tr := relayNode(b, c.sink(b))
			h := handler{n}
			env := &wire.Envelope{Kind: wire.KindMsg, LC: 7, Msg: election.Message{ID: "3.1.1", Kind: "election", Cand: 3, Round: 1}}
			sent := tr.sent
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				h.Message(1, 1, env)
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
			if tr.sent-sent != b.N {
				b.Fatalf("%d messages forwarded, want %d", tr.sent-sent, b.N)
			}
		})
	}
}

// cpuTime is the CPU time the process has used (user and system), in ns: on a machine shared with
// other work, ns/op counts the time the benchmark waited for a core too, cpu-ns/op does not.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// relayNode is node 2 of a 1000-node ring whose predecessor is node 1, begun, with transport tr.
func relayNode(b *testing.B, sink EventSink) (*node, *countingTransport) {
	ids := make([]int, 1000)
	for i := range ids {
		ids[i] = i + 1
	}
	c := &rundir.Cluster{
		Version: 1, ClusterID: "bench", Algo: "chang-roberts", Topology: "ring", Placement: "ascending",
		Ring: ids, InitiatorsSpec: "all", Initiators: ids, Secret: strings.Repeat("5a", 32),
		Heartbeat: rundir.Duration(time.Second), Timeout: rundir.Duration(4 * time.Second),
		ElectionTimeout: rundir.Duration(time.Second), CoordinatorTimeout: rundir.Duration(3 * time.Second),
		Seed: 1, Options: map[string]string{},
	}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, rundir.Node{ID: id})
	}
	n, err := newCore(c, Options{ID: 2, Inc: 1, StatsEvery: time.Hour}, sink, 1)
	if err != nil {
		b.Fatal(err)
	}
	w := &benchWorld{}
	tr := &countingTransport{}
	n.w, n.tr = w, tr
	n.clk.base = w
	n.begin()
	return n, tr
}

// benchWorld runs what is posted at once and arms no timer.
type benchWorld struct{}

func (*benchWorld) Now() time.Time                                  { return time.Now() }
func (*benchWorld) After(time.Duration, func()) Timer               { return benchTimer{} }
func (*benchWorld) Post(f func())                                   { f() }
func (benchTimer) Stop() bool                                       { return true }
func (t *countingTransport) SendDatagram(int, *wire.Datagram) error { return nil }
func (t *countingTransport) Connect([]int)                          {}
func (t *countingTransport) LinkUp(int) bool                        { return true }
func (t *countingTransport) Close() error                           { return nil }

type benchTimer struct{}

// countingTransport encodes what is sent into a frame, as the TCP transport does, and counts it.
type countingTransport struct {
	buf  []byte
	sent int
}

func (t *countingTransport) Send(_ int, env *wire.Envelope) error {
	var err error
	t.buf, err = wire.AppendFrame(t.buf[:0], env)
	t.sent++
	return err
}

// nullSink takes the lines and writes nothing.
type nullSink struct{}

func (nullSink) Write(*logs.Event) error { return nil }

// lineSink encodes the lines and writes nothing.
type lineSink struct{ b []byte }

func (s *lineSink) Write(e *logs.Event) error {
	var err error
	s.b, err = logs.AppendEvent(s.b[:0], e)
	return err
}
