package launcher

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/leaderlab/leaderlab/agent"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Multi-host runs (run --hosts): the nodes run on the machines of an inventory, each started,
// signalled and watched by the agent there (agent/), as Jepsen drives its nodes from a control
// node, without SSH. The launcher keeps everything else: the run directory, the chaos schedule,
// the control requests (begin, link rules) that go to the nodes' own endpoints, observers. At the
// end every node's log is fetched into the local run directory before the checker runs.

// remoteHost is one agent of the run.
type remoteHost struct {
	addr   string
	line   int
	ip     string
	c      *agent.Client // requests
	ev     *agent.Client // the long-poll of process events (a connection of its own)
	offset agent.Offset
	ids    []int
	lost   atomic.Bool
	rm     *remote
}

// remote is the multi-host side of a run.
type remote struct {
	run   string // the run's ID on the agents
	hosts []*remoteHost
	at    map[int]*remoteHost

	token []byte

	mu      sync.Mutex
	pending map[[2]int][]agent.Event // events of a process not registered yet
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// remoteLease is how long the agents keep a run's nodes alive without word from the launcher.
const remoteLease = 10 * time.Second

// clockSamples is how many round trips measure each host's clock offset.
const clockSamples = 8

var runIDBad = regexp.MustCompile(`[^A-Za-z0-9._-]`)

// dialHosts reads the inventory, dials every agent (an unreachable one is an error that names
// it), places the nodes, asks each agent for ports on its address and measures its clock. It fills
// the cluster's nodes and hosts.
func dialHosts(ctx context.Context, cfg Config, dir string, c *rundir.Cluster) (*remote, error) {
	if cfg.TokenFile == "" {
		return nil, fmt.Errorf("Config.Hosts needs Config.TokenFile: the file holding the agents' token")
	}
	token, err := agent.LoadToken(cfg.TokenFile)
	if err != nil {
		return nil, fmt.Errorf("Config.TokenFile: %w", err)
	}
	inv, err := ReadInventory(cfg.Hosts)
	if err != nil {
		return nil, err
	}
	at, err := PlaceOnHosts(inv, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	// The agents' run ID: the directory's name, which two runs may share (bench scale names its runs
	// alike in every --out), made unique by the cluster's ID.
	id := runIDBad.ReplaceAllString(filepath.Base(dir), "_")
	if room := 64 - 1 - len(c.ClusterID); len(id) > room {
		id = id[len(id)-room:]
	}
	id += "-" + c.ClusterID
	rm := &remote{run: id, at: map[int]*remoteHost{}, pending: map[[2]int][]agent.Event{}, token: token}
	fail := func(err error) (*remote, error) {
		rm.close()
		return nil, err
	}
	for k, h := range inv {
		ip, _, _ := net.SplitHostPort(h.Addr)
		rh := &remoteHost{addr: h.Addr, line: h.Line, ip: ip, ids: hostIDs(at, k), rm: rm}
		rm.hosts = append(rm.hosts, rh)
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		rh.c, err = agent.Dial(dctx, h.Addr, token, 5*time.Second)
		if err == nil {
			rh.ev, err = agent.Dial(dctx, h.Addr, token, 5*time.Second)
		}
		cancel()
		if err != nil {
			return fail(fmt.Errorf("agent %s (Config.Hosts line %d) is unreachable: %w", h.Addr, h.Line, err))
		}
		if rh.offset, err = agent.ClockOffset(ctx, rh.c, clockSamples); err != nil {
			return fail(fmt.Errorf("agent %s: clock: %w", h.Addr, err))
		}
		if len(rh.ids) == 0 {
			continue
		}
		ports, err := rh.c.Ports(ctx, ip, len(rh.ids))
		if err != nil {
			return fail(fmt.Errorf("agent %s: ports for nodes %v: %w", h.Addr, rh.ids, err))
		}
		for i, nid := range rh.ids {
			rm.at[nid] = rh
			c.Nodes = append(c.Nodes, rundir.Node{ID: nid, Addr: ports[i], Host: h.Addr})
		}
	}
	slices.SortFunc(c.Nodes, func(a, b rundir.Node) int { return a.ID - b.ID })
	for _, rh := range rm.hosts {
		c.Hosts = append(c.Hosts, rundir.Host{Agent: rh.addr, IDs: rh.ids, OffsetNS: int64(rh.offset.Offset),
			RTTNS: int64(rh.offset.RTT), Samples: rh.offset.Samples})
	}
	return rm, nil
}

// hostMachines names the machine under each agent of inv, by index: its kernel's boot ID, or the
// agent's own address when the agent cannot be asked (unreachable, no token, an older agent:
// dialHosts reports the first two when the run starts).
func hostMachines(cfg Config, inv []HostSpec) []string {
	out := make([]string, len(inv))
	token, terr := agent.LoadToken(cfg.TokenFile)
	for k, h := range inv {
		out[k] = "agent " + h.Addr
		if terr != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if c, err := agent.Dial(ctx, h.Addr, token, 5*time.Second); err == nil {
			if rep, err := c.Host(ctx); err == nil && rep.Machine != "" {
				out[k] = rep.Machine
			}
			c.Close()
		}
		cancel()
	}
	return out
}

// prepare gives every agent the run's cluster.json (after the launcher saved it).
func (rm *remote) prepare(ctx context.Context, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, rundir.ClusterFile))
	if err != nil {
		return err
	}
	for _, h := range rm.hosts {
		if _, err := h.c.Prepare(ctx, rm.run, b, remoteLease); err != nil {
			return fmt.Errorf("agent %s: prepare run %s: %w", h.addr, rm.run, err)
		}
	}
	return nil
}

