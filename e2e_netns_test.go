package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/rundir"
)

// Multi-host runs over SSH on network namespaces: scripts/netns-lab.sh builds three namespace
// "hosts" on a bridge, each running a real OpenSSH sshd, and the launcher in the root namespace
// reaches them as it reaches any SSH host (--ssh-config), uploads its binary, and runs a real
// election over them. Needs root, iproute2 and openssh-server; skips otherwise (CI has them).

// netnsLab brings the lab up for one test and tears it down at the end, also on failure. It returns
// the lab's directory (ssh-config, hosts, known_hosts, id_ed25519, hK/...).
func netnsLab(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("multi-host run on network namespaces; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root (CI runs as root)")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network namespaces need iproute2 ('ip' not found; CI installs it)")
	}
	if _, err := os.Stat("/usr/sbin/sshd"); err != nil {
		t.Skip("the namespace lab's hosts run OpenSSH's sshd (apt-get install openssh-server; CI installs it)")
	}
	if err := exec.Command("ip", "netns", "list").Run(); err != nil {
		t.Skipf("'ip netns' does not work here: %v", err)
	}
	lab := t.TempDir()
	script, _ := filepath.Abs("scripts/netns-lab.sh")
	env := append(os.Environ(), "LEADERLAB_BIN="+binary, "LEADERLAB_LAB_DIR="+lab)
	sh := func(args ...string) (string, error) {
		cmd := exec.Command("bash", append([]string{script}, args...)...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	t.Cleanup(func() {
		if out, err := sh("down"); err != nil {
			t.Errorf("netns-lab.sh down: %v\n%s", err, out)
		}
		if out, _ := exec.Command("ip", "netns", "list").Output(); strings.Contains(string(out), "ll-h") {
			t.Errorf("namespaces left behind: %s", out)
		}
	})
	if out, err := sh("up", "3"); err != nil {
		t.Fatalf("netns-lab.sh up 3: %v\n%s", err, out)
	}
	return lab
}

// nodesLeft lists the node processes still running whose command line names dir.
func nodesLeft(dir string) []string {
	out, _ := exec.Command("pgrep", "-af", "node --run").Output()
	var left []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.Contains(l, dir) {
			left = append(left, l)
		}
	}
	return left
}

// hostCut: nine nodes round-robin on three hosts put 3, 6 and 9 on host 3. The leader (9) is killed
// through its agent; then host 3 is cut off from the others (6 leads there, 8 here) and healed.
const hostCut = "at 1s kill leader; at 1.5s partition 3,6,9|1,2,4,5,7,8; at 2.5s heal"

func TestNetnsMultiHostRun(t *testing.T) {
	lab := netnsLab(t)
	cfg := filepath.Join(lab, "ssh-config")
	var dir string
	for round, want := range []string{"uploaded", "up to date"} {
		dir = runCluster(t, 8, "--ssh-config", cfg, "-n", "9", "--duration", "4s", "--chaos", hostCut)
		c, err := rundir.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Hosts) != 3 {
			t.Fatalf("cluster.json hosts: %+v, want 3", c.Hosts)
		}
		for _, h := range c.Hosts {
			// The binary goes up once; the second run finds it by its digest.
			if h.Binary != want {
				t.Errorf("run %d, host %s: binary %q, want %q", round+1, h.Agent, h.Binary, want)
			}
			if !strings.HasPrefix(h.HostKeyCheck, "known_hosts ") || !strings.HasPrefix(h.HostKey, "SHA256:") {
				t.Errorf("host %s: host key %q checked %q: want it checked against known_hosts", h.Agent, h.HostKey, h.HostKeyCheck)
			}
			// the namespaces share the machine's clock: the offset is within the measured round trip
			if off := h.OffsetNS; off > h.RTTNS || -off > h.RTTNS {
				t.Errorf("host %s: clock offset %dns beyond its round trip %dns on one machine", h.Agent, off, h.RTTNS)
			}
		}
		for _, n := range c.Nodes {
			if !strings.HasPrefix(n.Addr, "10.77.0.1") || n.Host == "" {
				t.Errorf("node %d at %s on %q: want an address of its namespace host", n.ID, n.Addr, n.Host)
			}
			if _, err := os.Stat(rundir.NodeLog(dir, n.ID)); err != nil {
				t.Errorf("node %d's log was not fetched: %v", n.ID, err)
			}
		}
	}
	v := readVerdictT(t, dir)
	if len(v.Metrics.Failovers) == 0 || v.Metrics.Failovers[0].MS == nil {
		t.Errorf("failovers %+v: want the kill of 9 measured", v.Metrics.Failovers)
	}
	if left := nodesLeft(lab); len(left) > 0 {
		t.Errorf("node processes left on the hosts: %q", left)
	}
}

