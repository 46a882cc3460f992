package launcher

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
)

// HostSpec is one line of a --hosts inventory: an agent's address and, optionally, the node IDs
// placed on it.
type HostSpec struct {
	Addr string
	IDs  []int
	Line int
}

// ReadInventory reads a --hosts file: one agent address (host:port) per line, optionally followed
// by `ids=1,4,7` to place those nodes there; `#` starts a comment; blank lines are skipped.
func ReadInventory(path string) ([]HostSpec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("Config.Hosts %s: %w", path, err)
	}
	defer f.Close()
	var out []HostSpec
	seen := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("Config.Hosts %s line %d: %s (want `host:port [ids=1,4,7]`)", path, n, fmt.Sprintf(format, a...))
		}
		h := HostSpec{Addr: fields[0], Line: n}
		host, port, err := net.SplitHostPort(h.Addr)
		if err != nil || host == "" {
			return nil, bad("%q is not host:port", h.Addr)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
			return nil, bad("port %q: want 1..65535", port)
		}
		if prev, ok := seen[h.Addr]; ok {
			return nil, bad("agent %s is listed twice (also on line %d)", h.Addr, prev)
		}
		seen[h.Addr] = n
		for _, f := range fields[1:] {
			v, ok := strings.CutPrefix(f, "ids=")
			if !ok {
				return nil, bad("unexpected %q", f)
			}
			for _, s := range strings.Split(v, ",") {
				id, err := strconv.Atoi(s)
				if err != nil || id < 1 {
					return nil, bad("ids: %q is not a node ID (1 or more)", s)
				}
				h.IDs = append(h.IDs, id)
			}
		}
		out = append(out, h)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("Config.Hosts %s: %w", path, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Config.Hosts %s lists no agent (want one `host:port` per line)", path)
	}
	return out, nil
}

// PlaceOnHosts assigns nodes 1..n to the hosts: the IDs a host lists are its own; the others go round-robin
// over all hosts in the inventory's order. It returns each node's host index.
func PlaceOnHosts(hosts []HostSpec, n int) (map[int]int, error) {
	at := map[int]int{}
	for k, h := range hosts {
		for _, id := range h.IDs {
			if id > n {
				return nil, fmt.Errorf("Config.Hosts line %d places node %d, but the cluster has nodes 1..%d", h.Line, id, n)
			}
			if prev, ok := at[id]; ok {
				return nil, fmt.Errorf("Config.Hosts places node %d twice (lines %d and %d)", id, hosts[prev].Line, h.Line)
			}
			at[id] = k
		}
	}
	next := 0
	for id := 1; id <= n; id++ {
		if _, ok := at[id]; ok {
			continue
		}
		at[id] = next % len(hosts)
		next++
	}
	return at, nil
}

// hostIDs lists, ascending, the nodes placed on host k.
func hostIDs(at map[int]int, k int) []int {
	var out []int
	for id, h := range at {
		if h == k {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
