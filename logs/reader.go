package logs

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/leaderlab/leaderlab/rundir"
)

// MaxLineBytes is the longest line the reader accepts (without its newline). A longer line is an
// error naming it; the reader never holds more than this much of one line in memory.
const MaxLineBytes = 1 << 20

// ErrLineTooLong is wrapped by the LineError of a line longer than MaxLineBytes.
var ErrLineTooLong = errors.New("line longer than 1 MiB")

// LineError is a line of a log the reader refused: the file, the 1-based line number and why.
type LineError struct {
	File   string
	Line   int
	Reason string
	Err    error // optional cause
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

func (e *LineError) Unwrap() error { return e.Err }

// ReadLauncher reads a run's launcher.jsonl alone (for figures that need no node log).
func ReadLauncher(dir string) ([]LaunchRecord, error) {
	return readRecords(filepath.Join(dir, rundir.LauncherFile), rundir.LauncherFile, checkLaunch)
}

// ReadRun reads a run directory: cluster.json, every node's event log, chaos.jsonl and
// launcher.jsonl. A directory without cluster.json gives an error wrapping rundir.ErrNotRun. A node
// without a log is accepted only when launcher.jsonl never spawned it. Whether a torn line ends a
// killed incarnation is judged by the checker (integrity), which has launcher.jsonl at hand.
func ReadRun(dir string) (*Run, error) {
	c, err := rundir.Load(dir)
	if err != nil {
		return nil, err
	}
	run := &Run{Dir: dir, Cluster: *c, Nodes: map[int]*NodeLog{}}
	run.Launcher, err = readRecords(filepath.Join(dir, rundir.LauncherFile), rundir.LauncherFile, checkLaunch)
	if err != nil {
		return nil, err
	}
	run.Chaos, err = readRecords(filepath.Join(dir, rundir.ChaosFile), rundir.ChaosFile, checkChaos)
	if err != nil {
		return nil, err
	}
	spawned := map[int]bool{}
	for _, r := range run.Launcher {
		if r.Ev == LaunchSpawned {
			spawned[r.Node] = true
		}
	}
	// The logs are read on every core (a thousand-node run has a thousand of them); what they hold,
	// and the first error in ID order, is then taken in ID order, as a sequential read would.
	ids := c.IDs()
	type result struct {
		nl      *NodeLog
		err     error
		missing bool
	}
	results := make([]result, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ids)) {
		wg.Go(func() {
			for k := range next {
				id := ids[k]
				data, err := os.ReadFile(rundir.NodeLog(dir, id))
				if errors.Is(err, os.ErrNotExist) && !spawned[id] {
					results[k].missing = true
					continue
				}
				if err != nil {
					results[k].err = fmt.Errorf("node %d was spawned but its log cannot be read: %w", id, err)
					continue
				}
				results[k].nl, results[k].err = readNodeLogBytes(data, NodeLogName(id))
			}
		})
	}
	for k := range ids {
		next <- k
	}
	close(next)
	wg.Wait()
	for k, id := range ids {
		name := NodeLogName(id)
		if results[k].missing {
			continue
		}
		nl, err := results[k].nl, results[k].err
		if err != nil {
			return nil, err
		}
		if len(nl.Events) > 0 && nl.Node != id {
			return nil, &LineError{File: name, Line: nl.Line[0], Reason: fmt.Sprintf("an event of node %d in the log of node %d", nl.Node, id)}
		}
		nl.Node = id
		if h := c.HostOf(id); h != nil && h.OffsetNS != 0 {
			// the host's clock, put on the launcher's: the offset cluster.json recorded
			for i := range nl.Events {
				nl.Events[i].TS -= h.OffsetNS
			}
		}
		run.Nodes[id] = nl
	}
	if run.Observers, err = readObservers(dir, c, spawned); err != nil {
		return nil, err
	}
	return run, nil
}

