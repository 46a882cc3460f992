package launcher

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// The iptables backend: the kernel drops the packets a rule refuses, so a partition holds even for
// a node that misbehaves, and a node's own logs show no drop (the packets never reach it).
//
// Every node has its own loopback address (nodeIP) that it listens on and dials from, so a rule can
// name a pair of nodes. The rules live in a chain of the launcher's own, LEADERLAB-<launcher pid>,
// jumped to from INPUT (on loopback every packet passes INPUT; a DROP in OUTPUT would make the
// sender's sendto fail with EPERM, which a real network never does). Each rule is also limited to
// the run's ports, so two runs on one machine, which share the addresses, never drop each other's
// packets. The chain is rewritten whole at every change (one iptables-restore), emptied by heal,
// and removed at the end of the run; a run that starts removes the chains of launchers that are
// gone (a crash, a SIGKILL), and its own pid's leftover.
//
// What the kernel can do: drop, and loss (-m statistic --mode random). Delay, dup and reorder are
// refused when the schedule is read. A one-way rule drops packets one way, but TCP needs both ways:
// "link 1->2 drop" also stops 2's messages to 1 (their acknowledgements from 1 to 2 still pass, but
// 2's connection to 1 cannot be set up again once it breaks); heartbeats (UDP) are cut one way only.
// Loss on TCP turns into retransmission delay rather than lost messages.

// chainPrefix starts the name of every chain the backend makes.
const chainPrefix = "LEADERLAB-"

// ErrIPTables is wrapped by every error that says the iptables backend cannot run here.
var ErrIPTables = errors.New("the iptables backend cannot run here")

// IPTablesLinkKinds are the link rules the iptables backend carries out.
var IPTablesLinkKinds = []string{"drop", "loss"}

