package wire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"time"
)

// The inbound half of the TCP transport: accepted connections, their handshake, the frames that
// follow, control connections from node 0, and the UDP heartbeat socket.

// inConn is an accepted connection.
type inConn struct {
	net.Conn
	peer int
	// quiet is set when this side closes the connection on purpose (a newer connection from the
	// same peer replaced it, or Close), so that the read error that follows is not reported.
	quiet atomic.Bool
}

func (t *TCP) acceptLoop() {
	var delay time.Duration
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || t.ctx.Err() != nil {
				return
			}
			// Out of file descriptors, say: wait and retry, as net/http does.
			delay = min(max(2*delay, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(delay):
			case <-t.ctx.Done():
				return
			}
			continue
		}
		delay = 0
		ic := &inConn{Conn: c}
		t.mu.Lock()
		closed := t.closed
		if !closed {
			t.conns[c] = ic
		}
		t.mu.Unlock()
		if closed {
			c.Close()
			return
		}
		t.wg.Go(func() { t.serve(ic) })
	}
}

// serve authenticates a connection by its hello, then reads its frames until it ends.
func (t *TCP) serve(ic *inConn) {
	defer t.forget(ic)
	h := t.cfg.Handler
	ic.SetReadDeadline(time.Now().Add(t.cfg.HandshakeTimeout)) // no hello, no hang
	raw := newRawConn(ic.Conn)
	br := bufio.NewReaderSize(raw, 16<<10) // what is there, in one read
	buf := make([]byte, 512)
	hello, err := t.handshake(br, buf)
	if err != nil {
		if !ic.quiet.Load() {
			h.Drop(0, nil, fmt.Sprintf("rejected connection from %s: %v", ic.RemoteAddr(), err))
		}
		return
	}
	ic.SetReadDeadline(time.Time{})
	if hello.Node == 0 {
		t.serveControl(ic, raw, br, buf)
		return
	}
	t.adopt(ic, hello.Node)
	for {
		p, err := ReadFrame(br, buf)
		if err != nil {
			if err != io.EOF && !ic.quiet.Load() {
				h.Drop(ic.peer, nil, fmt.Sprintf("bad frame from node %d: %v", ic.peer, err))
			}
			return
		}
		buf = p[:cap(p)]
		env := new(Envelope)
		if err := env.Unmarshal(p); err != nil {
			h.Drop(ic.peer, nil, fmt.Sprintf("bad frame from node %d: %v", ic.peer, err))
			return
		}
		if env.Kind != KindMsg {
			h.Drop(ic.peer, env, fmt.Sprintf("bad frame from node %d: envelope kind %d on a message connection", ic.peer, env.Kind))
			return
		}
		h.Message(ic.peer, hello.Inc, env)
	}
}

// handshake reads and checks the hello. The frame limit is a hello's, not MaxFrame's: nothing big
// is allocated for a client that has not proved it knows the secret.
func (t *TCP) handshake(br *bufio.Reader, buf []byte) (Hello, error) {
	var h Hello
	p, err := readFrame(br, buf, maxHelloFrame)
	switch {
	case err == io.EOF:
		return h, errors.New("closed before its hello")
	case err != nil:
		return h, fmt.Errorf("no hello: %w", err)
	}
	if err := h.Unmarshal(p); err != nil {
		return h, fmt.Errorf("bad hello: %w", err)
	}
	if err := h.check(t.cfg.Secret, t.cfg.Cluster); err != nil {
		return h, err
	}
	switch {
	case h.Node == t.cfg.Self:
		return h, fmt.Errorf("hello claims this node's own ID %d", h.Node)
	case h.Node != 0 && !t.isPeer(h.Node):
		return h, fmt.Errorf("hello from node %d, which is not a peer", h.Node)
	case h.Inc < 1:
		return h, fmt.Errorf("hello from node %d with incarnation %d (want 1 or more)", h.Node, h.Inc)
	}
	return h, nil
}

// adopt makes ic the connection of peer; an older one (from before the peer restarted, not yet seen
// to close) is closed.
func (t *TCP) adopt(ic *inConn, peer int) {
	t.mu.Lock()
	ic.peer = peer
	old := t.inbound[peer]
	t.inbound[peer] = ic
	t.mu.Unlock()
	if old != nil {
		old.quiet.Store(true)
		old.Close()
	}
}

// ResetInbound closes the connection peer dialled to this node (Resetter). The read error that
// follows is not reported: the caller reports why it reset the link.
func (t *TCP) ResetInbound(peer int) bool {
	t.mu.Lock()
	ic := t.inbound[peer]
	t.mu.Unlock()
	if ic == nil {
		return false
	}
	ic.quiet.Store(true)
	if tc, ok := ic.Conn.(*net.TCPConn); ok {
		tc.SetLinger(0) // a reset (RST), as a receiver that gives up on a stream sends
	}
	ic.Close()
	return true
}

func (t *TCP) forget(ic *inConn) {
	t.mu.Lock()
	delete(t.conns, ic.Conn)
	if t.inbound[ic.peer] == ic {
		delete(t.inbound, ic.peer)
	}
	t.mu.Unlock()
	ic.Close()
}

// serveControl answers the controller's requests, one at a time, in order.
func (t *TCP) serveControl(ic *inConn, raw rawConn, br *bufio.Reader, buf []byte) {
	h := t.cfg.Handler
	var out []byte
	for {
		p, err := ReadFrame(br, buf)
		if err != nil {
			if err != io.EOF && !ic.quiet.Load() {
				h.Drop(0, nil, fmt.Sprintf("bad control frame: %v", err))
			}
			return
		}
		buf = p[:cap(p)]
		var req Envelope
		if err := req.Unmarshal(p); err != nil {
			h.Drop(0, nil, fmt.Sprintf("bad control frame: %v", err))
			return
		}
		if req.Kind != KindCtlReq {
			h.Drop(0, &req, fmt.Sprintf("bad control frame: envelope kind %d, want %d", req.Kind, KindCtlReq))
			return
		}
		resp := Envelope{Kind: KindCtlResp, LC: req.LC, Body: h.Control(req.Body)}
		if out, err = appendFrame(out[:0], &resp); err != nil {
			h.Drop(0, &req, fmt.Sprintf("control reply: %v", err))
			return
		}
		ic.SetWriteDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
		if _, err := raw.Write(out); err != nil {
			return
		}
	}
}

// udpLoop reads heartbeats; a bad one is reported and skipped.
func (t *TCP) udpLoop() {
	h := t.cfg.Handler
	buf := make([]byte, MaxDatagram+1) // one byte more, so that an oversized datagram is seen as such
	upc := newRawPacketConn(t.pc)
	mac := newDatagramMAC(t.cfg.Secret)
	for {
		n, addr, err := upc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || t.ctx.Err() != nil {
				return
			}
			time.Sleep(time.Millisecond) // a transient error must not spin
			continue
		}
		d, err := decodeDatagram(mac, t.cfg.Cluster, buf[:n])
		if err != nil {
			h.Drop(0, nil, fmt.Sprintf("bad datagram from %s: %v", addr, err))
			continue
		}
		if !t.isPeer(d.From) {
			h.Drop(0, nil, fmt.Sprintf("datagram from %s claims node %d, which is not a peer", addr, d.From))
			continue
		}
		h.Datagram(addr, d)
	}
}
