package launcher

import (
	"context"
	"path/filepath"
	"time"

	"github.com/shirou/gopsutil/v3/process"

	"github.com/leaderlab/leaderlab/logs"
)

// ResourcesFile is RUN/resources.jsonl: per-node CPU and memory samples taken by the launcher.
const ResourcesFile = "resources.jsonl"

// Sample is one line of resources.jsonl.
type Sample struct {
	TS   int64   `json:"ts"`
	Node int     `json:"node"`
	Inc  int     `json:"inc"`
	Pid  int     `json:"pid"`
	RSS  uint64  `json:"rss"` // resident set size, bytes
	CPU  float64 `json:"cpu"` // CPU use since the previous sample, percent of one core
	Open int32   `json:"fds"` // open file descriptors
}

// sampleResources samples every running node with gopsutil until ctx ends: every 100 ms for small
// clusters, less often for large ones so that sampling never costs more than the nodes.
func (r *runner) sampleResources(ctx context.Context) {
	out, err := logs.OpenJSONLines(filepath.Join(r.dir, ResourcesFile))
	if err != nil {
		r.say("leaderlab: resources.jsonl: %v (no resource samples)", err)
		return
	}
	defer out.Close()
	every := max(100*time.Millisecond, time.Duration(len(r.cluster.Nodes))*2*time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	type prev struct {
		cpu float64
		at  time.Time
	}
	last := map[int]prev{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, n := range r.cluster.Nodes {
			if ctx.Err() != nil {
				return // a round over a thousand saturated nodes may outlast the run
			}
			pr := r.procs.current(n.ID)
			if pr == nil || !pr.running() || pr.cmd == nil {
				continue // a remote node's resources are its host's business
			}
			pid := pr.cmd.Process.Pid
			p, err := process.NewProcessWithContext(ctx, int32(pid))
			if err != nil {
				continue
			}
			s := Sample{TS: time.Now().UnixNano(), Node: n.ID, Inc: pr.inc, Pid: pid}
			if mi, err := p.MemoryInfoWithContext(ctx); err == nil {
				s.RSS = mi.RSS
			}
			if fds, err := p.NumFDsWithContext(ctx); err == nil {
				s.Open = fds
			}
			if ts, err := p.TimesWithContext(ctx); err == nil {
				now, total := time.Now(), ts.User+ts.System
				if pv, ok := last[pid]; ok {
					if dt := now.Sub(pv.at).Seconds(); dt > 0 {
						s.CPU = 100 * (total - pv.cpu) / dt
					}
				}
				last[pid] = prev{cpu: total, at: now}
			}
			_ = out.Write(s)
		}
	}
}