// follow watches every agent's process events for p until close.
func (rm *remote) follow(p *procs, say func(string, ...any)) {
	ctx, cancel := context.WithCancel(context.Background())
	rm.stop = cancel
	for _, h := range rm.hosts {
		rm.wg.Add(1)
		go func(h *remoteHost) {
			defer rm.wg.Done()
			var after uint64
			for {
				evs, err := h.ev.Events(ctx, rm.run, after, 2*time.Second)
				if ctx.Err() != nil {
					return
				}
				if err != nil {
					rm.lose(p, h, err, say)
					return
				}
				for _, e := range evs {
					after = max(after, e.Seq)
					rm.event(p, h, e)
				}
			}
		}(h)
	}
}

// lose marks an agent lost: its nodes count as crashed from now (an exited record that says so).
func (rm *remote) lose(p *procs, h *remoteHost, err error, say func(string, ...any)) {
	if h.lost.Swap(true) {
		return
	}
	say("leaderlab: agent %s lost (%v): its nodes %v count as crashed from now", h.addr, err, h.ids)
	p.mu.Lock()
	var gone []*proc
	for _, pr := range p.all {
		if pr.host == h && pr.running() {
			gone = append(gone, pr)
		}
	}
	p.mu.Unlock()
	for _, pr := range gone {
		p.record(logs.LaunchRecord{Ev: logs.LaunchExited, Node: pr.id, Inc: pr.inc, Pid: pr.pid,
			Detail: fmt.Sprintf("%s %s: %v", logs.AgentLost, h.addr, err)})
		pr.exit()
	}
}

// event applies one process event of agent h (its time corrected by the host's clock offset).
func (rm *remote) event(p *procs, h *remoteHost, e agent.Event) {
	pr := p.find(e.Node, e.Inc, h)
	if pr == nil {
		if e.Ev != agent.EventSpawned {
			rm.mu.Lock()
			k := [2]int{e.Node, e.Inc}
			rm.pending[k] = append(rm.pending[k], e)
			rm.mu.Unlock()
		}
		return
	}
	ts := e.TS - int64(h.offset.Offset)
	switch e.Ev {
	case agent.EventReady:
		p.record(logs.LaunchRecord{TS: ts, Ev: logs.LaunchReady, Node: e.Node, Inc: e.Inc, Pid: e.Pid})
		pr.readyOnce.Do(func() { close(pr.ready) })
	case agent.EventExited:
		p.record(logs.LaunchRecord{TS: ts, Ev: logs.LaunchExited, Node: e.Node, Inc: e.Inc, Pid: e.Pid,
			Code: e.Code, Signal: e.Signal, Detail: e.Detail, CPUMS: e.CPUMS, MaxRSSKB: e.MaxRSSKB})
		pr.exit()
	}
}

// registered replays the events that came before the process was registered.
func (rm *remote) registered(p *procs, pr *proc) {
	rm.mu.Lock()
	k := [2]int{pr.id, pr.inc}
	evs := rm.pending[k]
	delete(rm.pending, k)
	rm.mu.Unlock()
	for _, e := range evs {
		rm.event(p, pr.host, e)
	}
}

