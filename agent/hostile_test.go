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
	var b bytes.Buffer
	if err := wire.WriteFrame(&b, p); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadStreams: bytes that are not a request end the stream at once (the launcher is broken or
// the stream is not ours), with a log line saying why, and the agent serves a good stream
// afterwards. The stream is already authenticated by SSH, so no input here is a stranger's; these
// guard against a confused launcher and a corrupted channel.
func TestBadStreams(t *testing.T) {
	a := startAgent(t, nil)
	cases := []struct {
		name    string
		payload []byte
		reason  string
	}{
		{"garbage", bytes.Repeat([]byte{0xff}, 64), "frame too large"},
		{"huge length", append(binary.BigEndian.AppendUint32(nil, 0x7fffffff), 'x'), "frame too large"},
		{"msgpack map plus a byte", frame([]byte{0x81, 0xa1, 'a', 0x01, 0x02}), "malformed"},
		{"damaged", func() []byte {
			b := frame(mustMarshal(t, request{ID: 1, Op: OpTime, Body: mustMarshal(t, struct{}{})}))
			b[8] ^= 1
			return b
		}(), "checksum"},
		{"empty frame", []byte{0, 0, 0, 0}, "empty frame"},
		{"cut short", []byte{0, 0, 0, 50, 0x83}, "unexpected EOF"},
		{"unknown op", frame(mustMarshal(t, request{ID: 1, Op: "exec", Body: mustMarshal(t, struct{}{})})), `unknown op \"exec\"`},
		{"not msgpack", frame([]byte{0xc1, 0xc1}), "malformed"},
		{"trailing bytes", frame(append(mustMarshal(t, request{Op: OpTime, Body: mustMarshal(t, struct{}{})}), 0)), "trailing bytes"},
		// a body whose bin header declares 3.5 GB: refused before the library allocates it
		{"a length past the end", frame([]byte("\x83\xa2id\x01\xa2op\xa7prepare\xa4body\xc6\xdb\xc4U\x83\xa3run")), "a length of 3687077251 with"},
		{"malformed body", frame(mustMarshal(t, request{Op: OpStart, Body: []byte{0x81, 0xa3, 'r', 'u', 'n', 0x05}})), "malformed"},
		{"unknown field", frame(mustMarshal(t, request{Op: OpStart, Body: mustMarshal(t, map[string]any{"argv": []string{"/bin/sh"}})})), "malformed"},
		{"no body", frame(mustMarshal(t, request{Op: OpStatus})), "no body"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, done := a.stream(t)
			go func() {
				c.Write(tc.payload)
				if tc.name == "cut short" {
					c.Close()
				}
			}()
			expectClosed(t, c)
			if err := <-done; tc.name != "cut short" && err == nil {
				t.Fatalf("ServeStream returned nil, want the violation")
			}
			a.waitLog(t, tc.reason)
			a.stillServes(t)
		})
	}
}

func TestIdleTimeout(t *testing.T) {
	a := startAgent(t, func(o *Options) { o.IdleTimeout = 100 * time.Millisecond })
	c := a.dial(t)
	a.waitLog(t, "stream idle")
	waitFor(t, "the client to see the end", func() bool { return c.Err() != nil })
	if _, err := c.Time(context.Background()); err == nil {
		t.Fatal("an idle stream still served")
	}
	a.stillServes(t)
}

// TestMultiplexed: a long-polling events request does not hold up the others on the same stream,
// and replies find their requests whatever order they come in.
func TestMultiplexed(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	ctx := context.Background()
	if _, err := c.Prepare(ctx, "mux", testCluster(t), 0); err != nil {
		t.Fatal(err)
	}
	polled := make(chan error, 1)
	go func() {
		_, err := c.Events(ctx, "mux", 0, 2*time.Second)
		polled <- err
	}()
	for i := 0; i < 20; i++ {
		if _, err := c.Time(ctx); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-polled:
		t.Fatalf("the events request returned before its wait (%v): the test proves nothing", err)
	default:
	}
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	// A request abandoned by its context leaves the stream usable.
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if _, err := c.Events(short, "mux", 0, time.Second); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an abandoned request: %v", err)
	}
	if _, err := c.Time(ctx); err != nil {
		t.Fatalf("the stream did not survive an abandoned request: %v", err)
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
			a.waitLog(t, "request refused", tc.want)
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
