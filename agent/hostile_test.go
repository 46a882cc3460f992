package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/wire"
)

func frame(p []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(p))), p...)
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStrangers: bytes that are not a handshake close the connection at once, with a log line
// naming the remote address and the reason, and the agent serves a good client afterwards.
// The first three are the acceptance check's.
func TestStrangers(t *testing.T) {
	a := startAgent(t, nil)
	timeReq := mustMarshal(t, request{Op: OpTime, Body: mustMarshal(t, struct{}{})})
	cases := []struct {
		name    string
		payload []byte
		reason  string
	}{
		{"garbage", bytes.Repeat([]byte{0xff}, 64), "frame too large"},
		{"huge length", append(binary.BigEndian.AppendUint32(nil, 0x7fffffff), 'x'), "frame too large"},
		{"msgpack map plus a byte", []byte{0, 0, 0, 5, 0x81, 0xa1, 'a', 0x01, 0x02}, "malformed"},
		{"unauthenticated request", frame(timeReq), "malformed"},
		{"empty frame", []byte{0, 0, 0, 0}, "empty frame"},
		{"handshake frame too big", frame(bytes.Repeat([]byte{0x90}, 300)), "frame too large"},
		{"hello with a zero MAC", frame(mustMarshal(t, clientHello{Proto: protoLabel, Nonce: make([]byte, 32), MAC: make([]byte, 32)})), "bad MAC"},
		{"wrong protocol", frame(mustMarshal(t, clientHello{Proto: "leaderlab-agent v0", Nonce: make([]byte, 32), MAC: make([]byte, 32)})), "protocol"},
		{"short nonce", frame(mustMarshal(t, clientHello{Proto: protoLabel, Nonce: make([]byte, 3), MAC: make([]byte, 32)})), "nonce of 3 bytes"},
		{"cut short", []byte{0, 0, 0, 50, 0x83}, "unexpected EOF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := rawConn(t, a.addr)
			if _, err := c.Write(tc.payload); err != nil {
				t.Fatal(err)
			}
			if tc.name == "cut short" {
				c.(interface{ CloseWrite() error }).CloseWrite()
			}
			expectClosed(t, c)
			c.Close()
			a.waitLog(t, "connection refused", "remote="+c.LocalAddr().String(), tc.reason)
			a.stillServes(t)
		})
	}
}

func TestHandshakeTimeout(t *testing.T) {
	a := startAgent(t, func(o *Options) { o.HandshakeTimeout = 100 * time.Millisecond })
	c := rawConn(t, a.addr)
	expectClosed(t, c) // reads the challenge, then the close
	a.waitLog(t, "connection refused", "remote="+c.LocalAddr().String(), "timed out")
	a.stillServes(t)
}

func TestIdleTimeout(t *testing.T) {
	a := startAgent(t, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	c := a.dial(t)
	local := c.conn.LocalAddr().String()
	a.waitLog(t, "connection closed", "remote="+local, "timed out")
	if _, err := c.Time(context.Background()); err == nil {
		t.Fatal("an idle connection still served")
	}
	a.stillServes(t)
}

func TestWrongToken(t *testing.T) {
	a := startAgent(t, nil)
	_, err := Dial(context.Background(), a.addr, []byte("not-the-token-0123456789"), 10*time.Second)
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("Dial with a wrong token: %v, want ErrAuth", err)
	}
	a.waitLog(t, "connection refused", "bad MAC")
	if _, err := Dial(context.Background(), a.addr, []byte("short"), time.Second); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("Dial with a short token: %v", err)
	}
	a.stillServes(t)
}

