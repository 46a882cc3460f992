package bench

import (
	"fmt"
	"io"
	"time"
)

// Progress tells a person how far a benchmark has come, a line on stderr per run done:
// "bench failover: 12/40 runs (kill trial 12), 31s elapsed, about 1m10s to go". The estimate is
// the mean time of the runs so far times the runs left.
type Progress struct {
	w     io.Writer
	name  string
	total int
	done  int
	start time.Time
}

// NewProgress starts counting total runs of the benchmark name, told to w.
func NewProgress(w io.Writer, name string, total int) *Progress {
	return &Progress{w: w, name: name, total: total, start: time.Now()}
}

// Done counts one more run (what names it, or "") and prints the line.
func (p *Progress) Done(what string) {
	p.done++
	if what != "" {
		what = " (" + what + ")"
	}
	el := time.Since(p.start)
	left := ""
	if p.done < p.total {
		left = fmt.Sprintf(", about %s to go", (el / time.Duration(p.done) * time.Duration(p.total-p.done)).Round(time.Second))
	}
	fmt.Fprintf(p.w, "%s: %d/%d runs%s, %s elapsed%s\n", p.name, p.done, p.total, what, el.Round(time.Second), left)
}
