package wire

import (
	"sync"
	"time"
)

// The outbound half of a transport, shared by TCP and mem: per peer a bounded queue, a state, and
// one goroutine that dials, drains the queue into the connection, notices the break, and re-dials
// with backoff. Only dialling and writing differ between the two; they come in as peerConn.

// peerConn is one established outbound connection.
type peerConn interface {
	// write writes whole frames (length-prefixed), in order. On an error, n tells how many bytes
	// went out (and may yet arrive, or be lost silently, as on a real network).
	write(frames []byte) (n int, err error)
	// broken is closed once the connection is seen to break (EOF or reset from the peer).
	broken() <-chan struct{}
	// err says why it broke.
	err() error
	// close closes the connection; it may be called more than once.
	close()
}

type linkState uint8

const (
	linkDialing linkState = iota // the first dial is in progress: sends are queued
	linkUp                       // connected: sends are queued and written
	linkDown                     // broken or refused: sends fail with ErrLinkDown; re-dialling
	linkClosed                   // the transport is closed
)

// outFrame is a queued frame: the encoded bytes (pooled) and the envelope, for Drop.
type outFrame struct {
	env *Envelope
	buf *[]byte
}

// maxBatch is how many bytes of queued frames the writer gathers into one write.
const maxBatch = 64 << 10

type links struct {
	h                      linkHandler
	queueLen               int
	backoffMin, backoffMax time.Duration
	known                  func(peer int) bool
	dial                   func(peer int) (peerConn, error)

	mu     sync.Mutex
	m      map[int]*link
	closed bool
	stop   chan struct{}
	wg     sync.WaitGroup
}

type link struct {
	ls   *links
	peer int
	q    chan outFrame
	// kick wakes a link that waits out its backoff: the caller has word that the peer is back
	// (Connect on a down link), so it is dialled at once instead of up to backoffMax later.
	kick chan struct{}

	mu    sync.Mutex
	state linkState
	cur   peerConn // so that close can interrupt a blocked write
}

// linkHandler is the part of Handler that links report to.
type linkHandler interface {
	Link(peer int, up bool, err error)
	Drop(peer int, env *Envelope, reason string)
}

func newLinks(h linkHandler, queueLen int, bmin, bmax time.Duration, known func(int) bool,
	dial func(int) (peerConn, error)) *links {
	return &links{h: h, queueLen: queueLen, backoffMin: bmin, backoffMax: bmax, known: known, dial: dial,
		m: map[int]*link{}, stop: make(chan struct{})}
}

// get returns peer's link, starting it (its first dial) when it is new.
func (ls *links) get(peer int) (*link, error) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return nil, ErrClosed
	}
	if !ls.known(peer) {
		return nil, ErrUnknownPeer
	}
	l := ls.m[peer]
	if l == nil {
		l = &link{ls: ls, peer: peer, q: make(chan outFrame, ls.queueLen), kick: make(chan struct{}, 1)}
		ls.m[peer] = l
		ls.wg.Go(l.run)
	}
	return l, nil
}

func (ls *links) send(to int, f outFrame) error {
	l, err := ls.get(to)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case linkDown:
		return ErrLinkDown
	case linkClosed:
		return ErrClosed
	}
	select {
	case l.q <- f:
		return nil
	default:
		return ErrQueueFull
	}
}

// connect dials peers that have no link yet, and wakes the down links among them: a link that
// waits out a backoff dials again at once.
func (ls *links) connect(peers []int) {
	for _, p := range peers {
		l, err := ls.get(p) // unknown peers are ignored, as documented
		if err != nil {
			continue
		}
		l.mu.Lock()
		if l.state == linkDown {
			l.state = linkDialing // sends queue while the re-dial is under way
		}
		l.mu.Unlock()
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

func (ls *links) linkUp(peer int) bool {
	ls.mu.Lock()
	l := ls.m[peer]
	ls.mu.Unlock()
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state == linkUp
}

func (ls *links) close() {
	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return
	}
	ls.closed = true
	all := make([]*link, 0, len(ls.m))
	for _, l := range ls.m {
		all = append(all, l)
	}
	ls.mu.Unlock()
	var conns []peerConn
	for _, l := range all {
		l.mu.Lock()
		l.state = linkClosed
		if l.cur != nil {
			conns = append(conns, l.cur)
		}
		l.mu.Unlock()
	}
	close(ls.stop) // before the conns, so that a write they interrupt reports ReasonClosed
	for _, c := range conns {
		c.close()
	}
	ls.wg.Wait()
}

func (ls *links) stopped() bool {
	select {
	case <-ls.stop:
		return true
	default:
		return false
	}
}

// sleep waits d, or less if the transport closes or the link is kicked; it tells whether to go on.
func (l *link) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-l.kick:
		return true
	case <-l.ls.stop:
		return false
	}
}