// rawSession opens an authenticated session on a raw connection and returns it with a buffer that
// collects what it writes (copy it to the connection to send it).
func rawSession(t *testing.T, a *testAgent) (*session, *bytes.Buffer, func([]byte)) {
	t.Helper()
	c := rawConn(t, a.addr)
	sess, err := clientHandshake(c, testToken)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sess.rw = rwPair{Reader: c, Writer: &out}
	send := func(b []byte) {
		t.Helper()
		if _, err := c.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	return sess, &out, send
}

func TestReplayedFrame(t *testing.T) {
	a := startAgent(t, nil)
	sess, out, send := rawSession(t, a)
	if err := sess.writeMsg(request{Op: OpTime, Body: mustMarshal(t, struct{}{})}); err != nil {
		t.Fatal(err)
	}
	req := bytes.Clone(out.Bytes())
	send(req)
	p, err := sess.readMsg()
	if err != nil {
		t.Fatalf("the first time request: %v", err)
	}
	var rep reply
	if err := decodeStrict(p, &rep); err != nil || rep.Err != "" {
		t.Fatalf("reply %+v, %v", rep, err)
	}
	send(req) // the same frame again
	if _, err := sess.readMsg(); err == nil {
		t.Fatal("a replayed frame got a reply")
	}
	a.waitLog(t, "connection closed", "bad MAC on frame 1")
	a.stillServes(t)
}

func TestForgedFrame(t *testing.T) {
	a := startAgent(t, nil)
	sess, out, send := rawSession(t, a)
	if err := sess.writeMsg(request{Op: OpTime, Body: mustMarshal(t, struct{}{})}); err != nil {
		t.Fatal(err)
	}
	req := bytes.Clone(out.Bytes())
	req[len(req)-1] ^= 1
	send(req)
	if _, err := sess.readMsg(); err == nil {
		t.Fatal("a forged frame got a reply")
	}
	a.waitLog(t, "connection closed", "bad MAC on frame 0")
	a.stillServes(t)
}

// TestProtocolViolations: authenticated frames that are not a request of a known op close the
// connection.
func TestProtocolViolations(t *testing.T) {
	a := startAgent(t, nil)
	cases := []struct {
		name    string
		payload []byte
		reason  string
	}{
		{"unknown op", mustMarshal(t, request{Op: "exec", Body: mustMarshal(t, struct{}{})}), `unknown op \"exec\"`},
		{"not msgpack", []byte{0xc1, 0xc1}, "malformed"},
		{"trailing bytes", append(mustMarshal(t, request{Op: OpTime, Body: mustMarshal(t, struct{}{})}), 0), "trailing bytes"},
		// a body whose bin header declares 3.5 GB: refused before the library allocates it
		{"a length past the end", []byte("\x82\xa2op\xa7prepare\xa4body\xc6\xdb\xc4U\x83\xa3run"), "a length of 3687077251 with"},
		{"malformed body", mustMarshal(t, request{Op: OpStart, Body: []byte{0x81, 0xa3, 'r', 'u', 'n', 0x05}}), "malformed"},
		{"unknown field", mustMarshal(t, request{Op: OpStart, Body: mustMarshal(t, map[string]any{"argv": []string{"/bin/sh"}})}), "malformed"},
		{"no body", mustMarshal(t, request{Op: OpStatus}), "no body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sess, out, send := rawSession(t, a)
			if err := sess.writePayload(tc.payload); err != nil {
				t.Fatal(err)
			}
			send(out.Bytes())
			if _, err := sess.readMsg(); err == nil {
				t.Fatal("got a reply")
			}
			a.waitLog(t, "connection closed", tc.reason)
			a.stillServes(t)
		})
	}
}

// A request that declares more bytes than it has is refused before anything is allocated for it.
// (FuzzAgentRequest found it: the msgpack library sizes a []byte from its header, and decoding
// such a 20-byte request allocated 3.5 GB and took seconds.) Measured in bytes allocated, not time.
func TestDecodeStrictAllocatesNoMoreThanItIsGiven(t *testing.T) {
	for _, in := range [][]byte{
		[]byte("\x82\xa2op\xa7prepare\xa4body\xc6\xdb\xc4U\x83\xa3run"),      // bin32
		[]byte("\x82\xa2op\xa7prepare\xa4body\xdb\xdb\xc4U\x83\xa3run\xa10"), // str32 into []byte
		[]byte("\x82\xa2op\xdb\x7f\xff\xff\xff\xa4body\xc4\x00"),             // str32 into a string
		[]byte("\x81\xa5rules\xdd\x7f\xff\xff\xff"),                          // array32
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var r request
		err := decodeStrict(in, &r)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%q: %v, want ErrMalformed", in, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Errorf("%q: %d bytes allocated to refuse it", in, n)
		}
	}
}

