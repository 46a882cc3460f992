package launcher

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/internal/sshhost"
)

// HostSpec is one host of a multi-host run: an SSH target as the user wrote it ([user@]host[:port]
// or a Host alias of the ssh config) and, optionally, the node IDs placed on it.
type HostSpec struct {
	Target string
	IDs    []int
	// Addr, when set (addr=IP), is the address the host's nodes listen on, reachable from the
	// launcher and the other hosts; by default it is the address SSH reached the host at.
	Addr string
	// Line is the line of the --hosts file (0 for a host of --ssh-config).
	Line int
}

// where names a host's origin in messages.
func (h HostSpec) where() string {
	if h.Line == 0 {
		return "Config.SSHConfig host " + h.Target
	}
	return fmt.Sprintf("Config.Hosts line %d (%s)", h.Line, h.Target)
}

// ReadInventory reads a --hosts file: one SSH target ([user@]host[:port], or a Host alias of the ssh
// config) per line, optionally followed by `ids=1,4,7` to place those nodes there; `#` starts a
// comment; blank lines are skipped.
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
			return fmt.Errorf("Config.Hosts %s line %d: %s (want `[user@]host[:port] [ids=1,4,7] [addr=IP]`)", path, n, fmt.Sprintf(format, a...))
		}
		h := HostSpec{Target: fields[0], Line: n}
		if _, _, _, err := sshhost.ParseTarget(h.Target); err != nil {
			return nil, bad("%v", err)
		}
		if prev, ok := seen[h.Target]; ok {
			return nil, bad("host %s is listed twice (also on line %d)", h.Target, prev)
		}
		seen[h.Target] = n
		for _, f := range fields[1:] {
			if a, ok := strings.CutPrefix(f, "addr="); ok {
				if ip := net.ParseIP(a); ip == nil || ip.To4() == nil {
					return nil, bad("addr: %q is not an IPv4 address", a)
				}
				h.Addr = a
				continue
			}
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
		return nil, fmt.Errorf("Config.Hosts %s lists no host (want one `[user@]host[:port]` per line)", path)
	}
	return out, nil
}

// inventory is the hosts of cfg (its --hosts file, else the hosts of its --ssh-config) and the ssh
// configuration they are resolved through (--ssh-config, else ~/.ssh/config as ssh would).
func inventory(cfg Config) ([]HostSpec, *sshhost.Config, error) {
	sc := sshhost.UserConfig()
	if cfg.SSHConfig != "" {
		var err error
		if sc, err = sshhost.LoadConfig(cfg.SSHConfig); err != nil {
			return nil, nil, fmt.Errorf("Config.SSHConfig: %w", err)
		}
	}
	if cfg.Hosts != "" {
		inv, err := ReadInventory(cfg.Hosts)
		return inv, sc, err
	}
	var inv []HostSpec
	for _, h := range sc.Hosts() {
		inv = append(inv, HostSpec{Target: h})
	}
	if len(inv) == 0 {
		return nil, nil, fmt.Errorf("Config.SSHConfig %s names no host (want `Host NAME` sections, as `vagrant ssh-config` writes them; a pattern with * does not name a host)", cfg.SSHConfig)
	}
	return inv, sc, nil
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
