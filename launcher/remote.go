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
	"github.com/leaderlab/leaderlab/internal/sshhost"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Multi-host runs (run --hosts, run --ssh-config): the nodes run on SSH hosts, as Jepsen drives its
// nodes from a control node. The launcher connects to each host over SSH (internal/sshhost: keys
// from the ssh-agent and identity files, host keys checked against known_hosts), puts its own
// binary there when the host's copy differs, and runs `leaderlab agent --stdio` in a session: the
// agent's operations (start, signal, watch and fetch the nodes) travel over that session, which SSH
// authenticates and encrypts. The end of the session (the launcher died, the network went) ends the
// agent and its nodes. The launcher keeps everything else: the run directory, the chaos schedule,
// the control requests (begin, link rules) that go to the nodes' own endpoints, observers. At the
// end every node's log is fetched into the local run directory before the checker runs.

// remoteHost is one host of the run and the agent the launcher runs there.
type remoteHost struct {
	spec     HostSpec
	target   sshhost.Target
	ssh      *sshhost.Host
	bin      string // the binary's path on the host
	uploaded bool   // the launcher put it there for this run
	sudo     bool   // the agent runs under sudo -n (the run needs root, the user is not)
	ip       string // the host's address, where its nodes listen
	run      string // the run's ID on this host
	c        *agent.Client
	offset   agent.Offset
	ids      []int
	portsOf  []string // the ports of ids on the host
	lost     atomic.Bool
	rm       *remote
	logPath  string // the agent's stderr, in the run directory
}

// name is the host as the user named it.
func (h *remoteHost) name() string { return h.spec.Target }

// remote is the multi-host side of a run.
type remote struct {
	hosts []*remoteHost
	at    map[int]*remoteHost
	opts  sshhost.DialOptions
	bin   sshhost.Binary
	// backend is the run's --net-backend (a kernel backend needs root on the hosts).
	backend string

	mu      sync.Mutex
	pending map[[2]int][]agent.Event // events of a process not registered yet
	stop    context.CancelFunc
	wg      sync.WaitGroup
}

// remoteLease is how long the agents keep a run's nodes alive without word from the launcher.
const remoteLease = 10 * time.Second

// clockSamples is how many round trips measure each host's clock offset.
const clockSamples = 8

// agentTimeout bounds each request to an agent.
const agentTimeout = 10 * time.Second

