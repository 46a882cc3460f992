package agent

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
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
			return nil, fmt.Errorf("could not find %d free TCP+UDP ports on %s in %d..%d", n, ip, lo, hi-1)
		}
		port := next
		if next++; next >= hi {
			next = lo
		}
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if tries == 0 && !errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("listen on %s: %w (is %s an address of the agent's host?)", addr, err, ip)
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