// checkIPTables tells whether this machine can run the iptables backend; the error names what is
// missing.
func checkIPTables() error {
	if uid := os.Geteuid(); uid != 0 {
		return fmt.Errorf("%w: it needs root, and this is uid %d (use Config.NetBackend transport, which needs nothing)", ErrIPTables, uid)
	}
	for _, b := range []string{"iptables", "iptables-restore"} {
		if _, err := exec.LookPath(b); err != nil {
			return fmt.Errorf("%w: it needs the %s binary, which is not in PATH (Debian: apt-get install iptables)", ErrIPTables, b)
		}
	}
	if out, err := exec.Command("iptables", "-w", "-S", "INPUT").CombinedOutput(); err != nil {
		return fmt.Errorf("%w: iptables does not work (%v): %s", ErrIPTables, err, firstLine(out))
	}
	return nil
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// iptables runs the iptables binary; the error carries what it printed.
func iptables(args ...string) error {
	out, err := exec.Command("iptables", append([]string{"-w"}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("iptables %s: %v: %s", strings.Join(args, " "), err, firstLine(out))
	}
	return nil
}

// iptablesNet is the iptables backend of one run.
type iptablesNet struct {
	chain string
	addrs map[int]*net.TCPAddr
	mu    sync.Mutex
	done  bool
}

var _ netBackend = (*iptablesNet)(nil)

// newIPTablesNet removes stale chains and makes this run's, empty, jumped to from INPUT.
func newIPTablesNet(nodes []rundir.Node) (*iptablesNet, error) {
	t := &iptablesNet{chain: chainPrefix + strconv.Itoa(os.Getpid()), addrs: map[int]*net.TCPAddr{}}
	for _, n := range nodes {
		a, err := net.ResolveTCPAddr("tcp", n.Addr)
		if err != nil {
			return nil, fmt.Errorf("node %d address %q: %w", n.ID, n.Addr, err)
		}
		t.addrs[n.ID] = a
	}
	if err := removeStaleChains(); err != nil {
		return nil, err
	}
	if err := iptables("-N", t.chain); err != nil {
		return nil, err
	}
	if err := iptables("-I", "INPUT", "1", "-j", t.chain); err != nil {
		_ = dropChain(t.chain)
		return nil, err
	}
	return t, nil
}

// removeStaleChains removes the chains of launchers that are gone, and this process's own
// leftover from an earlier run.
func removeStaleChains() error {
	out, err := exec.Command("iptables", "-w", "-S").Output()
	if err != nil {
		return fmt.Errorf("iptables -S: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "-N "+chainPrefix)
		if !ok {
			continue
		}
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue // not ours
		}
		if pid == os.Getpid() || !processAlive(pid) {
			if err := dropChain(chainPrefix + name); err != nil {
				return fmt.Errorf("remove the stale chain %s%s: %w", chainPrefix, name, err)
			}
		}
	}
	return nil
}

// processAlive tells whether a process runs; a zombie (killed, not yet reaped) does not.
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill(0)
	}
	// "pid (comm) S ...": the state follows the last ')' (comm may contain one).
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// dropChain removes the jumps to a chain, then the chain.
func dropChain(chain string) error {
	for i := 0; i < 100 && iptables("-D", "INPUT", "-j", chain) == nil; i++ {
	}
	if err := iptables("-F", chain); err != nil {
		return err
	}
	return iptables("-X", chain)
}

// ruleset renders the chain's contents for iptables-restore --noflush: declaring the chain empties
// it, so the whole set replaces the old one in one step.
func (t *iptablesNet) ruleset(rules map[int][]wire.LinkRule) string {
	var b strings.Builder
	b.WriteString("*filter\n:" + t.chain + " - [0:0]\n")
	ids := make([]int, 0, len(rules))
	for id := range rules {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, x := range ids {
		dst := t.addrs[x]
		for _, r := range rules[x] {
			src := t.addrs[r.From]
			if dst == nil || src == nil || (!r.Drop && r.Loss <= 0) {
				continue
			}
			match := ""
			if !r.Drop {
				match = " -m statistic --mode random --probability " + strconv.FormatFloat(r.Loss, 'f', 4, 64)
			}
			why := strings.NewReplacer(`"`, "'", "\n", " ").Replace(r.Why)
			if len(why) > 200 {
				why = why[:200]
			}
			// Packets from src to dst on this run's links: the connection src dialled to dst's
			// port, the one dst dialled to src's port, and src's heartbeats to dst.
			for _, proto := range []string{"tcp", "udp"} {
				fmt.Fprintf(&b, "-A %s -s %s/32 -d %s/32 -p %s -m multiport --ports %d,%d%s -m comment --comment \"%d->%d %s\" -j DROP\n",
					t.chain, src.IP, dst.IP, proto, dst.Port, src.Port, match, r.From, x, why)
			}
		}
	}
	b.WriteString("COMMIT\n")
	return b.String()
}

// set installs every rule at once; the kernel holds them for dead and paused nodes too, so every
// node of send acknowledges at the same moment.
func (t *iptablesNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	t.mu.Lock()
	defer t.mu.Unlock()
	return kernelDelivery(send, t.restore(t.ruleset(rules)))
}

func (t *iptablesNet) restore(input string) error {
	if t.done {
		return errors.New("the iptables chain was already removed")
	}
	cmd := exec.Command("iptables-restore", "-w", "--noflush")
	cmd.Stdin = strings.NewReader(input)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("iptables-restore: %v: %s", err, firstLine(out.Bytes()))
	}
	return nil
}

// up: the kernel's rules do not depend on the processes.
func (t *iptablesNet) up(_ int, then func()) {
	if then != nil {
		then() // the kernel's rules are in force for every incarnation
	}
}

// close removes the chain; it is idempotent.
func (t *iptablesNet) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return nil
	}
	t.done = true
	if err := dropChain(t.chain); err != nil {
		c := t.chain
		return fmt.Errorf("remove the iptables chain %s: %w (by hand: iptables -D INPUT -j %s; iptables -F %s; iptables -X %s; or the next run with Config.NetBackend iptables does it)", c, err, c, c, c)
	}
	return nil
}