// TestRefusals: requests that are well formed but not allowed get an error reply that says what
// would be accepted, a log line, and the connection stays up.
func TestRefusals(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	ctx := context.Background()
	const run = "refusals-1"
	dir, err := c.Prepare(ctx, run, testCluster(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	// A symbolic link that leads out of the run directory.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "nodes", "evil.jsonl")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"oversized fetch", func() error { _, err := c.Fetch(ctx, run, "cluster.json", 0, MaxChunk+1); return err }, "want 1 to 524288"},
		{"negative offset", func() error { _, err := c.Fetch(ctx, run, "cluster.json", -1, 10); return err }, "want 0 or more"},
		{"dot-dot", func() error { _, err := c.Fetch(ctx, run, "../cluster.json", 0, 10); return err }, "not inside the run directory"},
		{"inner dot-dot", func() error { _, err := c.Fetch(ctx, run, "nodes/../../x", 0, 10); return err }, "not inside the run directory"},
		{"absolute", func() error { _, err := c.Fetch(ctx, run, "/etc/passwd", 0, 10); return err }, "not inside the run directory"},
		{"symlink out", func() error { _, err := c.Fetch(ctx, run, "nodes/evil.jsonl", 0, 10); return err }, "fetch nodes/evil.jsonl"},
		{"a directory", func() error { _, err := c.Fetch(ctx, run, "nodes", 0, 10); return err }, "not a regular file"},
		{"signal HUP", func() error { return c.Signal(ctx, run, 1, "HUP") }, "want one of TERM, KILL, STOP, CONT"},
		{"signal never started", func() error { return c.Signal(ctx, run, 1, "KILL") }, "never started"},
		{"node not in cluster", func() error { _, err := c.Start(ctx, run, 99, 1, false); return err }, "node 99 is not in run refusals-1's cluster.json (its nodes: [1 2])"},
		{"incarnation 0", func() error { _, err := c.Start(ctx, run, 1, 0, false); return err }, "want 1 or more"},
		{"run not prepared", func() error { _, err := c.Start(ctx, "other", 1, 1, false); return err }, "not prepared"},
		{"bad run ID", func() error { _, err := c.Prepare(ctx, "../x", testCluster(t), 0); return err }, "want 1 to 64 characters"},
		{"run ID ..", func() error { _, err := c.Status(ctx, ".."); return err }, "want 1 to 64 characters"},
		{"bad cluster.json", func() error { _, err := c.Prepare(ctx, "r2", []byte("{"), 0); return err }, "cluster.json is not valid"},
		{"no nodes", func() error { _, err := c.Prepare(ctx, "r2", []byte(`{"version":1}`), 0); return err }, "lists no nodes"},
		{"prepared over its logs", func() error { _, err := c.Prepare(ctx, run, testCluster(t), 0); return err }, "already holds node logs of an earlier run"},
		{"short lease", func() error { _, err := c.Prepare(ctx, "r2", testCluster(t), time.Millisecond); return err }, "want 100ms to 1h0m0s"},
		{"ports by name", func() error { _, err := c.Ports(ctx, "localhost", 1); return err }, "want an IP address"},
		{"too many ports", func() error { _, err := c.Ports(ctx, "127.0.0.1", MaxPorts+1); return err }, "want 1 to 1024"},
		{"long wait", func() error { _, err := c.Events(ctx, run, 0, time.Minute); return err }, "want 0 to 5s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			var re *RemoteError
			if !errors.As(err, &re) || !strings.Contains(re.Message, tc.want) {
				t.Fatalf("got %v, want a refusal saying %q", err, tc.want)
			}
			a.waitLog(t, "request refused", "remote=127.0.0.1:", tc.want)
			if _, err := c.Time(ctx); err != nil {
				t.Fatalf("the connection did not survive the refusal: %v", err)
			}
		})
	}
	files, err := c.List(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f.Path, "evil") {
			t.Errorf("List lists the symbolic link %s", f.Path)
		}
	}
}

// TestTooManyConns: connections beyond MaxConns are closed on accept.
func TestTooManyConns(t *testing.T) {
	a := startAgent(t, func(o *Options) { o.MaxConns = 1 })
	c := a.dial(t)
	extra := rawConn(t, a.addr)
	expectClosed(t, extra)
	a.waitLog(t, "too many connections")
	if _, err := c.Time(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	os.WriteFile(good, []byte("  secret-token-for-bars\n"), 0o600)
	tok, err := LoadToken(good)
	if err != nil || string(tok) != "secret-token-for-bars" {
		t.Fatalf("LoadToken = %q, %v", tok, err)
	}
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("tiny\n"), 0o600)
	if _, err := LoadToken(short); err == nil || !strings.Contains(err.Error(), short) || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("LoadToken(short) = %v", err)
	}
	missing := filepath.Join(dir, "missing")
	if _, err := LoadToken(missing); err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "readable file") {
		t.Fatalf("LoadToken(missing) = %v", err)
	}
}

func TestSmallFrameLimit(t *testing.T) {
	_, err := readSmallFrame(bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff, 'x'}), maxHandshakeFrame)
	if !errors.Is(err, wire.ErrFrameTooLarge) {
		t.Fatalf("got %v", err)
	}
}
