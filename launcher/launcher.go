package launcher

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/leaderlab/leaderlab/agent"
	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/internal/osproc"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/topology"
	"github.com/leaderlab/leaderlab/wire"
)

// Exit codes of `run` and `check` (DESIGN.md).
const (
	ExitOK        = 0 // the checker passed
	ExitViolation = 1 // the checker found a violation
	ExitUnusable  = 2 // the run could not be made or read
	// ExitInconclusive: the run ended (or its extension ran out) while the election was still
	// progressing, with no property violated so far: the machine fell behind, no verdict.
	ExitInconclusive = 3
)

// supportedOps are the chaos actions this launcher carries out.
var supportedOps = map[string]bool{
	chaos.OpKill: true, chaos.OpStop: true, chaos.OpRestart: true, chaos.OpPause: true, chaos.OpResume: true,
	chaos.OpPartition: true, chaos.OpHeal: true, chaos.OpLink: true, chaos.OpClock: true,
}

// plan is a resolved, validated run: what cluster.json will say.
type plan struct {
	cfg     Config
	alg     election.Algorithm
	cluster *rundir.Cluster
	sched   *chaos.Schedule
	// detectorScale is what the default heartbeat and timeout were multiplied by (1: not scaled).
	detectorScale int
	perHost       int // the most nodes on one host (when the detector was to be scaled)
	// verdict is the checker's, once the run was made and judged.
	verdict *check.Verdict
}

