package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The in-memory transport runs the TCP transport's outbound machinery (queues, link states, backoff,
// Drop and Link reports) and its codec (every frame and datagram is encoded and decoded), with
// function calls where TCP has sockets. Delivery on a link is synchronous with its writer
// goroutine, so a receiver whose handler blocks fills the sender's queue, as a paused process does.

// The mem network signs datagrams like TCP does, with a fixed key: there is nothing to protect, but
// the code path is the same.
const memCluster = "mem"

var memSecret = []byte("leaderlab mem network")

// MemNetwork connects in-memory transports, one per node. Set its exported fields before Attach.
type MemNetwork struct {
	// QueueLen, BackoffMin and BackoffMax mean what they mean in TCPConfig, for transports attached
	// afterwards; NewMemNetwork sets DefaultTCPConfig's values.
	QueueLen   int
	BackoffMin time.Duration
	BackoffMax time.Duration

	ids map[int]bool // the cluster; nil: every ID of 1 or more

	mu    sync.Mutex
	nodes map[int]*MemTransport // the live ones
	incs  map[int]int
}

// NewMemNetwork returns an empty network. ids lists the cluster's node IDs (Send to any other is
// ErrUnknownPeer); with none, every ID of 1 or more is a peer.
func NewMemNetwork(ids ...int) *MemNetwork {
	d := DefaultTCPConfig()
	n := &MemNetwork{QueueLen: d.QueueLen, BackoffMin: d.BackoffMin, BackoffMax: d.BackoffMax,
		nodes: map[int]*MemTransport{}, incs: map[int]int{}}
	if len(ids) > 0 {
		n.ids = map[int]bool{}
		for _, id := range ids {
			n.ids[id] = true
		}
	}
	return n
}

// Attach starts node self's transport with its next incarnation (1, then 2 after a Kill, ...). A
// node that is still attached is killed first: Attach is a restart.
func (n *MemNetwork) Attach(self int, h Handler) Transport {
	n.Kill(self)
	n.mu.Lock()
	defer n.mu.Unlock()
	n.incs[self]++
	t := &MemTransport{net: n, self: self, inc: n.incs[self], h: h, inbound: map[int]*memConn{},
		dgq: make(chan memDatagram, n.QueueLen), stop: make(chan struct{})}
	t.out = newLinks(memLinkHandler{t}, n.QueueLen, n.BackoffMin, n.BackoffMax, t.isPeer, t.dial)
	n.nodes[self] = t
	t.wg.Go(t.datagramLoop)
	return t
}

// Kill makes node id die as a SIGKILLed process does: its connections break (its peers' links go
// down at once and their re-dials are refused), it is called back no more, and what it had queued is
// lost without a report. A call into its handler that is under way is not waited for; the peer link
// that made it notices the break when it returns. Kill waits for the node's own link goroutines, so
// it must not be called from a handler. It is a no-op for a node that is not attached.
func (n *MemNetwork) Kill(id int) {
	n.mu.Lock()
	t := n.nodes[id]
	delete(n.nodes, id)
	n.mu.Unlock()
	if t != nil {
		t.shutdown(true)
	}
}

// Control sends a control request to node id, as the controller would.
func (n *MemNetwork) Control(id int, req []byte) ([]byte, error) {
	if len(req) > 0 {
		if err := oneValue(req); err != nil {
			return nil, fmt.Errorf("control request: %w", err)
		}
	}
	n.mu.Lock()
	t := n.nodes[id]
	n.mu.Unlock()
	if t == nil {
		return nil, fmt.Errorf("wire: control node %d: %w", id, syscall.ECONNREFUSED)
	}
	var reply []byte
	if !t.deliver(func(h Handler) { reply = h.Control(req) }) {
		return nil, fmt.Errorf("wire: control node %d: %w", id, io.EOF)
	}
	return reply, nil
}

func (n *MemNetwork) live(id int) *MemTransport {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.nodes[id]
}

// MemTransport is one node's in-memory transport.
type MemTransport struct {
	net       *MemNetwork
	self, inc int
	h         Handler
	out       *links
	dgq       chan memDatagram
	stop      chan struct{}
	wg        sync.WaitGroup

	// gate is held for reading around every call into h from another node's goroutine; shutdown
	// takes it for writing, so that no call is under way or follows once it returns.
	gate   sync.RWMutex
	dead   bool
	silent atomic.Bool // killed: report nothing

	mu      sync.Mutex
	closed  bool
	inbound map[int]*memConn
}

type memDatagram struct {
	from string
	b    []byte
}

// memLinkHandler forwards link reports unless the node was killed.
type memLinkHandler struct{ t *MemTransport }

func (m memLinkHandler) Link(peer int, up bool, err error) {
	if !m.t.silent.Load() {
		m.t.h.Link(peer, up, err)
	}
}

func (m memLinkHandler) Drop(peer int, env *Envelope, reason string) {
	if !m.t.silent.Load() {
		m.t.h.Drop(peer, env, reason)
	}
}

func (t *MemTransport) isPeer(id int) bool {
	if t.net.ids != nil {
		return t.net.ids[id] && id != t.self
	}
	return id >= 1 && id != t.self
}

