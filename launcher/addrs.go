package launcher

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/leaderlab/leaderlab/rundir"
)

// nodeAddrs gives every node its address: ports free on --host for the transport backend; for the
// iptables backend each node its own loopback address (nodeIP), which it also binds to dial from.
func nodeAddrs(cfg Config) ([]rundir.Node, error) {
	var nodes []rundir.Node
	if cfg.NetBackend == BackendIPTables {
		for i := 1; i <= cfg.Nodes; i++ {
			addr, err := freePorts(nodeIP(i), 1)
			if err != nil {
				return nil, err
			}
			nodes = append(nodes, rundir.Node{ID: i, Addr: addr[0], Bind: addr[0]})
		}
		return nodes, nil
	}
	addrs, err := freePorts(cfg.Host, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= cfg.Nodes; i++ {
		nodes = append(nodes, rundir.Node{ID: i, Addr: addrs[i-1]})
	}
	return nodes, nil
}

// observerAddrs gives the observer processes of the observer and observers detectors their
// addresses on --host (IDs rundir.ObserverBase+1..+M); none for the other detectors.
func observerAddrs(cfg Config) ([]rundir.Node, error) {
	m := 0
	switch cfg.Detector {
	case rundir.DetectorObserver:
		m = 1
	case rundir.DetectorObservers:
		m = cfg.Observers
		if m == 0 {
			m = 3
		}
	}
	if m == 0 {
		return nil, nil
	}
	host := cfg.Host
	if cfg.NetBackend == BackendIPTables {
		host = "127.0.0.1"
	}
	addrs, err := freePorts(host, m)
	if err != nil {
		return nil, err
	}
	out := make([]rundir.Node, m)
	for k := range out {
		out[k] = rundir.Node{ID: rundir.ObserverBase + k + 1, Addr: addrs[k]}
	}
	return out, nil
}

// nodeIP is node id's own loopback address under the iptables backend: 127.0.<1 + id/256>.<id%256>,
// never 127.0.0.x, which the launcher (and everything else on the machine) uses.
func nodeIP(id int) string {
	return fmt.Sprintf("127.0.%d.%d", 1+id/256, id%256)
}

// freePorts finds n ports on host that are free for both TCP and UDP. The listeners are held until
// all are found, so no port is handed out twice. The ports are drawn below the kernel's ephemeral
// range: a port picked from inside it (as ":0" does) can be taken, between the pick and the node's
// bind, by an outbound connection of a node that started earlier — with hundreds of nodes dialling
// each other, that happens.
func freePorts(host string, n int) ([]string, error) {
	var hold []interface{ Close() error }
	defer func() {
		for _, h := range hold {
			h.Close()
		}
	}()
	lo, hi := portRange()
	next := lo + rand.IntN(hi-lo)
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries > hi-lo {
			return nil, fmt.Errorf("could not find %d free TCP+UDP ports on %s in %d..%d", n, host, lo, hi-1)
		}
		port := next
		if next++; next >= hi {
			next = lo
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if tries == 0 && !errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("listen on %s: %w (is --host an address of this machine?)", host, err)
			}
			continue
		}
		hold = append(hold, l)
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		hold = append(hold, u)
		out = append(out, addr)
	}
	return out, nil
}

// portRange is where freePorts looks: from 10000 up to the start of the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range; 32768 when it cannot be read).
func portRange() (lo, hi int) {
	lo, hi = 10000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > lo+1000 {
				hi = v
			}
		}
	}
	return lo, hi
}
