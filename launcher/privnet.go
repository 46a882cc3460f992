package launcher

import (
	"os"
	"strconv"
	"syscall"
)

// A one-host run with the netem backend happens in a network namespace of its own: the qdiscs go on
// the loopback interface, and the machine's loopback carries every other run and program (another
// user's runs among them), which a root qdisc there would slow or drop too. RunInPrivateNet runs
// the same command again in a new network namespace — the launcher, its nodes and observers, with
// a loopback of their own (brought up by the launcher) — and the namespace, with every qdisc in
// it, is gone when the run's last process is: after a crash too, nothing is left behind. The run
// directory is on the filesystem as usual; only the network is private (nothing outside the run
// reaches its nodes, and --ui's page would not be reachable either).

// PrivateNetEnv marks a process started by RunInPrivateNet; its value is the inode of the network
// namespace it was started from, so that a copy of the variable in another process's environment
// never passes for a private namespace.
const PrivateNetEnv = "LEADERLAB_PRIVATE_NET"

// NeedsPrivateNet tells whether cfg's run must move to a network namespace of its own first (a
// one-host run with the netem backend, from a process that is not in one yet).
func NeedsPrivateNet(cfg Config) bool {
	return cfg.NetBackend == BackendNetem && !cfg.remote() && !cfg.Sim && !inPrivateNet()
}

// inPrivateNet tells whether this process runs in the network namespace RunInPrivateNet made.
func inPrivateNet() bool {
	v := os.Getenv(PrivateNetEnv)
	return v != "" && v != strconv.FormatUint(netnsInode(), 10)
}

// netnsInode is the inode number of this process's network namespace (0 if it cannot be read).
func netnsInode() uint64 {
	st, err := os.Stat("/proc/self/ns/net")
	if err != nil {
		return 0
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Ino)
	}
	return 0
}
