package wire

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// One conformance test, run over both transports (STYLE.md item 3).

func TestTransportConformance(t *testing.T) {
	for name, newCluster := range map[string]func(*testing.T, ...int) cluster{
		"tcp": func(t *testing.T, ids ...int) cluster { return newTCPCluster(t, ids...) },
		"mem": newMemCluster,
	} {
		t.Run(name, func(t *testing.T) {
			t.Run("in order", func(t *testing.T) { testInOrder(t, newCluster(t, 1, 2)) })
			t.Run("connect", func(t *testing.T) { testConnect(t, newCluster(t, 1, 2, 3)) })
			t.Run("kill and redial", func(t *testing.T) { testKillRedial(t, newCluster(t, 1, 2)) })
			t.Run("refused dial", func(t *testing.T) { testRefused(t, newCluster(t, 1, 2)) })
			t.Run("queue overflow", func(t *testing.T) { testOverflow(t, newCluster(t, 1, 2)) })
			t.Run("link broke", func(t *testing.T) { testLinkBroke(t, newCluster(t, 1, 2)) })
			t.Run("close", func(t *testing.T) { testClose(t, newCluster(t, 1, 2)) })
			t.Run("errors", func(t *testing.T) { testErrors(t, newCluster(t, 1, 2)) })
			t.Run("datagram", func(t *testing.T) { testDatagram(t, newCluster(t, 1, 2)) })
		})
	}
}

// Frames arrive complete and in order, with the sender's ID and incarnation; sends made while the
// first dial is in progress are queued, not refused.
func testInOrder(t *testing.T, c cluster) {
	r1, r2 := &recorder{}, &recorder{}
	a := c.start(1, r1, 0)
	c.start(2, r2, 0)
	const n = 500
	for i := range n {
		if err := a.Send(2, msg(i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	waitFor(t, 5*time.Second, "all messages", func() bool { return len(r2.messages()) == n })
	for i, d := range r2.messages() {
		if d.from != 1 || d.inc != 1 || d.env.Kind != KindMsg || d.env.Msg.Round != i || d.env.LC != uint64(i) ||
			d.env.Msg.ID != fmt.Sprintf("1.1.%d", i) {
			t.Fatalf("message %d: from %d inc %d %+v", i, d.from, d.inc, d.env)
		}
	}
	if l, ok := r1.lastLink(2); !ok || !l.up || !a.LinkUp(2) {
		t.Fatalf("link 1->2: %+v, LinkUp %v", l, a.LinkUp(2))
	}
	if d := r1.dropped(); len(d) != 0 {
		t.Fatalf("drops: %+v", d)
	}
}

// Connect dials the given peers without a message; the others stay undialled.
func testConnect(t *testing.T, c cluster) {
	r1 := &recorder{}
	a := c.start(1, r1, 0)
	c.start(2, &recorder{}, 0)
	c.start(3, &recorder{}, 0)
	a.Connect([]int{2, 99})
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })
	if a.LinkUp(3) {
		t.Fatal("link 1->3 is up without a Connect or Send")
	}
	if l, _ := r1.lastLink(2); !l.up || l.err != nil {
		t.Fatalf("link change: %+v", l)
	}
}

// A peer that dies takes its link down at once; Send then fails with ErrLinkDown; when the peer
// comes back, the link is re-dialled and carries the next incarnation's traffic both ways.
func testKillRedial(t *testing.T, c cluster) {
	r1 := &recorder{}
	a := c.start(1, r1, 0)
	c.start(2, &recorder{}, 0)
	a.Connect([]int{2})
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })

	killed := time.Now()
	c.kill(2)
	waitFor(t, time.Second, "link 1->2 down", func() bool { l, _ := r1.lastLink(2); return !l.up })
	t.Logf("link down %v after the kill", time.Since(killed))
	if l, _ := r1.lastLink(2); l.err == nil {
		t.Fatal("link down without an error")
	}
	if err := a.Send(2, msg(1)); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("Send to a dead peer: %v, want ErrLinkDown", err)
	}

	r2 := &recorder{}
	b := c.start(2, r2, 0)
	waitFor(t, 2*time.Second, "link 1->2 up again", func() bool { return a.LinkUp(2) })
	if err := a.Send(2, msg(2)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the message after the restart", func() bool { return len(r2.messages()) == 1 })
	if err := b.Send(1, msg(3)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "a message from the restarted node", func() bool { return len(r1.messages()) == 1 })
	if d := r1.messages()[0]; d.from != 2 || d.inc != 2 {
		t.Fatalf("from %d inc %d, want node 2 incarnation 2", d.from, d.inc)
	}
	// up, down, up — or more down, up pairs between: the first re-dial, at once after the EOF, may
	// still reach the dying peer's listener (closed after its connections), as on a real machine.
	var seq []bool
	for _, l := range r1.linkChanges() {
		if l.peer == 2 {
			seq = append(seq, l.up)
		}
	}
	ok := len(seq) >= 3 && len(seq)%2 == 1
	for i, up := range seq {
		ok = ok && up == (i%2 == 0)
	}
	if !ok {
		t.Fatalf("link changes %+v: want up, down, up (with possibly more down, up pairs between)", r1.linkChanges())
	}
}

