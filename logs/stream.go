package logs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// A Stream is a run whose event logs are read an event at a time, as often as a reader needs them,
// instead of all at once: the checker judges a run of any length in memory bounded by its nodes and
// the messages in flight, not by its events. The records (cluster.json, chaos.jsonl,
// launcher.jsonl) are read when it is opened; they grow with the faults, not with the events.
//
//	s, err := logs.OpenStream(dir)    // cluster.json, chaos.jsonl, launcher.jsonl
//	r, err := s.Node(3)               // nodes/3.jsonl, from its first line
//	for { e, line, err := r.Next(); … } // io.EOF after the last event
//
// A line ReadRun would refuse is an error of the reader that reaches it; Err names the error
// ReadRun would have given (the first in ID order), for the caller to report instead.
type Stream struct {
	// Run holds the run's records: Dir, Cluster, Chaos and Launcher. Its Nodes and Observers are
	// nil: their logs are read through Node and Observer.
	Run *Run
	// Nodes are the IDs of the cluster's nodes that have a log (or whose log cannot be read),
	// ascending; Observers the same for cluster.json's observers.
	Nodes, Observers []int

	mem      *Run          // a run read or built in memory, nil for a directory
	unusable map[int]error // a spawned node without a readable log
	// VC is what the readers do with a line's vc: VCCheck (the default) checks it as ReadRun
	// does and leaves Event.VC nil, VCKeep decodes it, VCSkim passes over it unread (a caller
	// that read every log once already: a line's vector clock is the longest part of it).
	VC VCMode
}

// VCMode is what a Stream's readers do with vc.
type VCMode uint8

const (
	VCCheck VCMode = iota
	VCKeep
	VCSkim
)

// OpenStream opens a run directory for streaming: it reads its records as ReadRun does (with the
// same errors) and finds the node logs, but reads no event.
func OpenStream(dir string) (*Stream, error) {
	c, err := rundir.Load(dir)
	if err != nil {
		return nil, err
	}
	run := &Run{Dir: dir, Cluster: *c}
	if run.Launcher, err = readRecords(filepath.Join(dir, rundir.LauncherFile), rundir.LauncherFile, checkLaunch); err != nil {
		return nil, err
	}
	if run.Chaos, err = readRecords(filepath.Join(dir, rundir.ChaosFile), rundir.ChaosFile, checkChaos); err != nil {
		return nil, err
	}
	spawned := map[int]bool{}
	for _, r := range run.Launcher {
		if r.Ev == LaunchSpawned {
			spawned[r.Node] = true
		}
	}
	s := &Stream{Run: run, unusable: map[int]error{}}
	for _, id := range c.IDs() {
		_, err := os.Stat(rundir.NodeLog(dir, id))
		switch {
		case errors.Is(err, os.ErrNotExist) && !spawned[id]:
			continue
		case err != nil:
			s.unusable[id] = fmt.Errorf("node %d was spawned but its log cannot be read: %w", id, err)
		}
		s.Nodes = append(s.Nodes, id)
	}
	slices.Sort(s.Nodes)
	for _, o := range c.Observers {
		_, err := os.Stat(rundir.ObserverLog(dir, o.ID))
		switch {
		case errors.Is(err, os.ErrNotExist) && !spawned[o.ID]:
			continue
		case err != nil:
			s.unusable[-o.ID] = fmt.Errorf("observer %d was spawned but its log cannot be read: %w", o.ID, err)
		}
		s.Observers = append(s.Observers, o.ID)
	}
	slices.Sort(s.Observers)
	return s, nil
}

// StreamOf streams a run already in memory (read by ReadRun, or made by the simulator or a test):
// its readers hand out its events in place, without copying them.
func StreamOf(run *Run) *Stream {
	head := *run
	head.Nodes, head.Observers = nil, nil
	s := &Stream{Run: &head, mem: run}
	for id := range run.Nodes {
		s.Nodes = append(s.Nodes, id)
	}
	for id := range run.Observers {
		s.Observers = append(s.Observers, id)
	}
	slices.Sort(s.Nodes)
	slices.Sort(s.Observers)
	return s
}

// EventReader reads one log an event at a time.
type EventReader interface {
	// Next returns the next event and its 1-based line number in the file (0 for a log built in
	// memory without line numbers), or io.EOF after the last. The event is valid until the next
	// call: a caller keeps a copy of what it needs.
	Next() (*Event, int, error)
	// Torn lists the torn lines accepted so far: all of them once Next returned io.EOF.
	Torn() []TornLine
	Close() error
}

