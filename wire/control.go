package wire

import (
	"bufio"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// ControlClient is the controller's (node 0's) connection to one node's control endpoint: the
// launcher's chaos agent sends link rules and queries through it.
type ControlClient struct {
	mu      sync.Mutex
	c       net.Conn
	br      *bufio.Reader
	timeout time.Duration
	seq     uint64 // the LC of the last request; replies carry it back
	buf     []byte
	closed  atomic.Bool
}

// DialControl connects to a node's address as node 0 and sends the signed hello. The node does not
// answer a hello: a wrong secret or cluster shows as an error from the first Call.
func DialControl(addr, cluster string, secret []byte, timeout time.Duration) (*ControlClient, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("wire: control timeout is %v: want more than 0", timeout)
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, fmt.Errorf("wire: dial control %s: %w", addr, err)
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	h := NewHello(secret, cluster, 0, 1)
	p, err := h.Marshal()
	if err == nil {
		c.SetWriteDeadline(time.Now().Add(timeout))
		err = WriteFrame(c, p)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("wire: control hello to %s: %w", addr, err)
	}
	return &ControlClient{c: c, br: bufio.NewReader(c), timeout: timeout}, nil
}

// Call sends one request body (one msgpack value) and returns the reply body, within the timeout.
// Calls are serialised. After a timed-out call the connection stays usable: the late reply is
// recognised by its number and skipped.
func (cc *ControlClient) Call(req []byte) ([]byte, error) {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.closed.Load() {
		return nil, ErrClosed
	}
	cc.seq++
	env := Envelope{Kind: KindCtlReq, LC: cc.seq, Body: req}
	out, err := appendFrame(nil, &env)
	if err != nil {
		return nil, err
	}
	cc.c.SetDeadline(time.Now().Add(cc.timeout))
	if _, err := cc.c.Write(out); err != nil {
		return nil, fmt.Errorf("wire: control request to %s: %w", cc.c.RemoteAddr(), err)
	}
	for {
		p, err := ReadFrame(cc.br, cc.buf)
		if err != nil {
			if cc.closed.Load() {
				return nil, ErrClosed
			}
			return nil, fmt.Errorf("wire: control reply from %s: %w", cc.c.RemoteAddr(), err)
		}
		cc.buf = p[:cap(p)]
		var resp Envelope
		if err := resp.Unmarshal(p); err != nil {
			return nil, fmt.Errorf("wire: control reply from %s: %w", cc.c.RemoteAddr(), err)
		}
		if resp.Kind != KindCtlResp {
			return nil, fmt.Errorf("%w: control reply of kind %d from %s", ErrMalformed, resp.Kind, cc.c.RemoteAddr())
		}
		if resp.LC == cc.seq {
			return resp.Body, nil
		}
		// A reply to an earlier call that timed out: skip it.
	}
}

// Close closes the connection, interrupting a Call in progress; it is idempotent.
func (cc *ControlClient) Close() error {
	if cc.closed.Swap(true) {
		return nil
	}
	return cc.c.Close()
}
