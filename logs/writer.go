package logs

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
)

// Writer appends events to a JSON-lines file, one write(2) per line and no buffering, so that a
// SIGKILLed process loses at most a torn last line.
type Writer struct {
	mu     sync.Mutex
	f      *os.File
	fd     uintptr // f's, for writeLine's raw write(2)
	closed bool
	b      []byte
}

// OpenWriter opens path for appending, creating it with mode 0644. When the file ends in a torn line
// (a previous incarnation was killed mid-write), the line is ended with a newline first, so the torn
// line stays the last line of that incarnation.
func OpenWriter(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open event log: %w", err)
	}
	if err := endTornLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("event log %s: %w", path, err)
	}
	return &Writer{f: f, fd: f.Fd()}, nil
}

func endTornLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
		return err
	}
	if last[0] != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	return err
}

// Write appends one event as one line.
func (w *Writer) Write(e *Event) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return &os.PathError{Op: "write", Path: w.f.Name(), Err: os.ErrClosed}
	}
	var err error
	w.b, err = AppendEvent(w.b[:0], e)
	if err != nil {
		return err
	}
	return writeLine(w.f, w.fd, w.b)
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	return w.f.Close()
}

// JSONLines appends values as JSON lines to a file (chaos.jsonl, launcher.jsonl), one write per line.
type JSONLines struct {
	mu sync.Mutex
	f  *os.File
}

// OpenJSONLines opens path for appending, creating it with mode 0644.
func OpenJSONLines(path string) (*JSONLines, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return &JSONLines{f: f}, nil
}

// Write appends v as one line.
func (j *JSONLines) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T: %w", v, err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	_, err = j.f.Write(append(b, '\n'))
	return err
}

// Close closes the file.
func (j *JSONLines) Close() error { return j.f.Close() }
