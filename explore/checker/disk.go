package checker

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"
	"syscall"
)

// seenSet is the set of states found, by fingerprint: the merge adds and looks up; a worker looks
// up in what it holds, for a batch, while the merge adds.
type seenSet interface {
	seenReader
	// hold is the set as a worker reads it for a batch, until it lets it go.
	hold() seenReader
	let(seenReader)
	// tidy frees what the set replaced and no worker holds (the merge alone, now and then).
	tidy()
	// add adds fp with number idx, unless the set has it: then it tells its number (exact sets).
	// The merge alone adds. missed, when not nil, is what a worker held and did not find fp in:
	// what the set has not changed since need not be looked at again.
	add(fp Fingerprint, idx uint32, missed seenReader) (uint32, bool, error)
	close()
}

// seenReader looks fingerprints up: get tells whether fp was added, and its number (exact sets
// only).
type seenReader interface {
	get(fp Fingerprint) (uint32, bool)
}

// fpSet is the exact seen set: a table in memory (seen.go) and, once the table passes its share of
// Options.MaxMemory, a run on disk, as TLC's disk fingerprint set does: the table's entries, sorted,
// are merged into a sorted file of every fingerprint found so far, and the table starts empty
// again. The file is mapped into memory (the kernel's page cache holds what fits: it is not the
// heap) and a lookup that the table misses is a binary search in it, narrowed by an index of every
// indexEvery-th key that is kept in memory.
type fpSet struct {
	view    atomic.Pointer[fpView] // what the readers see
	maxMem  int                    // entries the table holds before it goes to disk (0: no bound)
	sp      *spill
	retired []*fpView // views replaced, their runs unmapped once no worker holds them
}

// fpView is one table and the run on disk before it: a reader takes both at once, and holds them
// (readers) while it reads.
type fpView struct {
	mem     *table
	disk    *run
	readers atomic.Int64
}

func (v *fpView) get(fp Fingerprint) (uint32, bool) {
	if idx, ok := v.mem.get(fp); ok {
		return idx, true
	}
	return v.disk.get(fp)
}

func newFPSet(sp *spill, maxMem int) *fpSet {
	s := &fpSet{maxMem: maxMem, sp: sp}
	size := 1 << 16
	if maxMem > 0 {
		size = min(size, maxMem)
	}
	s.view.Store(&fpView{mem: newTable(size)})
	return s
}

func (s *fpSet) get(fp Fingerprint) (uint32, bool) { return s.view.Load().get(fp) }

// hold takes the view now, counted as read so that tidy leaves it: counted first and looked at
// again, for a view replaced between the two is let go (tidy looks at the count after the
// replacement, so it sees this reader, or this reader sees the replacement).
func (s *fpSet) hold() seenReader {
	for {
		v := s.view.Load()
		v.readers.Add(1)
		if s.view.Load() == v {
			return v
		}
		v.readers.Add(-1)
	}
}

func (s *fpSet) let(r seenReader) { r.(*fpView).readers.Add(-1) }

func (s *fpSet) add(fp Fingerprint, idx uint32, missed seenReader) (uint32, bool, error) {
	v := s.view.Load()
	if m, ok := missed.(*fpView); !ok || m.disk != v.disk { // the run on disk is not the one a worker looked in
		if old, ok := v.disk.get(fp); ok {
			return old, true, nil
		}
	}
	if old, had := v.mem.add(fp, idx); had {
		return old, true, nil
	}
	if s.maxMem == 0 || v.mem.Len() < s.maxMem {
		return idx, false, nil
	}
	disk, err := mergeRun(s.sp, v.disk, v.mem.sorted())
	if err != nil {
		return idx, false, err
	}
	s.view.Store(&fpView{mem: newTable(s.maxMem), disk: disk})
	s.retired = append(s.retired, v)
	return idx, false, nil
}

// onDisk is how many fingerprints the run on disk holds.
func (s *fpSet) onDisk() int {
	if d := s.view.Load().disk; d != nil {
		return d.n
	}
	return 0
}

func (s *fpSet) tidy() {
	s.retired = slices.DeleteFunc(s.retired, func(v *fpView) bool {
		if v.readers.Load() != 0 {
			return false
		}
		if v.disk != nil {
			v.disk.close(s.sp)
		}
		return true
	})
}

// close drops the set; nobody reads it any more.
func (s *fpSet) close() {
	for _, v := range s.retired {
		if v.disk != nil {
			v.disk.close(s.sp)
		}
	}
	s.retired = nil
	if d := s.view.Load().disk; d != nil {
		d.close(s.sp)
	}
	s.view.Store(&fpView{mem: newTable(0)})
}

// run is a sorted file of keys with their numbers (recLen bytes each), mapped into memory.
type run struct {
	data  []byte
	n     int
	index []uint64 // the first key word of records 0, indexEvery, 2·indexEvery, ...
}

const (
	recLen     = 20
	indexEvery = 128
)

func (r *run) rec(i int) entry {
	b := r.data[i*recLen:]
	return entry{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:]), binary.LittleEndian.Uint32(b[16:])}
}

// get finds fp's number in the run (nil: an empty run).
func (r *run) get(fp Fingerprint) (uint32, bool) {
	if r == nil {
		return 0, false
	}
	k := entry{k0: key0(fp), k1: fp[1]}
	// the records between the last indexed one below k0 and the first indexed one above it
	lo := sort.Search(len(r.index), func(i int) bool { return r.index[i] >= k.k0 })
	hi := sort.Search(len(r.index), func(i int) bool { return r.index[i] > k.k0 })
	from, to := max(lo-1, 0)*indexEvery, min(hi*indexEvery, r.n)
	i := from + sort.Search(to-from, func(i int) bool { return !r.rec(from + i).less(k) })
	if i < to {
		if e := r.rec(i); e.k0 == k.k0 && e.k1 == k.k1 {
			return e.idx, true
		}
	}
	return 0, false
}

// mergeRun writes the run old and the sorted entries add, merged, into a new file, and maps it.
func mergeRun(sp *spill, old *run, add []entry) (*run, error) {
	f, err := sp.create("seen")
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping stays
	w := bufio.NewWriterSize(f, 1<<20)
	r := &run{n: len(add)}
	if old != nil {
		r.n += old.n
	}
	var b [recLen]byte
	i, j, k := 0, 0, 0
	for ; k < r.n; k++ {
		var e entry
		if j >= len(add) || old != nil && i < old.n && old.rec(i).less(add[j]) {
			e = old.rec(i)
			i++
		} else {
			e = add[j]
			j++
		}
		if k%indexEvery == 0 {
			r.index = append(r.index, e.k0)
		}
		binary.LittleEndian.PutUint64(b[:], e.k0)
		binary.LittleEndian.PutUint64(b[8:], e.k1)
		binary.LittleEndian.PutUint32(b[16:], e.idx)
		if _, err := w.Write(b[:]); err != nil {
			return nil, sp.failed(err)
		}
	}
	if err := w.Flush(); err != nil {
		return nil, sp.failed(err)
	}
	sp.grew(int64(r.n) * recLen)
	if r.n > 0 {
		if r.data, err = syscall.Mmap(int(f.Fd()), 0, r.n*recLen, syscall.PROT_READ, syscall.MAP_SHARED); err != nil {
			return nil, sp.failed(fmt.Errorf("mapping the seen set's file: %w", err))
		}
	}
	return r, nil
}

func (r *run) close(sp *spill) {
	if r.data != nil {
		syscall.Munmap(r.data)
		r.data = nil
	}
	sp.grew(-int64(r.n) * recLen)
}
