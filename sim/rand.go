package sim

import "math/rand"

// splitmix is a math/rand Source64 (SplitMix64). The standard source takes ~10µs to seed, which a
// 64-node simulation would pay once per machine; this one costs nothing to seed and is plenty for
// delays and picks.
type splitmix struct{ s uint64 }

func newRand(seed int64) *rand.Rand { return rand.New(&splitmix{s: uint64(seed)}) }

func (r *splitmix) Uint64() uint64 {
	r.s += 0x9e3779b97f4a7c15
	z := r.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (r *splitmix) Int63() int64    { return int64(r.Uint64() >> 1) }
func (r *splitmix) Seed(seed int64) { r.s = uint64(seed) }
