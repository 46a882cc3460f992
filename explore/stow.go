package explore

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// checkStows (set by the package's tests) stows each state's fingerprint too, and checks it when
// the state is read back.
var checkStows bool

// stower writes the model's states into the checker's levels (checker.Stower), the states of one
// depth of the breadth-first search, found and not expanded yet. A state of the search is mostly
// shared parts (nodes and links) behind a slice of pointers for each (N + N² of them), and a level
// can hold a large share of the states found: kept whole, it was what bounded a search, not the
// table of fingerprints. Stowed, a state is its nodes and non-empty links as numbers in tables of
// the distinct ones (equal fingerprints, one copy), and its scalars: about 3 + 2L varints for L
// links in use, where it took 8(N + N²) bytes of pointers and a copy of every link it changed.
// The tables are one for the model and its forks (the workers read each other's levels). A node
// or link numbered once keeps its number (part): most of a state's parts are its parent's, read
// back from the tables, so most take no lookup (a map of the numbers, looked up for every part,
// took a sixth of a search).
type stower struct {
	n     int
	parts *parts
	cur   state // the state Unstow read last
}

// parts numbers the distinct nodes and links stowed, by fingerprint: a node's with its place, for
// its fingerprint leaves out its configuration (two nodes in one state are two different nodes).
type parts struct {
	mu      sync.Mutex
	nodeIdx map[nodeKey]uint32
	nodes   list[*nodeState]
	linkIdx map[[2]uint64]uint32
	links   list[*link]
}

type nodeKey struct {
	h  [2]uint64
	id int
}

func newStower(n int, p *parts) *stower { return &stower{n: n, parts: p} }

func (w *stower) node(id int, ns *nodeState) uint32 {
	if v := atomic.LoadUint64(&ns.part); v != 0 && int(v>>32) == id {
		return uint32(v) - 1
	}
	key := nodeKey{ns.h, id}
	p := w.parts
	p.mu.Lock()
	k, ok := p.nodeIdx[key]
	if !ok {
		if p.nodeIdx == nil {
			p.nodeIdx, p.linkIdx = map[nodeKey]uint32{}, map[[2]uint64]uint32{}
		}
		k = p.nodes.add(ns)
		p.nodeIdx[key] = k
	}
	p.mu.Unlock()
	atomic.StoreUint64(&ns.part, uint64(id)<<32|uint64(k+1))
	return k
}

func (w *stower) link(l *link) uint32 {
	if v := atomic.LoadUint32(&l.part); v != 0 {
		return v - 1
	}
	p := w.parts
	p.mu.Lock()
	k, ok := p.linkIdx[l.h]
	if !ok {
		if p.linkIdx == nil {
			p.nodeIdx, p.linkIdx = map[nodeKey]uint32{}, map[[2]uint64]uint32{}
		}
		c := kept(l)
		k = p.links.add(c)
		atomic.StoreUint32(&c.part, k+1)
		p.linkIdx[l.h] = k
	}
	p.mu.Unlock()
	if !l.pooled {
		atomic.StoreUint32(&l.part, k+1)
	}
	return k
}

// Stow appends s to b.
func (w *stower) Stow(b []byte, s *state) []byte {
	for i, ns := range s.nodes {
		b = binary.AppendUvarint(b, uint64(w.node(i+1, ns)))
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
			b = binary.AppendUvarint(b, uint64(w.link(l)))
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
	return b
}

// Unstow reads the state at the start of b and returns it, valid until the next Unstow (its nodes
// and links are reused), and the rest of b. The derived fields (messages in flight, the
// components' sum, the fingerprint) are computed again.
func (w *stower) Unstow(b []byte) (*state, []byte) {
	s := &w.cur
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
	if len(s.nodes) != w.n {
		s.nodes, s.links = make([]*nodeState, w.n), make([]*link, w.n*w.n)
	}
	clear(s.links)
	s.sum, s.inflight = [2]uint64{}, 0
	for i := range s.nodes {
		ns := *w.parts.nodes.at(uint32(uv()))
		s.nodes[i] = ns
		s.add(ns.h, nodeSalt(i), plus)
	}
	for used := uv(); used > 0; used-- {
		i := int(uv())
		l := *w.parts.links.at(uint32(uv()))
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
	return s, b
}

// pack and unpack store an event in 32 bits: kind, node, peer, and the timer's name as an index into
// the explorer's table of names.
func (x *model) pack(ev event) uint32 {
	t := 0
	if ev.kind == evTimer {
		t = slices.Index(x.timerNames, ev.timer)
		if t < 0 {
			x.timerNames = append(x.timerNames, ev.timer)
			t = len(x.timerNames) - 1
		}
	}
	if ev.kind == evPartition {
		return uint32(ev.kind) | uint32(ev.mask)<<4
	}
	return uint32(ev.kind) | uint32(ev.node)<<4 | uint32(ev.peer)<<12 | uint32(t)<<20
}

func (x *model) unpack(p uint32) event {
	if evKind(p&0xf) == evPartition {
		return event{kind: evPartition, mask: uint64(p >> 4)}
	}
	ev := event{kind: evKind(p & 0xf), node: int(p >> 4 & 0xff), peer: int(p >> 12 & 0xff)}
	if ev.kind == evTimer {
		ev.timer = x.timerNames[p>>20]
	}
	return ev
}
