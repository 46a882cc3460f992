package explore

// Fingerprints. A state's fingerprint is a hash of the sum of its components' hashes, each
// salted by where it sits (a node, a link), and of its scalars: a transition that changes one node
// and a link or two updates the sum by those alone.

import (
	"encoding/binary"
	"hash/maphash"

	"github.com/leaderlab/leaderlab/election"
)

var hashSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func hash2(b []byte) [2]uint64 {
	return [2]uint64{maphash.Bytes(hashSeeds[0], b), maphash.Bytes(hashSeeds[1], b)}
}

// mix spreads a component's hash over 64 bits, salted by where it sits, so that the sum of the
// components tells one arrangement from another.
func mix(h, salt uint64) uint64 {
	z := h ^ (salt * 0x9e3779b97f4a7c15)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *state) add(h [2]uint64, salt uint64, sign uint64) {
	s.sum[0] += sign * mix(h[0], salt)
	s.sum[1] += sign * mix(h[1], salt^0x5555555555555555)
}

const (
	plus  = uint64(1)
	minus = ^uint64(0) // -1 mod 2^64
)

// seal computes the fingerprint from the components' sum and the scalars.
func (s *state) seal() {
	var b [48]byte
	x := binary.LittleEndian.AppendUint64(b[:0], s.sum[0])
	x = binary.LittleEndian.AppendUint64(x, s.sum[1])
	x = binary.AppendVarint(x, int64(s.now))
	x = binary.AppendVarint(x, int64(s.crashes))
	x = binary.AppendVarint(x, int64(s.restarts))
	x = binary.AppendVarint(x, int64(s.sent))
	x = binary.AppendUvarint(x, s.part)
	if s.partUsed {
		x = binary.AppendVarint(x, int64(s.partAt)+1)
	}
	s.fp = hash2(x)
}

func nodeSalt(i int) uint64 { return uint64(i)<<1 | 1 }

func linkSalt(i int) uint64 { return uint64(i+1) << 20 }

// encodeNode fingerprints a node.
func (x *model) encodeNode(ns *nodeState) { ns.h = x.nodeHash(ns, false) }

// plainHash fingerprints a node without its instants.
func (x *model) plainHash(ns *nodeState) [2]uint64 { return x.nodeHash(ns, true) }

// nodeHash fingerprints a node, its instants left out when noInstants is set.
func (x *model) nodeHash(ns *nodeState, noInstants bool) [2]uint64 {
	e := &x.enc
	e.b, e.ptrs, e.noInstants = e.b[:0], e.ptrs[:0], noInstants
	e.varint(int64(ns.inc))
	e.uvarint(ns.suspects)
	e.uvarint(uint64(len(ns.hbTo)))
	for _, p := range ns.hbTo {
		e.uvarint(uint64(p))
	}
	e.uvarint(uint64(len(ns.watch)))
	for _, p := range ns.watch {
		e.uvarint(uint64(p))
	}
	e.uvarint(ns.byTimeout)
	e.uvarint(uint64(len(ns.timers)))
	for _, t := range ns.timers {
		e.uvarint(uint64(len(t.name)))
		e.b = append(e.b, t.name...)
		e.varint(int64(t.at))
	}
	if ns.m != nil {
		e.b = append(e.b, 1)
		e.pointer(x.mplan.elem, ptrOf(ns.m))
	}
	e.noInstants = false
	return hash2(e.b)
}

// encodeLink fingerprints a link's queue.
func (x *model) encodeLink(l *link) {
	e := &x.enc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	for i := range l.q {
		p := &l.q[i]
		e.b = append(e.b, byte(p.k))
		e.uvarint(uint64(p.id))
	}
	l.h = hash2(e.b)
}

// intern numbers a message by its content: equal messages get one number, in the order they were
// first sent, so that a number stands for the same message in every state of the search.
func (x *model) intern(m *election.Message) uint32 {
	e := &x.menc
	e.b, e.ptrs = e.b[:0], e.ptrs[:0]
	e.value(x.msgPlan, ptrOfMsg(m))
	return x.msgs.number(e.b, m)
}
