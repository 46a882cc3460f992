// Package observer is the observer process of RSDP's failover topologies (Toliupa et al. 2024,
// sections 4.2 and 4.3): a process outside the cluster that probes every node every health interval
// h_o and tells the nodes, over their authenticated control endpoints, when one is gone (and when
// it is back).
//
// With one observer (options.detector "observer") a failed probe is a verdict at once. With M
// observers ("observers") their first probes are staggered by j·h_o/M, so that some observer probes
// every node every h_o/M on average, and an observer whose probe fails asks the others to agree
// before the cluster is told: it sends suspect to the other observers; each probes the node at once
// and answers with its vote; with a majority ⌈M/2⌉ of votes for "gone" (its own included) it sends
// decide to the others and gives the verdict to every node. Those are the paper's three rounds of
// M−1 messages (eq. 29, when all M observers take part).
//
// A probe is a signed UDP datagram on a socket connected to the node's address; the node answers
// with an Ack at once. A node whose process is gone makes the kernel answer with ICMP port
// unreachable, which fails the probe at once; a paused or cut-off node fails it when the probe
// timeout runs out.
//
// Observer message kinds (election.Message over the observers' TCP mesh):
//
//	suspect  Cand: the node; Round: the asking observer's agreement number.
//	vote     Cand, Round: as in the suspect; Phase: 1 gone, 2 alive.
//	decide   Cand, Round: the node is gone.
//
// The observer writes its event log to observers/<id>.jsonl with the node log's schema: start,
// suspect (its own failed probe), trust (a node it held gone answers again), send and recv of the
// agreement, verdict (peer: the node; reason: "down" or "up"), stats and stop.
package observer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Message kinds of the observers' agreement.
const (
	KindSuspect = "suspect"
	KindVote    = "vote"
	KindDecide  = "decide"

	voteGone  = 1
	voteAlive = 2
)

// Options start one observer.
type Options struct {
	Dir   string
	ID    int
	Ready io.Writer // receives "ready <id> 1"; os.Stdout when nil
}

type observer struct {
	opt     Options
	cluster *rundir.Cluster
	secret  []byte
	self    int
	others  []int // the other observers
	nodes   []rundir.Node
	h, pt   time.Duration
	offset  time.Duration
	quorum  int

	tr    *wire.TCP
	log   *logs.Writer
	inbox chan func()
	lc    uint64
	seq   uint64
	begun bool
	// onBegin wakes the loop's probe schedule at the launcher's begin.
	onBegin func()

	down    map[int]bool // nodes held gone (verdict given or decided)
	probing map[int]bool // a probe of the node is in flight
	round   int
	asks    map[int]*ask // this observer's open agreements, by round
	stats   logs.Stats
}

// ask is an open agreement on node p.
type ask struct {
	p           int
	gone, alive int
	voted       map[int]bool
	done        bool
}

// Run runs the observer until SIGTERM, ctx is done or its parent goes away.
func Run(ctx context.Context, opt Options) error {
	o, err := newObserver(opt)
	if err != nil {
		return err
	}
	defer o.log.Close()
	return o.run(ctx)
}

func newObserver(opt Options) (*observer, error) {
	c, err := rundir.Load(opt.Dir)
	if err != nil {
		return nil, err
	}
	me, ok := c.Observer(opt.ID)
	if !ok {
		var ids []int
		for _, x := range c.Observers {
			ids = append(ids, x.ID)
		}
		return nil, fmt.Errorf("observer %d is not in %s/cluster.json (observers: %v)", opt.ID, opt.Dir, ids)
	}
	mode, h, pt, err := c.Detector()
	if err != nil {
		return nil, err
	}
	if mode != rundir.DetectorObserver && mode != rundir.DetectorObservers {
		return nil, fmt.Errorf("cluster.json: detector %q has no observers", mode)
	}
	secret, err := c.Key()
	if err != nil {
		return nil, err
	}
	if opt.Ready == nil {
		opt.Ready = os.Stdout
	}
	if err := os.MkdirAll(filepath.Join(opt.Dir, rundir.ObserversDir), 0o755); err != nil {
		return nil, err
	}
	w, err := logs.OpenWriter(rundir.ObserverLog(opt.Dir, opt.ID))
	if err != nil {
		return nil, err
	}
	o := &observer{opt: opt, cluster: c, secret: secret, self: me.ID, nodes: c.Nodes, h: h, pt: pt,
		quorum: election.QuorumOf(len(c.Observers)), log: w, inbox: make(chan func(), 1024),
		down: map[int]bool{}, probing: map[int]bool{}, asks: map[int]*ask{}}
	for j, x := range c.Observers {
		if x.ID == me.ID {
			o.offset = time.Duration(j) * h / time.Duration(len(c.Observers))
		} else {
			o.others = append(o.others, x.ID)
		}
	}
	return o, nil
}

