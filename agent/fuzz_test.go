package agent

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// fuzzServer is a server that is handed connections directly; it starts nothing (its binary does
// not exist) and its events requests do not wait.
func fuzzServer(f *testing.F) *Server {
	s, err := New(Options{WorkDir: filepath.Join(f.TempDir(), "work"), Binary: "/nonexistent/leaderlab", Log: io.Discard,
		IdleTimeout: 10 * time.Second})
	if err != nil {
		f.Fatal(err)
	}
	s.maxWait = time.Millisecond
	f.Cleanup(s.Close)
	return s
}

// servePipe serves one end of an in-memory connection and returns the other, and a channel closed
// when the server is done with it.
func servePipe(s *Server) (net.Conn, <-chan struct{}) {
	srv, cli := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeStream(context.Background(), srv)
	}()
	return cli, done
}

// FuzzAgentFrame feeds arbitrary bytes to a connection as a stranger would: the agent must close
// it without panicking or hanging.
func FuzzAgentFrame(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Add(append(binary.BigEndian.AppendUint32(nil, 0x7fffffff), 'x'))
	f.Add([]byte{0, 0, 0, 5, 0x81, 0xa1, 'a', 0x01, 0x02})
	f.Add([]byte{0, 0, 0, 0})
	f.Add(frame(mustMarshal(f, request{Op: OpTime, Body: []byte{0x80}})))
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		cli, done := servePipe(s)
		go io.Copy(io.Discard, cli)
		cli.Write(data)
		cli.Close()
		<-done
	})
}

// FuzzAgentRequest sends arbitrary messages in well-formed frames (so they reach the decoder and
// the ops): the agent must answer or close, never panic or hang.
func FuzzAgentRequest(f *testing.F) {
	for _, r := range []request{
		{Op: OpTime, Body: mustMarshal(f, struct{}{})},
		{Op: OpPrepare, Body: mustMarshal(f, PrepareRequest{Run: "f", Cluster: []byte(`{"version":1,"nodes":[{"id":1,"addr":"127.0.0.1:1"}]}`)})},
		{Op: OpPorts, Body: mustMarshal(f, PortsRequest{IP: "127.0.0.1", Count: 1})},
		{Op: OpStart, Body: mustMarshal(f, StartRequest{Run: "f", Node: 1, Inc: 1})},
		{Op: OpSignal, Body: mustMarshal(f, SignalRequest{Run: "f", Node: 1, Signal: "KILL"})},
		{Op: OpEvents, Body: mustMarshal(f, EventsRequest{Run: "f", Wait: time.Second})},
		{Op: OpStatus, Body: mustMarshal(f, RunRequest{Run: "f"})},
		{Op: OpList, Body: mustMarshal(f, RunRequest{Run: "f"})},
		{Op: OpFetch, Body: mustMarshal(f, FetchRequest{Run: "f", Path: "cluster.json", Max: 100})},
		{Op: OpFetch, Body: mustMarshal(f, FetchRequest{Run: "f", Path: "../../etc/passwd", Max: 100})},
		{Op: OpRenew, Body: mustMarshal(f, RunRequest{Run: "f"})},
		{Op: OpHost, Body: mustMarshal(f, struct{}{})},
		{Op: OpCleanup, Body: mustMarshal(f, CleanupRequest{Run: "f", Keep: true})},
		{Op: "nope", Body: []byte{0xc0}},
	} {
		f.Add(mustMarshal(f, r))
	}
	f.Add([]byte{0xc1})
	s := fuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 1<<20 {
			return // no frame carries nothing (wire.WriteFrame refuses it; TestBadStreams sends its raw header)
		}
		cli, done := servePipe(s)
		defer func() { cli.Close(); <-done }()
		// Well inside the fuzzing engine's own limit of 10 s an input, past which it kills the
		// worker and reports it as hung, with no word of what hung.
		cli.SetDeadline(time.Now().Add(3 * time.Second))
		go cli.Write(frame(data))
		p, err := wire.ReadFrame(cli, nil)
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("the agent neither answered nor closed the connection within 3 s")
		}
		if err == nil {
			var rep reply
			if err := decodeStrict(p, &rep); err != nil {
				t.Fatalf("the agent's reply does not decode: %v", err)
			}
		}
	})
}