// The same partition made by the kernel: each agent installs the drops in its namespace's
// iptables. The nodes' logs then show no drop of the partition (the packets never reach them), and
// the checker still sees the two sides' leaders.
func TestNetnsMultiHostIPTables(t *testing.T) {
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("the iptables backend needs iptables (CI installs it)")
	}
	lab := netnsLab(t)
	dir := runCluster(t, 8, "--ssh-config", filepath.Join(lab, "ssh-config"), "--net-backend", "iptables", "-n", "9",
		"--duration", "4s", "--chaos", hostCut)
	b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"split_brain": [`) || strings.Contains(string(b), `"split_brain": []`) {
		t.Errorf("no split-brain window while host 3 was cut off by iptables")
	}
	for id := 1; id <= 9; id++ {
		log, _ := os.ReadFile(rundir.NodeLog(dir, id))
		if strings.Contains(string(log), `"reason":"drop: at 1.5s partition`) {
			t.Errorf("node %d's log has drops of the partition: the transport, not the kernel, dropped", id)
		}
	}
	for k := 1; k <= 3; k++ {
		out, _ := exec.Command("ip", "netns", "exec", "ll-h"+string(rune('0'+k)), "iptables", "-S").Output()
		if strings.Contains(string(out), "LEADERLAB-A") {
			t.Errorf("host %d keeps the run's chain after the run:\n%s", k, out)
		}
	}
}

// A partition that splits hosts, after a kill, a pause, a stop and restarts: nodes of both sides share each host's address, so the kernel must
// tell their packets apart by the sender's firewall mark, not by address or port (with a rule by
// address and port, the halves cut neighbours on one host off from each other, and every node led
// itself). The halves of 9 nodes round-robin on 3 hosts are 1-4 and 5-9.
func TestNetnsIPTablesPartitionSplitsHosts(t *testing.T) {
	if _, err := exec.LookPath("iptables-restore"); err != nil {
		t.Skip("the iptables backend needs iptables (CI installs it)")
	}
	lab := netnsLab(t)
	// Every fault the issue names, through the SSH hosts: a kill, a pause, a stop and a restart (a new
	// incarnation started over SSH), and the partition.
	dir := runCluster(t, 9, "--ssh-config", filepath.Join(lab, "ssh-config"), "--net-backend", "iptables", "-n", "9",
		"--duration", "7s", "--chaos", "at 1s kill leader; at 1.5s pause 7; at 2s resume 7; at 2.5s stop 3; at 3s restart 9; at 3.5s restart 3; at 4s partition halves; at 5s heal")
	v := readVerdictT(t, dir)
	if !v.OK {
		t.Fatalf("verdict: %+v", v.Properties)
	}
	b := string(mustRead(t, filepath.Join(dir, "verdict.json")))
	if !strings.Contains(b, `"suspicions"`) || strings.Contains(b, `"false": [1-9]`) {
		t.Logf("verdict: %s", b)
	}
	c, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		if n.Mark == 0 {
			t.Errorf("node %d has no firewall mark in cluster.json", n.ID)
		}
	}
}
