package check

import (
	"slices"

	"github.com/leaderlab/leaderlab/logs"
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

// suspicions judges every suspect event of the nodes' logs within the observed run.
func (c *checker) suspicions() Suspicions {
	var out Suspicions
	timeout := int64(c.run.Cluster.Timeout.D())
	for _, id := range c.ids {
		for i, e := range c.log(id).Events {
			t := c.ts[id][i]
			if e.Ev != logs.EvSuspect || t < c.begin || t > c.end {
				continue
			}
			out.Total++
			switch c.suspicionOf(id, e.Peer, t, timeout) {
			case suspicionFalse:
				out.False++
				if len(out.Examples) < maxFalseExamples {
					out.Examples = append(out.Examples, FalseSuspicion{By: id, Peer: e.Peer, AtMS: c.relMS(t), Reason: e.Reason})
				}
			case suspicionEarly:
				out.Early++
			}
		}
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
	for k := max(c.at(from), 0); k < len(c.points) && c.points[k].t <= t; k++ {
		net := c.points[k].net
		if net.unknown != 0 || net.blocked(peer, by) {
			return suspicionTrue
		}
		if h := net.at[by]; h != nil && len(h.links[peer]) > 0 {
			return suspicionTrue // a link rule from peer to by (loss, delay, …) may have hidden it
		}
	}
	if x.first >= 0 {
		if began := c.ts[peer][x.first]; began > from {
			return suspicionEarly
		}
	}
	return suspicionFalse
}
