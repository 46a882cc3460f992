package wire

import (
	"bytes"
	"errors"
	"syscall"
	"testing"
	"time"
)

// A killed node is called back no more, and Kill does not wait for a handler that is blocked (a
// paused process can be killed).
func TestMemKill(t *testing.T) {
	n := NewMemNetwork(1, 2)
	r1, r2 := &recorder{}, &recorder{gate: make(chan struct{})}
	a := n.Attach(1, r1)
	b := n.Attach(2, r2)
	defer a.Close()
	if err := a.Send(2, msg(1)); err != nil {
		t.Fatal(err)
	}
	b.Connect([]int{1})
	waitFor(t, time.Second, "link 2->1 up", func() bool { return b.LinkUp(1) })
	time.Sleep(10 * time.Millisecond) // node 2's handler is now blocked in Message

	done := make(chan struct{})
	go func() { n.Kill(2); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		close(r2.gate)
		t.Fatal("Kill waited for the killed node's blocked handler")
	}
	close(r2.gate)
	waitFor(t, time.Second, "link 1->2 down", func() bool { l, ok := r1.lastLink(2); return ok && !l.up })
	before := len(r2.linkChanges())
	if err := a.Send(2, msg(2)); !errors.Is(err, ErrLinkDown) {
		t.Fatalf("Send to a killed node: %v", err)
	}
	if err := b.Send(1, msg(3)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Send from a killed node: %v", err)
	}
	time.Sleep(20 * time.Millisecond)
	if got := len(r2.linkChanges()); got != before || len(r2.dropped()) != 0 {
		t.Fatalf("the killed node was called back: links %+v, drops %+v", r2.linkChanges(), r2.dropped())
	}

	r2 = &recorder{}
	n.Attach(2, r2)
	waitFor(t, time.Second, "link 1->2 up again", func() bool { return a.LinkUp(2) })
	if err := a.Send(2, msg(4)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "a message to the restarted node", func() bool { return len(r2.messages()) == 1 })
}

func TestMemControl(t *testing.T) {
	n := NewMemNetwork()
	r := &recorder{}
	tr := n.Attach(3, r)
	req := []byte{0x81, 0xa2, 'o', 'p', 0xa1, 'x'}
	reply, err := n.Control(3, req)
	if err != nil || !bytes.Equal(reply, append([]byte{0x92, 0xa2, 'o', 'k'}, req...)) {
		t.Fatalf("reply % x, %v", reply, err)
	}
	if _, err := n.Control(3, []byte{0x01, 0x02}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a request of two values: %v", err)
	}
	tr.Close()
	if _, err := n.Control(3, req); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("control of a closed node: %v", err)
	}
}