func (ls *links) nextBackoff(b time.Duration) time.Duration {
	if b == 0 {
		return ls.backoffMin
	}
	return min(2*b, ls.backoffMax)
}

// run is the link's goroutine. A broken connection is re-dialled at once, then with exponential
// backoff. A connection that breaks soon after it was made (a peer that accepts and then rejects
// us) does not reset the backoff, so such a peer is not dialled in a tight loop.
func (l *link) run() {
	ls := l.ls
	var backoff time.Duration
	for {
		if backoff > 0 && !l.sleep(backoff) {
			break
		}
		c, err := ls.dial(l.peer)
		if err != nil {
			if ls.stopped() {
				break
			}
			l.down(err, ReasonLinkDown)
			backoff = ls.nextBackoff(backoff)
			continue
		}
		if !l.up(c) {
			c.close()
			break
		}
		upAt := time.Now()
		err = l.pump(c)
		c.close()
		if ls.stopped() {
			break
		}
		l.down(err, ReasonLinkBroke)
		if time.Since(upAt) >= ls.backoffMax {
			backoff = 0
		} else {
			backoff = ls.nextBackoff(backoff)
		}
	}
	l.drain(ReasonClosed)
}

func (l *link) up(c peerConn) bool {
	l.mu.Lock()
	if l.state == linkClosed {
		l.mu.Unlock()
		return false
	}
	l.state, l.cur = linkUp, c
	l.mu.Unlock()
	l.ls.h.Link(l.peer, true, nil)
	return true
}

// down marks the link down, reports the change, and drops what is queued: after the state change no
// Send can enqueue, so the drain leaves the queue empty.
func (l *link) down(err error, reason string) {
	l.mu.Lock()
	was := l.state
	if was != linkClosed {
		l.state, l.cur = linkDown, nil
	}
	l.mu.Unlock()
	if was == linkClosed {
		return
	}
	if was != linkDown {
		l.ls.h.Link(l.peer, false, err)
	}
	l.drain(reason)
}

func (l *link) drain(reason string) {
	for {
		select {
		case f := <-l.q:
			l.ls.h.Drop(l.peer, f.env, reason)
			putBuf(f.buf)
		default:
			return
		}
	}
}

// pump writes queued frames to c until c breaks or the transport closes. Frames waiting together
// go out in one write.
func (l *link) pump(c peerConn) error {
	batch := make([]byte, 0, 4096)
	var pending []outFrame
	for {
		var f outFrame
		select {
		case <-l.ls.stop:
			return ErrClosed
		case <-c.broken():
			return c.err()
		case f = <-l.q:
		}
		batch = append(batch[:0], *f.buf...)
		pending = append(pending[:0], f)
	gather:
		for len(batch) < maxBatch {
			select {
			case f = <-l.q:
				batch = append(batch, *f.buf...)
				pending = append(pending, f)
			default:
				break gather
			}
		}
		sent, err := c.write(batch)
		reason := ReasonLinkBroke
		if l.ls.stopped() {
			reason = ReasonClosed
		}
		end := 0
		for _, f := range pending {
			// A frame that did not go out entirely is reported; one that did is in flight.
			if end += len(*f.buf); err != nil && end > sent {
				l.ls.h.Drop(l.peer, f.env, reason)
			}
			putBuf(f.buf)
		}
		if err != nil {
			return err
		}
		if cap(batch) > 4*maxBatch {
			batch = make([]byte, 0, 4096) // do not keep the buffer of one huge frame
		}
	}
}

// flush waits until the queue of every link that is up is empty, or d passes: an orderly shutdown
// gets its last messages (RSDP's close) onto the wire before the transport closes.
func (ls *links) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for {
		busy := false
		ls.mu.Lock()
		for _, l := range ls.m {
			l.mu.Lock()
			if l.state == linkUp && len(l.q) > 0 {
				busy = true
			}
			l.mu.Unlock()
		}
		ls.mu.Unlock()
		if !busy || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
