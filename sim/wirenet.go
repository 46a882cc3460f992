package sim

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// vtransport is one incarnation's wire.Transport in the simulator: what wire.TCP does, in virtual
// time. One outbound link per peer, dialled by the sender (Connect, or the first Send), with the
// TCP transport's states and rules: sends queue while the dial is under way, fail with
// ErrLinkDown while the link is down, and a down link re-dials at once after a break, then with
// backoff (wire.DefaultTCPConfig's BackoffMin doubling to BackoffMax), or at once when Connect
// kicks it. A dial reaches whichever incarnation of the peer runs (a paused process's kernel
// accepts it too) and is refused when none does; a connection is to that incarnation, and breaks
// one link delay after it dies (the reset). Frames on a link arrive in order, each after a delay
// drawn from the run's seed; a frame in flight to an incarnation that died is lost, and the sender's
// transport reports it as a drop. Datagrams (heartbeats, probes) go to whichever incarnation of the
// peer listens when they arrive, or are lost.
type vtransport struct {
	c      *Cluster
	p      *proc
	inc    int
	h      wire.Handler
	links  map[int]*vlink
	closed bool
}

type vlinkState uint8

const (
	vDialing vlinkState = iota
	vUp
	vDown
)

type vlink struct {
	peer    int
	state   vlinkState
	toInc   int              // the incarnation the connection reaches
	queue   []*wire.Envelope // sends made while dialling
	backoff time.Duration
	gen     uint64 // bumped by every dial, so that a superseded dial's outcome is ignored
	lastAt  time.Duration
	// conn numbers the link's connections; reset is the one the receiver reset (ResetInbound):
	// frames on it arrive to a closed socket and are lost.
	conn, reset uint64
}

var (
	_ wire.Transport = (*vtransport)(nil)
	_ wire.Resetter  = (*vtransport)(nil)
)

func (t *vtransport) isPeer(id int) bool {
	return id != t.p.id && id >= 1 && id <= len(t.c.procs)-1 && t.c.procs[id] != nil
}

// Send enqueues env on the link to peer to (wire.Transport).
func (t *vtransport) Send(to int, env *wire.Envelope) error {
	if t.closed {
		return wire.ErrClosed
	}
	if !t.isPeer(to) {
		return wire.ErrUnknownPeer
	}
	e := *env
	e.VC = append(wire.Clock(nil), env.VC...) // the node reuses its clock's buffer
	l := t.link(to)
	switch l.state {
	case vDown:
		return wire.ErrLinkDown
	case vDialing:
		if len(l.queue) >= t.c.opt.QueueLen {
			return wire.ErrQueueFull
		}
		l.queue = append(l.queue, &e)
		return nil
	}
	t.transmit(l, &e)
	return nil
}

// transmit puts one frame on an established link.
func (t *vtransport) transmit(l *vlink, env *wire.Envelope) {
	at := max(t.c.now+t.c.delay(), l.lastAt) // a link never reorders
	l.lastAt = at
	dst := t.c.procs[l.peer]
	from, inc, conn := t.p.id, t.inc, l.conn
	ev := t.c.at(at, dst, l.toInc, func() {
		if l.reset == conn {
			if !t.closed {
				t.h.Drop(l.peer, env, wire.ReasonLinkBroke+": connection reset")
			}
			return
		}
		if h := dst.handler(); h != nil {
			h.Message(from, inc, env)
		}
	})
	ev.lost = func() {
		if !t.closed {
			t.h.Drop(l.peer, env, wire.ReasonLinkBroke+": peer crashed")
		}
	}
}

// ResetInbound resets the connection peer's incarnation dialled to this one (wire.Resetter): the
// frames on it are lost from now on, and the peer sees its link break one link delay later.
func (t *vtransport) ResetInbound(peer int) bool {
	if t.closed || !t.isPeer(peer) {
		return false
	}
	src := t.c.procs[peer]
	if src.state == stateDead || src.tr == nil {
		return false
	}
	st := src.tr
	l := st.links[t.p.id]
	if l == nil || l.state != vUp || l.toInc != t.inc || l.reset == l.conn {
		return false
	}
	l.reset = l.conn
	conn := l.conn
	t.c.at(t.c.now+t.c.delay(), src, src.inc, func() {
		if !st.closed && l.conn == conn {
			st.broke(l)
		}
	})
	return true
}

// link returns the link to peer, dialling it when it is new.
func (t *vtransport) link(peer int) *vlink {
	l := t.links[peer]
	if l == nil {
		l = &vlink{peer: peer}
		t.links[peer] = l
		t.dial(l)
	}
	return l
}

