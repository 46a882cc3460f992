package bench

import (
	"bytes"
	"os"
	"testing"
	"time"
)

// TestTimeLeft: the mean time of a run so far times the runs left, rounded to the second; nothing
// before the first run or after the last.
func TestTimeLeft(t *testing.T) {
	cases := []struct {
		elapsed   time.Duration
		done, all int
		want      string
	}{
		{10 * time.Second, 1, 8, ", about 1m10s to go"},
		{30 * time.Second, 12, 40, ", about 1m10s to go"},
		{1400 * time.Millisecond, 2, 3, ", about 1s to go"},
		{time.Minute, 0, 5, ""},
		{time.Minute, 5, 5, ""},
		{time.Minute, 6, 5, ""},
	}
	for _, c := range cases {
		if got := timeLeft(c.elapsed, c.done, c.all); got != c.want {
			t.Errorf("timeLeft(%v, %d, %d) = %q, want %q", c.elapsed, c.done, c.all, got, c.want)
		}
	}
}

// TestNotATerminal: a progress line is rewritten in place only on a terminal.
func TestNotATerminal(t *testing.T) {
	if isTerminal(&bytes.Buffer{}) {
		t.Error("a buffer taken for a terminal")
	}
	f, err := os.CreateTemp(t.TempDir(), "progress")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file taken for a terminal")
	}
}
