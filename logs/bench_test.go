package logs

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

var benchMsg = election.Message{ID: "716.1.4410", Kind: "election", Cand: 993, Round: 1}

// benchEvent is a Chang-Roberts recv at N = 1000 without vector clocks: the line that dominates a
// worst-case run's logs.
func benchEvent() *Event {
	return &Event{TS: 1763760000123456789, Node: 716, Inc: 1, LC: 8821, Ev: EvRecv, From: 715, Msg: &benchMsg}
}

// BenchmarkEventLogWrite: the price of the one-write(2)-per-line rule, which keeps a SIGKILLed
// node's log whole but for a torn last line. one-write is the node's Writer; buffered the same lines
// through a 64 KiB buffer (what the rule forgoes: a killed node would lose up to 64 KiB of lines);
// encode the line alone. ns/op is per event.
func BenchmarkEventLogWrite(b *testing.B) {
	e := benchEvent()
	b.Run("one-write", func(b *testing.B) {
		w, err := OpenWriter(filepath.Join(b.TempDir(), "1.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer w.Close()
		b.ReportAllocs()
		for b.Loop() {
			if err := w.Write(e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("buffered", func(b *testing.B) {
		f, err := os.Create(filepath.Join(b.TempDir(), "1.jsonl"))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 64<<10)
		var line []byte
		b.ReportAllocs()
		for b.Loop() {
			if line, err = AppendEvent(line[:0], e); err != nil {
				b.Fatal(err)
			}
			bw.Write(line)
		}
		bw.Flush()
	})
	b.Run("encode", func(b *testing.B) {
		var line []byte
		var err error
		b.ReportAllocs()
		for b.Loop() {
			if line, err = AppendEvent(line[:0], e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReadNodeLog: decoding a node's log, per event (events/s is the checker's reading speed
// on one core; ReadRun reads the nodes' logs on every core).
func BenchmarkReadNodeLog(b *testing.B) {
	e := benchEvent()
	var buf bytes.Buffer
	const lines = 10000
	for i := range lines {
		e.LC = uint64(i + 1)
		line, err := AppendEvent(nil, e)
		if err != nil {
			b.Fatal(err)
		}
		buf.Write(line)
	}
	data := buf.Bytes()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() { // one op: 10,000 events
		if _, err := ReadNodeLog(bytes.NewReader(data), "nodes/716.jsonl"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
