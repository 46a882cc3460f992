package main

import (
	"bytes"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// TestNodeRefusesStrangers connects raw TCP clients to a node of a live run: garbage, an oversized
// length, a hello with a wrong HMAC, and a correctly signed hello from a sender that is not in the
// cluster. The node must close each connection, log a drop naming why, and the run must still pass.
func TestNodeRefusesStrangers(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(binary, "run", "--out", dir, "--duration", "3s", "--chaos", "")
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()

	var c *rundir.Cluster
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if cl, err := rundir.Load(dir); err == nil {
			if b, _ := os.ReadFile(filepath.Join(dir, "launcher.jsonl")); strings.Contains(string(b), `"begin"`) {
				c = cl
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c == nil {
		t.Fatal("the run did not begin within 10s")
	}
	secret, _ := hex.DecodeString(c.Secret)
	addr := c.Nodes[0].Addr

	frame := func(payload []byte) []byte {
		var b bytes.Buffer
		if err := wire.WriteFrame(&b, payload); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	hello := func(key []byte, node int) []byte {
		h := wire.NewHello(key, c.ClusterID, node, 1)
		b, err := h.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return frame(b)
	}
	cases := map[string][]byte{
		"garbage":       []byte("GET / HTTP/1.0\r\n\r\n"),
		"oversized":     {0x7f, 0xff, 0xff, 0xff, 'x'},
		"empty frame":   {0, 0, 0, 0},
		"wrong HMAC":    hello([]byte("not the run secret, not at all!!"), 2),
		"forged sender": hello(secret, 99),
	}
	for name, payload := range cases {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatalf("%s: dial %s: %v", name, addr, err)
		}
		conn.Write(payload)
		conn.SetReadDeadline(time.Now().Add(3 * time.Second))
		buf := make([]byte, 64)
		_, err = conn.Read(buf)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Errorf("%s: the node kept the connection open", name)
		}
		conn.Close()
	}

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the run failed after the strangers called: %v", err)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the run did not end")
	}
	log, err := os.ReadFile(filepath.Join(dir, "nodes", "1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	drops := 0
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, `"ev":"drop"`) && strings.Contains(line, "rejected connection") {
			drops++
		}
	}
	if drops < len(cases) {
		t.Errorf("node 1 logged %d rejected-connection drops, want %d:\n%s", drops, len(cases), log)
	}
	if v := readVerdictT(t, dir); !v.OK || v.Leader == nil || *v.Leader != 5 {
		t.Errorf("verdict after the strangers: ok=%v leader=%v", v.OK, v.Leader)
	}
}