// resolve checks the configuration and resolves everything that does not need processes. Every error
// names the bad input and what would be accepted.
func resolve(cfg Config) (*plan, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	alg, err := election.Lookup(cfg.Algo)
	if err != nil {
		return nil, &field.Error{Field: "Config.Algo", Want: err.Error(), Err: err}
	}
	scale, perHost := 1, 0
	if cfg.ScaleDetector && !cfg.Sim {
		if cfg.Heartbeat, cfg.Timeout, scale, perHost, err = PacedDetector(cfg, alg); err != nil {
			return nil, err
		}
	}
	cfg.derive()
	topo := cfg.Topology
	if topo == "" {
		topo = alg.Topologies[0]
	}
	if !topology.IsGraph(topo) {
		if topo, err = topology.ParseKind(topo); err != nil {
			return nil, &field.Error{Field: "Config.Topology", Want: fmt.Sprintf("%v (or a graph: %s)", err, strings.Join(topology.Families, ", ")), Err: err}
		}
	}
	if err := alg.Accepts(topo); err != nil {
		return nil, &field.Error{Field: "Config.Topology", Want: err.Error(), Err: err}
	}
	if !cfg.SeedSet {
		cfg.Seed = randomSeed()
	}
	order, err := topology.Place(cfg.Nodes, cfg.IDs, cfg.Seed)
	if err != nil {
		return nil, &field.Error{Field: "Config.IDs", Want: err.Error(), Err: err}
	}
	var edges [][2]int
	if topology.IsGraph(topo) {
		if edges, err = graphEdges(topo, order, cfg.Seed); err != nil {
			return nil, &field.Error{Field: "Config.Topology", Want: err.Error(), Err: err}
		}
	}
	inits, err := topology.ParseInitiators(cfg.Initiators, order, cfg.Seed)
	if err != nil {
		return nil, &field.Error{Field: "Config.Initiators", Want: err.Error(), Err: err}
	}
	if cfg.Nemesis != "" {
		if cfg.Chaos, err = drawNemesis(cfg); err != nil {
			return nil, err
		}
	}
	sched, err := chaos.Parse(cfg.Chaos, cfg.Nodes)
	if err != nil {
		return nil, &field.Error{Field: "Config.Chaos", Want: err.Error(), Err: err}
	}
	if err := sched.Unsupported(supportedOps); err != nil {
		return nil, &field.Error{Field: "Config.Chaos", Want: err.Error(), Err: err}
	}
	if last := sched.LastFault(); len(sched.Steps) > 0 && last+cfg.Settle > cfg.Duration {
		return nil, &field.Error{Field: "Config.Chaos", Want: fmt.Sprintf("the last fault ends at %v and the checks need Config.Settle %v of quiet after it, but Config.Duration is %v (make Config.Duration at least %v)", last, cfg.Settle, cfg.Duration, last+cfg.Settle), Also: []string{"Config.Duration", "Config.Settle"}}
	}
	if cfg.NetBackend == BackendIPTables {
		// with --hosts the agents run iptables on their hosts, and say so if they cannot
		if err := checkIPTables(); err != nil && !cfg.remote() {
			return nil, &field.Error{Field: "Config.NetBackend", Value: BackendIPTables, Want: err.Error(), Err: err}
		}
		for _, st := range sched.Steps {
			if st.Op == chaos.OpLink && !slices.Contains(IPTablesLinkKinds, st.Link.Kind) {
				return nil, &field.Error{Field: "Config.Chaos", Want: fmt.Sprintf("step %d %q: the iptables backend carries out link %s only (use Config.NetBackend transport for %s)", st.Pos, st.Text, strings.Join(IPTablesLinkKinds, " and "), st.Link.Kind), Also: []string{"Config.NetBackend"}}
			}
			if st.Op == chaos.OpLink && st.Link.Corr > 0 {
				return nil, &field.Error{Field: "Config.Chaos", Want: fmt.Sprintf("step %d %q: the iptables backend's loss is independent (-m statistic), it has no corr (use Config.NetBackend transport for a correlated loss)", st.Pos, st.Text), Also: []string{"Config.NetBackend"}}
			}
		}
		if cfg.Host != DefaultConfig().Host && !cfg.remote() {
			return nil, &field.Error{Field: "Config.Host", Value: cfg.Host, Want: "the iptables backend gives every node its own loopback address (127.0.x.y), so it takes no Config.Host", Also: []string{"Config.Host"}}
		}
	}
	if cfg.NetBackend == BackendNetem {
		if err := checkNetemSchedule(sched); err != nil {
			return nil, &field.Error{Field: "Config.Chaos", Want: err.Error(), Err: err, Also: []string{"Config.NetBackend"}}
		}
		if !cfg.remote() {
			if err := netemHere(cfg, netemDists(sched)); err != nil {
				return nil, err
			}
		}
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("make the run secret: %w", err)
	}
	cid := make([]byte, 6)
	_, _ = rand.Read(cid)
	opts := maps.Clone(cfg.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	opts[wire.ClockOption] = map[bool]string{true: "on", false: "off"}[vclockOn(cfg.VClock, cfg.Nodes)]
	if cfg.Detector != "" && cfg.Detector != rundir.DetectorHeartbeat {
		if topo != topology.Mesh {
			return nil, &field.Error{Field: "Config.Detector", Value: cfg.Detector, Want: fmt.Sprintf("the probing detectors run on a mesh (every node probes or is told about every other), not on a %s", topo)}
		}
		opts[rundir.OptDetector] = cfg.Detector
		h := cfg.HealthInterval
		if h == 0 {
			h = cfg.Heartbeat
		}
		opts[rundir.OptHealthInterval] = h.String()
		if cfg.ProbeTimeout > 0 {
			opts[rundir.OptProbeTimeout] = cfg.ProbeTimeout.String()
		}
	}
	c := &rundir.Cluster{
		ClusterID:          hex.EncodeToString(cid),
		Algo:               alg.Name,
		Topology:           topo,
		Edges:              edges,
		Placement:          cfg.IDs,
		Ring:               order,
		InitiatorsSpec:     cfg.Initiators,
		Initiators:         inits,
		Heartbeat:          rundir.Duration(cfg.Heartbeat),
		Timeout:            rundir.Duration(cfg.Timeout),
		ElectionTimeout:    rundir.Duration(cfg.ElectionTimeout),
		CoordinatorTimeout: rundir.Duration(cfg.CoordinatorTimeout),
		Settle:             rundir.Duration(cfg.Settle),
		Duration:           rundir.Duration(cfg.Duration),
		Grace:              rundir.Duration(cfg.Grace),
		TerminationBound:   rundir.Duration(cfg.TerminationBound),
		Seed:               cfg.Seed,
		Chaos:              cfg.Chaos,
		Options:            opts,
		Secret:             hex.EncodeToString(secret),
		Created:            time.Now().UTC().Format(time.RFC3339),
	}
	return &plan{cfg: cfg, alg: alg, cluster: c, sched: sched, detectorScale: scale, perHost: perHost}, nil
}

// PacedDetector is cfg's heartbeat and timeout paced for its cluster, as run paces its defaults:
// multiplied by DetectorScale of the most nodes on one host (perHost).
func PacedDetector(cfg Config, alg election.Algorithm) (heartbeat, timeout time.Duration, scale, perHost int, err error) {
	if perHost, err = mostNodesOnAHost(cfg); err != nil {
		return 0, 0, 0, 0, err
	}
	scale = DetectorScale(perHost, alg.AnswerWaits)
	return cfg.Heartbeat * time.Duration(scale), cfg.Timeout * time.Duration(scale), scale, perHost, nil
}

// mostNodesOnAHost is how many nodes the busiest machine runs (cfg.Nodes over cfg.Hosts's agents):
// all of them without --hosts. Agents that report the same machine (one kernel: the namespace
// lab's hosts) share its cores, so their nodes count together; each agent is asked (an agent
// that cannot say counts as a machine of its own).
func mostNodesOnAHost(cfg Config) (int, error) {
	if !cfg.remote() {
		return cfg.Nodes, nil
	}
	inv, sc, err := inventory(cfg)
	if err != nil {
		return 0, err
	}
	at, err := PlaceOnHosts(inv, cfg.Nodes)
	if err != nil {
		return 0, err
	}
	machine := hostMachines(cfg, inv, sc)
	count := map[string]int{}
	most := 0
	for _, h := range at {
		count[machine[h]]++
		most = max(most, count[machine[h]])
	}
	return most, nil
}

func randomSeed() int64 {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	var s int64
	for _, x := range b[:7] { // 56 bits: positive, and exact in JSON readers that use doubles
		s = s<<8 | int64(x)
	}
	return s >> 4
}

// Run makes a run: the directory, the processes, the faults, the stop and the verdict. It returns the
// exit code (ExitOK, ExitViolation, ExitUnusable, ExitInconclusive) and, for ExitUnusable, the error.
func Run(ctx context.Context, cfg Config) (int, error) {
	_, code, _, err := run(ctx, cfg)
	return code, err
}

// RunDir is Run that also returns the run directory ("" when none was made), for what comes after
// the verdict (`run --report`).
func RunDir(ctx context.Context, cfg Config) (string, int, error) {
	r, err := Launch(ctx, cfg)
	return r.Dir, r.Code, err
}

// Result is what a run gave: its directory ("" when none was made), its exit code, and the
// checker's verdict (nil when the run was not made or could not be judged).
type Result struct {
	Dir     string
	Code    int
	Verdict *check.Verdict
}

// Launch makes a run, as Run does, and returns its directory and verdict too: what comes after
// the verdict (a report, a bench's figures, run --count's summary) need not read verdict.json again.
func Launch(ctx context.Context, cfg Config) (Result, error) {
	dir, code, v, err := run(ctx, cfg)
	return Result{Dir: dir, Code: code, Verdict: v}, err
}

// run is Launch's work.
func run(ctx context.Context, cfg Config) (string, int, *check.Verdict, error) {
	if cfg.Hand != nil {
		defer cfg.Hand.finish()
	}
	p, err := resolve(cfg)
	if err != nil {
		return "", ExitUnusable, nil, err
	}
	cfg = p.cfg
	dir, err := makeRunDir(cfg.Out, p.cluster.Algo, cfg.Nodes)
	if err != nil {
		return "", ExitUnusable, nil, err
	}
	var code int
	if cfg.Sim && cfg.Hand != nil {
		code, err = makeHandSimRun(ctx, p, dir)
	} else if cfg.Sim {
		code, err = makeSimRun(p, dir)
	} else {
		code, err = makeRun(ctx, p, dir)
	}
	return dir, code, p.verdict, err
}

// makeRun makes a resolved run in its new directory.
func makeRun(ctx context.Context, p *plan, dir string) (int, error) {
	cfg := p.cfg
	var err error
	if cfg.Binary == "" {
		if cfg.Binary, err = os.Executable(); err != nil {
			return ExitUnusable, fmt.Errorf("find the leaderlab executable: %w", err)
		}
	}
	var rm *remote
	if cfg.remote() {
		if rm, err = dialHosts(ctx, cfg, dir, p.cluster); err != nil {
			return ExitUnusable, err
		}
		defer rm.close()
	} else if p.cluster.Nodes, err = nodeAddrs(cfg); err != nil {
		return ExitUnusable, err
	}
	if p.cluster.Observers, err = observerAddrs(cfg); err != nil {
		return ExitUnusable, err
	}
	if err := rundir.Save(dir, p.cluster); err != nil {
		return ExitUnusable, err
	}
	if rm != nil {
		if err := rm.prepare(ctx, dir); err != nil {
			rm.cleanup()
			return ExitUnusable, err
		}
	}
	r := &runner{plan: p, dir: dir, cfg: cfg, con: newConsole(cfg.Progress), remote: rm}
	r.exec = chaos.NewExecutor(r)
	return r.run(ctx)
}

// makeRunDir creates the run directory; an existing non-empty one is refused, so a run never mixes
// its files with another's.
func makeRunDir(out, algo string, n int) (string, error) {
	if out == "" {
		base := filepath.Join("runs", fmt.Sprintf("%s-%s-n%d", time.Now().UTC().Format("20060102T150405Z"), algo, n))
		out = base
		for i := 2; exists(out); i++ {
			out = base + "-" + strconv.Itoa(i)
		}
	}
	if entries, err := os.ReadDir(out); err == nil && len(entries) > 0 {
		return "", &field.Error{Field: "Config.Out", Value: out, Want: "the directory exists and is not empty (choose a new directory)"}
	}
	for _, d := range []string{out, filepath.Join(out, rundir.NodesDir), filepath.Join(out, rundir.StderrDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", &field.Error{Field: "Config.Out", Want: err.Error(), Err: err}
		}
	}
	return out, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// runner carries one run through its phases.
type runner struct {
	*plan
	dir   string
	cfg   Config
	con   *console // the progress: lines, and the status line on a terminal
	procs *procs
	// remote is the agents of a multi-host run (nil when every node runs here).
	remote *remote
	begin  time.Time
	chaos  *logs.JSONLines
	// net carries out partitions and link rules; faults are the ones in force.
	net netBackend
	// exec resolves the steps' targets and keeps the network faults in force (shared with the
	// simulator).
	exec *chaos.Executor
	// mu guards the status line's view.
	mu sync.Mutex
	// view is the nodes' last answers to the watch (who follows whom), lastFault the last fault
	// applied with its time: what the status line shows. Guarded by mu.
	view      map[int]wire.CtlReply
	viewSeen  bool
	lastFault string
	// end is when the run stops: begin + Duration, later while untilElected extends it. Guarded
	// by mu.
	end time.Time
	// acted is when the last kill, stop or pause of each node was about to be signalled (faults.go's
	// noteAct), for its chaos record.
	actMu sync.Mutex
	acted map[int]int64
}

func (r *runner) say(format string, a ...any) {
	r.con.println(fmt.Sprintf(format, a...))
}

// fault prints a fault that was applied, with detail when there is some, and keeps it for the
// status line.
func (r *runner) fault(what, detail string) {
	at := r.since()
	r.mu.Lock()
	r.lastFault = at + " " + what
	r.mu.Unlock()
	if detail != "" {
		what += ": " + detail
	}
	r.say("leaderlab: %s %s", at, what)
}

func (r *runner) since() string {
	if r.begin.IsZero() {
		return "  -   "
	}
	return fmt.Sprintf("+%.3fs", time.Since(r.begin).Seconds())
}

func (r *runner) run(ctx context.Context) (int, error) {
	lrec, err := logs.OpenJSONLines(filepath.Join(r.dir, rundir.LauncherFile))
	if err != nil {
		return ExitUnusable, err
	}
	defer lrec.Close()
	if r.chaos, err = logs.OpenJSONLines(filepath.Join(r.dir, rundir.ChaosFile)); err != nil {
		return ExitUnusable, err
	}
	defer r.chaos.Close()
	r.procs = newProcs(r.dir, r.cfg.Binary, lrec)
	c := r.cluster
	if r.remote != nil {
		r.procs.remote = r.remote
		r.remote.follow(r.procs, r.say)
		defer r.remote.cleanup()
		for _, l := range r.remote.describe() {
			r.say("leaderlab: %s", l)
		}
	}
	r.say("leaderlab: %s on %s, %d nodes, ids %s %s, seed %d", c.Algo, c.Topology, len(c.Nodes), c.Placement, ringShown(c.Ring), c.Seed)
	r.say("leaderlab: run directory %s", r.dir)
	if r.detectorScale > 1 {
		why := fmt.Sprintf("× ceil(n/%d): a faster detector would cost the host more wakeups than it can schedule", NodesPerBeat)
		if r.alg.AnswerWaits {
			why = fmt.Sprintf("× ceil((n/%d)²): %s's timeouts wait for answers through an election's n² messages", NodesPerBeat, r.alg.Name)
		}
		r.say("leaderlab: %d nodes on a machine: heartbeat %v, timeout %v (the defaults %s; --heartbeat and --timeout set them)",
			r.perHost, c.Heartbeat.D(), c.Timeout.D(), why)
	}
	if n := len(c.Nodes); n >= DynamicNoteNodes && !r.cfg.Sim && !r.cfg.remote() {
		if note := DynamicNote(r.cfg.Binary); note != "" {
			r.say("leaderlab: %d nodes: %s", n, note)
		}
	}
	if r.cfg.VClock != VClockOff && c.Options[wire.ClockOption] == "off" {
		r.say("leaderlab: %d nodes: Lamport clocks only (--vclock auto gives vector clocks up to %d nodes; --vclock on to have them)", len(c.Nodes), wire.AutoClockNodes)
	}
	if r.cfg.Nemesis != "" {
		r.say("leaderlab: the nemesis (%s) drew %d steps, saved in cluster.json:\n%s", r.cfg.Nemesis, len(r.sched.Steps), indent(r.sched.String()))
	}

	fail := func(err error) (int, error) {
		r.procs.record(logs.LaunchRecord{Ev: logs.LaunchError, Detail: err.Error()})
		r.procs.stopAll(r.cfg.StopGrace)
		if r.net != nil {
			_ = r.net.close()
		}
		r.procs.record(endRecord())
		return ExitUnusable, err
	}
	if r.cfg.NetBackend == BackendNetem && r.remote != nil {
		if err := probeNetemHosts(ctx, r.remote, netemDists(r.sched)); err != nil {
			return fail(&field.Error{Field: "Config.NetBackend", Value: BackendNetem, Want: err.Error(), Err: err})
		}
		r.net = &remoteNetemNet{r: r}
		r.say("leaderlab: network faults by netem qdiscs on the agents' hosts")
	} else if r.cfg.NetBackend == BackendNetem {
		r.net = &localNetemNet{r: r, shaper: agent.NewShaper()}
		r.say("leaderlab: network faults by netem qdiscs on the loopback of the run's own network namespace")
	} else if r.cfg.NetBackend == BackendIPTables && r.remote != nil {
		r.net = &remoteIPTablesNet{r: r}
		r.say("leaderlab: network faults by iptables on the agents' hosts")
	} else if r.cfg.NetBackend == BackendIPTables {
		ipt, err := newIPTablesNet(c.Nodes)
		if err != nil {
			return fail(&field.Error{Field: "Config.NetBackend", Value: BackendIPTables, Want: err.Error(), Err: err})
		}
		r.net = ipt
		r.say("leaderlab: network faults by iptables, chain %s; nodes on %s..%s", ipt.chain, nodeIP(c.Nodes[0].ID), nodeIP(c.Nodes[len(c.Nodes)-1].ID))
	} else {
		r.net = newTransportNet(r)
	}
	defer r.net.close()
	if r.remote == nil {
		said, err := raiseLimits(c.Topology, len(c.Nodes)+len(c.Observers))
		if err != nil {
			return fail(err)
		}
		for _, l := range said {
			r.say("leaderlab: %s", l)
		}
	}
	start := time.Now()
	if err := r.startAll(ctx); err != nil {
		return fail(err)
	}
	r.say("leaderlab: %d/%d nodes ready in %v", len(c.Nodes), len(c.Nodes), time.Since(start).Round(time.Millisecond))
	// The begin record is the run's time origin: every node is told, ahead of time (beginLead), to
	// begin at that instant (begun one after the other, the first would watch neighbours that send
	// nothing yet, and suspect them). It is written before any node is told, so that no node event
	// precedes it.
	lead := r.beginLead()
	r.begin = time.Now().Add(lead)
	r.procs.record(logs.LaunchRecord{Ev: logs.LaunchBegin, TS: r.begin.UnixNano()})
	late, err := r.beginAll(r.begin)
	if err != nil {
		return fail(err)
	}
	if late > 0 {
		r.say("leaderlab: %d nodes were told to begin after the common instant (the begin fan-out took longer than its lead of %v)", late, lead)
	}
	time.Sleep(time.Until(r.begin))

	r.setEnd(r.begin.Add(r.cfg.Duration))
	runCtx, cancel := context.WithDeadline(ctx, r.begin.Add(r.cfg.Duration))
	defer cancel()
	if h := r.cfg.Hand; h != nil {
		h.attachReal(r, cancel)
		defer h.detach()
	}
	// The watch, the resources and the status line go on while the run is extended.
	obsCtx, obsCancel := context.WithCancel(ctx)
	defer obsCancel()
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); r.watch(obsCtx) }()
	go func() { defer wg.Done(); r.sampleResources(obsCtx) }()
	go func() { defer wg.Done(); r.statusLine(obsCtx) }()
	r.runFaults(runCtx)
	<-runCtx.Done()
	extended := ""
	if r.cfg.UntilElected && ctx.Err() == nil {
		extended = r.untilElected(ctx)
	}
	obsCancel()
	wg.Wait()
	r.con.clear()
	interrupted := ctx.Err() != nil

	r.procs.record(logs.LaunchRecord{Ev: logs.LaunchStopping, Detail: extended})
	r.say("leaderlab: %s stopping the nodes", r.since())
	r.procs.stopAll(r.cfg.StopGrace)
	if err := r.net.close(); err != nil {
		r.say("leaderlab: %v", err)
	}
	if interrupted {
		r.procs.record(logs.LaunchRecord{Ev: logs.LaunchError, Detail: "interrupted"})
		r.procs.record(endRecord())
		return ExitUnusable, fmt.Errorf("interrupted: %s holds a partial run and no verdict", r.dir)
	}
	if r.remote != nil {
		if err := r.remote.fetch(ctx, r.dir); err != nil {
			r.procs.record(logs.LaunchRecord{Ev: logs.LaunchError, Detail: err.Error()})
			r.procs.record(endRecord())
			return ExitUnusable, fmt.Errorf("%v: the run's logs are incomplete, so it gets no verdict (%s)", err, r.dir)
		}
		r.say("leaderlab: fetched the logs of %d nodes from %d agents", len(c.Nodes), len(r.remote.hosts))
	}
	r.procs.record(endRecord())
	if r.cfg.Hand != nil {
		if err := r.handSave(); err != nil {
			return ExitUnusable, err
		}
	}
	var code int
	r.verdict, code, err = CheckVerdict(r.dir, r.cfg.Stdout)
	return code, err
}