func (o *observer) run(ctx context.Context) error {
	me, _ := o.cluster.Observer(o.self)
	peers := map[int]string{}
	for _, x := range o.cluster.Observers {
		if x.ID != o.self {
			peers[x.ID] = x.Addr
		}
	}
	cfg := wire.DefaultTCPConfig()
	cfg.Self, cfg.Inc, cfg.Cluster, cfg.Secret = o.self, 1, o.cluster.ClusterID, o.secret
	cfg.Listen, cfg.Peers, cfg.Handler = me.Addr, peers, handler{o}
	tr, err := wire.NewTCP(cfg)
	if err != nil {
		return fmt.Errorf("observer %d: %w", o.self, err)
	}
	o.tr = tr
	defer tr.Close()
	tr.Connect(o.others)

	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	fmt.Fprintf(o.opt.Ready, "ready %d 1\n", o.self)

	ppid := os.Getppid()
	parent := time.NewTicker(250 * time.Millisecond)
	defer parent.Stop()
	stats := time.NewTicker(time.Second)
	defer stats.Stop()
	var tick <-chan time.Time
	var ticker *time.Ticker
	start := make(chan struct{}, 1)
	o.onBegin = func() { start <- struct{}{} }
	for {
		select {
		case f := <-o.inbox:
			f()
		case <-start:
			// the first probe round at this observer's offset, then every h_o
			time.AfterFunc(o.offset, func() {
				o.post(func() {
					ticker = time.NewTicker(o.h)
					tick = ticker.C
					o.probeAll()
				})
			})
		case <-tick:
			o.probeAll()
		case <-stats.C:
			if o.begun {
				o.emitStats()
			}
		case s := <-sigs:
			o.stop(s.String(), ticker)
			return nil
		case <-parent.C:
			if os.Getppid() != ppid {
				o.stop("launcher gone", ticker)
				return nil
			}
		case <-ctx.Done():
			o.stop("context done", ticker)
			return nil
		}
	}
}

func (o *observer) stop(reason string, t *time.Ticker) {
	if t != nil {
		t.Stop()
	}
	if o.begun {
		o.emitStats()
	}
	o.emit(&logs.Event{Ev: logs.EvStop, Reason: reason})
}

func (o *observer) post(f func()) {
	select {
	case o.inbox <- f:
	default:
		go func() { o.inbox <- f }()
	}
}

func (o *observer) emit(e *logs.Event) {
	o.lc++
	e.TS, e.Node, e.Inc, e.LC = time.Now().UnixNano(), o.self, 1, o.lc
	_ = o.log.Write(e)
}

func (o *observer) emitStats() {
	s := o.stats
	o.emit(&logs.Event{Ev: logs.EvStats, Stats: &s})
}

// begin starts probing (the launcher's begin request).
func (o *observer) begin() {
	if o.begun {
		return
	}
	o.begun = true
	o.emit(&logs.Event{Ev: logs.EvStart, Algo: "observer", Peers: o.others, Pid: os.Getpid()})
	if o.onBegin != nil {
		o.onBegin()
	}
}

// probeAll probes every node once; results come back to the loop.
func (o *observer) probeAll() {
	for _, n := range o.nodes {
		o.probe(n, func(ok bool, why string) { o.probed(n.ID, ok, why) })
	}
}

