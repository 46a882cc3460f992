package node

// What the transport hands the node (wire.Handler): messages, datagrams, drops, link changes,
// and the launcher's control requests.

import (
	"fmt"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// control answers a control request on the loop.
func (n *node) control(req wire.CtlRequest) wire.CtlReply {
	switch req.Op {
	case wire.CtlBegin:
		n.beginAt(req.At)
	case wire.CtlStatus:
	case wire.CtlVerdict:
		if n.begun {
			n.det.verdict(req.Down, req.Up, req.By)
		}
	case wire.CtlClock:
		if req.Clock == nil {
			return wire.CtlReply{Node: n.self, Inc: n.inc, Error: "clock: the request carries no fault (want clock: {kind: rate|bump|strobe|reset, ...})"}
		}
		if err := n.clk.apply(*req.Clock); err != nil {
			return wire.CtlReply{Node: n.self, Inc: n.inc, Error: err.Error()}
		}
	case wire.CtlRules:
		if err := n.net.setRules(req.Rules); err != nil {
			return wire.CtlReply{Node: n.self, Inc: n.inc, Rules: len(n.net.rules), Error: err.Error()}
		}
	default:
		return wire.CtlReply{Node: n.self, Error: fmt.Sprintf("unknown control op %q (accepted: %s, %s, %s, %s, %s)", req.Op, wire.CtlStatus, wire.CtlBegin, wire.CtlRules, wire.CtlVerdict, wire.CtlClock)}
	}
	r := wire.CtlReply{Node: n.self, Inc: n.inc, Pid: n.pid, Begun: n.begun, Rules: len(n.net.rules)}
	if n.begun {
		r.Leader, r.Participant = n.m.Leader(), n.m.Participant()
		if !n.answerSince.IsZero() {
			r.Since = n.answerSince.UnixNano()
		}
	}
	for _, p := range n.peers {
		if n.tr.LinkUp(p) {
			r.LinksUp = append(r.LinksUp, p)
		}
	}
	return r
}

// handler adapts the transport's callbacks (on its goroutines) to the event loop. Frames and
// heartbeats pass the link rules (netem) on the loop before they are delivered.
type handler struct{ n *node }

func (h handler) Message(from, inc int, env *wire.Envelope) {
	if env.Kind != wire.KindMsg {
		return
	}
	h.n.post(func() { h.n.net.frame(from, inc, env) })
}

func (h handler) Datagram(from string, d wire.Datagram) {
	h.n.post(func() { h.n.net.heartbeat(d, from) })
}

func (h handler) Drop(peer int, env *wire.Envelope, reason string) {
	h.n.post(func() {
		n := h.n
		n.stats.Drops++
		e := &logs.Event{Ev: logs.EvDrop, Reason: reason}
		if env != nil && env.Kind == wire.KindMsg {
			m := env.Msg
			e.Msg = &m
			if outbound(m.ID, n.self, n.inc) {
				e.To = peer
			} else {
				e.From = peer
			}
		} else {
			e.From = peer
		}
		n.emit(e)
	})
}

// outbound tells whether a message ID was minted by this incarnation.
func outbound(id string, self, inc int) bool {
	p := fmt.Sprintf("%d.%d.", self, inc)
	return len(id) > len(p) && id[:len(p)] == p
}

func (h handler) Link(peer int, up bool, err error) {
	h.n.post(func() {
		h.n.net.linkChange(peer, up, func() {
			h.n.det.link(peer, up, err)
			if up {
				h.n.checkLinks()
			}
		})
	})
}

func (h handler) Control(body []byte) []byte {
	req, err := wire.DecodeCtlRequest(body)
	var reply wire.CtlReply
	if err != nil {
		reply = wire.CtlReply{Node: h.n.self, Error: err.Error()}
	} else {
		ch := make(chan wire.CtlReply, 1)
		h.n.post(func() { ch <- h.n.control(req) })
		// Stopped once answered: a runtime timer left armed would wake the runtime's monitor
		// thread when it falls due (looptimers_linux.go).
		limit := time.NewTimer(5 * time.Second)
		defer limit.Stop()
		select {
		case reply = <-ch:
		case <-limit.C:
			reply = wire.CtlReply{Node: h.n.self, Error: "event loop did not answer in 5s"}
		case <-h.n.done:
			reply = wire.CtlReply{Node: h.n.self, Error: "node is stopping"}
		}
	}
	b, err := wire.EncodeCtl(reply)
	if err != nil {
		b, _ = wire.EncodeCtl(wire.CtlReply{Node: h.n.self, Error: err.Error()})
	}
	return b
}

var _ wire.Handler = handler{}