// beginLead is how far ahead of the common begin instant the launcher starts telling the nodes: the
// time to tell them all, with room to spare. A local node is told down its stdin, a write that
// wakes it: under a millisecond for a thousand on a quick machine, but more than 150ms on the
// paravirtualised lab machine (2026-11-28, where a process switch costs 15-20µs: the woken nodes
// take the cores from the launcher's loop); told after the instant, the nodes began up to 6.7s
// apart, the first suspected neighbours that had not begun (412 suspicions), and Chang-Roberts'
// worst case at n = 1000 sent 499,692 messages instead of its 501,500. A millisecond a node is
// room enough there, and a second at a thousand nodes. A remote one, or an observer, is told by a
// control call, a few at a time:
// at a thousand idle nodes on two cores a call takes 45ms (p50), 1.4ms a node with 32 at once, and
// a call that comes after the instant meets a cluster busy electing and may take seconds (run -n
// 1000 with 2ms a node: 316 nodes told late, some 19s late).
func (r *runner) beginLead() time.Duration {
	piped := 0
	for _, n := range r.cluster.Nodes {
		if r.cluster.HostOf(n.ID) == nil { // local: started with --stdin-orders
			piped++
		}
	}
	called := len(r.cluster.Nodes) + len(r.cluster.Observers) - piped
	return 50*time.Millisecond + time.Duration(piped)*time.Millisecond + time.Duration(called)*4*time.Millisecond
}

