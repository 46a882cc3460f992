package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// TCP is the transport of a node process: frames over one TCP connection per directed edge,
// heartbeats over UDP on the same port, and control connections from node 0.
type TCP struct {
	cfg    TCPConfig
	ln     net.Listener
	pc     net.PacketConn
	upc    *rawPacketConn // pc, written with raw system calls (rawio_linux.go)
	macMu  sync.Mutex
	mac    *datagramMAC // signs the datagrams sent (macMu)
	out    *links
	ctx    context.Context // cancelled by Close: aborts dials
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	conns   map[net.Conn]*inConn // every accepted connection, for Close
	inbound map[int]*inConn      // the authenticated connection of each peer
	udp     map[int]*net.UDPAddr // peers' resolved UDP addresses
}

// NewTCP binds the listeners and starts accepting; peers are dialled by Connect or on first Send.
func NewTCP(cfg TCPConfig) (*TCP, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	t := &TCP{cfg: cfg, ln: cfg.Listener, pc: cfg.PacketConn,
		conns: map[net.Conn]*inConn{}, inbound: map[int]*inConn{}, udp: map[int]*net.UDPAddr{}}
	if err := t.listen(); err != nil {
		return nil, err
	}
	t.upc = newRawPacketConn(t.pc)
	t.mac = newDatagramMAC(cfg.Secret)
	t.ctx, t.cancel = context.WithCancel(context.Background())
	t.out = newLinks(cfg.Handler, cfg.QueueLen, cfg.BackoffMin, cfg.BackoffMax, t.isPeer, t.dial)
	t.wg.Go(t.acceptLoop)
	t.wg.Go(t.udpLoop)
	return t, nil
}

// listen binds TCP, then UDP on the port TCP got (so that Listen with port 0 works).
func (t *TCP) listen() error {
	var err error
	if t.ln == nil {
		if t.ln, err = net.Listen("tcp", t.cfg.Listen); err != nil {
			if t.pc != nil {
				t.pc.Close()
			}
			return fmt.Errorf("wire: listen tcp %s: %w", t.cfg.Listen, err)
		}
	}
	if t.pc == nil {
		lc := net.ListenConfig{Control: markControl(t.cfg.Mark)}
		if t.pc, err = lc.ListenPacket(context.Background(), "udp", t.ln.Addr().String()); err != nil {
			t.ln.Close()
			return fmt.Errorf("wire: listen udp %s: %w", t.ln.Addr(), err)
		}
	}
	return nil
}

// Addr is the address the transport listens on (TCP; UDP has the same port).
func (t *TCP) Addr() net.Addr { return t.ln.Addr() }

func (t *TCP) isPeer(id int) bool {
	_, ok := t.cfg.Peers[id]
	return ok && id != t.cfg.Self
}

// Send enqueues env for peer to; see Transport.
func (t *TCP) Send(to int, env *Envelope) error { return sendFrame(t.out, to, env) }

// sendFrame encodes env into a pooled buffer and queues it. The queue keeps env for Drop, without
// its clock: the caller may reuse the clock's memory once Send returns.
func sendFrame(ls *links, to int, env *Envelope) error {
	bp := getBuf()
	b, err := appendFrame((*bp)[:0], env)
	*bp = b
	if err == nil && env.VC != nil {
		e := *env
		e.VC = nil
		env = &e
	}
	if err == nil {
		err = ls.send(to, outFrame{env: env, buf: bp})
	}
	if err != nil {
		putBuf(bp)
	}
	return err
}

// SendDatagram sends a heartbeat to peer to over UDP; see Transport.
func (t *TCP) SendDatagram(to int, d *Datagram) error {
	addr, err := t.udpAddr(to)
	if err != nil {
		return err
	}
	return t.writeDatagram(addr, d, to)
}

// ReplyDatagram sends d to the UDP address addr a datagram came from (a probe's answer: the
// prober may be an observer that is no peer of this node).
func (t *TCP) ReplyDatagram(addr string, d *Datagram) error {
	a, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return fmt.Errorf("wire: reply to %s: %w", addr, err)
	}
	return t.writeDatagram(a, d, 0)
}

