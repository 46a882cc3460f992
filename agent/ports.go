package agent

import (
	"fmt"
	"net"

	"github.com/leaderlab/leaderlab/internal/osproc"
)

// freePorts finds n ports free for both TCP and UDP on ip, an address of this host, and releases
// them. As the launcher does on one machine, it looks below the kernel's ephemeral range, where an
// outbound connection of an earlier node cannot take the port between this check and the node's
// bind; the listeners are held until all are found, so no port is handed out twice.
func freePorts(ip string, n int) ([]string, error) {
	if net.ParseIP(ip) == nil {
		return nil, fmt.Errorf("address %q: want an IP address of the agent's host (e.g. 192.168.56.11), not a name", truncate(ip, 80))
	}
	if n < 1 || n > MaxPorts {
		return nil, fmt.Errorf("%d ports: want 1 to %d", n, MaxPorts)
	}
	return osproc.FreePorts(ip, n, ip)
}
