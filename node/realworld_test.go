package node_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// TestRealProcessSmoke is the one test of the node on real sockets and the wall clock, for what
// only they have (everything else is tested in the simulator, simworld_test.go): node.Run's own
// loop, the TCP/UDP transport it builds from cluster.json, its readiness line once the real links
// are up, the authenticated control endpoint (requests and replies encoded over TCP, a refused
// rule set's error included), the stop when its context ends, the event log file, and a process
// started again without an incarnation taking the next one from that file. It waits only for the
// nodes' own signals (the readiness line, Run returning), never for a time to pass.
func TestRealProcessSmoke(t *testing.T) {
	dir := t.TempDir()
	secret := strings.Repeat("5a", 32)
	c := simCluster(2, time.Second, "chatter-count", "3")
	c.Secret = secret
	for i, a := range freeAddrs(t, 2) {
		c.Nodes[i].Addr = a
	}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	key, _ := hex.DecodeString(secret)

	// start runs node id (incarnation inc, 0: the next in its log); ready waits for its readiness
	// line, stop ends it and waits for Run to return.
	type proc struct{ ready, stop func() }
	orders, ordersW := io.Pipe() // node 1's stdin, as the launcher gives it
	start := func(id, inc int) proc {
		ctx, cancel := context.WithCancel(context.Background())
		lines := make(chan string, 1)
		errc := make(chan error, 1)
		opt := node.Options{Dir: dir, ID: id, Inc: inc, Ready: lineTo(lines), StatsEvery: time.Hour}
		if id == 1 && inc == 1 {
			opt.Orders = orders
		}
		go func() {
			errc <- node.Run(ctx, opt)
		}()
		var once sync.Once
		stop := func() {
			once.Do(func() {
				cancel()
				if err := <-errc; err != nil {
					t.Errorf("node %d: %v", id, err)
				}
			})
		}
		t.Cleanup(stop)
		ready := func() {
			t.Helper()
			select {
			case line := <-lines:
				if want := fmt.Sprintf("ready %d ", id); !strings.HasPrefix(line, want) {
					t.Errorf("readiness line %q, want %q...", line, want)
				}
			case err := <-errc:
				t.Fatalf("node %d: %v", id, err)
			case <-time.After(10 * time.Second): // a guard against a hang, not a bet on timing
				t.Fatalf("node %d was not ready in 10s", id)
			}
		}
		return proc{ready, stop}
	}
	call := func(id int, req wire.CtlRequest) wire.CtlReply {
		t.Helper()
		cc, err := wire.DialControl(c.Nodes[id-1].Addr, c.ClusterID, key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		b, err := wire.EncodeCtl(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := cc.Call(b)
		if err != nil {
			t.Fatalf("node %d: %s: %v", id, req.Op, err)
		}
		r, err := wire.DecodeCtlReply(body)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	n1, n2 := start(1, 1), start(2, 1)
	n1.ready()
	n2.ready()
	if r := call(2, wire.CtlRequest{Op: wire.CtlRules, Rules: []wire.LinkRule{{From: 1, Delay: int64(time.Millisecond)}}}); r.Error != "" || r.Rules != 1 {
		t.Errorf("rules: %+v", r)
	}
	if r := call(2, wire.CtlRequest{Op: wire.CtlRules, Rules: []wire.LinkRule{{From: 1, Loss: 2}}}); !strings.Contains(r.Error, "loss 2") || r.Rules != 1 {
		t.Errorf("a refused rule: %+v", r)
	}
	// Node 1 is begun down its stdin: a line it does not understand is passed over, the begin is
	// taken; its status says so once the loop has read it.
	if _, err := io.WriteString(ordersW, "start now\nbegin 0\n"); err != nil {
		t.Fatal(err)
	}
	ordersW.Close()
	deadline := time.Now().Add(10 * time.Second) // a guard against a hang, not a bet on timing
	for r := call(1, wire.CtlRequest{Op: wire.CtlStatus}); !r.Begun; r = call(1, wire.CtlRequest{Op: wire.CtlStatus}) {
		if time.Now().After(deadline) {
			t.Fatalf("node 1 did not begin from its orders: %+v", r)
		}
		time.Sleep(time.Millisecond)
	}
	for id := 1; id <= 2; id++ {
		if r := call(id, wire.CtlRequest{Op: wire.CtlBegin}); r.Error != "" || !r.Begun || r.Inc != 1 || r.Pid != os.Getpid() ||
			len(r.LinksUp) != 1 || r.LinksUp[0] != 3-id {
			t.Errorf("node %d: begin: %+v", id, r)
		}
	}
	n1.stop()
	n2.stop()
	// Started again with no incarnation given, node 1 reads its log and is incarnation 2; its peer
	// is gone, so it gives up waiting for the link and begins on its own, as a restart does.
	again := start(1, 0)
	again.ready()
	again.stop()

	for id, incs := range map[int]int{1: 2, 2: 1} {
		f, err := os.Open(rundir.NodeLog(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		nl, err := logs.ReadNodeLog(f, fmt.Sprint(id))
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var seq []string
		for _, e := range nl.Events {
			if e.Ev == logs.EvStart || e.Ev == logs.EvStats || e.Ev == logs.EvStop {
				seq = append(seq, fmt.Sprintf("%d:%s%s", e.Inc, e.Ev, map[bool]string{true: "(" + e.Reason + ")"}[e.Ev == logs.EvStop]))
			}
		}
		want := "1:start 1:stats 1:stop(context done)"
		if incs == 2 {
			want += " 2:start 2:stats 2:stop(context done)"
		}
		if got := strings.Join(seq, " "); got != want {
			t.Errorf("node %d's log: %s, want %s", id, got, want)
		}
	}
}

// lineTo passes each line written to it (the readiness line) to ch.
type lineTo chan<- string

func (l lineTo) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// freeAddrs finds n addresses on 127.0.0.1 free for TCP and UDP, holding each until all are found.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var hold []interface{ Close() error }
	defer func() {
		for _, h := range hold {
			h.Close()
		}
	}()
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries > 100 {
			t.Fatalf("no %d free TCP+UDP ports on 127.0.0.1", n)
		}
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		hold = append(hold, l)
		u, err := net.ListenPacket("udp", l.Addr().String())
		if err != nil {
			continue
		}
		hold = append(hold, u)
		out = append(out, l.Addr().String())
	}
	return out
}
