package checker

import (
	"fmt"
	"io"
	"os"
	"sync/atomic"
)

// batchLen is how many states of a level a worker takes at a time: few, so that the last batches
// of a level, which the merge waits for, are short.
const batchLen = 64

// chunk is one batch of a level's states, stowed one after another (Model.Stower): in memory, or
// at off in the level's file once the level passed its share of Options.MaxMemory (TLC's disk state
// queue). Never changed once sealed: a spilled chunk is a new chunk in the queue, and a worker that
// took the one in memory reads that.
type chunk struct {
	depth int
	first uint32 // the number of its first state
	mem   []byte
	file  *os.File
	off   int64
	size  int
}

// read is the chunk's bytes: its memory, or read into buf (returned, grown as needed).
func (c *chunk) read(buf []byte, sp *spill) ([]byte, []byte, error) {
	if c.file == nil {
		return c.mem, buf, nil
	}
	if cap(buf) < c.size {
		buf = make([]byte, c.size)
	}
	buf = buf[:c.size]
	if _, err := c.file.ReadAt(buf, c.off); err != nil && err != io.EOF {
		return nil, buf, sp.failed(fmt.Errorf("reading a level back from disk: %w", err))
	}
	return buf, buf, nil
}

// queue is every chunk sealed so far, in the order the workers take them and the merge merges
// them: the search's levels one after another. The merge appends and replaces (a chunk spilled);
// anyone reads an entry below sealed without a lock.
type queue struct {
	pages  atomic.Pointer[[]*[queuePage]atomic.Pointer[chunk]]
	sealed atomic.Int64
}

const queuePage = 1024

func (q *queue) slot(g int) *atomic.Pointer[chunk] {
	return &(*q.pages.Load())[g/queuePage][g%queuePage]
}

func (q *queue) at(g int) *chunk { return q.slot(g).Load() }

// push appends c (the merge alone).
func (q *queue) push(c *chunk) {
	g := int(q.sealed.Load())
	ps := q.pages.Load()
	if ps == nil || g/queuePage == len(*ps) {
		var grown []*[queuePage]atomic.Pointer[chunk]
		if ps != nil {
			grown = append(grown, *ps...)
		}
		grown = append(grown, new([queuePage]atomic.Pointer[chunk]))
		q.pages.Store(&grown)
	}
	q.slot(g).Store(c)
	q.sealed.Store(int64(g + 1))
}

// level is the level the merge is making: its states come one at a time (add) and are sealed
// into chunks of batchLen, pushed on the queue at once, so that the workers may take them while
// the merge of the level before goes on. Past maxMem bytes in memory, its chunks go to its file.
type level struct {
	depth  int
	base   uint32 // the number of its first state
	n      int    // states
	chunks int
	first  int    // the queue's number of its first chunk
	open   []byte // the states of the chunk being filled
	inMem  []int  // the queue's numbers of its chunks still in memory
	memLen int
	f      *os.File
	size   int64
	maxMem int
	sp     *spill
	q      *queue
}

// add appends a stowed state.
func (l *level) add(b []byte) error {
	l.open = append(l.open, b...)
	l.n++
	if l.n%batchLen == 0 {
		return l.seal()
	}
	return nil
}

// seal pushes the open chunk, if any, on the queue.
func (l *level) seal() error {
	if len(l.open) == 0 {
		return nil
	}
	c := &chunk{depth: l.depth, first: l.base + uint32(l.chunks*batchLen), mem: append([]byte(nil), l.open...)}
	c.size = len(c.mem)
	l.open = l.open[:0]
	g := int(l.q.sealed.Load())
	if l.chunks == 0 {
		l.first = g
	}
	l.chunks++
	l.q.push(c)
	l.inMem = append(l.inMem, g)
	l.memLen += c.size
	if l.maxMem > 0 && l.memLen > l.maxMem {
		return l.spill()
	}
	return nil
}

// spill writes the chunks still in memory to the end of the level's file and puts them in the
// queue as chunks on disk.
func (l *level) spill() error {
	if l.f == nil {
		f, err := l.sp.create("level")
		if err != nil {
			return err
		}
		l.f = f
	}
	for _, g := range l.inMem {
		c := l.q.at(g)
		if _, err := l.f.WriteAt(c.mem, l.size); err != nil {
			return l.sp.failed(fmt.Errorf("spilling a level to disk: %w", err))
		}
		l.q.slot(g).Store(&chunk{depth: c.depth, first: c.first, file: l.f, off: l.size, size: c.size})
		l.size += int64(c.size)
		l.sp.grew(int64(c.size))
	}
	l.inMem, l.memLen = l.inMem[:0], 0
	return nil
}

// close drops the level's file (its chunks are merged: nobody reads them).
func (l *level) close() {
	if l.f != nil {
		l.f.Close()
		l.sp.grew(-l.size)
		l.f, l.size = nil, 0
	}
}
