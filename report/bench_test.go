package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkReport measures `leaderlab report RUN` without the CLI: reading the run directory (its
// logs and verdict.json) and writing report.html, for synthetic runs of 16 nodes with 1k, 10k, 100k
// and 500k messages (-benchtime 1x for the largest). The page's size is reported as MB/page, and
// the CPU time used (all threads, the garbage collector's too) as cpu-s/op, which a busy machine
// does not inflate as it does ns/op.
// Targets at 100k: under 2 s, under 10 MB.
func BenchmarkReport(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000, 500_000} {
		b.Run(fmt.Sprintf("msgs=%d", n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "run")
			writeSynth(b, dir, 16, n)
			var size int64
			runtime.GC() // not the generator's garbage
			b.ResetTimer()
			cpu0 := cpuTime()
			for range b.N {
				in, err := Load(dir)
				if err != nil {
					b.Fatal(err)
				}
				path, err := WriteFile(dir, in)
				if err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(path)
				if err != nil {
					b.Fatal(err)
				}
				size = st.Size()
			}
			b.ReportMetric(float64(size)/1e6, "MB/page")
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkExports measures the ShiViz and Perfetto exports of a 100k-message run (the run already
// read).
func BenchmarkExports(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "run")
	writeSynth(b, dir, 16, 100_000)
	in, err := Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range []struct {
		name  string
		write func(io.Writer) (ExportStats, error)
	}{
		{"shiviz", func(w io.Writer) (ExportStats, error) { return WriteShiViz(w, in.Run) }},
		{"perfetto", func(w io.Writer) (ExportStats, error) { return WritePerfetto(w, in.Run) }},
	} {
		b.Run(e.name, func(b *testing.B) {
			var cw countWriter
			for range b.N {
				cw = 0
				if _, err := e.write(&cw); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cw)/1e6, "MB/file")
		})
	}
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }
