package node

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Options start one node.
type Options struct {
	// Dir is the run directory holding cluster.json.
	Dir string
	// ID is this node's ID (it must be in cluster.json).
	ID int
	// Inc is the incarnation; 0 derives it from the node's event log (the last incarnation + 1).
	Inc int
	// Ready receives the readiness line ("ready <id> <inc>\n"); os.Stdout when nil.
	Ready io.Writer
	// StatsEvery is the interval of periodic stats events (default 1s).
	StatsEvery time.Duration
	// Begin makes a first incarnation begin as soon as its links are up instead of waiting for the
	// launcher's begin request (for nodes started by hand).
	Begin bool
	// AwaitBegin makes a restarted incarnation wait for the begin request too, as a first one does:
	// the launcher gives it the link rules in force (a partition) before it begins.
	AwaitBegin bool
	// Orders, when set, carries the launcher's begin as lines "begin <Unix ns>" (the node's stdin,
	// a pipe from the launcher): written to a thousand pipes in milliseconds where a thousand
	// control calls take seconds. The control endpoint's begin is still answered.
	Orders io.Reader
}

// readOrders reads the launcher's orders (Options.Orders) until their end. A line it does not
// understand is reported on stderr with what is accepted; the node goes on.
func (n *node) readOrders(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 2 && f[0] == "begin" {
			if at, err := strconv.ParseInt(f[1], 10, 64); err == nil && at >= 0 {
				n.post(func() { n.beginAt(at) })
				continue
			}
		}
		fmt.Fprintf(os.Stderr, "node %d: order %q not understood (accepted: \"begin <Unix ns>\")\n", n.self, sc.Text())
	}
}

// node is the event loop's state; only the loop goroutine touches it.
type node struct {
	opt     Options
	cluster *rundir.Cluster
	self    int
	inc     int
	alg     election.Algorithm
	m       election.Machine
	// into is m when it can step into a buffer, effs that buffer, stepping set while its effects
	// are carried out (step).
	into     election.WithStepInto
	effs     []election.Effect
	stepping bool
	tr       wire.Transport
	w        World
	// clk is the node's perceived time over w: what the machine, the detector and the heartbeats
	// read, and what a clock fault bends (clock.go). w is the true time the log is stamped with.
	clk     skewClock
	log     EventSink
	pid     int
	origin  time.Time
	links   []int
	peers   []int
	secret  []byte
	inbox   chan func() // the process's event loop (wallWorld)
	lt      *loopTimers // its timers (nil: the runtime's)
	done    chan struct{}
	exitErr error
	// finished is set once the node is over (done closed): an orderly stop ran, or the log failed.
	finished bool
	// stopping is set when an orderly stop began: the machine has had its last word (InStop) and
	// gets no further input while the node lingers.
	stopping bool
	// ready is told once the links to the topology neighbours are up ("ready <id> <inc>").
	ready func()
	// awaiting is set while the node waits for its links before it is ready; linksBy is how long a
	// restarted incarnation waits (its neighbours may be dead).
	beginArmed bool // a begin at a later instant is scheduled (beginAt)
	// answerSince is when the node last elected or took a leader: the time its status answer
	// changed (CtlReply.Since).
	answerSince time.Time
	awaiting    bool
	linksBy     time.Time
	linksPoll   bool // a poll of the links is armed
	// onExit is called once the node is over (the simulator ends the incarnation).
	onExit func(err error)
	hb     *ticker
	statsT *ticker

	lc  uint64
	vc  vclock // used when the run has vector clocks on
	seq uint64
	// idPrefix is "node.inc." of the message IDs, idBuf where the next one is written.
	idPrefix string
	idBuf    []byte
	// line and lineMsg are the scratch event of the sends and recvs (msgLine).
	line    logs.Event
	lineMsg election.Message
	begun   bool
	early   []func() // inputs that arrived before begin

	timers   map[string]Timer
	timerGen map[string]uint64

	det detector
	net netem // the link rules, between the transport and the loop

	stats logs.Stats
}

