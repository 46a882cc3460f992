package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// TestMain turns the test binary into a fake `leaderlab node` when the agent starts it as one
// (`agent.test node --run DIR --id N --inc I [--await-begin]`), so the tests run real processes
// without the leaderlab binary, which lives in package main.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "node" {
		os.Exit(fakeNode(os.Args[2:]))
	}
	os.Exit(m.Run())
}

// fakeNode checks that it was started with exactly the node command's arguments, appends a start
// line to its event log and a line to stderr, says "ready", and waits: SIGTERM ends it with exit 0
// (after a stop line), SIGKILL as it would. It gives up after two minutes, so a test that goes
// wrong cannot leave it behind for long.
func fakeNode(args []string) int {
	if len(args) != 6 && !(len(args) == 7 && args[6] == "--await-begin") || args[0] != "--run" || args[2] != "--id" || args[4] != "--inc" {
		fmt.Fprintf(os.Stderr, "fake node: unexpected arguments %q\n", args)
		return 3
	}
	dir := args[1]
	id, err1 := strconv.Atoi(args[3])
	inc, err2 := strconv.Atoi(args[5])
	if err1 != nil || err2 != nil {
		fmt.Fprintf(os.Stderr, "fake node: bad --id or --inc in %q\n", args)
		return 3
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	logLine := func(ev string) {
		f, err := os.OpenFile(rundir.NodeLog(dir, id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err == nil {
			fmt.Fprintf(f, "{\"node\":%d,\"inc\":%d,\"ev\":%q}\n", id, inc, ev)
			f.Close()
		}
	}
	logLine("start")
	fmt.Fprintf(os.Stderr, "fake node %d.%d up\n", id, inc)
	fmt.Printf("ready %d %d\n", id, inc)
	select {
	case <-term:
		logLine("stop")
		return 0
	case <-time.After(2 * time.Minute):
		return 4
	}
}

// syncBuffer is the agent's log in a test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls cond until it holds; the deadline only guards against a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitForf(t, func() string { return what }, cond)
}

func waitForf(t *testing.T, what func() string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitLog waits for a log line that holds every one of parts.
func (a *testAgent) waitLog(t *testing.T, parts ...string) string {
	t.Helper()
	var found string
	waitForf(t, func() string { return fmt.Sprintf("a log line with %q; log:\n%s", parts, a.log.String()) }, func() bool {
		for _, line := range strings.Split(a.log.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				found = line
				return true
			}
		}
		return false
	})
	return found
}

type testAgent struct {
	s    *Server
	log  *syncBuffer
	stop func() // stops the server (kills its processes) and waits for its streams
	wg   *sync.WaitGroup
}

// startAgent makes an agent whose binary is this test binary (a fake node); its streams are pipes.
func startAgent(t *testing.T, mod func(*Options)) *testAgent {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logb := &syncBuffer{}
	opts := Options{WorkDir: filepath.Join(t.TempDir(), "work"), Binary: exe, Log: logb}
	if mod != nil {
		mod(&opts)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	wg := &sync.WaitGroup{}
	stop := func() {
		once.Do(func() {
			s.Close()
			wg.Wait()
		})
	}
	t.Cleanup(stop)
	return &testAgent{s: s, log: logb, stop: stop, wg: wg}
}

// stream serves a new in-memory stream and returns the launcher's end of it, and a channel that
// gets what ServeStream returned.
func (a *testAgent) stream(t *testing.T) (net.Conn, <-chan error) {
	t.Helper()
	srv, cli := net.Pipe()
	done := make(chan error, 1)
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		done <- a.s.ServeStream(context.Background(), srv)
	}()
	t.Cleanup(func() { cli.Close() })
	return cli, done
}

func (a *testAgent) dial(t *testing.T) *Client {
	t.Helper()
	cli, _ := a.stream(t)
	c, err := NewClient("test-agent", cli, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// stillServes checks that the agent answers a good client on a new stream.
func (a *testAgent) stillServes(t *testing.T) {
	t.Helper()
	c := a.dial(t)
	defer c.Close()
	if _, err := c.Time(context.Background()); err != nil {
		t.Fatalf("the agent no longer serves a good client: %v", err)
	}
}

// testCluster is a cluster.json of nodes 1 and 2 on loopback ports.
func testCluster(t *testing.T) []byte {
	t.Helper()
	c := rundir.Cluster{Version: rundir.Version, ClusterID: "agent-test", Algo: "bully", Topology: "mesh",
		Nodes: []rundir.Node{{ID: 1, Addr: "127.0.0.1:1"}, {ID: 2, Addr: "127.0.0.1:2"}}, Secret: "00"}
	b, err := json.Marshal(&c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// expectClosed reads until the agent closes the stream; a read that times out fails.
func expectClosed(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the agent kept the stream open")
	}
}
