package node

import (
	"time"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// Simulated is one incarnation of a node that the simulator runs: this package's node — event loop
// handlers, failure detector, link rules, lifecycle, event log — over a World, a transport and an
// event sink the simulator gives it. Only what a process gets from the operating system is left
// out: the signals come in as Terminate, a SIGKILL is Kill, the launcher's control connection is
// Control. Every method must be called on the node's event loop, i.e. from the simulator's single
// goroutine.
type Simulated struct{ n *node }

// SimOptions make one simulated incarnation.
type SimOptions struct {
	// ID and Inc are the node and its incarnation (1 for the first).
	ID, Inc int
	// Pid is what its start event and status replies name as its process ID.
	Pid int
	// AwaitBegin makes a restarted incarnation wait for the begin request as a first one does.
	AwaitBegin bool
	// StatsEvery is the interval of the periodic stats events (default 1s).
	StatsEvery time.Duration
	// World, Sink and Transport are its time and loop, its event log, and its network; Transport
	// is given the node's handler.
	World     World
	Sink      EventSink
	Transport func(h wire.Handler) wire.Transport
	// Ready is called once its links to its topology neighbours are up (the "ready" line).
	Ready func()
	// Exit is called once the incarnation is over by itself: an orderly stop, or its log failed.
	Exit func(err error)
}

// NewSimulated makes an incarnation of node o.ID of cluster c; Open starts it.
func NewSimulated(c *rundir.Cluster, o SimOptions) (*Simulated, error) {
	n, err := newCore(c, Options{ID: o.ID, Inc: o.Inc, StatsEvery: o.StatsEvery, AwaitBegin: o.AwaitBegin}, o.Sink, o.Pid)
	if err != nil {
		return nil, err
	}
	n.w, n.ready, n.onExit = o.World, o.Ready, o.Exit
	n.clk.base = n.w
	n.tr = o.Transport(handler{n})
	return &Simulated{n: n}, nil
}

// Open starts the incarnation as the process does once it listens: it dials its neighbours, starts
// its clocks, and announces readiness when its links are up.
func (s *Simulated) Open() { s.n.open() }

// Control answers a control request from the launcher (begin, status, rules, verdict).
func (s *Simulated) Control(req wire.CtlRequest) wire.CtlReply { return s.n.control(req) }

// Terminate is SIGTERM: the orderly stop, with the machine's last word.
func (s *Simulated) Terminate(reason string) { s.n.terminate(reason) }

// Kill is SIGKILL: nothing more is written, every clock stops. The simulator breaks its links.
func (s *Simulated) Kill() {
	n := s.n
	if n.finished {
		return
	}
	n.finished = true
	close(n.done)
	n.halt()
}

// Over tells whether the incarnation has ended (stopped, killed, or its log failed).
func (s *Simulated) Over() bool { return s.n.finished }

// Begun tells whether the node has begun (its start event is written).
func (s *Simulated) Begun() bool { return s.n.begun }

// Leader is the node's belief (0 for ⊥ or before it begun).
func (s *Simulated) Leader() int {
	if !s.n.begun {
		return 0
	}
	return s.n.m.Leader()
}

// Participant tells whether the node is running an election.
func (s *Simulated) Participant() bool { return s.n.begun && s.n.m.Participant() }

// Suspects tells whether the node's failure detector suspects peer.
func (s *Simulated) Suspects(peer int) bool { return s.n.det.suspected[peer] }

// Transport is the incarnation's transport.
func (s *Simulated) Transport() wire.Transport { return s.n.tr }