// readObservers reads the observers' logs listed in cluster.json.
func readObservers(dir string, c *rundir.Cluster, spawned map[int]bool) (map[int]*NodeLog, error) {
	out := map[int]*NodeLog{}
	for _, o := range c.Observers {
		name := "observers/" + strconv.Itoa(o.ID) + ".jsonl"
		f, err := os.Open(rundir.ObserverLog(dir, o.ID))
		if errors.Is(err, os.ErrNotExist) && !spawned[o.ID] {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("observer %d was spawned but its log cannot be read: %w", o.ID, err)
		}
		nl, err := ReadNodeLog(f, name)
		f.Close()
		if err != nil {
			return nil, err
		}
		if len(nl.Events) > 0 && nl.Node != o.ID {
			return nil, &LineError{File: name, Line: nl.Line[0], Reason: fmt.Sprintf("an event of %d in the log of observer %d", nl.Node, o.ID)}
		}
		nl.Node = o.ID
		out[o.ID] = nl
	}
	return out, nil
}

// NodeLogName is how messages name node id's log: its path inside the run directory.
func NodeLogName(id int) string { return rundir.NodesDir + "/" + strconv.Itoa(id) + ".jsonl" }

// eventLine decodes one line: the pointers tell which of the common fields were present. They
// shadow Event's fields of the same JSON names (the shallower field wins in encoding/json).
type eventLine struct {
	TS   *int64  `json:"ts"`
	Node *int    `json:"node"`
	Inc  *int    `json:"inc"`
	LC   *uint64 `json:"lc"`
	Ev   *string `json:"ev"`
	Event
}

// pendingTorn is a malformed line waiting for the next line to tell whether it ended an incarnation.
type pendingTorn struct {
	line   int
	reason string
	inc    int // the incarnation it belongs to; 0 when unknown
}

// ReadNodeLog reads one node's event log; name (e.g. "nodes/3.jsonl") is used in errors. A line that
// is not JSON or lacks one of ts, node, inc, lc, ev is accepted only as the last line of the file or
// the line right before one of another incarnation; it is listed in NodeLog.Torn. Any other bad line
// is a *LineError naming the line and what is wrong with it.
func ReadNodeLog(r io.Reader, name string) (*NodeLog, error) {
	return readNodeLog(newLineReader(r, name), name, 0)
}

// readNodeLogBytes is ReadNodeLog on a whole file in memory: its lines are read in place and its
// events allocated once, at their number.
func readNodeLogBytes(data []byte, name string) (*NodeLog, error) {
	return readNodeLog(newBytesLineReader(data, name), name, bytes.Count(data, []byte{'\n'})+1)
}

func readNodeLog(lr *lineReader, name string, lines int) (*NodeLog, error) {
	nl := &NodeLog{Events: make([]Event, 0, lines), Line: make([]int, 0, lines)}
	sc := newLogScanner(lr, name, newFastDecoder())
	for {
		// The event is decoded in its place at the end of the list, which is cut back at the end.
		n := len(nl.Events)
		nl.Events = append(nl.Events, Event{})
		line, err := sc.next(&nl.Events[n])
		if err == io.EOF {
			nl.Events = nl.Events[:n]
			break
		}
		if err != nil {
			return nil, err
		}
		nl.Line = append(nl.Line, line)
	}
	nl.Node, nl.Torn = sc.node, sc.torn
	return nl, nil
}

// logScanner reads a node's event log an event at a time, judging torn lines as it goes: a line
// that is not JSON or lacks one of ts, node, inc, lc, ev is held until the next line tells whether
// it ended an incarnation. ReadNodeLog keeps every event; a Stream's reader keeps none.
type logScanner struct {
	lr      *lineReader
	name    string
	fast    *fastDecoder
	pending *pendingTorn
	prevInc int
	events  int // events read so far
	node    int // the log's node, known after its first event
	torn    []TornLine
	done    bool
}

func newLogScanner(lr *lineReader, name string, fast *fastDecoder) *logScanner {
	return &logScanner{lr: lr, name: name, fast: fast}
}