var runIDBad = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9._-]`) })

// sshPool keeps one SSH connection per host for the launcher's lifetime: the placement's question
// (which machine is it?) and the run, and each run of --count, share it.
var sshPool = struct {
	sync.Mutex
	m map[string]*sshhost.Host
}{m: map[string]*sshhost.Host{}}

// dialSSH returns the pooled connection to t, dialling it when there is none or it died.
func dialSSH(ctx context.Context, t sshhost.Target, o sshhost.DialOptions) (*sshhost.Host, error) {
	key := fmt.Sprintf("%s|%v", t, o.InsecureIgnoreHostKey)
	sshPool.Lock()
	h := sshPool.m[key]
	sshPool.Unlock()
	if h != nil {
		select {
		case <-h.Done():
		default:
			return h, nil
		}
	}
	h, err := sshhost.Dial(ctx, t, o)
	if err != nil {
		return nil, err
	}
	sshPool.Lock()
	if old := sshPool.m[key]; old != nil && old != h {
		old.Close()
	}
	sshPool.m[key] = h
	sshPool.Unlock()
	return h, nil
}

// needsRoot tells whether the agents must run as root: the kernel backends change the host's
// firewall or queueing.
func needsRoot(cfg Config) bool {
	return cfg.NetBackend == BackendIPTables || cfg.NetBackend == BackendNetem
}

// uploadBinary is the binary put on the hosts: LEADERLAB_REMOTE_BINARY (a build for the hosts'
// platform) or the launcher's own.
func uploadBinary(cfg Config) (sshhost.Binary, error) {
	path := cfg.Binary
	if env := os.Getenv("LEADERLAB_REMOTE_BINARY"); env != "" {
		path = env
	}
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return sshhost.Binary{}, fmt.Errorf("find the leaderlab executable to put on the hosts: %w", err)
		}
		path = exe
	}
	return sshhost.ReadBinary(path)
}

// dialHosts reads the inventory, connects to every host over SSH (a host that cannot be reached or
// trusted is an error that names it and the cure), places the nodes, starts an agent on each and
// asks it for ports on the host's address, and measures its clock. It fills the cluster's nodes
// and hosts. The hosts are reached in parallel.
func dialHosts(ctx context.Context, cfg Config, dir string, c *rundir.Cluster) (*remote, error) {
	inv, sc, err := inventory(cfg)
	if err != nil {
		return nil, err
	}
	at, err := PlaceOnHosts(inv, cfg.Nodes)
	if err != nil {
		return nil, err
	}
	bin, err := uploadBinary(cfg)
	if err != nil {
		return nil, err
	}
	// The agents' run ID: the directory's name, which two runs may share (bench scale names its runs
	// alike in every --out), made unique by the cluster's ID and the host's place in the inventory
	// (hosts of one machine, as the namespace lab's, may share a home directory).
	base := runIDBad().ReplaceAllString(filepath.Base(dir), "_")
	rm := &remote{at: map[int]*remoteHost{}, pending: map[[2]int][]agent.Event{}, bin: bin, backend: cfg.NetBackend,
		opts: sshhost.DialOptions{InsecureIgnoreHostKey: cfg.InsecureIgnoreHostKey}}
	for k, h := range inv {
		suffix := fmt.Sprintf("-%s-h%d", c.ClusterID, k+1)
		id := base
		if room := 64 - len(suffix); len(id) > room {
			id = id[len(id)-room:]
		}
		t, err := sc.Resolve(h.Target)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", h.where(), err)
		}
		rh := &remoteHost{spec: h, target: t, ids: hostIDs(at, k), rm: rm, run: id + suffix,
			sudo:    needsRoot(cfg) && t.User != "root",
			logPath: filepath.Join(dir, "hosts", fmt.Sprintf("h%d-%s.log", k+1, runIDBad().ReplaceAllString(h.Target, "_")))}
		rm.hosts = append(rm.hosts, rh)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hosts"), 0o755); err != nil {
		return nil, err
	}
	errs := make([]error, len(rm.hosts))
	var wg sync.WaitGroup
	for k, rh := range rm.hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[k] = rh.open(ctx)
		}()
	}
	wg.Wait()
	if err := multierror.Append(&multierror.Error{ErrorFormat: joinErrors}, errs...).ErrorOrNil(); err != nil {
		rm.close()
		return nil, err
	}
	for _, rh := range rm.hosts {
		for i, nid := range rh.ids {
			rm.at[nid] = rh
			n := rundir.Node{ID: nid, Addr: net.JoinHostPort(rh.ip, rh.portsOf[i]), Host: rh.name()}
			if needsRoot(cfg) {
				n.Mark = int(nodeMark(nid))
			}
			c.Nodes = append(c.Nodes, n)
		}
		binary := "up to date"
		if rh.uploaded {
			binary = "uploaded"
		}
		c.Hosts = append(c.Hosts, rundir.Host{Agent: rh.name(), SSH: rh.target.User + "@" + rh.target.Addr(), IDs: rh.ids,
			OffsetNS: int64(rh.offset.Offset), RTTNS: int64(rh.offset.RTT), Samples: rh.offset.Samples,
			HostKey: rh.ssh.HostKey, HostKeyCheck: rh.ssh.KeyChecked, Binary: binary, Sudo: rh.sudo})
	}
	slices.SortFunc(c.Nodes, func(a, b rundir.Node) int { return a.ID - b.ID })
	return rm, nil
}

// open connects to the host, installs the binary, starts the agent, measures the clock and gets
// ports for the host's nodes.
func (h *remoteHost) open(ctx context.Context) error {
	where := h.spec.where()
	var err error
	if h.ssh, err = dialSSH(ctx, h.target, h.rm.opts); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if err := h.startAgent(ctx); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if h.offset, err = agent.ClockOffset(ctx, h.c, clockSamples); err != nil {
		return fmt.Errorf("%s: clock: %w", where, err)
	}
	if h.ip, err = h.nodeAddress(ctx); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if len(h.ids) == 0 {
		return nil
	}
	addrs, err := h.c.Ports(ctx, h.ip, len(h.ids))
	if err != nil {
		return fmt.Errorf("%s: ports for nodes %v: %w", where, h.ids, err)
	}
	for _, a := range addrs {
		_, port, _ := net.SplitHostPort(a)
		h.portsOf = append(h.portsOf, port)
	}
	return nil
}

// nodeAddress is the address the host's nodes listen on: addr= of its --hosts line; else the
// address SSH reached it at, unless that is a loopback address of another machine (a forwarded
// port, as VirtualBox's NAT gives `vagrant ssh-config`): then the host's own address on a network
// this machine shares with it (VirtualBox's host-only network).
func (h *remoteHost) nodeAddress(ctx context.Context) (string, error) {
	if h.spec.Addr != "" {
		return h.spec.Addr, nil
	}
	ip, _, _ := net.SplitHostPort(h.ssh.RemoteAddr().String())
	if pip := net.ParseIP(ip); pip == nil || !pip.IsLoopback() {
		return ip, nil
	}
	rep, err := h.c.Host(ctx)
	if err != nil {
		return "", err
	}
	if rep.Machine == localMachine() {
		return ip, nil // the launcher's own machine: loopback reaches it
	}
	local, _ := net.InterfaceAddrs()
	for _, a := range rep.Addrs {
		hip, hnet, err := net.ParseCIDR(a)
		if err != nil {
			continue
		}
		for _, l := range local {
			if ln, ok := l.(*net.IPNet); ok && hnet.Contains(ln.IP) && !ln.IP.Equal(hip) {
				return hip.String(), nil
			}
		}
	}
	return "", fmt.Errorf("SSH reaches the host at %s (a forwarded port), and it has no address on a network this machine shares (its addresses: %v): "+
		"give its nodes' address with addr=IP on its --hosts line, or give the VM a private network (Vagrant's private_network)", ip, rep.Addrs)
}

// localMachine is this kernel's boot ID.
func localMachine() string {
	b, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	return strings.TrimSpace(string(b))
}

// startAgent puts the binary on the host if its copy differs, and runs the agent in a session of
// its own, its standard error appended to the host's log in the run directory.
func (h *remoteHost) startAgent(ctx context.Context) error {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	inst, err := h.ssh.Install(ictx, h.rm.bin, "leaderlab")
	cancel()
	if err != nil {
		return err
	}
	h.bin, h.uploaded = inst.Path, h.uploaded || inst.Uploaded
	cmd := "exec " + sshhost.Quote(h.bin) + " agent --stdio"
	if h.sudo {
		sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := h.ssh.Run(sctx, "sudo -n true", nil)
		cancel()
		if err != nil {
			return fmt.Errorf("the %s backend needs root on the host, and user %s cannot sudo without a password (%v): "+
				"connect as root (User root in the ssh config) or give %s passwordless sudo", h.rm.backend, h.target.User, err, h.target.User)
		}
		cmd = "exec sudo -n " + sshhost.Quote(h.bin) + " agent --stdio"
	}
	logf, err := os.OpenFile(h.logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := h.ssh.Start(cmd, logf)
	if err != nil {
		logf.Close()
		return err
	}
	go func() { <-st.Done(); logf.Close() }()
	h.c, err = agent.NewClient(h.name(), st, agentTimeout)
	if err != nil {
		st.Close()
		return err
	}
	// The first request says whether the agent runs at all.
	tctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := h.c.Time(tctx); err != nil {
		h.c.Close()
		tail, _ := os.ReadFile(h.logPath)
		return fmt.Errorf("the agent (%s) did not answer: %v; its log: %s", cmd, err, strings.TrimSpace(lastLines(string(tail), 3)))
	}
	return nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return "(empty)"
	}
	return strings.Join(lines, " | ")
}

// hostMachines names the machine under each host of cfg, by index: its kernel's boot ID, or the
// host's own name when it cannot be asked (dialHosts reports why when the run starts).
func hostMachines(cfg Config, inv []HostSpec, sc *sshhost.Config) []string {
	out := make([]string, len(inv))
	o := sshhost.DialOptions{InsecureIgnoreHostKey: cfg.InsecureIgnoreHostKey}
	var wg sync.WaitGroup
	for k, h := range inv {
		out[k] = "host " + h.Target
		t, err := sc.Resolve(h.Target)
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), t.ConnectTimeout+5*time.Second)
			defer cancel()
			c, err := dialSSH(ctx, t, o)
			if err != nil {
				return
			}
			if b, err := c.Run(ctx, "cat /proc/sys/kernel/random/boot_id", nil); err == nil && len(strings.TrimSpace(string(b))) > 0 {
				out[k] = strings.TrimSpace(string(b))
			}
		}()
	}
	wg.Wait()
	return out
}

// prepare gives every agent the run's cluster.json (after the launcher saved it).
func (rm *remote) prepare(ctx context.Context, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, rundir.ClusterFile))
	if err != nil {
		return err
	}
	for _, h := range rm.hosts {
		if _, err := h.c.Prepare(ctx, h.run, b, remoteLease); err != nil {
			return fmt.Errorf("host %s: prepare run %s: %w", h.name(), h.run, err)
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
				evs, err := h.c.Events(ctx, h.run, after, 2*time.Second)
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
	say("leaderlab: host %s lost (%v): its nodes %v count as crashed from now", h.name(), err, h.ids)
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
			Detail: fmt.Sprintf("%s %s: %v", logs.AgentLost, h.name(), err)})
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
		return nil, fmt.Errorf("node %d: host %s is lost", id, h.name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid, err := h.c.Start(ctx, h.run, id, inc, true)
	if err != nil {
		return nil, fmt.Errorf("start node %d on host %s: %w", id, h.name(), err)
	}
	pr := &proc{id: id, inc: inc, pid: pid, host: h, ready: make(chan struct{}), exited: make(chan struct{})}
	p.add(pr)
	p.record(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: inc, Pid: pid, Detail: "on " + h.name()})
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
		return fmt.Errorf("node %d: host %s is lost", pr.id, pr.host.name())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return pr.host.c.Signal(ctx, pr.host.run, pr.id, name)
}

// fetch copies every host's run directory (the nodes' logs and stderr) into dir. A lost host is
// connected to again and a new agent started there (the run directory outlives the agent that
// wrote it); a host whose files could not be fetched is an error: the verdict would be judged on
// missing logs.
func (rm *remote) fetch(ctx context.Context, dir string) error {
	errs := &multierror.Error{ErrorFormat: joinErrors}
	for _, h := range rm.hosts {
		if len(h.ids) == 0 {
			continue
		}
		if h.lost.Load() {
			dctx, cancel := context.WithTimeout(ctx, h.target.ConnectTimeout+30*time.Second)
			var err error
			h.ssh, err = dialSSH(dctx, h.target, rm.opts)
			if err == nil {
				err = h.startAgent(dctx)
			}
			cancel()
			if err != nil {
				errs = multierror.Append(errs, fmt.Errorf("host %s was lost and cannot be reached again (%v): the logs of nodes %v could not be fetched", h.name(), err, h.ids))
				continue
			}
			h.lost.Store(false) // cleanup may reach it now
		}
		fctx, cancel := context.WithTimeout(ctx, time.Minute)
		_, err := h.c.FetchAll(fctx, h.run, dir)
		cancel()
		if err != nil {
			errs = multierror.Append(errs, fmt.Errorf("host %s: fetch the logs of nodes %v: %w", h.name(), h.ids, err))
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

// stopFollowing ends the watch of the hosts' process events (the run is over: an agent that no
// longer knows the run is not a lost host).
func (rm *remote) stopFollowing() {
	if rm.stop != nil {
		rm.stop()
	}
	rm.wg.Wait()
}

// cleanup removes the run from every host that is still there, in parallel, after the watch of
// their events has ended.
func (rm *remote) cleanup() {
	rm.stopFollowing()
	var wg sync.WaitGroup
	for _, h := range rm.hosts {
		if h.c == nil || h.lost.Load() {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			_, _ = h.c.Cleanup(ctx, h.run, false)
			cancel()
		}()
	}
	wg.Wait()
}

// close stops following and ends the agents' sessions (each agent then kills what it still runs
// and exits). The SSH connections stay in the pool.
func (rm *remote) close() {
	if rm.stop != nil {
		rm.stop()
	}
	for _, h := range rm.hosts {
		if h.c != nil {
			h.c.Close()
		}
	}
	rm.wg.Wait()
}

// describe is one progress line per host.
func (rm *remote) describe() []string {
	var out []string
	for _, h := range rm.hosts {
		bin := "binary up to date"
		if h.uploaded {
			bin = fmt.Sprintf("binary uploaded (%.1f MB)", float64(h.rm.bin.Size)/1e6)
		}
		out = append(out, fmt.Sprintf("host %s (%s@%s): %d nodes %s, clock offset %v ± %v, %s, host key %s", h.name(), h.target.User, h.ip, len(h.ids), ringShown(h.ids),
			h.offset.Offset.Round(time.Microsecond), (h.offset.RTT/2).Round(time.Microsecond), bin, h.ssh.KeyChecked))
	}
	return out
}