// Run runs the node until SIGTERM/SIGINT, ctx is done, or its parent (the launcher) goes away.
func Run(ctx context.Context, opt Options) error {
	n, w, err := newNode(opt)
	if err != nil {
		return err
	}
	defer w.Close()
	return n.run(ctx)
}

// newNode loads the run's cluster.json and opens the node's event log for a node process.
func newNode(opt Options) (*node, *logs.Writer, error) {
	c, err := rundir.Load(opt.Dir)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := c.Node(opt.ID); !ok {
		return nil, nil, fmt.Errorf("node %d is not in %s/cluster.json (IDs: %v)", opt.ID, opt.Dir, c.IDs())
	}
	if opt.Inc == 0 {
		opt.Inc = lastIncarnation(rundir.NodeLog(opt.Dir, opt.ID)) + 1
	}
	if opt.Ready == nil {
		opt.Ready = os.Stdout
	}
	if err := os.MkdirAll(filepath.Join(opt.Dir, rundir.NodesDir), 0o755); err != nil {
		return nil, nil, fmt.Errorf("node %d: %w", opt.ID, err)
	}
	w, err := logs.OpenWriter(rundir.NodeLog(opt.Dir, opt.ID))
	if err != nil {
		return nil, nil, err
	}
	n, err := newCore(c, opt, w, os.Getpid())
	if err != nil {
		w.Close()
		return nil, nil, err
	}
	n.w = wallWorld{n}
	n.clk.base = n.w
	n.inbox = make(chan func(), 4096)
	n.lt = newLoopTimers(n.post)
	n.ready = func() { fmt.Fprintf(opt.Ready, "ready %d %d\n", n.self, n.inc) }
	return n, w, nil
}

// newCore makes the node of either world, without its World, transport and readiness.
func newCore(c *rundir.Cluster, opt Options, sink EventSink, pid int) (*node, error) {
	if _, ok := c.Node(opt.ID); !ok {
		return nil, fmt.Errorf("node %d is not in cluster.json (IDs: %v)", opt.ID, c.IDs())
	}
	if opt.Inc < 1 {
		return nil, fmt.Errorf("node %d: incarnation %d: want 1 or more", opt.ID, opt.Inc)
	}
	alg, err := election.Lookup(c.Algo)
	if err != nil {
		return nil, fmt.Errorf("cluster.json: %w", err)
	}
	secret, err := c.Key()
	if err != nil {
		return nil, err
	}
	topo, err := c.Net()
	if err != nil {
		return nil, fmt.Errorf("cluster.json: %w", err)
	}
	if opt.StatsEvery <= 0 {
		opt.StatsEvery = time.Second
	}
	n := &node{
		opt: opt, cluster: c, self: opt.ID, inc: opt.Inc, alg: alg, log: sink, pid: pid,
		secret: secret,
		done:   make(chan struct{}),
		timers: map[string]Timer{}, timerGen: map[string]uint64{},
		links:    topo.Neighbours(opt.ID),
		idPrefix: strconv.Itoa(opt.ID) + "." + strconv.Itoa(opt.Inc) + ".",
	}
	for _, id := range c.IDs() {
		if id != opt.ID {
			n.peers = append(n.peers, id)
		}
	}
	on, err := clockOn(c)
	if err != nil {
		return nil, err
	}
	n.vc.init(on, opt.ID, opt.Inc)
	n.det.init(n, c.Heartbeat.D(), c.Timeout.D())
	if err := n.det.initProber(c, opt.ID); err != nil {
		return nil, err
	}
	n.net.init(n, c.Seed)
	m, err := alg.New(election.Config{
		Self:               opt.ID,
		IDs:                c.IDs(),
		Ring:               c.Ring,
		Topology:           c.Topology,
		Edges:              c.Edges,
		Initiator:          slices.Contains(c.Initiators, opt.ID),
		Incarnation:        opt.Inc,
		ElectionTimeout:    c.ElectionTimeout.D(),
		CoordinatorTimeout: c.CoordinatorTimeout.D(),
		Rand:               rand.New(rand.NewSource(c.Seed ^ int64(opt.ID)<<20 ^ int64(opt.Inc)<<40)),
		Options:            c.Options,
	})
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", opt.ID, err)
	}
	n.m = m
	n.into, _ = m.(election.WithStepInto)
	return n, nil
}

