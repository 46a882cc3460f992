package checker

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// bitSet is the seen set of a bitstate search (Holzmann's bitstate hashing, SPIN's -DBITSTATE): a
// state is bitsK bits of one array, chosen by its fingerprint, and counts as seen when all of them
// are set. It holds a state in a few bits where the exact set takes some 30 bytes, so a search goes
// on far past what memory and disk hold — at a price: a state whose bits other states happen to
// have set is taken as seen and never explored (nor what only it leads to). So the search is
// partial; it says so, with the chance that a given state was lost so, and an estimate of how many
// were (omission).
type bitSet struct {
	words []atomic.Uint64
	m     uint64 // bits
	set   uint64 // bits set (the writer's count)
	// lost is the expected number of states taken as seen wrongly so far: at each state added, the
	// chance that a new state is taken as seen at that fill, summed (a sum over the states
	// added, each of which stood for 1/(1-p) lookups of new states: p/(1-p)).
	lost float64
}

// bitsK is how many bits a state sets (SPIN's default, -k3).
const bitsK = 3

func newBitSet(bytes uint64) *bitSet {
	w := max(bytes/8, 1)
	return &bitSet{words: make([]atomic.Uint64, w), m: w * 64}
}

// bit is the i-th bit of fp: the fingerprint's words mixed with i (a fingerprint need not be
// uniform in both words), scaled into the array (a multiply, not a modulo: the array's size need
// not be a power of two).
func (b *bitSet) bit(fp Fingerprint, i uint64) uint64 {
	hi, _ := bits.Mul64(mix64(fp[0]^mix64(fp[1]+i)), b.m)
	return hi
}

// mix64 is splitmix64's finalizer.
func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func (b *bitSet) get(fp Fingerprint) (uint32, bool) {
	for i := uint64(0); i < bitsK; i++ {
		k := b.bit(fp, i)
		if b.words[k/64].Load()&(1<<(k%64)) == 0 {
			return 0, false
		}
	}
	return 0, true
}

func (b *bitSet) add(fp Fingerprint, idx uint32, _ seenReader) (uint32, bool, error) {
	if _, ok := b.get(fp); ok {
		return 0, true, nil
	}
	p := b.omission()
	b.lost += p / (1 - p)
	for i := uint64(0); i < bitsK; i++ {
		k := b.bit(fp, i)
		w := &b.words[k/64]
		if old := w.Load(); old&(1<<(k%64)) == 0 {
			w.Store(old | 1<<(k%64)) // the writer alone stores
			b.set++
		}
	}
	return idx, false, nil
}

// omission is the chance, at the fill now, that a state never seen is taken as seen.
func (b *bitSet) omission() float64 {
	return math.Pow(float64(b.set)/float64(b.m), bitsK)
}

func (b *bitSet) hold() seenReader { return b }
func (b *bitSet) let(seenReader)   {}
func (b *bitSet) tidy()            {}

func (b *bitSet) close() { b.words = nil }
