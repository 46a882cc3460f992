package checker

// seenTable is the search's set of states found, from fingerprint to how each was first reached. It
// is the search's hottest structure — every transition looks its successor up, and most successors
// were seen before — so it is a table of its own rather than a map: open addressing with linear
// probing over a power-of-two array of entries, each fingerprint with its record in one 40-byte entry
// (a lookup costs one cache line), the fingerprint's own low bits as the hash (fingerprints are
// uniform already: no hashing). The zero fingerprint marks an empty slot; a state whose fingerprint
// is zero (a chance of 2^-128) is kept apart.
type seenTable struct {
	slots   []seenEntry
	mask    uint64
	n       int
	zero    rec
	hasZero bool
}

type seenEntry struct {
	fp Fingerprint
	r  rec
}

// newSeenTable makes a table for about size states before it first grows.
func newSeenTable(size int) *seenTable {
	c := 1024
	for c*3/4 < size {
		c *= 2
	}
	return &seenTable{slots: make([]seenEntry, c), mask: uint64(c - 1)}
}

// Len is how many states the table holds.
func (t *seenTable) Len() int { return t.n }

// get finds fp's record.
func (t *seenTable) get(fp Fingerprint) (rec, bool) {
	if fp == (Fingerprint{}) {
		return t.zero, t.hasZero
	}
	for i := fp[0] & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.fp == fp {
			return e.r, true
		}
		if e.fp == (Fingerprint{}) {
			return rec{}, false
		}
	}
}

// put sets fp's record, adding fp when it is new; a record set again keeps its number (rec.idx).
func (t *seenTable) put(fp Fingerprint, r rec) {
	if fp == (Fingerprint{}) {
		if t.hasZero {
			r.idx = t.zero.idx
		} else {
			t.n++
		}
		t.zero, t.hasZero = r, true
		return
	}
	if (t.n+1)*4 > len(t.slots)*3 {
		t.grow()
	}
	if t.insert(fp, r) {
		t.n++
	}
}

// insert places fp in its slot or the first free one after it; it tells whether fp was new.
func (t *seenTable) insert(fp Fingerprint, r rec) bool {
	for i := fp[0] & t.mask; ; i = (i + 1) & t.mask {
		e := &t.slots[i]
		if e.fp == fp {
			r.idx = e.r.idx
			e.r = r
			return false
		}
		if e.fp == (Fingerprint{}) {
			*e = seenEntry{fp: fp, r: r}
			return true
		}
	}
}

// grow doubles the table.
func (t *seenTable) grow() {
	old := t.slots
	t.slots = make([]seenEntry, 2*len(old))
	t.mask = uint64(len(t.slots) - 1)
	for i := range old {
		if old[i].fp != (Fingerprint{}) {
			t.insert(old[i].fp, old[i].r)
		}
	}
}