// probe sends one probe to node n and calls done on the loop with the outcome.
func (o *observer) probe(n rundir.Node, done func(ok bool, why string)) {
	if o.probing[n.ID] {
		return
	}
	o.probing[n.ID] = true
	o.seq++
	seq := o.seq
	o.stats.HeartbeatsSent++
	go func() {
		ok, why := o.roundTrip(n, seq)
		o.post(func() {
			o.probing[n.ID] = false
			if ok {
				o.stats.HeartbeatsRecv++
			}
			done(ok, why)
		})
	}()
}

// roundTrip sends probe seq to n on a socket of its own, connected to the node's address (so that
// the kernel's port-unreachable answer for a dead node reaches it), and waits up to the probe
// timeout for the answer.
func (o *observer) roundTrip(n rundir.Node, seq uint64) (bool, string) {
	a, err := net.ResolveUDPAddr("udp", n.Addr)
	if err != nil {
		return false, fmt.Sprintf("resolve node %d (%s): %v", n.ID, n.Addr, err)
	}
	c, err := net.DialUDP("udp", nil, a)
	if err != nil {
		return false, fmt.Sprintf("probe socket to node %d: %v", n.ID, err)
	}
	defer c.Close()
	b, err := wire.EncodeDatagram(o.secret, &wire.Datagram{Cluster: o.cluster.ClusterID, From: o.self, Inc: 1, Seq: seq})
	if err != nil {
		return false, err.Error()
	}
	deadline := time.Now().Add(o.pt)
	if _, err := c.Write(b); err != nil {
		return false, "probe: " + err.Error()
	}
	buf := make([]byte, wire.MaxDatagram)
	for {
		_ = c.SetReadDeadline(deadline)
		k, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return false, fmt.Sprintf("probe unanswered for %v", o.pt)
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				return false, "probe refused: the node's port is closed"
			}
			return false, "probe: " + err.Error()
		}
		d, err := wire.DecodeDatagram(o.secret, o.cluster.ClusterID, buf[:k])
		if err == nil && d.Ack && d.From == n.ID && d.Seq == seq {
			return true, ""
		}
		// garbage or a stray datagram: keep waiting for ours
	}
}

// probed handles the outcome of a periodic probe of node p.
func (o *observer) probed(p int, ok bool, why string) {
	switch {
	case ok && o.down[p]:
		delete(o.down, p)
		o.emit(&logs.Event{Ev: logs.EvTrust, Peer: p})
		o.tell(nil, []int{p})
	case !ok && !o.down[p]:
		o.emit(&logs.Event{Ev: logs.EvSuspect, Peer: p, Reason: why})
		if len(o.others) == 0 {
			o.down[p] = true
			o.tell([]int{p}, nil)
			return
		}
		o.askOthers(p)
	}
}

// askOthers opens an agreement on p among the observers.
func (o *observer) askOthers(p int) {
	for _, a := range o.asks {
		if a.p == p && !a.done {
			return
		}
	}
	o.round++
	a := &ask{p: p, gone: 1, voted: map[int]bool{o.self: true}}
	r := o.round
	o.asks[r] = a
	for _, q := range o.others {
		o.send(q, election.Message{Kind: KindSuspect, Cand: p, Round: r})
	}
	// votes that have not come by then are not waited for: a later probe asks again
	time.AfterFunc(2*o.pt+100*time.Millisecond, func() { o.post(func() { delete(o.asks, r) }) })
}

func (o *observer) send(to int, m election.Message) {
	o.seq++
	m.ID = fmt.Sprintf("%d.1.%d", o.self, o.seq)
	o.emit(&logs.Event{Ev: logs.EvSend, To: to, Msg: &m})
	o.stats.MsgsSent++
	if err := o.tr.Send(to, &wire.Envelope{Kind: wire.KindMsg, LC: o.lc, Msg: m}); err != nil {
		o.stats.Drops++
		o.emit(&logs.Event{Ev: logs.EvDrop, To: to, Msg: &m, Reason: err.Error()})
	}
}

