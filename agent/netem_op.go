package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The agent's netem op: a run's complete netem rule set on this host (agent/netem.go renders and
// installs it). Qdiscs belong to the network namespace, not to a run, so one run at a time shapes a
// host: the agent that does writes an owner file (OwnerDir/netem-netns-<namespace inode>: its pid,
// the run, the interfaces), and an agent that finds the file of an agent that is gone (killed
// before it could clean up) removes that run's qdiscs first. The qdiscs go when the set becomes
// empty (a heal), at cleanup, when the run's lease runs out, and when the agent stops.

// OpNetem replaces the run's netem rules on this host.
const OpNetem = "netem"

// NetemRequest is a run's complete netem rule set on this host. Probe asks the agent first to
// check that the host can carry the rules out (tc, and htb, netem with Dists' tables and u32's mark
// match in the kernel), which takes a moment's root qdisc on lo; the launcher asks so before the
// run begins, with no rules.
type NetemRequest struct {
	Run   string      `msgpack:"run"`
	Rules []NetemRule `msgpack:"rules"`
	Probe bool        `msgpack:"probe,omitempty"`
	Dists []string    `msgpack:"dists,omitempty"`
}

// NetemReply says how many links are shaped, on which interfaces, and when (the agent's clock).
type NetemReply struct {
	Links   int      `msgpack:"links"`
	Devices []string `msgpack:"devices,omitempty"`
	TS      int64    `msgpack:"ts"`
	// Counts are the kernel's counters of the links this request unshaped.
	Counts []NetemCount `msgpack:"counts,omitempty"`
}

// maxNetemRules bounds one request, as maxNetRules does.
const maxNetemRules = 1 << 17

// OwnerDir holds the netem owner files (tmpfs: a reboot, which clears the qdiscs, clears them too).
var OwnerDir = "/run/leaderlab"

func (s *Server) opNetem(body []byte) (any, error) {
	var req NetemRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	if len(req.Rules) > maxNetemRules {
		return nil, refuse("%d rules: at most %d", len(req.Rules), maxNetemRules)
	}
	s.netemMu.Lock()
	defer s.netemMu.Unlock()
	if s.netemRun != "" && s.netemRun != r.id {
		return nil, refuse("run %s of this agent shapes this host's traffic with netem; one netem run per host at a time", s.netemRun)
	}
	if s.netemRun == "" {
		if err := s.sweepNetem(); err != nil {
			return nil, refuse("netem on this host: %v", err)
		}
	}
	if req.Probe {
		if err := NetemProbe(req.Dists); err != nil {
			return nil, refuse("netem on this host: %v", err)
		}
	}
	err = s.shaper.Set(req.Rules)
	if s.shaper.Links() > 0 {
		s.netemRun = r.id
		s.writeNetemOwner(r.id)
	} else {
		s.netemRun = ""
		_ = os.Remove(netemOwnerFile())
	}
	if err != nil {
		return nil, refuse("netem on this host: %v", err)
	}
	s.log.Info("netem rules in force", "run", r.id, "links", s.shaper.Links(), "devices", strings.Join(s.shaper.Devices(), ","))
	return NetemReply{Links: s.shaper.Links(), Devices: s.shaper.Devices(), TS: s.opts.Now().UnixNano(), Counts: s.shaper.TakeCounts()}, nil
}

// dropNetem removes run's qdiscs if it is the run that shapes the host.
func (s *Server) dropNetem(run string) {
	s.netemMu.Lock()
	defer s.netemMu.Unlock()
	if s.netemRun != run || run == "" {
		return
	}
	if err := s.shaper.Clear(); err != nil {
		s.log.Warn("netem qdiscs not removed", "run", run, "err", err)
		return
	}
	s.netemRun = ""
	_ = os.Remove(netemOwnerFile())
	s.log.Info("netem qdiscs removed", "run", run)
}

// writeNetemOwner records that this agent's run shapes the namespace, and on which interfaces.
func (s *Server) writeNetemOwner(run string) {
	line := fmt.Sprintf("%d %s %s\n", os.Getpid(), run, strings.Join(s.shaper.Devices(), ","))
	if err := os.MkdirAll(OwnerDir, 0o755); err == nil {
		err = os.WriteFile(netemOwnerFile(), []byte(line), 0o644)
		if err == nil {
			return
		}
	}
	s.log.Warn("netem owner file not written: a crash of this agent would leave its qdiscs to be removed by hand (tc qdisc del dev DEV root)", "file", netemOwnerFile())
}

// sweepNetem removes the qdiscs of an agent that is gone, and refuses when a live one shapes the
// namespace. A root qdisc of ours on lo with no owner file is a leftover too.
func (s *Server) sweepNetem() error {
	f := netemOwnerFile()
	b, err := os.ReadFile(f)
	devs := []string{"lo"}
	if err == nil {
		fields := strings.Fields(string(b))
		if len(fields) >= 2 {
			pid, _ := strconv.Atoi(fields[0])
			if pid > 0 && pid != os.Getpid() && alive(pid) {
				return fmt.Errorf("the agent with pid %d shapes this host's traffic for its run %s (%s); one netem run per host at a time", pid, fields[1], f)
			}
			if len(fields) >= 3 {
				devs = append(devs, strings.Split(fields[2], ",")...)
			}
		}
	}
	ours := fmt.Sprintf("%x:", NetemHandle)
	for _, d := range devs {
		if rootHandle(d) == ours {
			if err := tcBatch("qdisc del dev " + d + " root\n"); err != nil {
				return fmt.Errorf("remove the netem qdiscs an agent that is gone left on %s: %v", d, err)
			}
			s.log.Warn("removed the netem qdiscs of a run whose agent is gone", "device", d, "owner", strings.TrimSpace(string(b)))
		}
	}
	if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// netemOwnerFile is this network namespace's owner file.
func netemOwnerFile() string {
	ino := uint64(0)
	if st, err := os.Stat("/proc/self/ns/net"); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			ino = uint64(sys.Ino)
		}
	}
	return filepath.Join(OwnerDir, fmt.Sprintf("netem-netns-%d", ino))
}

