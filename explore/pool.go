package explore

import "slices"

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