// recv handles an agreement message from another observer.
func (o *observer) recv(from int, env *wire.Envelope) {
	if env.LC > o.lc {
		o.lc = env.LC
	}
	m := env.Msg
	o.stats.MsgsRecv++
	o.emit(&logs.Event{Ev: logs.EvRecv, From: from, Msg: &m})
	if !slices.Contains(o.others, from) {
		return
	}
	n, ok := o.cluster.Node(m.Cand)
	if !ok {
		return
	}
	switch m.Kind {
	case KindSuspect:
		o.probingFor(n, func(alive bool, why string) {
			v := voteGone
			if alive {
				v = voteAlive
			}
			o.send(from, election.Message{Kind: KindVote, Cand: m.Cand, Round: m.Round, Phase: v})
		})
	case KindVote:
		a := o.asks[m.Round]
		if a == nil || a.done || a.p != m.Cand || a.voted[from] {
			return
		}
		a.voted[from] = true
		if m.Phase == voteGone {
			a.gone++
		} else {
			a.alive++
		}
		if a.gone >= o.quorum {
			a.done = true
			if !o.down[a.p] {
				o.down[a.p] = true
				for _, q := range o.others {
					o.send(q, election.Message{Kind: KindDecide, Cand: a.p, Round: m.Round})
				}
				o.tell([]int{a.p}, nil)
			}
		}
	case KindDecide:
		o.down[m.Cand] = true
	}
}

// probingFor probes n now (outside the periodic rounds) for another observer's question.
func (o *observer) probingFor(n rundir.Node, done func(alive bool, why string)) {
	o.seq++
	seq := o.seq
	o.stats.HeartbeatsSent++
	go func() {
		ok, why := o.roundTrip(n, seq)
		o.post(func() { done(ok, why) })
	}()
}

// tell gives a verdict to every node but those it is about, over their control endpoints.
func (o *observer) tell(down, up []int) {
	for _, p := range down {
		o.emit(&logs.Event{Ev: EvVerdict, Peer: p, Reason: "down"})
	}
	for _, p := range up {
		o.emit(&logs.Event{Ev: EvVerdict, Peer: p, Reason: "up"})
	}
	req := wire.CtlRequest{Op: wire.CtlVerdict, Down: down, Up: up, By: o.self}
	body, err := wire.EncodeCtl(req)
	if err != nil {
		return
	}
	for _, n := range o.nodes {
		if slices.Contains(down, n.ID) {
			continue
		}
		go func(n rundir.Node) {
			cc, err := wire.DialControl(n.Addr, o.cluster.ClusterID, o.secret, 2*time.Second)
			if err != nil {
				return // a node that cannot be reached hears from its own session instead
			}
			defer cc.Close()
			_, _ = cc.Call(body)
		}(n)
	}
}

// EvVerdict is the observer log's event for a verdict given to the cluster.
const EvVerdict = logs.EvVerdict

type handler struct{ o *observer }

func (h handler) Message(from, inc int, env *wire.Envelope) {
	if env.Kind != wire.KindMsg {
		return
	}
	h.o.post(func() { h.o.recv(from, env) })
}
func (h handler) Datagram(from string, d wire.Datagram)         {}
func (h handler) Drop(peer int, env *wire.Envelope, why string) {}
func (h handler) Link(peer int, up bool, err error)             {}
func (h handler) Control(body []byte) []byte {
	req, err := wire.DecodeCtlRequest(body)
	reply := wire.CtlReply{Node: h.o.self, Inc: 1, Pid: os.Getpid()}
	if err != nil {
		reply.Error = err.Error()
	} else {
		ch := make(chan wire.CtlReply, 1)
		h.o.post(func() {
			r := reply
			switch req.Op {
			case wire.CtlBegin:
				h.o.begin()
			case wire.CtlStatus, wire.CtlRules:
			default:
				r.Error = fmt.Sprintf("unknown control op %q for an observer (accepted: %s, %s)", req.Op, wire.CtlStatus, wire.CtlBegin)
			}
			r.Begun = h.o.begun
			ch <- r
		})
		select {
		case reply = <-ch:
		case <-time.After(5 * time.Second):
			reply.Error = "observer loop did not answer in 5s"
		}
	}
	b, _ := wire.EncodeCtl(reply)
	return b
}
