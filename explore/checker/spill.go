package checker

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// spill is where a search's tables go past Options.MaxMemory: files in a directory of the search's
// own, made under Options.SpillDir (os.TempDir() when empty) at the first spill and removed when
// the search ends. Each file is unlinked as soon as it is open (the search keeps its descriptor or
// its mapping), so that however the search ends — an error, an interrupt, a kill — no file is left
// behind; a killed search leaves only the empty directory.
type spill struct {
	parent string
	mu     sync.Mutex
	dir    string
	used   int64 // bytes on disk now
	peak   int64
	err    error // the first I/O error: the search stops on it
}

// create makes a file in the spill directory, unlinked already.
func (sp *spill) create(what string) (*os.File, error) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.dir == "" {
		parent := sp.parent
		if parent == "" {
			parent = os.TempDir()
		}
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, sp.failedLocked(fmt.Errorf("the spill directory: %w", err))
		}
		dir, err := os.MkdirTemp(parent, "explore-spill-")
		if err != nil {
			return nil, sp.failedLocked(fmt.Errorf("the spill directory: %w", err))
		}
		sp.dir = dir
	}
	f, err := os.CreateTemp(sp.dir, what+"-")
	if err != nil {
		return nil, sp.failedLocked(fmt.Errorf("a spill file: %w", err))
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, sp.failedLocked(fmt.Errorf("a spill file: %w", err))
	}
	return f, nil
}

// grew counts bytes put on disk (negative: freed).
func (sp *spill) grew(n int64) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	sp.used += n
	sp.peak = max(sp.peak, sp.used)
}

// failed keeps the first I/O error and returns it.
func (sp *spill) failed(err error) error {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.failedLocked(err)
}

func (sp *spill) failedLocked(err error) error {
	if sp.err == nil {
		sp.err = err
	}
	return err
}

// spilled tells whether anything went to disk.
func (sp *spill) spilled() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.dir != ""
}

// onDisk is how many bytes are on disk now.
func (sp *spill) onDisk() int64 {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.used
}

// close removes the spill directory (its files are unlinked already).
func (sp *spill) close() {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.dir != "" {
		os.RemoveAll(sp.dir)
	}
}

// array is a growing array of numbers (the records of how states were reached, the graph's edges)
// in chunks, of which at most maxMem stay in memory: past that, the oldest full chunks go to a file,
// at their place in it, and are read back one number at a time (a path) or mapped whole (the
// topological sort).
type array[E uint32 | uint64] struct {
	chunks   [][]E // nil: on disk
	n        uint64
	inMem    int
	maxMem   int // 0: no bound
	spilled  int // chunks 0..spilled-1 are on disk
	chunkLen int
	f        *os.File
	sp       *spill
	mapping  []byte
}

// newArray makes an array that keeps about share bytes in memory (0: all), in chunks of at most
// most numbers: smaller ones when the share is small, so that a few fit in it.
func newArray[E uint32 | uint64](most, share int, sp *spill) *array[E] {
	a := &array[E]{chunkLen: most, sp: sp}
	if share == 0 {
		return a
	}
	for a.chunkLen > 1024 && a.chunkLen*a.size()*4 > share {
		a.chunkLen /= 2
	}
	a.maxMem = max(share/(a.chunkLen*a.size()), 1)
	return a
}

func (a *array[E]) size() int { var e E; return int(unsafe.Sizeof(e)) }

func (a *array[E]) Len() uint64 { return a.n }

// push appends v.
func (a *array[E]) push(v E) error {
	c := int(a.n / uint64(a.chunkLen))
	if c == len(a.chunks) {
		a.chunks = append(a.chunks, make([]E, 0, a.chunkLen))
		a.inMem++
		if a.maxMem > 0 && a.inMem > a.maxMem {
			if err := a.spillOldest(); err != nil {
				return err
			}
		}
	}
	a.chunks[c] = append(a.chunks[c], v)
	a.n++
	return nil
}

// spillOldest writes the oldest chunk still in memory (a full one) to the file.
func (a *array[E]) spillOldest() error {
	if a.f == nil {
		f, err := a.sp.create("array")
		if err != nil {
			return err
		}
		a.f = f
	}
	c := a.spilled
	b := unsafe.Slice((*byte)(unsafe.Pointer(&a.chunks[c][0])), a.chunkLen*a.size())
	if _, err := a.f.WriteAt(b, int64(c)*int64(len(b))); err != nil {
		return a.sp.failed(fmt.Errorf("spilling to disk: %w", err))
	}
	a.sp.grew(int64(len(b)))
	a.chunks[c] = nil
	a.spilled++
	a.inMem--
	return nil
}

// at reads number i.
func (a *array[E]) at(i uint64) E {
	c := a.chunks[i/uint64(a.chunkLen)]
	if c != nil {
		return c[i%uint64(a.chunkLen)]
	}
	var v E
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), a.size())
	if _, err := a.f.ReadAt(b, int64(i)*int64(a.size())); err != nil {
		panic(fmt.Sprintf("checker: reading back a spilled number: %v", err)) // the file is ours, and open
	}
	return v
}

// mapAll maps the chunks on disk into memory, so that at reads them at memory's speed; unmap
// undoes it.
func (a *array[E]) mapAll() error {
	if a.spilled == 0 {
		return nil
	}
	size := a.spilled * a.chunkLen * a.size()
	m, err := syscall.Mmap(int(a.f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return a.sp.failed(fmt.Errorf("mapping a spill file: %w", err))
	}
	a.mapping = m
	for c := 0; c < a.spilled; c++ {
		a.chunks[c] = unsafe.Slice((*E)(unsafe.Pointer(&m[c*a.chunkLen*a.size()])), a.chunkLen)
	}
	return nil
}

func (a *array[E]) unmap() {
	if a.mapping == nil {
		return
	}
	for c := 0; c < a.spilled; c++ {
		a.chunks[c] = nil
	}
	syscall.Munmap(a.mapping)
	a.mapping = nil
}

// close drops the array and its file.
func (a *array[E]) close() {
	a.unmap()
	if a.f != nil {
		a.f.Close()
		a.sp.grew(-int64(a.spilled) * int64(a.chunkLen*a.size()))
		a.f = nil
	}
	a.chunks, a.n, a.inMem, a.spilled = nil, 0, 0, 0
}

// bytes is the memory the array's chunks take.
func (a *array[E]) bytes() int { return a.inMem * a.chunkLen * a.size() }

// mmapRW maps size bytes of f, to read and write.
func mmapRW(f *os.File, size int) ([]byte, error) {
	return syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
}

func munmap(b []byte) {
	if b != nil {
		syscall.Munmap(b)
	}
}

// u32s is b as four-byte numbers.
func u32s(b []byte) []uint32 {
	if len(b) == 0 {
		return nil
	}
	return unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
}