// Node opens node id's log (one of s.Nodes) from its first event. A host's clock offset
// (cluster.json) is taken off its times, as ReadRun does.
func (s *Stream) Node(id int) (EventReader, error) {
	if s.mem != nil {
		return memReader(s.mem.Nodes[id]), nil
	}
	if err := s.unusable[id]; err != nil {
		return nil, err
	}
	var offset int64
	if h := s.Run.Cluster.HostOf(id); h != nil {
		offset = h.OffsetNS
	}
	return s.openFile(rundir.NodeLog(s.Run.Dir, id), NodeLogName(id), id, offset, "an event of node %d in the log of node %d")
}

// Observer opens observer id's log (one of s.Observers).
func (s *Stream) Observer(id int) (EventReader, error) {
	if s.mem != nil {
		return memReader(s.mem.Observers[id]), nil
	}
	if err := s.unusable[-id]; err != nil {
		return nil, err
	}
	return s.openFile(rundir.ObserverLog(s.Run.Dir, id), "observers/"+strconv.Itoa(id)+".jsonl", id, 0, "an event of %d in the log of observer %d")
}

func (s *Stream) openFile(path, name string, id int, offset int64, mismatch string) (EventReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s cannot be read: %w", name, err)
	}
	fast := newFastDecoder()
	fast.vc = map[VCMode]vcMode{VCCheck: vcSkip, VCKeep: vcKeep, VCSkim: vcSkim}[s.VC]
	fast.one = &election.Message{}
	// A reader of every log at once (the checker's merge) holds a buffer per node: 8 MiB in all,
	// 4 to 64 KiB each.
	size := min(max((8<<20)/max(len(s.Nodes), 1), 4<<10), 64<<10)
	return &fileReader{f: f, sc: newLogScanner(newLineReaderSize(f, name, size), name, fast), id: id, offset: offset, mismatch: mismatch}, nil
}

// Err is the error ReadRun would give for the run (nil when it would read it): the first bad log
// in ID order, the nodes' before the observers'. A caller whose reader met an error reports this
// one, so that a run is refused for the same reason whichever reader came to its fault first. It
// reads the logs one at a time, as ReadRun does, up to the first error.
func (s *Stream) Err() error {
	if s.mem != nil {
		return nil
	}
	dir, c := s.Run.Dir, &s.Run.Cluster
	for _, id := range s.Nodes {
		data, err := os.ReadFile(rundir.NodeLog(dir, id))
		if err != nil {
			return fmt.Errorf("node %d was spawned but its log cannot be read: %w", id, err)
		}
		nl, err := readNodeLogBytes(data, NodeLogName(id))
		if err != nil {
			return err
		}
		if len(nl.Events) > 0 && nl.Node != id {
			return &LineError{File: NodeLogName(id), Line: nl.Line[0], Reason: fmt.Sprintf("an event of node %d in the log of node %d", nl.Node, id)}
		}
	}
	spawned := map[int]bool{}
	for _, r := range s.Run.Launcher {
		if r.Ev == LaunchSpawned {
			spawned[r.Node] = true
		}
	}
	_, err := readObservers(dir, c, spawned)
	return err
}

// fileReader reads a log file through a logScanner, one event in place.
type fileReader struct {
	f        *os.File
	sc       *logScanner
	ev       Event
	id       int
	offset   int64
	mismatch string
	// wrongNode is set when the first event is another node's: ReadRun says so after the file's
	// own line errors, so Next goes on and reports it at the end.
	wrongNode error
}

func (r *fileReader) Next() (*Event, int, error) {
	line, err := r.sc.next(&r.ev)
	if err == io.EOF && r.wrongNode != nil {
		return nil, 0, r.wrongNode
	}
	if err != nil {
		return nil, 0, err
	}
	if r.sc.events == 1 && r.ev.Node != r.id {
		r.wrongNode = &LineError{File: r.sc.name, Line: line, Reason: fmt.Sprintf(r.mismatch, r.ev.Node, r.id)}
	}
	r.ev.Node = r.id
	r.ev.TS -= r.offset
	return &r.ev, line, nil
}

func (r *fileReader) Torn() []TornLine { return r.sc.torn }
func (r *fileReader) Close() error     { return r.f.Close() }

// memLog reads a NodeLog in memory.
type memLog struct {
	nl *NodeLog
	i  int
}

func memReader(nl *NodeLog) EventReader {
	if nl == nil {
		nl = &NodeLog{}
	}
	return &memLog{nl: nl}
}

func (r *memLog) Next() (*Event, int, error) {
	if r.i >= len(r.nl.Events) {
		return nil, 0, io.EOF
	}
	i := r.i
	r.i++
	line := 0
	if i < len(r.nl.Line) {
		line = r.nl.Line[i]
	}
	return &r.nl.Events[i], line, nil
}

func (r *memLog) Torn() []TornLine {
	if r.i < len(r.nl.Events) {
		return nil
	}
	return r.nl.Torn
}

func (r *memLog) Close() error { return nil }
