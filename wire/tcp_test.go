package wire

import (
	"bytes"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// server starts node 1 of a cluster whose peers are 2 (started too, as a legitimate sender) and 3
// (never started: hostile clients may claim it).
func server(t *testing.T) (srv *TCP, r1 *recorder, legit *TCP) {
	t.Helper()
	addrs := map[int]string{}
	var lns []net.Listener
	for id := 1; id <= 3; id++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[id] = ln.Addr().String()
		lns = append(lns, ln)
	}
	lns[2].Close()
	start := func(id int, h Handler) *TCP {
		cfg := DefaultTCPConfig()
		cfg.Self, cfg.Cluster, cfg.Secret, cfg.Handler, cfg.Peers = id, "test-run", testSecret, h, addrs
		cfg.Listener, cfg.HandshakeTimeout = lns[id-1], 200*time.Millisecond
		tr, err := NewTCP(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	r1 = &recorder{}
	return start(1, r1), r1, start(2, &recorder{})
}

func helloFrame(t *testing.T, h Hello) []byte {
	t.Helper()
	p, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return slices.Clip(sealed(p)) // the tests append to it
}

func envFrame(t *testing.T, e *Envelope) []byte {
	t.Helper()
	b, err := appendFrame(nil, e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// closedByServer tells whether the server closed c within d (reads give EOF or a reset).
func closedByServer(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	return !(errors.As(err, &ne) && ne.Timeout())
}

func TestTCPHostileClients(t *testing.T) {
	srv, r1, legit := server(t)
	sent := 0
	legitSend := func() {
		t.Helper()
		if err := legit.Send(1, msg(sent)); err != nil {
			t.Fatal(err)
		}
		sent++
		waitFor(t, 2*time.Second, "the legitimate peer's message", func() bool { return len(r1.messages()) == sent })
	}
	legitSend()

	wrongVersion := NewHello(testSecret, "test-run", 3, 1)
	wrongVersion.Version = 2
	wrongVersion.Sign(testSecret)
	validAs3 := helloFrame(t, NewHello(testSecret, "test-run", 3, 1))
	tests := []struct {
		name   string
		send   []byte
		reason string // a part of the Drop reason
		peer   int
	}{
		{"http garbage", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "frame too large", 0},
		{"garbage in a frame", sealed([]byte("hello")), "bad hello", 0},
		{"a hello without its checksum", append(header(5), "hello\x00\x00\x00\x00"...), "checksum", 0},
		{"oversized length", header(0x7fffffff), "frame too large", 0},
		{"oversized hello", header(MaxFrame), "frame too large", 0},
		{"empty frame", header(0), "empty frame", 0},
		{"silence", nil, "no hello", 0},
		{"half a hello", validAs3[:10], "no hello", 0},
		{"an envelope first", envFrame(t, msg(1)), "bad hello", 0},
		{"wrong HMAC", helloFrame(t, NewHello([]byte("guessed"), "test-run", 2, 1)), "bad MAC", 0},
		{"wrong cluster", helloFrame(t, NewHello(testSecret, "other-run", 2, 1)), "cluster", 0},
		{"wrong version", helloFrame(t, wrongVersion), "version", 0},
		{"unknown sender 99", helloFrame(t, NewHello(testSecret, "test-run", 99, 1)), "not a peer", 0},
		{"negative sender", helloFrame(t, NewHello(testSecret, "test-run", -2, 1)), "not a peer", 0},
		{"the server's own ID", helloFrame(t, NewHello(testSecret, "test-run", 1, 1)), "own ID", 0},
		{"incarnation 0", helloFrame(t, NewHello(testSecret, "test-run", 3, 0)), "incarnation", 0},
		{"garbage after a good hello", append(validAs3, sealed([]byte{0xc1, 0xc1, 0xc1})...), "bad frame", 3},
		{"a damaged frame after a good hello", append(validAs3, func() []byte { b := envFrame(t, msg(1)); b[9] ^= 4; return b }()...), "checksum", 3},
		{"oversized frame after a good hello", append(validAs3, header(MaxFrame+1)...), "frame too large", 3},
		{"control kind after a good hello", append(validAs3, envFrame(t, &Envelope{Kind: KindCtlReq})...), "kind", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(r1.dropped())
			c, err := net.Dial("tcp", srv.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(tt.send); err != nil {
				t.Fatal(err)
			}
			if !closedByServer(c, 2*time.Second) {
				t.Fatal("the server kept the connection open")
			}
			waitFor(t, time.Second, "a drop", func() bool { return len(r1.dropped()) > before })
			d := r1.dropped()[before]
			if !strings.Contains(d.reason, tt.reason) || d.peer != tt.peer {
				t.Fatalf("drop %+v: want peer %d and a reason with %q", d, tt.peer, tt.reason)
			}
			t.Logf("reason: %s", d.reason)
			legitSend()
		})
	}
	if n := len(r1.messages()); n != sent {
		t.Fatalf("%d messages delivered, want only the legitimate %d", n, sent)
	}
}

// A second connection from the same peer (it restarted) replaces the first.
func TestTCPReplacesOlderConnection(t *testing.T) {
	srv, r1, _ := server(t)
	dial := func(inc int) net.Conn {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if _, err := c.Write(helloFrame(t, NewHello(testSecret, "test-run", 3, inc))); err != nil {
			t.Fatal(err)
		}
		return c
	}
	old := dial(1)
	if _, err := old.Write(envFrame(t, msg(1))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "a message on the first connection", func() bool { return len(r1.messages()) == 1 })
	cur := dial(2)
	if !closedByServer(old, 2*time.Second) {
		t.Fatal("the older connection is still open")
	}
	if closedByServer(cur, 50*time.Millisecond) {
		t.Fatal("the newer connection was closed")
	}
	if _, err := cur.Write(envFrame(t, msg(2))); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "a message on the second connection", func() bool { return len(r1.messages()) == 2 })
	if d := r1.messages()[1]; d.from != 3 || d.inc != 2 {
		t.Fatalf("from %d inc %d", d.from, d.inc)
	}
	if d := r1.dropped(); len(d) != 0 {
		t.Fatalf("replacing a connection reported drops: %+v", d)
	}
}

func TestTCPControl(t *testing.T) {
	srv, r1, _ := server(t)
	addr := srv.Addr().String()
	cc, err := DialControl(addr, "test-run", testSecret, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range [][]byte{{0x81, 0xa2, 'o', 'p', 0xa5, 'b', 'e', 'g', 'i', 'n'}, {0x01}} {
		reply, err := cc.Call(req)
		if err != nil {
			t.Fatal(err)
		}
		if want := append([]byte{0x92, 0xa2, 'o', 'k'}, req...); !bytes.Equal(reply, want) {
			t.Fatalf("reply % x, want % x", reply, want)
		}
	}
	if _, err := cc.Call([]byte{0x01, 0x02}); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a request of two values: %v", err)
	}
	cc.Close()
	if _, err := cc.Call([]byte{0x01}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Call after Close: %v", err)
	}

	bad, err := DialControl(addr, "test-run", []byte("wrong"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if _, err := bad.Call([]byte{0x01}); err == nil {
		t.Fatal("a control call with the wrong secret succeeded")
	}
	waitFor(t, time.Second, "the rejected controller's drop", func() bool {
		d := r1.dropped()
		return len(d) > 0 && strings.Contains(d[len(d)-1].reason, "bad MAC")
	})
	r1.mu.Lock()
	defer r1.mu.Unlock()
	if len(r1.ctl) != 2 {
		t.Fatalf("%d control requests reached the handler, want 2", len(r1.ctl))
	}
}

func TestTCPBadDatagrams(t *testing.T) {
	srv, r1, _ := server(t)
	c, err := net.Dial("udp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	enc := func(secret []byte, d Datagram) []byte {
		b, err := EncodeDatagram(secret, &d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tt := range []struct {
		name, reason string
		b            []byte
	}{
		{"garbage", "malformed", []byte("garbage")},
		{"wrong secret", "bad MAC", enc([]byte("guess"), Datagram{Cluster: "test-run", From: 2, Inc: 1})},
		{"wrong cluster", "cluster", enc(testSecret, Datagram{Cluster: "x", From: 2, Inc: 1})},
		{"unknown sender", "not a peer", enc(testSecret, Datagram{Cluster: "test-run", From: 9, Inc: 1})},
		{"own ID", "not a peer", enc(testSecret, Datagram{Cluster: "test-run", From: 1, Inc: 1})},
	} {
		before := len(r1.dropped())
		if _, err := c.Write(tt.b); err != nil {
			t.Fatal(err)
		}
		waitFor(t, time.Second, tt.name+" dropped", func() bool { return len(r1.dropped()) > before })
		if d := r1.dropped()[before]; d.peer != 0 || d.env != nil || !strings.Contains(d.reason, tt.reason) {
			t.Errorf("%s: drop %+v, want peer 0 and a reason with %q", tt.name, d, tt.reason)
		}
	}
	if _, err := c.Write(enc(testSecret, Datagram{Cluster: "test-run", From: 3, Inc: 4, Seq: 5})); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Second, "the good datagram", func() bool { r1.mu.Lock(); defer r1.mu.Unlock(); return len(r1.dgrams) == 1 })
}

func TestTCPListenPortZero(t *testing.T) {
	cfg := DefaultTCPConfig()
	cfg.Self, cfg.Cluster, cfg.Secret, cfg.Handler, cfg.Listen = 1, "c", testSecret, &recorder{}, "127.0.0.1:0"
	tr, err := NewTCP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	tcpPort := tr.Addr().(*net.TCPAddr).Port
	if udpPort := tr.pc.LocalAddr().(*net.UDPAddr).Port; tcpPort == 0 || udpPort != tcpPort {
		t.Fatalf("TCP port %d, UDP port %d", tcpPort, udpPort)
	}
	cfg.Listen = tr.Addr().String()
	if _, err := NewTCP(cfg); err == nil || !strings.Contains(err.Error(), cfg.Listen) {
		t.Fatalf("binding a taken port: %v", err)
	}
}

func TestTCPConfigValidate(t *testing.T) {
	good := func() TCPConfig {
		c := DefaultTCPConfig()
		c.Self, c.Cluster, c.Secret, c.Handler, c.Listen = 1, "c", testSecret, &recorder{}, "127.0.0.1:0"
		c.Peers = map[int]string{1: "127.0.0.1:7001", 2: "vm2.example:7002"}
		return c
	}
	if c := good(); c.validate() != nil {
		t.Fatal(c.validate())
	}
	for _, tt := range []struct {
		name string
		f    func(*TCPConfig)
		want string // names the value and the range
	}{
		{"self 0", func(c *TCPConfig) { c.Self = 0 }, "Self is 0"},
		{"inc 0", func(c *TCPConfig) { c.Inc = 0 }, "Inc is 0"},
		{"no cluster", func(c *TCPConfig) { c.Cluster = "" }, "Cluster"},
		{"no secret", func(c *TCPConfig) { c.Secret = nil }, "Secret"},
		{"no handler", func(c *TCPConfig) { c.Handler = nil }, "Handler"},
		{"queue", func(c *TCPConfig) { c.QueueLen = -1 }, "QueueLen is -1: want 1..1048576"},
		{"handshake", func(c *TCPConfig) { c.HandshakeTimeout = -time.Second }, "HandshakeTimeout is -1s"},
		{"backoff max < min", func(c *TCPConfig) { c.BackoffMax = time.Millisecond }, "BackoffMax is 1ms: want BackoffMin (2ms)"},
		{"bind", func(c *TCPConfig) { c.Bind = "localhost" }, `Bind "localhost": want an IP`},
		{"listen", func(c *TCPConfig) { c.Listen = "7001" }, `Listen: "7001": want host:port`},
		{"peer id", func(c *TCPConfig) { c.Peers[0] = "h:1" }, "Peers has ID 0"},
		{"peer port", func(c *TCPConfig) { c.Peers[3] = "h:0" }, `Peers[3]: "h:0": want a port in 1..65535`},
	} {
		c := good()
		tt.f(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	c := good()
	c.QueueLen, c.HandshakeTimeout, c.BackoffMin, c.BackoffMax = 0, 0, 0, 0
	if c = c.withDefaults(); c.validate() != nil || c.QueueLen != 1024 {
		t.Fatalf("zero values do not take the defaults: %+v", c)
	}
}
