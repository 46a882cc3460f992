package launcher

import (
	"fmt"

	"github.com/leaderlab/leaderlab/internal/osproc"
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
		n := rundir.Node{ID: i, Addr: addrs[i-1]}
		if cfg.NetBackend == BackendNetem {
			n.Mark = int(nodeMark(i)) // the netem backend's filters tell the nodes' packets apart by it
		}
		nodes = append(nodes, n)
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

// freePorts finds n ports on host free for both TCP and UDP (osproc.FreePorts).
func freePorts(host string, n int) ([]string, error) { return osproc.FreePorts(host, n, "--host") }
