package explore

import "sync/atomic"

// stepCache keeps the outcomes of the machines' steps by their key (stepKey: the node's
// fingerprint and the input's), one cache for the model and all its forks: a step that one worker
// made, the others find. It is a table of pointers to entries, open addressing by the key's own
// low bits (a key is a hash already: a Go map hashed it again, and its lookups took a tenth of a
// search); an entry is set once, by compare-and-swap, and read without a lock. A table half full
// is replaced by one twice its size with its entries, until it holds max; then by an empty one. A
// reader of the old table still reads entries that are right, for an entry never changes; an entry
// put in the old one while it is copied may be lost, which costs a step made again. (A table of
// its final size from the start cost more than the whole search in this machine's page faults.)
type stepCache struct {
	t   atomic.Pointer[stepTable]
	max int
}

type stepTable struct {
	slots []atomic.Pointer[stepEntry]
	mask  uint64
	n     atomic.Int64
}

type stepEntry struct {
	key fingerprint
	r   *stepResult
}

// newStepCache holds up to max entries (at most half full).
func newStepCache(max int) *stepCache {
	c := &stepCache{max: max}
	c.t.Store(newStepTable(1024))
	return c
}

func newStepTable(n int) *stepTable {
	return &stepTable{slots: make([]atomic.Pointer[stepEntry], n), mask: uint64(n - 1)}
}

// get finds key's outcome (nil: none).
func (c *stepCache) get(key fingerprint) *stepResult {
	t := c.t.Load()
	for i := key[0] & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i].Load()
		if e == nil {
			return nil
		}
		if e.key == key {
			return e.r
		}
	}
}

// put keeps key's outcome; when two workers put the same key, the first stays (both are the same
// step's outcome).
func (c *stepCache) put(key fingerprint, r *stepResult) {
	t := c.t.Load()
	if n := t.n.Load(); n >= int64(c.max) {
		c.t.CompareAndSwap(t, newStepTable(1024))
		t = c.t.Load()
	} else if 2*n >= int64(len(t.slots)) {
		c.t.CompareAndSwap(t, t.grown())
		t = c.t.Load()
	}
	e := &stepEntry{key: key, r: r}
	for i := key[0] & t.mask; ; i = (i + 1) & t.mask {
		if t.slots[i].CompareAndSwap(nil, e) {
			t.n.Add(1)
			return
		}
		if t.slots[i].Load().key == key {
			return
		}
	}
}

// grown is a table twice t's size with t's entries.
func (t *stepTable) grown() *stepTable {
	g := newStepTable(2 * len(t.slots))
	for i := range t.slots {
		if e := t.slots[i].Load(); e != nil {
			for j := e.key[0] & g.mask; ; j = (j + 1) & g.mask {
				if g.slots[j].Load() == nil {
					g.slots[j].Store(e)
					g.n.Add(1)
					break
				}
			}
		}
	}
	return g
}

// len is how many entries the cache holds now.
func (c *stepCache) len() int { return int(c.t.Load().n.Load()) }
