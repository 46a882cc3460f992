package launcher

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/leaderlab/leaderlab/topology"
)

// What a large cluster needs of the system, raised by the launcher before it spawns a node (the
// nodes inherit its descriptor limit; the Go runtime reads the listen backlog when a node starts).

// somaxconnPath is the kernel's cap on a listening socket's accept queue.
const somaxconnPath = "/proc/sys/net/core/somaxconn"

// fdsPerNode is how many descriptors one node may hold: two TCP connections per neighbour (the one
// it dialled and the one it accepted), and a margin for its listeners, UDP socket, log, control
// connections and the runtime.
func fdsPerNode(topo string, n int) uint64 {
	degree := 2
	if topo == topology.Mesh || topology.IsGraph(topo) { // a graph's degree may be up to n-1
		degree = n - 1
	}
	return uint64(2*degree + 64)
}

// raiseLimits makes room for n nodes on topology topo: the soft limit of open files up to what the
// launcher and each node need (never above the hard limit), and the accept queue (net.core.somaxconn)
// up to the number of peers that may dial a node at once, when this process may write it. It
// returns what it changed, for the console, and an error naming the limit when the system cannot
// hold the cluster.
func raiseLimits(topo string, n int) ([]string, error) {
	var said []string
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil, fmt.Errorf("read the open-file limit: %w", err)
	}
	// the launcher: a pipe per node, the control calls in flight, its own files
	need := max(fdsPerNode(topo, n), uint64(2*n+4*controlParallel()+64))
	if lim.Cur < need {
		if lim.Max < need {
			return nil, fmt.Errorf("%d nodes on a %s need about %d open files per process, and the hard limit is %d (RLIMIT_NOFILE; raise it with `ulimit -Hn %d` as root, or in /etc/security/limits.conf)",
				n, topo, need, lim.Max, need)
		}
		old := lim.Cur
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return nil, fmt.Errorf("raise the open-file limit from %d to %d (%d nodes on a %s need about %d): %w", old, lim.Cur, n, topo, need, err)
		}
		said = append(said, fmt.Sprintf("open files per process raised from %d to %d", old, lim.Cur))
	}
	backlog := 128
	if topo == topology.Mesh {
		backlog = max(backlog, 2*n)
	}
	if cur, err := readInt(somaxconnPath); err == nil && cur < backlog {
		if err := os.WriteFile(somaxconnPath, []byte(strconv.Itoa(backlog)), 0o644); err != nil {
			said = append(said, fmt.Sprintf("net.core.somaxconn is %d, under the %d peers that may dial a node at once, and could not be raised (%v): links may be refused and re-dialled; as root: sysctl -w net.core.somaxconn=%d",
				cur, backlog, err, backlog))
		} else {
			said = append(said, fmt.Sprintf("net.core.somaxconn raised from %d to %d", cur, backlog))
		}
	}
	return said, nil
}

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