// next decodes the next event into e and returns its 1-based line number, or io.EOF after the last
// (sc.torn is then complete).
func (sc *logScanner) next(e *Event) (int, error) {
	if sc.done {
		return 0, io.EOF
	}
	for {
		line, err := sc.lr.next()
		if err == io.EOF {
			sc.done = true
			if t := sc.pending; t != nil {
				if t.inc == 0 {
					t.inc = 1
				}
				sc.torn = append(sc.torn, TornLine{Line: t.line, Inc: t.inc})
				sc.pending = nil
			}
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var bad string
		if !sc.fast.decode(line, e) {
			var slow *Event
			if slow, bad, err = decodeEvent(line); err != nil {
				return 0, &LineError{File: sc.name, Line: sc.lr.n, Reason: err.Error()}
			}
			if bad == "" {
				*e = *slow
				if sc.fast.vc == vcSkip || sc.fast.vc == vcSkim {
					e.VC = nil
				}
			}
		}
		nextInc := 0
		if bad != "" {
			nextInc = incOfPartial(line)
		} else {
			nextInc = e.Inc
		}
		if t := sc.pending; t != nil {
			if t.inc == 0 && nextInc > 0 {
				// A best guess: the torn line held no inc, and no whole line came before it.
				t.inc = max(nextInc-1, 1)
			}
			if nextInc == 0 || nextInc == t.inc {
				return 0, &LineError{File: sc.name, Line: t.line, Reason: t.reason +
					"; a torn line is accepted only as the last line of an incarnation, and the next line does not start another"}
			}
			sc.torn = append(sc.torn, TornLine{Line: t.line, Inc: t.inc})
			sc.pending = nil
		}
		if bad != "" {
			sc.pending = &pendingTorn{line: sc.lr.n, reason: bad, inc: sc.prevInc}
			if p := incOfPartial(line); p >= max(sc.prevInc, 1) {
				sc.pending.inc = p
			}
			continue
		}
		if err := validEvent(e, sc.events == 0, sc.node); err != nil {
			return 0, &LineError{File: sc.name, Line: sc.lr.n, Reason: err.Error()}
		}
		if sc.events == 0 {
			sc.node = e.Node
		}
		sc.events++
		sc.prevInc = e.Inc
		return sc.lr.n, nil
	}
}

// decodeEvent decodes a line. bad is set (and err nil) for a line that may be torn: not JSON, or
// lacking a common field. err is set for a line that is JSON but wrong in a way no tear explains.
func decodeEvent(line []byte) (e *Event, bad string, err error) {
	var el eventLine
	if err := json.Unmarshal(line, &el); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return nil, "not JSON (" + err.Error() + ")", nil
		}
		return nil, "", fmt.Errorf("not an event: %v", err)
	}
	var missing []string
	for _, f := range []struct {
		name string
		ok   bool
	}{{"ts", el.TS != nil}, {"node", el.Node != nil}, {"inc", el.Inc != nil}, {"lc", el.LC != nil}, {"ev", el.Ev != nil}} {
		if !f.ok {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return nil, "lacks " + strings.Join(missing, ", "), nil
	}
	ev := el.Event
	ev.TS, ev.Node, ev.Inc, ev.LC, ev.Ev = *el.TS, *el.Node, *el.Inc, *el.LC, *el.Ev
	return &ev, "", nil
}

// validEvent checks what every event of the contract needs beyond the common fields.
// first tells whether it is the log's first event; node is the log's node, known after the first.
func validEvent(e *Event, first bool, node int) error {
	switch {
	case e.Node < 1:
		return fmt.Errorf("node %d (IDs start at 1)", e.Node)
	case e.Inc < 1:
		return fmt.Errorf("inc %d (incarnations start at 1)", e.Inc)
	case e.Ev == "":
		return errors.New("empty ev")
	case !first && e.Node != node:
		return fmt.Errorf("an event of node %d in a log of node %d", e.Node, node)
	}
	switch e.Ev {
	case EvSend, EvRecv:
		if e.Msg == nil || e.Msg.ID == "" || e.Msg.Kind == "" {
			return fmt.Errorf("%s without msg.id and msg.kind", e.Ev)
		}
	case EvLeader:
		if e.Leader < 1 {
			return errors.New("leader event without a leader ID")
		}
	}
	return nil
}

