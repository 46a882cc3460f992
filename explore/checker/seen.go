package checker

import (
	"slices"
	"sync/atomic"
	"unsafe"
)

// table is a set of fingerprints, each with a number (the state's, in the order found). It is the
// search's hottest structure — every transition looks its successor up, and most successors were
// seen before — so it is a table of its own rather than a map: open addressing with linear probing
// over a power-of-two array of 24-byte slots, the fingerprint's own low bits as the hash
// (fingerprints are uniform already: no hashing).
//
// One goroutine adds (the merge); any number look up at the same time, without a lock: a slot's
// first word is written last, atomically, so a reader that sees it sees the rest, and a table that
// grows is filled before it is published. A reader may miss what is being added (the merge, which
// decides, looks again); it never finds what was not added. This is how the workers share one seen
// set (stateright shards its map behind locks; a single writer needs none).
type table struct {
	slots atomic.Pointer[[]slot]
	n     int
}

// slot holds a fingerprint by its key (key0: never 0, which marks an empty slot) and its number.
// Readers load k0 atomically; the writer stores it atomically in a published array, and plainly in
// one it is filling (grow), which nobody reads yet.
type slot struct {
	k0  uint64
	k1  uint64
	idx uint32
}

// key0 is the fingerprint's first word as a table keeps it: 0 is taken as 1, so that 0 can mark an
// empty slot (two states then share a key only if their second words are equal too: 2^-127).
func key0(fp Fingerprint) uint64 { return max(fp[0], 1) }

// newTable makes a table for about size fingerprints before it first grows.
func newTable(size int) *table {
	t := &table{}
	s := makeSlots(tableCap(size))
	t.slots.Store(&s)
	return t
}

// tableCap is the capacity a table for size fingerprints starts with: a power of two, at most 3/4
// full.
func tableCap(size int) int {
	c := 1024
	for c*3/4 < size {
		c *= 2
	}
	return c
}

// slotBytes is what a slot takes.
const slotBytes = 24

// Len is how many fingerprints the table holds (the writer's count).
func (t *table) Len() int { return t.n }

// Bytes is the memory its slots take.
func (t *table) Bytes() int { return len(*t.slots.Load()) * slotBytes }

// get finds fp's number; any goroutine may call it while the writer adds.
func (t *table) get(fp Fingerprint) (uint32, bool) {
	k0 := key0(fp)
	s := *t.slots.Load()
	mask := uint64(len(s) - 1)
	for i := k0 & mask; ; i = (i + 1) & mask {
		e := &s[i]
		v := atomic.LoadUint64(&e.k0)
		if v == 0 {
			return 0, false
		}
		if v == k0 && e.k1 == fp[1] {
			return e.idx, true
		}
	}
}

// add puts fp with number idx, unless it is there already: then it tells the number it has. The
// writer alone calls it.
func (t *table) add(fp Fingerprint, idx uint32) (uint32, bool) {
	if (t.n+1)*4 > len(*t.slots.Load())*3 {
		t.grow()
	}
	old, had := t.insert(*t.slots.Load(), key0(fp), fp[1], idx, true)
	if !had {
		t.n++
	}
	return old, had
}

// set gives fp the number idx, adding it if it is new: for a table no other goroutine reads (the
// cycle search numbers its states in one, and renumbers them).
func (t *table) set(fp Fingerprint, idx uint32) {
	if (t.n+1)*4 > len(*t.slots.Load())*3 {
		t.grow()
	}
	s := *t.slots.Load()
	k0, mask := key0(fp), uint64(len(s)-1)
	for i := k0 & mask; ; i = (i + 1) & mask {
		e := &s[i]
		switch e.k0 {
		case 0:
			e.k1, e.idx = fp[1], idx
			atomic.StoreUint64(&e.k0, k0)
			t.n++
			return
		case k0:
			if e.k1 == fp[1] {
				e.idx = idx
				return
			}
		}
	}
}

// insert places a key in its slot or the first free one after it; it tells the number the key had
// when it was there already. published: s is read by others (the key is stored atomically).
func (t *table) insert(s []slot, k0, k1 uint64, idx uint32, published bool) (uint32, bool) {
	mask := uint64(len(s) - 1)
	for i := k0 & mask; ; i = (i + 1) & mask {
		e := &s[i]
		v := e.k0 // the writer's own
		if v == 0 {
			e.k1, e.idx = k1, idx
			if published {
				atomic.StoreUint64(&e.k0, k0)
			} else {
				e.k0 = k0
			}
			return 0, false
		}
		if v == k0 && e.k1 == k1 {
			return e.idx, true
		}
	}
}

// grow doubles the table: a new array, filled, then published.
func (t *table) grow() {
	old := *t.slots.Load()
	s := makeSlots(2 * len(old))
	for i := range old {
		if k0 := old[i].k0; k0 != 0 {
			t.insert(s, k0, old[i].k1, old[i].idx, false)
		}
	}
	t.slots.Store(&s)
}

// makeSlots makes an array of n empty slots, in huge pages where the kernel gives them.
func makeSlots(n int) []slot {
	s := make([]slot, n)
	adviseHuge(unsafe.Pointer(unsafe.SliceData(s)), n*slotBytes)
	return s
}

// entry is a key and its number, as the disk runs hold them (disk.go).
type entry struct {
	k0, k1 uint64
	idx    uint32
}

func (a entry) less(b entry) bool { return a.k0 < b.k0 || a.k0 == b.k0 && a.k1 < b.k1 }

// sorted lists the table's entries in the order of their keys.
func (t *table) sorted() []entry {
	s := *t.slots.Load()
	out := make([]entry, 0, t.n)
	for i := range s {
		if k0 := s[i].k0; k0 != 0 {
			out = append(out, entry{k0, s[i].k1, s[i].idx})
		}
	}
	slices.SortFunc(out, func(a, b entry) int {
		switch {
		case a.less(b):
			return -1
		case b.less(a):
			return 1
		}
		return 0
	})
	return out
}