// lastIncarnation reads the inc of the last complete line of a node's log (0 when there is none).
func lastIncarnation(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	inc := 0
	r := bufio.NewReaderSize(f, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		var e struct {
			Inc int `json:"inc"`
		}
		if json.Unmarshal(line, &e) == nil && e.Inc > inc {
			inc = e.Inc
		}
		if err != nil {
			return inc
		}
	}
}

func (n *node) run(ctx context.Context) error {
	if n.lt != nil {
		defer n.lt.close() // last: after the loop's own timers are stopped (halt)
	}
	self, _ := n.cluster.Node(n.self)
	peers := map[int]string{}
	for _, p := range n.cluster.Nodes {
		if p.ID != n.self {
			peers[p.ID] = p.Addr
		}
	}
	for _, o := range n.cluster.Observers {
		peers[o.ID] = o.Addr // their probes are datagrams from a known sender
	}
	listen := self.Addr
	if self.Bind != "" {
		listen = self.Bind
	}
	tcfg := wire.DefaultTCPConfig()
	tcfg.Self, tcfg.Inc = n.self, n.inc
	tcfg.Cluster = n.cluster.ClusterID
	tcfg.Secret = n.secret
	tcfg.Listen = listen
	tcfg.Peers = peers
	tcfg.Bind = bindHost(self.Bind)
	tcfg.Mark = self.Mark
	tcfg.Handler = handler{n}
	tr, err := wire.NewTCP(tcfg)
	if err != nil {
		return fmt.Errorf("node %d: %w", n.self, err)
	}
	n.tr = tr
	// Deferred in this order so that they run in reverse: the loop is over (done closed, so that
	// a control request waiting for it is answered at once and Close does not wait for it), then
	// the timers stop, then the transport closes.
	defer tr.Close()
	defer n.halt()
	defer n.finish(nil)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)

	n.post(n.open)
	if n.opt.Orders != nil {
		go n.readOrders(n.opt.Orders)
	}
	ppid := os.Getppid()
	// Without a parent-death signal (a node started by hand, or not on Linux) the node looks for
	// its parent four times a second; with one, never.
	var parentC <-chan time.Time
	if !parentWatched() {
		parent := time.NewTicker(250 * time.Millisecond)
		defer parent.Stop()
		parentC = parent.C
	}
	for {
		select {
		case f := <-n.inbox:
			f()
		case s := <-sigs:
			n.terminate(s.String())
		case <-parentC:
			if os.Getppid() != ppid {
				n.stop("launcher gone")
				return nil
			}
		case <-ctx.Done():
			n.stop("context done")
			return nil
		case <-n.done:
			return n.exitErr
		}
	}
}

// open dials the topology neighbours, starts the heartbeat and stats clocks, and announces
// readiness once the links are up.
func (n *node) open() {
	n.origin = n.clk.Now()
	n.tr.Connect(n.links)
	n.hb = startTicker(&n.clk, n.cluster.Heartbeat.D(), n.det.beat)
	n.statsT = startTicker(n.w, n.opt.StatsEvery, func() {
		if n.begun {
			n.emitStats()
		}
	})
	n.awaitLinks(n.w.Now().Add(300 * time.Millisecond))
}

// halt stops every clock of the node: its loop is over.
func (n *node) halt() {
	if n.hb != nil {
		n.hb.stop()
	}
	if n.statsT != nil {
		n.statsT.stop()
	}
	for name, t := range n.timers {
		t.Stop()
		delete(n.timers, name)
	}
	n.det.stopProbes()
	n.net.close()
}

// finish ends the node: the loop returns (a process) or the incarnation ends (the simulator).
func (n *node) finish(err error) {
	if n.finished {
		return
	}
	n.finished = true
	if err != nil && n.exitErr == nil {
		n.exitErr = err
	}
	close(n.done)
	if n.onExit != nil {
		n.onExit(n.exitErr)
	}
}

