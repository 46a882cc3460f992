package check

import (
	"cmp"
	"slices"
	"sort"
)

// Suspicions counts the failure detector's verdicts and how many of them were false: the suspected
// node was alive, had begun, ran (was not paused) through the whole timeout before the suspicion,
// and no fault hid it from the suspecting node meanwhile (a partition, or a link rule of any kind
// from it to the suspecting node). A false suspicion is the detector fooled by something the run did
// not do to the network or the nodes: the machine's load, the suspecting node's own stall, a bug.
type Suspicions struct {
	Total int `json:"total"`
	False int `json:"false"`
	// Early counts the suspicions of a node that had not yet been begun for a whole timeout: the
	// launcher's begin reached it late (the nodes of a large cluster are begun a few at a time).
	Early int `json:"early"`
	// Examples are the first false ones, in time order.
	Examples []FalseSuspicion `json:"examples,omitempty"`
}

// FalseSuspicion is one suspicion of a live, running node that no fault hid.
type FalseSuspicion struct {
	By     int     `json:"by"`
	Peer   int     `json:"peer"`
	AtMS   float64 `json:"at_ms"`
	Reason string  `json:"reason,omitempty"`
}

// maxFalseExamples bounds the examples a verdict lists.
const maxFalseExamples = 10

// suspState is the suspicions as the play judged them, and the rules in force over the last
// timeout (the only stretch a suspicion looks back on).
type suspState struct {
	out Suspicions
	// examples are the first false ones in node order (node, place in the log), sorted by time
	// at the end as they always were.
	examples []suspExample
	// nets are the rule sets the points held, from the one in force a timeout ago on.
	nets []netAt
}

type suspExample struct {
	node, i int
	ex      FalseSuspicion
}

type netAt struct {
	t   int64
	net *netState
}

// suspNet records a point's rules, and forgets those older than a timeout before it.
func (c *checker) suspNet(pt *point) {
	s := &c.susp
	if n := len(s.nets); n > 0 && s.nets[n-1].net == pt.net {
		return
	}
	s.nets = append(s.nets, netAt{pt.t, pt.net})
	horizon := pt.t - int64(c.run.Cluster.Timeout.D())
	k := 0
	for k+1 < len(s.nets) && s.nets[k+1].t <= horizon {
		k++
	}
	if k > 0 {
		s.nets = append(s.nets[:0], s.nets[k:]...)
	}
}

// suspEvent judges a suspect event of the nodes' logs within the observed run.
func (c *checker) suspEvent(e *mEvent) {
	t := e.t
	if t < c.begin || t > c.end {
		return
	}
	s := &c.susp
	s.out.Total++
	switch c.suspicionOf(e.node, e.Peer, t, int64(c.run.Cluster.Timeout.D())) {
	case suspicionFalse:
		s.out.False++
		ex := suspExample{node: e.node, i: e.i, ex: FalseSuspicion{By: e.node, Peer: e.Peer, AtMS: c.relMS(t), Reason: e.Reason}}
		s.examples = append(s.examples, ex)
		slices.SortFunc(s.examples, func(a, b suspExample) int { return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.i, b.i)) })
		if len(s.examples) > maxFalseExamples {
			s.examples = s.examples[:maxFalseExamples]
		}
	case suspicionEarly:
		s.out.Early++
	}
}

// suspicions says what the play found of every suspect event of the nodes' logs within the
// observed run.
func (c *checker) suspicions() Suspicions {
	out := c.susp.out
	for _, ex := range c.susp.examples {
		out.Examples = append(out.Examples, ex.ex)
	}
	slices.SortFunc(out.Examples, func(a, b FalseSuspicion) int { return cmpFloat(a.AtMS, b.AtMS) })
	return out
}

type suspicionKind int

const (
	suspicionTrue  suspicionKind = iota // the peer died, paused, restarted, or a fault hid it
	suspicionFalse                      // the peer ran, spoke and was reachable for the whole timeout
	suspicionEarly                      // the peer ran and was reachable but had not been begun long enough
)

// suspicionOf judges node by's suspicion of peer at t: over [t - timeout, t].
func (c *checker) suspicionOf(by, peer int, t, timeout int64) suspicionKind {
	from := t - timeout
	var x *incarnation
	for _, y := range c.incs[peer] {
		if y.start <= from && y.died >= t && y.end >= t {
			x = y
		}
	}
	if x == nil || c.running(peer, from, t) < t-from {
		return suspicionTrue // dead, restarted, stopped or paused during the window
	}
	nets := c.susp.nets
	k := sort.Search(len(nets), func(k int) bool { return nets[k].t > from }) - 1
	for k = max(k, 0); k < len(nets) && nets[k].t <= t; k++ {
		net := nets[k].net
		if net.unknown != 0 || net.blocked(peer, by) {
			return suspicionTrue
		}
		if h := net.at[by]; h != nil && len(h.links[peer]) > 0 {
			return suspicionTrue // a link rule from peer to by (loss, delay, …) may have hidden it
		}
	}
	if x.first >= 0 {
		if began := x.firstT; began > from {
			return suspicionEarly
		}
	}
	return suspicionFalse
}
