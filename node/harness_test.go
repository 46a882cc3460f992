package node

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// testNet runs a few nodes in this process, as the launcher runs them as processes: a cluster.json
// in a temporary run directory, node.Run per node, and a control client per node. Nodes are ready
// (linked) but not begun when newTestNet returns, so a test sets its rules before any traffic.
type testNet struct {
	t      *testing.T
	dir    string
	c      *rundir.Cluster
	secret []byte
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   chan error
	ctl    map[int]*wire.ControlClient
	once   sync.Once
}

// testSeed is the cluster seed of every test net: the link rules' draws are fixed by it.
const testSeed = 42

func newTestNet(t *testing.T, n int, opts map[string]string) *testNet {
	t.Helper()
	tn := &testNet{t: t, dir: t.TempDir(), errs: make(chan error, n), ctl: map[int]*wire.ControlClient{}}
	tn.secret = bytes.Repeat([]byte{0x5a}, 32)
	var ids []int
	for i := 1; i <= n; i++ {
		ids = append(ids, i)
	}
	tn.c = &rundir.Cluster{
		ClusterID: "netemtest", Algo: chatterAlgo, Topology: "mesh", Placement: "ascending",
		Ring: ids, InitiatorsSpec: "all", Initiators: ids,
		Heartbeat: rundir.Duration(10 * time.Millisecond), Timeout: rundir.Duration(250 * time.Millisecond),
		ElectionTimeout: rundir.Duration(100 * time.Millisecond), CoordinatorTimeout: rundir.Duration(300 * time.Millisecond),
		Seed: testSeed, Options: opts, Secret: hex.EncodeToString(tn.secret),
	}
	for i, a := range freeAddrs(t, n) {
		tn.c.Nodes = append(tn.c.Nodes, rundir.Node{ID: i + 1, Addr: a})
	}
	if err := rundir.Save(tn.dir, tn.c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	tn.cancel = cancel
	ready := make(chan int, n)
	for _, id := range ids {
		tn.wg.Go(func() {
			err := Run(ctx, Options{Dir: tn.dir, ID: id, Inc: 1, Ready: readyLine{id, ready}, StatsEvery: time.Hour})
			if err != nil {
				tn.errs <- fmt.Errorf("node %d: %w", id, err)
			}
		})
	}
	t.Cleanup(tn.stop)
	deadline := time.After(10 * time.Second)
	for range ids {
		select {
		case <-ready:
		case err := <-tn.errs:
			t.Fatal(err)
		case <-deadline:
			t.Fatal("the nodes were not ready in 10s")
		}
	}
	for _, nd := range tn.c.Nodes {
		cc, err := wire.DialControl(nd.Addr, tn.c.ClusterID, tn.secret, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		tn.ctl[nd.ID] = cc
	}
	return tn
}

// readyLine tells the harness that a node printed its readiness line.
type readyLine struct {
	id int
	ch chan<- int
}

func (r readyLine) Write(p []byte) (int, error) {
	r.ch <- r.id
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

// call sends one control request to node id and fails the test on a transport error.
func (tn *testNet) call(id int, req wire.CtlRequest) wire.CtlReply {
	tn.t.Helper()
	b, err := wire.EncodeCtl(req)
	if err != nil {
		tn.t.Fatal(err)
	}
	body, err := tn.ctl[id].Call(b)
	if err != nil {
		tn.t.Fatalf("node %d: %s: %v", id, req.Op, err)
	}
	r, err := wire.DecodeCtlReply(body)
	if err != nil {
		tn.t.Fatal(err)
	}
	return r
}

// rules replaces node id's link rules and checks the acknowledgement.
func (tn *testNet) rules(id int, rules ...wire.LinkRule) {
	tn.t.Helper()
	r := tn.call(id, wire.CtlRequest{Op: wire.CtlRules, Rules: rules})
	if r.Error != "" || r.Rules != len(rules) {
		tn.t.Fatalf("node %d: rules: reply %+v, want %d rules and no error", id, r, len(rules))
	}
}

// begin tells every node to begin, as the launcher does once all are ready.
func (tn *testNet) begin() {
	tn.t.Helper()
	for _, nd := range tn.c.Nodes {
		if r := tn.call(nd.ID, wire.CtlRequest{Op: wire.CtlBegin}); r.Error != "" || !r.Begun {
			tn.t.Fatalf("node %d: begin: %+v", nd.ID, r)
		}
	}
}

// stop ends every node and waits for them; it is idempotent.
func (tn *testNet) stop() {
	tn.once.Do(func() {
		tn.cancel()
		tn.wg.Wait()
		for _, cc := range tn.ctl {
			cc.Close()
		}
		close(tn.errs)
		for err := range tn.errs {
			tn.t.Error(err)
		}
	})
}

// events reads node id's event log (complete lines only: the node may be writing).
func (tn *testNet) events(id int) []logs.Event {
	tn.t.Helper()
	b, err := os.ReadFile(rundir.NodeLog(tn.dir, id))
	if err != nil {
		tn.t.Fatal(err)
	}
	var out []logs.Event
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		var e logs.Event
		if err := json.Unmarshal(b[:i], &e); err != nil {
			tn.t.Fatalf("node %d's log: %v in %q", id, err, b[:i])
		}
		out = append(out, e)
		b = b[i+1:]
	}
	return out
}

// waitFor polls node id's log until cond holds, and fails the test after timeout.
func (tn *testNet) waitFor(id int, timeout time.Duration, what string, cond func([]logs.Event) bool) []logs.Event {
	tn.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ev := tn.events(id)
		if cond(ev) {
			return ev
		}
		if time.Now().After(deadline) {
			tn.t.Fatalf("node %d: no %s within %v", id, what, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// count counts the events of kind ev from (or, for suspect/trust, about) peer.
func count(evs []logs.Event, ev string, peer int) int {
	k := 0
	for _, e := range evs {
		if e.Ev == ev && (e.From == peer || e.Peer == peer) {
			k++
		}
	}
	return k
}

// finalStats returns the counters of the last stats event (written at stop).
func finalStats(t *testing.T, evs []logs.Event) logs.Stats {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Ev == logs.EvStats && evs[i].Stats != nil {
			return *evs[i].Stats
		}
	}
	t.Fatal("no stats event")
	return logs.Stats{}
}

// sends maps the msg.id of every send in evs to its event.
func sends(evs []logs.Event) map[string]logs.Event {
	out := map[string]logs.Event{}
	for _, e := range evs {
		if e.Ev == logs.EvSend && e.Msg != nil {
			out[e.Msg.ID] = e
		}
	}
	return out
}

// settled waits until node id has taken n frames from peer: delivered (recv) or discarded (drop).
func (tn *testNet) settled(id, peer, n int) []logs.Event {
	tn.t.Helper()
	return tn.waitFor(id, 10*time.Second, fmt.Sprintf("%d frames from node %d", n, peer), func(evs []logs.Event) bool {
		seen := map[string]bool{}
		for _, e := range evs {
			if (e.Ev == logs.EvRecv || e.Ev == logs.EvDrop) && e.From == peer && e.Msg != nil {
				seen[e.Msg.ID] = true
			}
		}
		return len(seen) >= n
	})
}
