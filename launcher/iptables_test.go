package launcher

import (
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

func TestIPTablesRuleset(t *testing.T) {
	ipt := &iptablesNet{chain: "LEADERLAB-42", addrs: map[int]*net.TCPAddr{
		1: {IP: net.ParseIP("127.0.1.1"), Port: 4001},
		2: {IP: net.ParseIP("127.0.1.2"), Port: 4002},
		3: {IP: net.ParseIP("127.0.1.3"), Port: 4003},
	}}
	got := ipt.ruleset(map[int][]wire.LinkRule{
		1: {},
		2: {{From: 1, Drop: true, Why: `at 1s partition "1|2-3"`}},
		3: {{From: 2, Loss: 0.25, Why: "at 2s link 2->3 loss 25%"}, {From: 1, Delay: 5, Why: "delay: not for iptables"}},
	})
	want := `*filter
:LEADERLAB-42 - [0:0]
-A LEADERLAB-42 -s 127.0.1.1/32 -d 127.0.1.2/32 -p tcp -m multiport --ports 4002,4001 -m comment --comment "1->2 at 1s partition '1|2-3'" -j DROP
-A LEADERLAB-42 -s 127.0.1.1/32 -d 127.0.1.2/32 -p udp -m multiport --ports 4002,4001 -m comment --comment "1->2 at 1s partition '1|2-3'" -j DROP
-A LEADERLAB-42 -s 127.0.1.2/32 -d 127.0.1.3/32 -p tcp -m multiport --ports 4003,4002 -m statistic --mode random --probability 0.2500 -m comment --comment "2->3 at 2s link 2->3 loss 25%" -j DROP
-A LEADERLAB-42 -s 127.0.1.2/32 -d 127.0.1.3/32 -p udp -m multiport --ports 4003,4002 -m statistic --mode random --probability 0.2500 -m comment --comment "2->3 at 2s link 2->3 loss 25%" -j DROP
COMMIT
`
	if got != want {
		t.Errorf("ruleset\n%s\nwant\n%s", got, want)
	}
}

// TestIPTablesBackend installs real rules between loopback addresses: it needs root and the
// iptables binaries, and skips without them.
func TestIPTablesBackend(t *testing.T) {
	if err := checkIPTables(); err != nil {
		if !errors.Is(err, ErrIPTables) {
			t.Fatalf("checkIPTables error %v does not wrap ErrIPTables", err)
		}
		t.Skip(err)
	}
	// A chain left by a launcher that is gone is removed when a run starts.
	stale := chainPrefix + strconv.Itoa(deadPid(t))
	if err := iptables("-N", stale); err != nil {
		t.Fatal(err)
	}
	var nodes []rundir.Node
	for id := 1; id <= 3; id++ {
		ln, err := net.Listen("tcp", nodeIP(id)+":0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		nodes = append(nodes, rundir.Node{ID: id, Addr: ln.Addr().String(), Bind: ln.Addr().String()})
	}
	ipt, err := newIPTablesNet(nodes)
	if err != nil {
		t.Fatal(err)
	}
	defer ipt.close()
	if hasChain(t, stale) {
		t.Errorf("the stale chain %s was not removed", stale)
	}
	if !hasChain(t, ipt.chain) {
		t.Fatalf("no chain %s", ipt.chain)
	}
	dial := func(from, to int) error {
		d := net.Dialer{Timeout: 300 * time.Millisecond}
		if from > 0 {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(nodeIP(from))}
		}
		c, err := d.Dial("tcp", nodes[to-1].Addr)
		if err == nil {
			c.Close()
		}
		return err
	}
	// Node 2 refuses node 1.
	got := ipt.set(map[int][]wire.LinkRule{1: {}, 2: {{From: 1, Drop: true, Why: "test"}}, 3: {}}, []int{1, 2, 3})
	for id := 1; id <= 3; id++ {
		if got[id].ack == 0 {
			t.Errorf("node %d: no ack: %+v", id, got[id])
		}
	}
	if err := dial(1, 2); err == nil {
		t.Errorf("1 reached 2 through a drop rule")
	}
	if err := dial(3, 2); err != nil {
		t.Errorf("3 could not reach 2: %v", err)
	}
	if err := dial(0, 2); err != nil {
		t.Errorf("the launcher (127.0.0.1) could not reach 2: %v", err)
	}
	// Heal.
	ipt.set(map[int][]wire.LinkRule{1: {}, 2: {}, 3: {}}, []int{1, 2, 3})
	if err := dial(1, 2); err != nil {
		t.Errorf("after heal 1 could not reach 2: %v", err)
	}
	if err := ipt.close(); err != nil {
		t.Fatal(err)
	}
	if hasChain(t, ipt.chain) {
		t.Errorf("the chain %s is still there after close", ipt.chain)
	}
	if err := ipt.close(); err != nil {
		t.Errorf("a second close: %v", err)
	}
}

func hasChain(t *testing.T, chain string) bool {
	out, err := exec.Command("iptables", "-w", "-S").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(out), "-N "+chain+"\n")
}

// deadPid returns a pid no process has.
func deadPid(t *testing.T) int {
	for pid := 4_000_000; pid > 3_000_000; pid -= 7919 {
		if !processAlive(pid) {
			return pid
		}
	}
	t.Fatal("no free pid found")
	return 0
}

// TestProcessAlive: a killed launcher that is not reaped yet (a zombie) counts as gone, so its
// chain is removed by the next run.
func TestProcessAlive(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep binary:", err)
	}
	pid := cmd.Process.Pid
	if !processAlive(pid) {
		t.Errorf("a running child counts as gone")
	}
	cmd.Process.Kill()
	deadline := time.Now().Add(2 * time.Second)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if processAlive(pid) {
		t.Errorf("a killed, unreaped child counts as running")
	}
	cmd.Wait()
	if processAlive(pid) {
		t.Errorf("a reaped child counts as running")
	}
}

func TestNodeIP(t *testing.T) {
	for id, want := range map[int]string{1: "127.0.1.1", 255: "127.0.1.255", 256: "127.0.2.0", 4096: "127.0.17.0"} {
		if got := nodeIP(id); got != want {
			t.Errorf("nodeIP(%d) = %s, want %s", id, got, want)
		}
	}
}