// dial tries to connect l: the outcome comes one link delay later.
func (t *vtransport) dial(l *vlink) {
	l.gen++
	gen := l.gen
	t.c.at(t.c.now+t.c.delay(), t.p, t.inc, func() {
		if t.closed || gen != l.gen {
			return
		}
		dst := t.c.procs[l.peer]
		if dst.state == stateDead {
			t.down(l, fmt.Errorf("dial %s: connect: %w", addr(l.peer), syscall.ECONNREFUSED), wire.ReasonLinkDown)
			return
		}
		l.state, l.toInc, l.backoff = vUp, dst.inc, 0
		l.lastAt = 0
		l.conn++
		t.h.Link(l.peer, true, nil)
		q := l.queue
		l.queue = nil
		for _, env := range q {
			t.transmit(l, env)
		}
	})
}

// down marks l down, reports it on a change, drops what was queued, and schedules the re-dial.
func (t *vtransport) down(l *vlink, err error, reason string) {
	was := l.state
	l.state = vDown
	if was != vDown {
		t.h.Link(l.peer, false, err)
	}
	for _, env := range l.queue {
		t.h.Drop(l.peer, env, reason)
	}
	l.queue = nil
	wait := l.backoff
	d := wire.DefaultTCPConfig()
	if l.backoff == 0 {
		l.backoff = d.BackoffMin
	} else {
		l.backoff = min(2*l.backoff, d.BackoffMax)
	}
	l.gen++
	gen := l.gen
	t.c.at(t.c.now+wait, t.p, t.inc, func() {
		if !t.closed && gen == l.gen && l.state == vDown {
			t.dial(l)
		}
	})
}

// broke: the incarnation l's connection reached has died (its reset arrived).
func (t *vtransport) broke(l *vlink) {
	if l.state != vUp {
		return
	}
	l.backoff = 0 // the first re-dial after a break is immediate
	t.down(l, fmt.Errorf("read %s: %w", addr(l.peer), syscall.ECONNRESET), wire.ReasonLinkBroke)
}

// SendDatagram sends a heartbeat or a probe (wire.Transport).
func (t *vtransport) SendDatagram(to int, d *wire.Datagram) error {
	if t.closed {
		return wire.ErrClosed
	}
	if !t.isPeer(to) {
		return wire.ErrUnknownPeer
	}
	t.datagram(to, d)
	return nil
}

func (t *vtransport) datagram(to int, d *wire.Datagram) {
	dg := *d
	dg.Version, dg.Cluster, dg.From, dg.Inc = wire.ProtocolVersion, t.c.cluster.ClusterID, t.p.id, t.inc
	from := addr(t.p.id)
	dst := t.c.procs[to]
	t.c.at(t.c.now+t.c.delay(), nil, 0, func() {
		if dst.state == stateDead {
			return // nobody listens on the port
		}
		t.c.at(t.c.now, dst, dst.inc, func() {
			if h := dst.handler(); h != nil {
				h.Datagram(from, dg)
			}
		})
	})
}

// ReplyDatagram answers a probe at the address it came from (as wire.TCP does).
func (t *vtransport) ReplyDatagram(to string, d *wire.Datagram) error {
	id, err := strconv.Atoi(strings.TrimPrefix(to, addrPrefix))
	if err != nil || !t.isPeer(id) {
		return fmt.Errorf("reply to %q: %w", to, wire.ErrUnknownPeer)
	}
	if t.closed {
		return wire.ErrClosed
	}
	t.datagram(id, d)
	return nil
}

// Connect dials these peers now; a down link is dialled again at once (wire.Transport).
func (t *vtransport) Connect(peers []int) {
	if t.closed {
		return
	}
	for _, p := range peers {
		if !t.isPeer(p) {
			continue
		}
		if l := t.links[p]; l == nil {
			t.link(p)
		} else if l.state == vDown {
			l.state = vDialing
			t.dial(l)
		}
	}
}

// LinkUp tells whether the outbound link to peer is up (wire.Transport).
func (t *vtransport) LinkUp(peer int) bool {
	l := t.links[peer]
	return l != nil && l.state == vUp
}

// Flush has nothing to wait for: a frame is on its way when Send returns.
func (t *vtransport) Flush(time.Duration) {}

// Close ends the transport: nothing more is sent or reported (wire.Transport).
func (t *vtransport) Close() error {
	t.closed = true
	return nil
}

const addrPrefix = "sim:"

// addr is a simulated node's address, as cluster.json names it.
func addr(id int) string { return addrPrefix + strconv.Itoa(id) }
