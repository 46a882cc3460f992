package checker

import (
	"fmt"
	"io"
	"os"
)

// batchLen is how many states of a level a worker takes at a time: few, for at the end of each
// level the others wait while the last batch is made and merged (with 256, an eighth of a search
// with two workers went so).
const batchLen = 64

// level is one depth of the breadth-first search: the states found at it and not expanded yet,
// stowed one after another (Model.Stower), in the order found, with where every batchLen-th one
// begins, so that the workers can take them in batches. Kept whole in memory, a level was what
// bounded a search; past its share of Options.MaxMemory it spills, as TLC's disk state queue does:
// the bytes so far go to the end of a file and the level goes on in memory.
type level struct {
	n       int
	starts  []int64 // where states 0, batchLen, 2·batchLen, ... begin
	mem     []byte  // the bytes from fileLen on
	fileLen int64
	f       *os.File
	maxMem  int // bytes kept in memory (0: no bound)
	sp      *spill
}

// reset empties the level for the next depth, and gives back the disk space it took.
func (l *level) reset() {
	if l.f != nil && l.fileLen > 0 {
		l.f.Truncate(0)
		l.sp.grew(-l.fileLen)
	}
	l.n, l.starts, l.mem, l.fileLen = 0, l.starts[:0], l.mem[:0], 0
}

// size is the level's bytes.
func (l *level) size() int64 { return l.fileLen + int64(len(l.mem)) }

// add appends a stowed state.
func (l *level) add(b []byte) error {
	if l.n%batchLen == 0 {
		l.starts = append(l.starts, l.size())
	}
	l.n++
	l.mem = append(l.mem, b...)
	if l.maxMem > 0 && len(l.mem) > l.maxMem {
		return l.spillMem()
	}
	return nil
}

// spillMem writes the bytes in memory to the end of the file.
func (l *level) spillMem() error {
	if l.f == nil {
		f, err := l.sp.create("level")
		if err != nil {
			return err
		}
		l.f = f
	}
	if _, err := l.f.WriteAt(l.mem, l.fileLen); err != nil {
		return l.sp.failed(fmt.Errorf("spilling a level to disk: %w", err))
	}
	l.sp.grew(int64(len(l.mem)))
	l.fileLen += int64(len(l.mem))
	l.mem = l.mem[:0]
	return nil
}

// batches is how many batches the level has.
func (l *level) batches() int { return len(l.starts) }

// batch is the bytes of batch k: a slice of the level's memory, or read into buf (returned, grown
// as needed) when any of it is on disk. Any number of goroutines may read a level at once.
func (l *level) batch(k int, buf []byte) ([]byte, []byte, error) {
	from, to := l.starts[k], l.size()
	if k+1 < len(l.starts) {
		to = l.starts[k+1]
	}
	if from >= l.fileLen {
		return l.mem[from-l.fileLen : to-l.fileLen], buf, nil
	}
	need := int(to - from)
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	buf = buf[:need]
	onDisk := min(to, l.fileLen) - from
	if _, err := l.f.ReadAt(buf[:onDisk], from); err != nil && err != io.EOF {
		return nil, buf, l.sp.failed(fmt.Errorf("reading a level back from disk: %w", err))
	}
	copy(buf[onDisk:], l.mem)
	return buf, buf, nil
}

// close drops the level's file.
func (l *level) close() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
