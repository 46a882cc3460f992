package explore

import (
	"encoding/binary"
	"fmt"
	"slices"
	"time"
)

// checkStows (set by the package's tests) stows each state's fingerprint too, and checks it when
// the state is read back.
var checkStows bool

// level is one depth of the breadth-first search: the states found at it and not expanded yet,
// written one after another into a byte buffer. A state of the search is mostly shared parts
// (nodes and links) behind a slice of pointers for each (N + N² of them), and a level can hold a
// large share of the states found: kept whole, it was what bounded a search, not the table of
// fingerprints. Stowed, a state is its nodes and non-empty links as numbers in tables of the
// distinct ones (equal fingerprints, one copy), and its scalars: about 3 + 2L varints for L links
// in use, where it took 8(N + N²) bytes of pointers and a copy of every link it changed.
type level struct {
	buf []byte
	n   int
}

// parts numbers the distinct nodes and links stowed, by fingerprint: a node's with its place, for
// its fingerprint leaves out its configuration (two nodes in one state are two different nodes).
type parts struct {
	nodeIdx map[nodeKey]uint32
	nodes   []*nodeState
	linkIdx map[[2]uint64]uint32
	links   []*link
}

type nodeKey struct {
	h  [2]uint64
	id int
}

func (p *parts) node(id int, ns *nodeState) uint32 {
	key := nodeKey{ns.h, id}
	if k, ok := p.nodeIdx[key]; ok {
		return k
	}
	if p.nodeIdx == nil {
		p.nodeIdx, p.linkIdx = map[nodeKey]uint32{}, map[[2]uint64]uint32{}
	}
	k := uint32(len(p.nodes))
	p.nodes = append(p.nodes, ns)
	p.nodeIdx[key] = k
	return k
}

func (p *parts) link(l *link) uint32 {
	if k, ok := p.linkIdx[l.h]; ok {
		return k
	}
	k := uint32(len(p.links))
	p.links = append(p.links, kept(l))
	p.linkIdx[l.h] = k
	return k
}

// stow appends s to lv.
func (x *Explorer) stow(lv *level, s *state) {
	b := lv.buf
	for i, ns := range s.nodes {
		b = binary.AppendUvarint(b, uint64(x.parts.node(i+1, ns)))
	}
	used := 0
	for _, l := range s.links {
		if l != nil {
			used++
		}
	}
	b = binary.AppendUvarint(b, uint64(used))
	for i, l := range s.links {
		if l != nil {
			b = binary.AppendUvarint(b, uint64(i))
			b = binary.AppendUvarint(b, uint64(x.parts.link(l)))
		}
	}
	b = binary.AppendVarint(b, int64(s.now))
	b = binary.AppendUvarint(b, uint64(s.crashes))
	b = binary.AppendUvarint(b, uint64(s.restarts))
	b = binary.AppendUvarint(b, s.part)
	flag := byte(0)
	if s.partUsed {
		flag = 1
	}
	b = append(b, flag)
	b = binary.AppendVarint(b, int64(s.partAt))
	b = binary.AppendVarint(b, int64(s.sent))
	if checkStows {
		b = binary.LittleEndian.AppendUint64(b, s.fp[0])
		b = binary.LittleEndian.AppendUint64(b, s.fp[1])
	}
	lv.buf = b
	lv.n++
}

// unstow reads the state at the start of b into s (whose nodes and links it reuses) and returns
// the rest of b. The derived fields (messages in flight, the components' sum, the fingerprint) are
// computed again.
func (x *Explorer) unstow(b []byte, s *state) []byte {
	uv := func() uint64 {
		v, k := binary.Uvarint(b)
		b = b[k:]
		return v
	}
	iv := func() int64 {
		v, k := binary.Varint(b)
		b = b[k:]
		return v
	}
	if len(s.nodes) != x.n {
		s.nodes, s.links = make([]*nodeState, x.n), make([]*link, x.n*x.n)
	}
	clear(s.links)
	s.sum, s.inflight = [2]uint64{}, 0
	for i := range s.nodes {
		ns := x.parts.nodes[uv()]
		s.nodes[i] = ns
		s.add(ns.h, nodeSalt(i), plus)
	}
	for used := uv(); used > 0; used-- {
		i := int(uv())
		l := x.parts.links[uv()]
		s.links[i] = l
		s.add(l.h, linkSalt(i), plus)
		s.inflight += len(l.q)
	}
	s.now = time.Duration(iv())
	s.crashes = int(uv())
	s.restarts = int(uv())
	s.part = uv()
	s.partUsed = b[0] == 1
	b = b[1:]
	s.partAt = time.Duration(iv())
	s.sent = int(iv())
	s.seal()
	if checkStows {
		want := fingerprint{binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[8:])}
		b = b[16:]
		if s.fp != want {
			panic(fmt.Sprintf("explore: a state stowed as %x came back as %x", want, s.fp))
		}
	}
	return b
}

// linkPool hands out the links made by a transition on the explorer's scratch state
// (applyScratch). Most successors are states seen before, whose new links are garbage at once: from
// the pool they cost no allocation. A pooled link is valid until the next applyScratch; a state kept
// beyond that (clone, stow) copies its pooled links out first.
type linkPool struct {
	on     bool
	links  [][]link
	lc, li int // the next link: chunk lc, index li
	qs     [][]pmsg
	qc, qi int // the next message slot: chunk qc, index qi
}

const (
	poolLinks = 1024
	poolMsgs  = 8192
)

// reset starts handing out from the beginning again.
func (p *linkPool) reset() { p.lc, p.li, p.qc, p.qi = 0, 0, 0, 0 }

// link returns a link holding q: a pooled one while the pool is on.
func (p *linkPool) link(q []pmsg) *link {
	if !p.on {
		return &link{q: q}
	}
	if p.lc < len(p.links) && p.li == len(p.links[p.lc]) {
		p.lc, p.li = p.lc+1, 0
	}
	if p.lc == len(p.links) {
		p.links = append(p.links, make([]link, poolLinks))
	}
	l := &p.links[p.lc][p.li]
	p.li++
	*l = link{q: q, pooled: true}
	return l
}

// msgs returns a queue of length n and capacity c: from the pool while it is on.
func (p *linkPool) msgs(n, c int) []pmsg {
	if !p.on {
		return make([]pmsg, n, c)
	}
	for p.qc < len(p.qs) && len(p.qs[p.qc])-p.qi < c {
		p.qc, p.qi = p.qc+1, 0
	}
	if p.qc == len(p.qs) {
		p.qs = append(p.qs, make([]pmsg, max(poolMsgs, c)))
	}
	q := p.qs[p.qc][p.qi : p.qi+n : p.qi+c]
	p.qi += c
	return q
}

// kept is l, copied out of the pool if it is pooled.
func kept(l *link) *link {
	if l == nil || !l.pooled {
		return l
	}
	return &link{q: slices.Clone(l.q), h: l.h}
}
