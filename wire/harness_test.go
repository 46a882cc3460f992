package wire

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// Test helpers: a recording Handler, and clusters of nodes on either transport.

// recorder is a Handler that remembers everything; with a gate, Message blocks until it is closed.
type recorder struct {
	mu     sync.Mutex
	msgs   []delivery
	dgrams []Datagram
	drops  []drop
	links  []linkChange
	ctl    [][]byte
	gate   chan struct{}
}

type delivery struct {
	from, inc int
	env       *Envelope
}

type drop struct {
	peer   int
	env    *Envelope
	reason string
}

type linkChange struct {
	peer int
	up   bool
	err  error
}

func (r *recorder) Message(from, inc int, env *Envelope) {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, delivery{from, inc, env})
}

func (r *recorder) Datagram(from string, d Datagram) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dgrams = append(r.dgrams, d)
}

func (r *recorder) Drop(peer int, env *Envelope, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drops = append(r.drops, drop{peer, env, reason})
}

func (r *recorder) Link(peer int, up bool, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.links = append(r.links, linkChange{peer, up, err})
}

func (r *recorder) Control(req []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctl = append(r.ctl, req)
	return append([]byte{0x92, 0xa2, 'o', 'k'}, req...)
}

func (r *recorder) messages() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.msgs...)
}

func (r *recorder) dropped() []drop {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]drop(nil), r.drops...)
}

// lastLink is the latest link change reported for peer.
func (r *recorder) lastLink(peer int) (linkChange, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.links) - 1; i >= 0; i-- {
		if r.links[i].peer == peer {
			return r.links[i], true
		}
	}
	return linkChange{}, false
}

func (r *recorder) linkChanges() []linkChange {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]linkChange(nil), r.links...)
}

// waitFor polls cond until it holds, or fails the test after d.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: still waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

func msg(round int) *Envelope {
	return &Envelope{Kind: KindMsg, LC: uint64(round), Msg: election.Message{ID: fmt.Sprintf("1.1.%d", round), Kind: "election", Round: round}}
}

// cluster starts and kills the nodes of a test cluster on one transport.
type cluster interface {
	// start starts (or restarts) node id; queueLen 0 means the default.
	start(id int, h Handler, queueLen int) Transport
	// kill makes node id's process die: its sockets close.
	kill(id int)
}

const (
	testBackoffMin = time.Millisecond
	testBackoffMax = 20 * time.Millisecond
)

type tcpCluster struct {
	t     testing.TB
	addrs map[int]string
	lns   map[int]net.Listener // reserved listeners, used by each node's first start
	nodes map[int]*TCP
}

func newTCPCluster(t testing.TB, ids ...int) *tcpCluster {
	c := &tcpCluster{t: t, addrs: map[int]string{}, lns: map[int]net.Listener{}, nodes: map[int]*TCP{}}
	for _, id := range ids {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		c.lns[id], c.addrs[id] = ln, ln.Addr().String()
	}
	t.Cleanup(func() {
		for _, n := range c.nodes {
			n.Close()
		}
		for _, ln := range c.lns {
			ln.Close()
		}
	})
	return c
}

func (c *tcpCluster) config(id int, h Handler, queueLen int) TCPConfig {
	cfg := DefaultTCPConfig()
	cfg.Self, cfg.Cluster, cfg.Secret, cfg.Handler = id, "test-run", testSecret, h
	cfg.Peers, cfg.Listen, cfg.Bind = c.addrs, c.addrs[id], "127.0.0.1"
	cfg.BackoffMin, cfg.BackoffMax = testBackoffMin, testBackoffMax
	cfg.HandshakeTimeout = 500 * time.Millisecond
	if queueLen > 0 {
		cfg.QueueLen = queueLen
	}
	return cfg
}

func (c *tcpCluster) start(id int, h Handler, queueLen int) Transport {
	cfg := c.config(id, h, queueLen)
	if old := c.nodes[id]; old != nil {
		cfg.Inc = old.cfg.Inc + 1
		old.Close()
	}
	cfg.Listener = c.lns[id]
	delete(c.lns, id)
	tr, err := NewTCP(cfg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.nodes[id] = tr
	return tr
}

func (c *tcpCluster) kill(id int) {
	if n := c.nodes[id]; n != nil {
		n.Close()
	} else if ln := c.lns[id]; ln != nil { // never started: free its reserved port
		ln.Close()
		delete(c.lns, id)
	}
}

type memTestCluster struct{ net *MemNetwork }

func newMemCluster(t *testing.T, ids ...int) cluster {
	n := NewMemNetwork(ids...)
	n.BackoffMin, n.BackoffMax = testBackoffMin, testBackoffMax
	t.Cleanup(func() {
		for _, id := range ids {
			n.Kill(id)
		}
	})
	return &memTestCluster{net: n}
}

func (c *memTestCluster) start(id int, h Handler, queueLen int) Transport {
	c.net.QueueLen = DefaultTCPConfig().QueueLen
	if queueLen > 0 {
		c.net.QueueLen = queueLen
	}
	return c.net.Attach(id, h)
}

func (c *memTestCluster) kill(id int) { c.net.Kill(id) }