// Send enqueues env for peer to; see Transport.
func (t *MemTransport) Send(to int, env *Envelope) error { return sendFrame(t.out, to, env) }

// SendDatagram delivers a heartbeat to peer to, unless it is dead or its datagram queue is full
// (lost, as UDP loses it); see Transport.
func (t *MemTransport) SendDatagram(to int, d *Datagram) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	switch {
	case closed:
		return ErrClosed
	case !t.isPeer(to):
		return ErrUnknownPeer
	}
	dd := *d
	dd.Version, dd.Cluster, dd.From, dd.Inc = ProtocolVersion, memCluster, t.self, t.inc
	b, err := EncodeDatagram(memSecret, &dd)
	if err != nil {
		return err
	}
	if peer := t.net.live(to); peer != nil {
		select {
		case peer.dgq <- memDatagram{from: "mem:" + strconv.Itoa(t.self), b: b}:
		default:
		}
	}
	return nil
}

// Connect dials these peers now; see Transport.
func (t *MemTransport) Connect(peers []int) { t.out.connect(peers) }

// LinkUp tells whether the outbound link to peer is up.
func (t *MemTransport) LinkUp(peer int) bool { return t.out.linkUp(peer) }

// Inc is the node's incarnation (Attach counts them from 1).
func (t *MemTransport) Inc() int { return t.inc }

// Close stops the transport as an orderly shutdown: queued frames are reported as ReasonClosed.
// It waits for calls into its handler under way, and for its links' deliveries into peers' handlers.
// Flush waits until every up link's queue is empty, or d passes.
func (t *MemTransport) Flush(d time.Duration) { t.out.flush(d) }

func (t *MemTransport) Close() error {
	t.net.mu.Lock()
	if t.net.nodes[t.self] == t {
		delete(t.net.nodes, t.self)
	}
	t.net.mu.Unlock()
	t.shutdown(false)
	return nil
}

func (t *MemTransport) shutdown(killed bool) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	in := t.inbound
	t.inbound = nil
	t.mu.Unlock()
	t.silent.Store(killed)
	for _, c := range in {
		c.close()
	}
	t.out.close()
	close(t.stop)
	t.wg.Wait()
	if killed {
		// A killed node is called no more (silent), but Kill does not wait for a call under way: a
		// handler blocked in Message (a paused process) must not make Kill hang.
		return
	}
	t.gate.Lock()
	t.dead = true
	t.gate.Unlock()
}

// deliver calls f with the handler unless the node is dead.
func (t *MemTransport) deliver(f func(Handler)) bool {
	t.gate.RLock()
	defer t.gate.RUnlock()
	if t.dead || t.silent.Load() {
		return false
	}
	f(t.h)
	return true
}

func (t *MemTransport) datagramLoop() {
	for {
		select {
		case <-t.stop:
			return
		case m := <-t.dgq:
			d, err := DecodeDatagram(memSecret, memCluster, m.b)
			t.deliver(func(h Handler) {
				if err != nil { // cannot happen: the network encoded it
					h.Drop(0, nil, fmt.Sprintf("bad datagram from %s: %v", m.from, err))
					return
				}
				h.Datagram(m.from, d)
			})
		}
	}
}

// dial connects to peer if it is alive; a dead peer refuses, as a closed port does.
func (t *MemTransport) dial(peer int) (peerConn, error) {
	target := t.net.live(peer)
	c := &memConn{from: t.self, inc: t.inc, to: target, done: make(chan struct{})}
	if target == nil || !target.accept(c) {
		return nil, fmt.Errorf("wire: dial node %d: %w", peer, syscall.ECONNREFUSED)
	}
	return c, nil
}

// accept registers an inbound connection; a newer one from the same peer replaces the older.
func (t *MemTransport) accept(c *memConn) bool {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return false
	}
	old := t.inbound[c.from]
	t.inbound[c.from] = c
	t.mu.Unlock()
	if old != nil {
		old.close()
	}
	return true
}

// ResetInbound breaks the connection peer dialled to this node (Resetter).
func (t *MemTransport) ResetInbound(peer int) bool {
	t.mu.Lock()
	c := t.inbound[peer]
	delete(t.inbound, peer)
	t.mu.Unlock()
	if c == nil {
		return false
	}
	c.close()
	return true
}

// memConn is an outbound in-memory connection.
type memConn struct {
	from, inc int
	to        *MemTransport
	done      chan struct{}
	once      sync.Once
}

func (c *memConn) write(b []byte) (int, error) {
	sent := 0
	for sent < len(b) {
		n := frameHeader + int(binary.BigEndian.Uint32(b[sent:])) + frameTrailer
		env, err := DecodeFrame(b[sent : sent+n])
		if err != nil {
			return sent, err // cannot happen: sendFrame encoded it
		}
		select {
		case <-c.done:
			return sent, c.err()
		default:
		}
		if !c.to.deliver(func(h Handler) { h.Message(c.from, c.inc, env) }) {
			c.close()
			return sent, c.err()
		}
		sent += n
	}
	return sent, nil
}

func (c *memConn) broken() <-chan struct{} { return c.done }

func (c *memConn) err() error {
	return fmt.Errorf("wire: link to node %d broke: %w", c.to.self, io.EOF)
}

func (c *memConn) close() { c.once.Do(func() { close(c.done) }) }
