package launcher

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Feed is what a run driven by hand logged since the last Next: what leaderlab ui shows as it
// happens. A simulated run's come from the simulator's memory, a real run's from the tails of its
// run directory's files (complete lines only).
type Feed struct {
	Events []logs.Event // the nodes' events, by time
	Chaos  []logs.ChaosRecord
	Launch []logs.LaunchRecord
	Now    int64         // the run's clock now: Unix ns (virtual for a simulated run)
	Stop   time.Duration // the stop's offset from the begin, once chosen
}

// feedState is where Next left off.
type feedState struct {
	taken          map[int]int // a simulated node's events taken
	chaosN, launch int         // records taken from a simulated run
	files          map[string]*tail
}

// tail reads a growing file line by line.
type tail struct {
	f    *os.File
	part []byte
}

// lines returns the complete lines added since the last call (at most max bytes of them).
func (t *tail) lines(path string, max int) [][]byte {
	if t.f == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		t.f = f
	}
	buf := make([]byte, 64<<10)
	var out [][]byte
	for read := 0; read < max; {
		n, err := t.f.Read(buf)
		t.part = append(t.part, buf[:n]...)
		read += n
		if err == io.EOF || n == 0 {
			break
		}
		if err != nil {
			break
		}
	}
	for {
		i := bytes.IndexByte(t.part, '\n')
		if i < 0 {
			break
		}
		out = append(out, t.part[:i])
		t.part = t.part[i+1:]
	}
	t.part = slices.Clone(t.part)
	return out
}

// Next returns what the run logged since the last call. It is meant for one reader.
func (h *Hand) Next() Feed {
	h.mu.Lock()
	defer h.mu.Unlock()
	var f Feed
	f.Stop = h.stop
	if h.feed.taken == nil {
		h.feed.taken, h.feed.files = map[int]int{}, map[string]*tail{}
	}
	if h.sc != nil {
		run := h.sc.Log()
		for id, l := range run.Nodes {
			f.Events = append(f.Events, l.Events[h.feed.taken[id]:]...)
			h.feed.taken[id] = len(l.Events)
		}
		f.Chaos = slices.Clone(run.Chaos[h.feed.chaosN:])
		f.Launch = slices.Clone(run.Launcher[h.feed.launch:])
		h.feed.chaosN, h.feed.launch = len(run.Chaos), len(run.Launcher)
		f.Now = h.begin - int64(h.sc.Begin()) + int64(h.sc.Now())
	} else if h.dir != "" {
		f.Now = time.Now().UnixNano()
		for _, n := range h.cluster.Nodes {
			for _, line := range h.tailOf(rundir.NodeLog(h.dir, n.ID)) {
				var e logs.Event
				if json.Unmarshal(line, &e) == nil && e.Ev != "" {
					f.Events = append(f.Events, e)
				}
			}
		}
		for _, line := range h.tailOf(filepath.Join(h.dir, rundir.ChaosFile)) {
			var r logs.ChaosRecord
			if json.Unmarshal(line, &r) == nil {
				f.Chaos = append(f.Chaos, r)
			}
		}
		for _, line := range h.tailOf(filepath.Join(h.dir, rundir.LauncherFile)) {
			var r logs.LaunchRecord
			if json.Unmarshal(line, &r) == nil {
				f.Launch = append(f.Launch, r)
			}
		}
	}
	slices.SortStableFunc(f.Events, func(a, b logs.Event) int {
		if a.TS != b.TS {
			return cmp.Compare(a.TS, b.TS)
		}
		return cmp.Compare(a.LC, b.LC)
	})
	return f
}

func (h *Hand) tailOf(path string) [][]byte {
	t := h.feed.files[path]
	if t == nil {
		t = &tail{}
		h.feed.files[path] = t
	}
	return t.lines(path, 16<<20)
}

// CloseFeed closes the files a real run's feed reads (Next opens them again if called).
func (h *Hand) CloseFeed() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range h.feed.files {
		if t.f != nil {
			t.f.Close()
		}
	}
	h.feed.files = nil
}