// A dial that is refused reports the link down and drops what was queued meanwhile; re-dialling
// goes on in the background and brings the link up when the peer starts.
func testRefused(t *testing.T, c cluster) {
	r1 := &recorder{}
	a := c.start(1, r1, 0)
	c.kill(2) // node 2 is not running (for TCP: its reserved port is closed)
	err := a.Send(2, msg(1))
	if err != nil && !errors.Is(err, ErrLinkDown) {
		t.Fatalf("Send during the first dial: %v", err)
	}
	waitFor(t, time.Second, "link 1->2 down", func() bool { _, ok := r1.lastLink(2); return ok })
	if l, _ := r1.lastLink(2); l.up || l.err == nil {
		t.Fatalf("link change %+v: want down with the dial error", l)
	}
	if err == nil {
		waitFor(t, time.Second, "the queued message dropped", func() bool { return len(r1.dropped()) == 1 })
		if d := r1.dropped()[0]; d.peer != 2 || d.env == nil || d.env.Msg.Round != 1 || d.reason != ReasonLinkDown {
			t.Fatalf("drop %+v", d)
		}
	}
	if err := a.Send(2, msg(2)); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("Send on a down link: %v, want ErrLinkDown", err)
	}
	r2 := &recorder{}
	c.start(2, r2, 0)
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })
	if err := a.Send(2, msg(3)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 2*time.Second, "the message", func() bool { return len(r2.messages()) == 1 })
}

// A peer that stops reading (a paused process) fills its sender's queue: Send then fails at once
// with ErrQueueFull and never blocks; what was accepted arrives, in order, once the peer reads again.
func testOverflow(t *testing.T, c cluster) {
	r2 := &recorder{gate: make(chan struct{})}
	var once sync.Once
	open := func() { once.Do(func() { close(r2.gate) }) }
	t.Cleanup(open) // before the cluster's cleanup, which waits for the handler
	a := c.start(1, &recorder{}, 8)
	c.start(2, r2, 0)
	a.Connect([]int{2})
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })
	accepted := fillQueue(t, a, 2)
	for range 100 { // still full, still not blocking
		if err := a.Send(2, msg(0)); !errors.Is(err, ErrQueueFull) {
			t.Fatalf("Send on a full queue: %v", err)
		}
	}
	open()
	waitFor(t, 10*time.Second, "every accepted message", func() bool { return len(r2.messages()) == accepted })
	got := r2.messages()
	for i := 1; i < len(got); i++ {
		if got[i].env.Msg.Round <= got[i-1].env.Msg.Round {
			t.Fatalf("message %d has round %d after %d", i, got[i].env.Msg.Round, got[i-1].env.Msg.Round)
		}
	}
}

// fillQueue sends to a peer that does not read until its queue is full, and returns how many sends
// were accepted. Until the writer is stuck in a full socket, a full queue can drain again, so the
// queue counts as full when it still is after a pause that lets the writer run. No Send may block.
func fillQueue(t *testing.T, a Transport, to int) (accepted int) {
	t.Helper()
	ids := make([]int, 4000) // 12 KB frames fill the socket buffers sooner
	for i := range ids {
		ids[i] = 1000 + i
	}
	slowest := time.Duration(0)
	start := time.Now()
	for i, fullInARow := 0, 0; ; i++ {
		if fullInARow == 100 {
			time.Sleep(20 * time.Millisecond)
		}
		env := msg(i)
		env.Msg.IDs = ids
		t0 := time.Now()
		err := a.Send(to, env)
		slowest = max(slowest, time.Since(t0))
		switch {
		case errors.Is(err, ErrQueueFull) && fullInARow == 100:
			t.Logf("queue full after %d sends in %v; slowest Send %v", accepted, time.Since(start), slowest)
			if slowest > time.Second { // generous for loaded machines: a blocked Send would hang
				t.Errorf("a Send took %v", slowest)
			}
			return accepted
		case errors.Is(err, ErrQueueFull):
			fullInARow++
		case err != nil:
			t.Fatalf("send %d: %v", i, err)
		default:
			accepted++
			fullInARow = 0
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the queue is not full after %d sends", accepted)
		}
	}
}