// spawn starts incarnation inc of node id on its agent.
func (rm *remote) spawn(p *procs, id, inc int) (*proc, error) {
	h := rm.at[id]
	if h.lost.Load() {
		return nil, fmt.Errorf("node %d: agent %s is lost", id, h.addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := h.c.Start(ctx, rm.run, id, inc, true)
	if err != nil {
		return nil, fmt.Errorf("start node %d on agent %s: %w", id, h.addr, err)
	}
	pr := &proc{id: id, inc: inc, pid: pid, host: h, ready: make(chan struct{}), exited: make(chan struct{})}
	p.add(pr)
	p.record(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: inc, Pid: pid, Detail: "on " + h.addr})
	rm.registered(p, pr)
	return pr, nil
}

// agentSignal is a signal as the agent names it.
func agentSignal(s syscall.Signal) (string, error) {
	switch s {
	case syscall.SIGTERM:
		return "TERM", nil
	case syscall.SIGKILL:
		return "KILL", nil
	case syscall.SIGSTOP:
		return "STOP", nil
	case syscall.SIGCONT:
		return "CONT", nil
	}
	return "", fmt.Errorf("signal %v cannot be sent through an agent", s)
}

// signal sends s to a remote process through its agent.
func (rm *remote) signal(pr *proc, s syscall.Signal) error {
	name, err := agentSignal(s)
	if err != nil {
		return err
	}
	if pr.host.lost.Load() {
		return fmt.Errorf("node %d: agent %s is lost", pr.id, pr.host.addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pr.host.c.Signal(ctx, rm.run, pr.id, name)
}

// fetch copies every host's run directory (the nodes' logs and stderr) into dir. A lost agent is
// dialled again (it may have lost only its connection); a host whose files could not be fetched is
// an error: the verdict would be judged on missing logs.
func (rm *remote) fetch(ctx context.Context, dir string) error {
	errs := &multierror.Error{ErrorFormat: joinErrors}
	for _, h := range rm.hosts {
		if len(h.ids) == 0 {
			continue
		}
		c := h.c
		if h.lost.Load() {
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			nc, err := agent.Dial(dctx, h.addr, rm.token, 5*time.Second)
			cancel()
			if err != nil {
				errs = multierror.Append(errs, fmt.Errorf("agent %s was lost and cannot be reached again (%v): the logs of nodes %v could not be fetched", h.addr, err, h.ids))
				continue
			}
			defer nc.Close()
			c = nc
		}
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, err := c.FetchAll(fctx, rm.run, dir)
		cancel()
		if err != nil {
			errs = multierror.Append(errs, fmt.Errorf("agent %s: fetch the logs of nodes %v: %w", h.addr, h.ids, err))
		}
	}
	return errs.ErrorOrNil()
}

// joinErrors formats several errors on one line each, without multierror's header.
func joinErrors(es []error) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "; ")
}

// cleanup removes the run from every agent that is still there.
func (rm *remote) cleanup() {
	for _, h := range rm.hosts {
		if h.c == nil || h.lost.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, _ = h.c.Cleanup(ctx, rm.run, false)
		cancel()
	}
}

// close stops following and closes the connections.
func (rm *remote) close() {
	if rm.stop != nil {
		rm.stop()
	}
	for _, h := range rm.hosts {
		if h.ev != nil {
			h.ev.Close()
		}
	}
	rm.wg.Wait()
	for _, h := range rm.hosts {
		if h.c != nil {
			h.c.Close()
		}
	}
}

// describe is one progress line per host.
func (rm *remote) describe() []string {
	var out []string
	for _, h := range rm.hosts {
		out = append(out, fmt.Sprintf("agent %s: %d nodes %s, clock offset %v ± %v", h.addr, len(h.ids), ringShown(h.ids),
			h.offset.Offset.Round(time.Microsecond), (h.offset.RTT/2).Round(time.Microsecond)))
	}
	return out
}

// remoteIPTablesNet is the iptables backend of a multi-host run: each agent installs, in its host's
// INPUT chain, the drops of the packets its nodes must not receive (by the sender's address and the
// two nodes' ports, as the local backend does by loopback address).
type remoteIPTablesNet struct {
	r  *runner
	mu sync.Mutex
}

func (t *remoteIPTablesNet) set(rules map[int][]wire.LinkRule, send []int) map[int]delivery {
	t.mu.Lock()
	defer t.mu.Unlock()
	rm := t.r.remote
	addr := map[int]*net.UDPAddr{}
	for _, n := range t.r.cluster.Nodes {
		if a, err := net.ResolveUDPAddr("udp", n.Addr); err == nil {
			addr[n.ID] = a
		}
	}
	per := map[*remoteHost][]agent.DropRule{}
	for x, rs := range rules {
		h, dst := rm.at[x], addr[x]
		if h == nil || dst == nil {
			continue
		}
		for _, r := range rs {
			src := addr[r.From]
			if src == nil || (!r.Drop && r.Loss <= 0) {
				continue
			}
			d := agent.DropRule{Src: src.IP.String(), Dst: dst.IP.String(), Ports: []int{dst.Port, src.Port}, Note: fmt.Sprintf("%d->%d", r.From, x)}
			if !r.Drop {
				d.Loss = r.Loss
			}
			per[h] = append(per[h], d)
		}
	}
	acks := map[*remoteHost]delivery{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, h := range rm.hosts {
		wg.Add(1)
		go func(h *remoteHost) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			rep, err := h.c.NetRules(ctx, rm.run, per[h])
			d := delivery{ack: rep.TS - int64(h.offset.Offset)}
			if err != nil {
				d = delivery{err: fmt.Sprintf("agent %s: %v", h.addr, err)}
			}
			mu.Lock()
			acks[h] = d
			mu.Unlock()
		}(h)
	}
	wg.Wait()
	out := make(map[int]delivery, len(send))
	for _, id := range send {
		if h := rm.at[id]; h != nil {
			out[id] = acks[h]
		}
	}
	return out
}

// up: the kernel's rules hold for every incarnation.
func (t *remoteIPTablesNet) up(_ int, then func()) {
	if then != nil {
		then()
	}
}

// close empties every host's rules (cleanup removes the chains too).
func (t *remoteIPTablesNet) close() error {
	t.set(map[int][]wire.LinkRule{}, nil)
	return nil
}
