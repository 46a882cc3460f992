package node

import (
	"fmt"
	"slices"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// vclock is the incarnation's vector clock, kept next to the Lamport clock when the run has vector
// clocks on. The rules are the textbook's, with one host per incarnation: every logged event but
// stats counts one on the own entry (emit), a send's clock travels in its envelope, and a recv first
// takes the element-wise maximum with the clock its message carried (deliver), then counts itself.
// The own entry is this incarnation's alone: a peer's word about it is ignored, so the own counts
// of the log run 1, 2, 3, ... whatever peers send.
//
// The clock lives in two buffers that take turns (a merge writes the other one), and its wire form
// in a third, so that a node in steady state allocates nothing for its clock: an event line
// borrows the current buffer while it is written, and the transport does not keep the wire form
// (wire.Transport.Send).
type vclock struct {
	on        bool
	node, inc int
	cur       logs.VClock // hosts in (node, inc) order
	spare     logs.VClock
	out       wire.Clock
}

// clockOn reads cluster.json's choice (options.vclock, written by the launcher); a cluster.json
// without one (written by hand, or by an older launcher) gets the launcher's default.
func clockOn(c *rundir.Cluster) (bool, error) {
	switch v := c.Options[wire.ClockOption]; v {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "":
		return len(c.Nodes) <= wire.AutoClockNodes, nil
	default:
		return false, fmt.Errorf("cluster.json: options.%s %q: want on or off", wire.ClockOption, v)
	}
}

func (v *vclock) init(on bool, node, inc int) {
	*v = vclock{on: on, node: node, inc: inc}
}

// tick counts one event of this incarnation.
func (v *vclock) tick() {
	i, ok := slices.BinarySearchFunc(v.cur, logs.Tick{Node: v.node, Inc: v.inc}, cmpHost)
	if !ok {
		v.cur = slices.Insert(v.cur, i, logs.Tick{Node: v.node, Inc: v.inc})
	}
	v.cur[i].N++
}

// merge takes the element-wise maximum with a clock that a message carried (both in host order),
// leaving the own entry alone.
func (v *vclock) merge(w wire.Clock) {
	if !v.on || len(w) == 0 {
		return
	}
	own := func(t logs.Tick) bool { return t.Node == v.node && t.Inc == v.inc }
	out := v.spare[:0]
	a := v.cur
	for len(a) > 0 || len(w) > 0 {
		var t logs.Tick
		c := 0
		switch {
		case len(w) == 0:
			c = -1
		case len(a) == 0:
			c = 1
		default:
			c = cmpHost(a[0], fromWire(w[0]))
		}
		switch {
		case c < 0:
			t, a = a[0], a[1:]
		case c > 0:
			t, w = fromWire(w[0]), w[1:]
			if own(t) {
				continue // a peer's count of this incarnation's events, before it counted any
			}
		default:
			t = a[0]
			if t.N < w[0].N && !own(t) {
				t.N = w[0].N
			}
			a, w = a[1:], w[1:]
		}
		out = append(out, t)
	}
	v.spare, v.cur = v.cur, out
}

// wire returns the clock as an envelope carries it; nil when vector clocks are off. The result is
// valid until the next call.
func (v *vclock) wire() wire.Clock {
	if !v.on {
		return nil
	}
	v.out = v.out[:0]
	for _, t := range v.cur {
		v.out = append(v.out, wire.Tick{Node: uint32(t.Node), Inc: uint32(t.Inc), N: t.N})
	}
	return v.out
}

func fromWire(t wire.Tick) logs.Tick {
	return logs.Tick{Node: int(t.Node), Inc: int(t.Inc), N: t.N}
}

func cmpHost(a, b logs.Tick) int {
	if a.Node != b.Node {
		return a.Node - b.Node
	}
	return a.Inc - b.Inc
}
