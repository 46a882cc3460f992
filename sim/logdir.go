package sim

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// A simulated run keeps its nodes' events in memory, as values, until the run directory is written
// (WriteDir). With Options.LogDir the nodes write them to LogDir's nodes/<id>.jsonl as they happen
// instead, through a buffer each, and the run returned holds none: a run of any length in memory
// bounded by its nodes (an hour of 50 nodes under the nemesis is some four million events). The
// bytes are WriteDir's.

// fileSink is a node's event log in its file.
type fileSink struct {
	w   *bufio.Writer
	f   *os.File
	buf []byte
	err *error // the first write error of the run's logs
}

func (k *fileSink) Write(e *logs.Event) error {
	var err error
	if k.buf, err = logs.AppendEvent(k.buf[:0], e); err != nil {
		return err
	}
	if _, err := k.w.Write(k.buf); err != nil && *k.err == nil {
		*k.err = fmt.Errorf("sim: write %s: %w", k.f.Name(), err)
	}
	return nil
}

// openLogs creates dir's node logs, one per node (a file of the same name is replaced).
func (s *Cluster) openLogs(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, rundir.NodesDir), 0o755); err != nil {
		return fmt.Errorf("sim: write run: %w", err)
	}
	for _, id := range s.ids {
		f, err := os.Create(rundir.NodeLog(dir, id))
		if err != nil {
			s.closeLogs()
			return fmt.Errorf("sim: write run: %w", err)
		}
		s.procs[id].file = &fileSink{w: bufio.NewWriterSize(f, 64<<10), f: f, err: &s.logErr}
	}
	return nil
}

// closeLogs flushes and closes the node logs; the first error of any of them is the run's.
func (s *Cluster) closeLogs() error {
	for _, id := range s.ids {
		k := s.procs[id].file
		if k == nil {
			continue
		}
		if err := k.w.Flush(); err != nil && s.logErr == nil {
			s.logErr = fmt.Errorf("sim: write %s: %w", k.f.Name(), err)
		}
		if err := k.f.Close(); err != nil && s.logErr == nil {
			s.logErr = fmt.Errorf("sim: write %s: %w", k.f.Name(), err)
		}
		s.procs[id].file = nil
	}
	return s.logErr
}