// writeDatagram sends d to addr, node to's (0: an address that is not a peer's).
func (t *TCP) writeDatagram(addr *net.UDPAddr, d *Datagram, to int) error {
	dd := *d
	dd.Version, dd.Cluster, dd.From, dd.Inc = ProtocolVersion, t.cfg.Cluster, t.cfg.Self, t.cfg.Inc
	bp := getBuf()
	defer putBuf(bp)
	t.macMu.Lock()
	b, err := appendDatagram((*bp)[:0], t.mac, &dd)
	t.macMu.Unlock()
	if err != nil {
		return err
	}
	*bp = b
	if _, err := t.upc.WriteTo(b, addr); err != nil {
		if errors.Is(err, net.ErrClosed) {
			return ErrClosed
		}
		if to > 0 {
			return fmt.Errorf("wire: datagram to node %d (%s): %w", to, addr, err)
		}
		return fmt.Errorf("wire: datagram to %s: %w", addr, err)
	}
	return nil
}

// udpAddr resolves a peer's address once (a host name may not resolve yet when a VM boots, so the
// failure is not cached).
func (t *TCP) udpAddr(to int) (*net.UDPAddr, error) {
	t.mu.Lock()
	closed, a := t.closed, t.udp[to]
	t.mu.Unlock()
	switch {
	case closed:
		return nil, ErrClosed
	case a != nil:
		return a, nil
	case !t.isPeer(to):
		return nil, ErrUnknownPeer
	}
	a, err := net.ResolveUDPAddr("udp", t.cfg.Peers[to])
	if err != nil {
		return nil, fmt.Errorf("wire: resolve node %d: %w", to, err)
	}
	t.mu.Lock()
	t.udp[to] = a
	t.mu.Unlock()
	return a, nil
}

// Connect dials these peers now; see Transport.
func (t *TCP) Connect(peers []int) { t.out.connect(peers) }

// LinkUp tells whether the outbound link to peer is up.
func (t *TCP) LinkUp(peer int) bool { return t.out.linkUp(peer) }

// Flush waits until every up link's queue is empty, or d passes.
func (t *TCP) Flush(d time.Duration) { t.out.flush(d) }

// Close stops everything; queued frames are reported through Drop as ReasonClosed.
func (t *TCP) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	for _, ic := range t.conns {
		ic.quiet.Store(true)
		ic.Close()
	}
	t.mu.Unlock()
	t.cancel()
	t.ln.Close()
	t.pc.Close()
	t.out.close()
	t.wg.Wait()
	return nil
}

// dial opens the outbound connection to peer and sends the hello.
func (t *TCP) dial(peer int) (peerConn, error) {
	addr := t.cfg.Peers[peer]
	d := net.Dialer{Timeout: t.cfg.HandshakeTimeout, Control: markControl(t.cfg.Mark)}
	if t.cfg.Bind != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(t.cfg.Bind)}
	}
	c, err := d.DialContext(t.ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("wire: dial node %d (%s): %w", peer, addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true) // frames are small and latency is what is measured
	}
	h := NewHello(t.cfg.Secret, t.cfg.Cluster, t.cfg.Self, t.cfg.Inc)
	p, err := h.Marshal()
	if err == nil {
		stop := context.AfterFunc(t.ctx, func() { c.Close() }) // Close must not wait for a stuck hello
		c.SetWriteDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
		err = WriteFrame(c, p)
		c.SetWriteDeadline(time.Time{})
		stop()
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("wire: hello to node %d (%s): %w", peer, addr, err)
	}
	tc := &tcpConn{c: c, raw: newRawConn(c), done: make(chan struct{}), peer: peer}
	t.wg.Go(tc.watch)
	return tc, nil
}

// tcpConn is an outbound connection. Nothing is expected from the peer on it: its reader is there
// only to notice EOF or a reset at once, when the peer process dies.
type tcpConn struct {
	c    net.Conn
	raw  rawConn // c, read and written with raw system calls (rawio_linux.go)
	peer int
	done chan struct{}
	once sync.Once
	e    error
}

func (c *tcpConn) watch() {
	var b [64]byte
	for {
		if _, err := c.raw.Read(b[:]); err != nil {
			c.fail(fmt.Errorf("wire: link to node %d broke: %w", c.peer, err))
			return
		}
	}
}

func (c *tcpConn) fail(err error) {
	c.once.Do(func() { c.e = err; close(c.done) })
}

func (c *tcpConn) write(b []byte) (int, error) {
	n, err := c.raw.Write(b)
	if err != nil {
		err = fmt.Errorf("wire: write to node %d: %w", c.peer, err)
		c.fail(err)
	}
	return n, err
}

func (c *tcpConn) broken() <-chan struct{} { return c.done }
func (c *tcpConn) err() error              { <-c.done; return c.e }
func (c *tcpConn) close()                  { c.c.Close() }