// incOfPartial finds `"inc":N` in a line that is not JSON (the writer puts inc third, so a torn line
// usually still holds it). 0 when it cannot.
func incOfPartial(line []byte) int {
	i := bytes.Index(line, []byte(`"inc":`))
	if i < 0 {
		return 0
	}
	rest := line[i+len(`"inc":`):]
	j := 0
	for j < len(rest) && j < 9 && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	// Only a number the line goes on after was written whole.
	if j == 0 || j == len(rest) {
		return 0
	}
	n, _ := strconv.Atoi(string(rest[:j]))
	return n
}

// lineReader yields lines of at most MaxLineBytes, counting them, without bufio.Scanner's token
// limit and without ever holding more than one line.
type lineReader struct {
	br   *bufio.Reader
	name string
	buf  []byte
	n    int
	// data, when not nil, is the whole input, read in place (br is then nil).
	data []byte
}

// newBytesLineReader reads lines out of data in place.
func newBytesLineReader(data []byte, name string) *lineReader {
	return &lineReader{name: name, data: data}
}

func newLineReader(r io.Reader, name string) *lineReader {
	return newLineReaderSize(r, name, 64<<10)
}

// newLineReaderSize reads through a buffer of size bytes (a longer line is still read whole).
func newLineReaderSize(r io.Reader, name string, size int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, size), name: name}
}

// next returns the next line without its newline (valid until the next call), or io.EOF.
func (lr *lineReader) next() ([]byte, error) {
	if lr.br == nil {
		return lr.nextInPlace()
	}
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.br.ReadSlice('\n')
		if len(lr.buf)+len(frag) > MaxLineBytes+1 || (err != nil && len(lr.buf)+len(frag) > MaxLineBytes) {
			return nil, &LineError{File: lr.name, Line: lr.n + 1, Reason: "line longer than 1 MiB", Err: ErrLineTooLong}
		}
		switch {
		case err == nil:
			lr.n++
			if len(lr.buf) == 0 {
				return frag[:len(frag)-1], nil
			}
			lr.buf = append(lr.buf, frag[:len(frag)-1]...)
			return lr.buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			lr.buf = append(lr.buf, frag...)
		case err == io.EOF:
			lr.buf = append(lr.buf, frag...)
			if len(lr.buf) == 0 {
				return nil, io.EOF
			}
			lr.n++
			return lr.buf, nil
		default:
			return nil, fmt.Errorf("read %s: %w", lr.name, err)
		}
	}
}

// nextInPlace is next on a whole input held in memory.
func (lr *lineReader) nextInPlace() ([]byte, error) {
	if len(lr.data) == 0 {
		return nil, io.EOF
	}
	line, rest, found := bytes.Cut(lr.data, []byte{'\n'})
	if len(line) > MaxLineBytes {
		return nil, &LineError{File: lr.name, Line: lr.n + 1, Reason: "line longer than 1 MiB", Err: ErrLineTooLong}
	}
	lr.n++
	if !found {
		rest = nil
	}
	lr.data = rest
	return line, nil
}

// readRecords reads chaos.jsonl or launcher.jsonl. These are written by the launcher, which is not
// killed mid-run, so every line must be a whole record.
func readRecords[T any](path, name string, check func(*T) string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("the run directory lacks %s: %w", name, err)
	}
	defer f.Close()
	lr := newLineReader(f, name)
	var out []T
	for {
		line, err := lr.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec T
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, &LineError{File: name, Line: lr.n, Reason: "not a record: " + err.Error(), Err: err}
		}
		if why := check(&rec); why != "" {
			return nil, &LineError{File: name, Line: lr.n, Reason: why}
		}
		out = append(out, rec)
	}
}

func checkLaunch(r *LaunchRecord) string {
	switch {
	case r.TS <= 0:
		return "record without ts"
	case r.Ev == "":
		return "record without ev"
	case (r.Ev == LaunchSpawned || r.Ev == LaunchExited) && r.Node < 1:
		return r.Ev + " record without node"
	}
	return ""
}

func checkChaos(r *ChaosRecord) string {
	switch {
	case r.TS <= 0:
		return "record without ts"
	case r.Op == "":
		return "record without op"
	}
	return ""
}
