package bench

import (
	"fmt"
	"io"
	"os"
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
	fmt.Fprintf(p.w, "%s: %d/%d runs%s, %s elapsed%s\n", p.name, p.done, p.total, what, el.Round(time.Second), timeLeft(el, p.done, p.total))
}

// TimeLeft is ", about 1m10s to go" after done of all runs begun at start ("" when none is left,
// or none is done to estimate from).
func TimeLeft(start time.Time, done, all int) string { return timeLeft(time.Since(start), done, all) }

// timeLeft is TimeLeft after elapsed: the mean time of a run so far times the runs left. It takes
// the time elapsed rather than reading the clock, so that its tests need none.
func timeLeft(elapsed time.Duration, done, all int) string {
	if done == 0 || done >= all {
		return ""
	}
	return fmt.Sprintf(", about %s to go", (elapsed / time.Duration(done) * time.Duration(all-done)).Round(time.Second))
}

// isTerminal tells whether w is a character device (a terminal), where a progress line may be
// rewritten in place.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