func bindHost(bind string) string {
	if bind == "" {
		return ""
	}
	for i := len(bind) - 1; i >= 0; i-- {
		if bind[i] == ':' {
			return bind[:i]
		}
	}
	return bind
}

// awaitLinks waits until the links to the topology neighbours are up (a first incarnation) or have
// been tried until deadline (a restart, whose neighbours may be dead); then it announces readiness
// and begins a restarted incarnation at once (unless told to await begin). It checks whenever a
// link comes up, and every 50 ms besides: polling every few ms, a thousand nodes waiting for their
// neighbours to be spawned woke half a million times a second and slowed the spawning they waited
// for.
func (n *node) awaitLinks(deadline time.Time) {
	n.awaiting, n.linksBy = true, deadline
	n.checkLinks()
}

func (n *node) checkLinks() {
	if !n.awaiting || n.finished {
		return
	}
	up := true
	for _, p := range n.links {
		if !n.tr.LinkUp(p) {
			up = false
			break
		}
	}
	if !up && (n.inc == 1 || n.w.Now().Before(n.linksBy)) {
		if !n.linksPoll { // one poll at a time, however many links come up meanwhile
			wait := 50 * time.Millisecond
			if n.inc > 1 {
				wait = min(wait, max(n.linksBy.Sub(n.w.Now()), time.Millisecond))
			}
			n.linksPoll = true
			n.w.After(wait, func() {
				n.linksPoll = false
				n.checkLinks()
			})
		}
		return
	}
	n.awaiting = false
	if n.ready != nil {
		n.ready()
	}
	if (n.inc > 1 && !n.opt.AwaitBegin) || n.opt.Begin {
		n.begin()
	}
}

// post queues f to run on the event loop.
func (n *node) post(f func()) { n.w.Post(f) }

// beginAt begins at Unix ns at (on this host's clock), or at once when at is 0 or past. A repeated
// begin (the launcher retries) changes nothing once one is scheduled or done.
func (n *node) beginAt(at int64) {
	if n.begun || n.beginArmed {
		return
	}
	if d := time.Duration(at - n.w.Now().UnixNano()); at > 0 && d > 0 {
		n.beginArmed = true
		n.w.After(d, n.begin)
		return
	}
	n.begin()
}

func (n *node) begin() {
	if n.begun {
		return
	}
	if n.stopping || n.finished {
		return
	}
	n.begun = true
	n.emit(&logs.Event{Ev: logs.EvStart, Algo: n.cluster.Algo, Peers: n.links, Pid: n.pid})
	n.step(election.Input{Kind: election.InStart})
	n.det.startProbes()
	for _, p := range n.peers {
		if n.det.linkDown[p] && !n.det.probing() {
			n.det.byLink[p], n.det.brokeAt[p] = true, n.w.Now()
			n.det.suspect(p, "link down")
		}
	}
	early := n.early
	n.early = nil
	for _, f := range early {
		f()
	}
}

// lingerAfterStop is how long a stopping node keeps its sockets open after its last messages
// left: the peers read the goodbye before the links break (the broken link would otherwise race it
// to their detectors).
const lingerAfterStop = 20 * time.Millisecond

// terminate is the orderly stop (SIGTERM): the machine's last word (InStop: RSDP broadcasts
// close), a flush of what it sent, a short linger, then the stop event, and the node is over.
func (n *node) terminate(reason string) {
	if n.stopping || n.finished {
		return
	}
	if !n.begun {
		n.stop(reason)
		n.finish(nil)
		return
	}
	n.step(election.Input{Kind: election.InStop})
	n.stopping = true
	if f, ok := n.tr.(interface{ Flush(time.Duration) }); ok {
		f.Flush(200 * time.Millisecond)
	}
	n.w.After(lingerAfterStop, func() {
		n.stop(reason)
		n.finish(nil)
	})
}

func (n *node) stop(reason string) {
	if n.finished {
		return
	}
	if n.begun {
		n.emitStats()
	}
	n.emit(&logs.Event{Ev: logs.EvStop, Reason: reason})
}