// alive tells whether process pid exists (a zombie counts: its parent will reap it soon).
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// ErrNetem is wrapped by every error that says this kernel or machine cannot shape with netem.
var ErrNetem = errors.New("the netem backend cannot run here")

// NetemProbe tells whether this network namespace can carry netem rules out: tc runs, and the
// kernel has htb, netem (with the tables of dists) and u32's mark match. It puts a root qdisc on lo
// for a moment, and refuses to touch a root qdisc lo has already (another tool's).
func NetemProbe(dists []string) error {
	if _, err := exec.LookPath("tc"); err != nil {
		return fmt.Errorf("%w: it needs tc, which is not in PATH (Debian: apt-get install iproute2)", ErrNetem)
	}
	root := fmt.Sprintf("%x:", NetemHandle)
	if h := rootHandle("lo"); h != "" && h != "0:" {
		return fmt.Errorf("%w: lo has a root qdisc %s already; the netem backend leaves qdiscs it did not make alone (remove it: tc qdisc del dev lo root)", ErrNetem, h)
	}
	steps := []struct{ cmd, what string }{
		{"qdisc add dev lo root handle " + root + " htb direct_qlen 10000", "the htb qdisc (CONFIG_NET_SCH_HTB, module sch_htb)"},
		{"class add dev lo parent " + root + " classid " + root + "1 htb rate 10gbit quantum 200000", "an htb class"},
		{"qdisc add dev lo parent " + root + "1 handle 1: netem delay 1ms", "the netem qdisc (CONFIG_NET_SCH_NETEM, module sch_netem)"},
		{"filter add dev lo parent " + root + " protocol ip prio 1 u32 match mark 0x4c4c0000 0xffffffff match ip dst 127.0.0.1/32 match ip dport 9 0xffff flowid " + root + "1",
			"the u32 classifier with its mark match (CONFIG_NET_CLS_U32 and CONFIG_CLS_U32_MARK, module cls_u32)"},
	}
	for _, d := range dists {
		steps = append(steps, struct{ cmd, what string }{"qdisc change dev lo parent " + root + "1 handle 1: netem delay 1ms 1ms distribution " + d,
			"netem's " + d + " table (iproute2's " + d + ".dist)"})
	}
	defer func() { _ = tcBatch("qdisc del dev lo root\n") }()
	for _, st := range steps {
		if err := tcBatch(st.cmd + "\n"); err != nil {
			return fmt.Errorf("%w: tc cannot install %s: %v", ErrNetem, st.what, err)
		}
	}
	return nil
}

// Netem replaces run's netem rules on the agent's host; an empty list removes them all. probe
// asks the agent to check first that the host can carry out netem rules with the distributions
// dists.
func (c *Client) Netem(ctx context.Context, run string, rules []NetemRule, probe bool, dists []string) (NetemReply, error) {
	var rep NetemReply
	return rep, c.call(ctx, OpNetem, NetemRequest{Run: run, Rules: rules, Probe: probe, Dists: dists}, &rep, 10*time.Second)
}