func testErrors(t *testing.T, c cluster) {
	a := c.start(1, &recorder{}, 0)
	for _, to := range []int{1, 99, 0, -1} {
		if err := a.Send(to, msg(1)); !errors.Is(err, ErrUnknownPeer) {
			t.Errorf("Send to %d: %v, want ErrUnknownPeer", to, err)
		}
		if err := a.SendDatagram(to, &Datagram{}); !errors.Is(err, ErrUnknownPeer) {
			t.Errorf("SendDatagram to %d: %v, want ErrUnknownPeer", to, err)
		}
	}
	if err := a.Send(2, &Envelope{Kind: 9}); !errors.Is(err, ErrMalformed) {
		t.Errorf("Send of a bad envelope: %v, want ErrMalformed", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := a.Send(2, msg(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close: %v, want ErrClosed", err)
	}
	if err := a.SendDatagram(2, &Datagram{}); !errors.Is(err, ErrClosed) {
		t.Errorf("SendDatagram after Close: %v, want ErrClosed", err)
	}
	if a.LinkUp(2) {
		t.Error("LinkUp after Close")
	}
}

// A heartbeat arrives with the sender's identity filled in by the transport.
func testDatagram(t *testing.T, c cluster) {
	r2 := &recorder{}
	a := c.start(1, &recorder{}, 0)
	c.start(2, r2, 0)
	got := func() []Datagram { r2.mu.Lock(); defer r2.mu.Unlock(); return append([]Datagram(nil), r2.dgrams...) }
	waitFor(t, 2*time.Second, "a datagram", func() bool {
		if err := a.SendDatagram(2, &Datagram{From: 7, Seq: 42, Claim: 2, Ack: true}); err != nil {
			t.Fatal(err)
		}
		return len(got()) > 0
	})
	d := got()[0]
	if d.From != 1 || d.Inc != 1 || d.Seq != 42 || d.Claim != 2 || !d.Ack || d.Version != ProtocolVersion {
		t.Fatalf("datagram %+v", d)
	}
}

// Frames still queued when the connection breaks are reported through Drop as "link broke"; none
// is both delivered and reported.
func testLinkBroke(t *testing.T, c cluster) {
	r1, r2 := &recorder{}, &recorder{gate: make(chan struct{})}
	var once sync.Once
	open := func() { once.Do(func() { close(r2.gate) }) }
	t.Cleanup(open)
	a := c.start(1, r1, 4)
	c.start(2, r2, 0)
	a.Connect([]int{2})
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })
	accepted := fillQueue(t, a, 2)
	killed := make(chan struct{})
	go func() { c.kill(2); close(killed) }()
	time.Sleep(20 * time.Millisecond)
	open() // the TCP receiver's Close waits for its handler
	<-killed
	waitFor(t, 2*time.Second, "link 1->2 down", func() bool { l, _ := r1.lastLink(2); return !l.up })
	waitFor(t, 2*time.Second, "queued frames dropped", func() bool { return len(r1.dropped()) > 0 })
	delivered := map[int]bool{}
	for _, d := range r2.messages() {
		delivered[d.env.Msg.Round] = true
	}
	for _, d := range r1.dropped() {
		if d.peer != 2 || d.env == nil || d.reason != ReasonLinkBroke || delivered[d.env.Msg.Round] {
			t.Fatalf("drop %+v (delivered too: %v)", d, d.env != nil && delivered[d.env.Msg.Round])
		}
	}
	if n := len(delivered) + len(r1.dropped()); n > accepted {
		t.Fatalf("%d delivered + %d dropped > %d sent", len(delivered), len(r1.dropped()), accepted)
	}
	t.Logf("%d accepted, %d delivered, %d reported dropped", accepted, len(delivered), len(r1.dropped()))
}

// Close reports what is still queued as ReasonClosed, and calls nothing back once it has returned.
func testClose(t *testing.T, c cluster) {
	r1, r2 := &recorder{}, &recorder{gate: make(chan struct{})}
	var once sync.Once
	open := func() { once.Do(func() { close(r2.gate) }) }
	t.Cleanup(open)
	a := c.start(1, r1, 4)
	c.start(2, r2, 0)
	a.Connect([]int{2})
	waitFor(t, 2*time.Second, "link 1->2 up", func() bool { return a.LinkUp(2) })
	fillQueue(t, a, 2)
	time.AfterFunc(20*time.Millisecond, open) // mem's Close waits for a delivery under way
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	drops, links := len(r1.dropped()), len(r1.linkChanges())
	if drops < 4 {
		t.Fatalf("%d drops, want the 4 queued frames at least", drops)
	}
	for _, d := range r1.dropped() {
		if d.peer != 2 || d.env == nil || d.reason != ReasonClosed {
			t.Fatalf("drop %+v", d)
		}
	}
	time.Sleep(20 * time.Millisecond)
	if len(r1.dropped()) != drops || len(r1.linkChanges()) != links {
		t.Fatal("called back after Close returned")
	}
}
