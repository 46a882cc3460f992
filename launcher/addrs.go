package launcher

import (
	"fmt"
	"net"

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

// nodeIP is node id's own loopback address under the iptables backend: 127.0.<1 + id/256>.<id%256>,
// never 127.0.0.x, which the launcher (and everything else on the machine) uses.
func nodeIP(id int) string {
	return fmt.Sprintf("127.0.%d.%d", 1+id/256, id%256)
}

// freePorts finds n ports on host that are free for both TCP and UDP. The listeners are held until
// all are found, so no port is handed out twice.
func freePorts(host string, n int) ([]string, error) {
	var hold []interface{ Close() error }
	defer func() {
		for _, h := range hold {
			h.Close()
		}
	}()
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries > 10*n+100 {
			return nil, fmt.Errorf("could not find %d free TCP+UDP ports on %s", n, host)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("listen on %s: %w (is --host an address of this machine?)", host, err)
		}
		hold = append(hold, l)
		addr := l.Addr().String()
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		hold = append(hold, u)
		out = append(out, addr)
	}
	return out, nil
}