// beginAll tells every node to begin at the instant at (on its host's clock): down the stdin of
// the local ones, then by control calls to the rest, a bounded number at a time (fanout.go), each
// retried while its process runs (begin is idempotent: a node that has begun or will answers as if
// it just had). It returns how many were told only after that instant.
func (r *runner) beginAll(at time.Time) (late int, err error) {
	var called []rundir.Node
	for _, n := range r.cluster.Nodes {
		pr := r.procs.current(n.ID)
		if pr == nil {
			called = append(called, n)
			continue
		}
		w := pr.takeOrders()
		if w == nil {
			called = append(called, n)
			continue
		}
		_, err := fmt.Fprintf(w, "begin %d\n", at.UnixNano())
		w.Close()
		if err != nil {
			return 0, fmt.Errorf("begin node %d: write its stdin: %w (did it exit? see %s)", n.ID, err, rundir.Stderr(r.dir, n.ID))
		}
	}
	if time.Now().After(at) {
		late = len(r.cluster.Nodes) - len(called)
	}
	called = append(called, r.cluster.Observers...)
	var lateN atomic.Int32
	err = fanOut(called, controlParallel(), func(n rundir.Node) error {
		when := at.UnixNano()
		if h := r.cluster.HostOf(n.ID); h != nil {
			when += h.OffsetNS // the host's clock is the launcher's plus its offset
		}
		if err := r.callRetry(n, wire.CtlRequest{Op: wire.CtlBegin, At: when}); err != nil {
			return fmt.Errorf("begin node %d: %w", n.ID, err)
		}
		if time.Now().After(at) {
			lateN.Add(1)
		}
		return nil
	})
	return late + int(lateN.Load()), err
}

// DynamicNoteNodes is the cluster size from which run says that its binary is dynamically linked:
// there, its nodes' start-up is most of the run's wait.
const DynamicNoteNodes = 100

// DynamicNote says, when binary is dynamically linked, what that costs its nodes and how to build a
// static one; "" for a static binary (or one that cannot be read: the run finds that out itself).
func DynamicNote(binary string) string {
	if interp, err := osproc.Interpreter(binary); err != nil || interp == "" {
		return ""
	}
	return "this leaderlab is dynamically linked (built with cgo), and its nodes start and die slower than a static build's " +
		"(measured on a 2-core machine: 27% more CPU to start a node, a SIGKILL's EOF about 1 ms later); " +
		"CGO_ENABLED=0 go build -o leaderlab . makes a static one (docs/bench.md)"
}
