package explore

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"runtime"
	"strings"
	"time"
	"unsafe"

	"github.com/shirou/gopsutil/v3/mem"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/rundir"
)

// Timer semantics.
const (
	// TimersTimely: a timeout is longer than any message's delay. A timer fires only when no
	// message is in flight, and timers fire in the order of their deadlines. The assumption under
	// which Bully is correct (a synchronous system, in Garcia-Molina's words).
	TimersTimely = "timely"
	// TimersAsync: any armed timer may fire at any moment, before messages that would have
	// cancelled it: an asynchronous system, where no timeout can tell slow from dead.
	TimersAsync = "async"
)

// Crash targets.
const (
	CrashAny    = "any"
	CrashLeader = "leader"
)

// Config is one exploration.
type Config struct {
	// Algo is a registered algorithm (election.Names()).
	Algo string
	// Algorithm, when set, is explored instead of Algo's registered one, under Algo's name: an
	// algorithm made beside a test and never registered (the mutants of explore's tests).
	Algorithm *election.Algorithm
	// N is the number of nodes, IDs 1..N (1..MaxN).
	N int
	// Order is the ring placement (a permutation of 1..N); nil means ascending. Placement names it
	// for cluster.json ("" for the list itself).
	Order     []int
	Placement string
	// Initiators start the first election; nil means every node.
	Initiators []int
	// Options are the algorithm's settings by name, as cluster.json's options (FloodMax's sync and
	// rounds: election.OptSync, election.OptRounds).
	Options map[string]string
	// Crashes is how many nodes may crash (SIGKILL), each at any point; Restarts how many crashed
	// nodes may start again, each at any point after its crash.
	Crashes, Restarts int
	// CrashTargets says which nodes may crash: CrashAny (default) or CrashLeader, only a node that
	// believes itself the leader (Vinther's KillLeader, for comparing with its TLC figures).
	CrashTargets string
	// Partitions: one partition into two sides (any split), at any point, and its heal at any
	// point after.
	Partitions bool
	// Timers is TimersTimely (default) or TimersAsync.
	Timers string
	// MaxStates stops the search after this many distinct states (0: DefaultMaxStates).
	MaxStates int
	// MaxDepth bounds the search to the states within this many transitions of the start (0: no
	// bound): those are all explored and judged, and none beyond. Where paths that starve a link
	// make a counter climb for ever (an unbounded state space, however fair runs end), this is a
	// bound whose result can be stated: nothing within D transitions breaks a property.
	MaxDepth int
	// Heartbeat is the failure detector's heartbeat interval (default 50ms): the period of the
	// heartbeat rounds that carry the nodes' leader claims.
	Heartbeat time.Duration
	// Timeout is the failure detector's timeout from which Bully's T and T1 and the ring's stall
	// timer derive as in a run (default 200ms). Under timely timers only their order matters.
	Timeout time.Duration
	// MaxMemory stops the search when its heap reaches this many bytes (0: 60% of the machine's
	// memory), before the kernel's OOM killer would: the fingerprints and the frontier take some
	// hundreds of bytes a state (docs/explorer.md has the figures).
	MaxMemory uint64
	// NoReduction explores every interleaving, without partial-order reduction (for comparing
	// the two, and for checking the reduction itself).
	NoReduction bool
	// Progress, when set, gets a line every few seconds of search.
	Progress io.Writer
	// Stop, when closed, ends the search where it is (an interrupt): the result says what was
	// explored, as a bounded search's does. Explorer.SetStop sets it after New.
	Stop <-chan struct{}
}

// MaxN is the largest cluster the explorer takes: the detector's suspicions are a 64-bit set, and an
// exhaustive search beyond a dozen nodes does not end anyway.
const MaxN = 16

// DefaultMaxStates bounds a search that was given no bound (and Config.MaxMemory bounds it too).
const DefaultMaxStates = 20_000_000

// DefaultConfig is an exploration of algo among n nodes, every node an initiator, no faults,
// timely timers.
func DefaultConfig(algo string, n int) Config {
	return Config{Algo: algo, N: n, Timers: TimersTimely, Timeout: 200 * time.Millisecond, Heartbeat: 50 * time.Millisecond}
}

// Sentinel errors.
var (
	// ErrConfig wraps every error of a bad Config: the caller's input, to be fixed.
	ErrConfig = errors.New("explore: bad configuration")
)

func (c *Config) validate() (election.Algorithm, error) {
	bad := func(e error) error { return fmt.Errorf("%w: %w", ErrConfig, e) }
	alg, err := election.Lookup(c.Algo)
	if c.Algorithm != nil {
		alg, err = *c.Algorithm, nil
	}
	if err != nil {
		return alg, bad(&field.Error{Field: "explore.Config.Algo", Want: err.Error(), Err: err})
	}
	if c.Algo == "rsdp" {
		return alg, bad(&field.Error{Field: "explore.Config.Algo", Value: "rsdp", Want: fmt.Sprintf("not explorable yet: its sessions are paced by a clock that never stops (periodic probes and resyncs), so its state space has no end without an abstraction of time that it does not have (accepted: %s)", strings.Join(Explorable(), ", "))})
	}
	if c.N < 1 || c.N > MaxN {
		return alg, bad(&field.Error{Field: "explore.Config.N", Value: c.N, Want: fmt.Sprintf("want 1..%d nodes", MaxN)})
	}
	if c.Order != nil {
		if len(c.Order) != c.N {
			return alg, bad(&field.Error{Field: "explore.Config.Order", Value: c.Order, Want: fmt.Sprintf("want a ring order, a permutation of 1..%d", c.N)})
		}
		seen := make([]bool, c.N+1)
		for _, id := range c.Order {
			if id < 1 || id > c.N || seen[id] {
				return alg, bad(&field.Error{Field: "explore.Config.Order", Value: c.Order, Want: fmt.Sprintf("want a ring order, a permutation of 1..%d", c.N)})
			}
			seen[id] = true
		}
	}
	for _, id := range c.Initiators {
		if id < 1 || id > c.N {
			return alg, bad(&field.Error{Field: "explore.Config.Initiators", Value: id, Want: fmt.Sprintf("want IDs in 1..%d", c.N)})
		}
	}
	if c.Initiators != nil && len(c.Initiators) == 0 {
		return alg, bad(&field.Error{Field: "explore.Config.Initiators", Want: "none, so nobody would start an election (want at least one ID)"})
	}
	if c.Crashes < 0 || c.Crashes > c.N-1 {
		return alg, bad(&field.Error{Field: "explore.Config.Crashes", Value: c.Crashes, Want: fmt.Sprintf("want 0..%d (one node is left alive)", max(c.N-1, 0))})
	}
	if c.Restarts < 0 || c.Restarts > c.Crashes {
		return alg, bad(&field.Error{Field: "explore.Config.Restarts", Value: c.Restarts, Want: fmt.Sprintf("want 0..%d (a node restarts after it crashed, and explore.Config.Crashes is %d)", c.Crashes, c.Crashes), Also: []string{"explore.Config.Crashes"}})
	}
	switch c.CrashTargets {
	case "":
		c.CrashTargets = CrashAny
	case CrashAny, CrashLeader:
	default:
		return alg, bad(&field.Error{Field: "explore.Config.CrashTargets", Value: fmt.Sprintf("%q", c.CrashTargets), Want: "want any or leader"})
	}
	switch c.Timers {
	case "":
		c.Timers = TimersTimely
	case TimersTimely, TimersAsync:
	default:
		return alg, bad(&field.Error{Field: "explore.Config.Timers", Value: fmt.Sprintf("%q", c.Timers), Want: "want timely or async"})
	}
	if c.MaxStates < 0 {
		return alg, bad(&field.Error{Field: "explore.Config.MaxStates", Value: c.MaxStates, Want: fmt.Sprintf("want a positive count (0 for the default, %d)", DefaultMaxStates)})
	}
	if c.MaxStates == 0 {
		c.MaxStates = DefaultMaxStates
	}
	if c.MaxDepth < 0 {
		return alg, bad(&field.Error{Field: "explore.Config.MaxDepth", Value: c.MaxDepth, Want: "want a number of transitions (0 for no bound)"})
	}
	if c.Timeout == 0 {
		c.Timeout = 200 * time.Millisecond
	}
	if c.Heartbeat == 0 {
		c.Heartbeat = 50 * time.Millisecond
	}
	if c.Heartbeat < 0 {
		return alg, bad(&field.Error{Field: "explore.Config.Heartbeat", Value: c.Heartbeat, Want: "want a positive duration"})
	}
	if c.Timeout < 0 {
		return alg, bad(&field.Error{Field: "explore.Config.Timeout", Value: c.Timeout, Want: "want a positive duration"})
	}
	if err := alg.Accepts(alg.Topologies[0]); err != nil {
		return alg, bad(err)
	}
	if err := alg.ValidOptions(c.Options, c.N); err != nil {
		return alg, bad(err)
	}
	return alg, nil
}

// Explorable lists the algorithms the explorer takes.
func Explorable() []string {
	var out []string
	for _, n := range election.Names() {
		if n != "rsdp" {
			out = append(out, n)
		}
	}
	return out
}

// Explorer searches one configuration's state space.
type Explorer struct {
	cfg       Config
	alg       election.Algorithm
	n         int
	ids, ring []int
	initiator []bool
	timings   rundir.Timings
	topology  string
	bound     int
	hasBound  bool
	counted   map[string]bool
	mplan     *plan
	msgPlan   *plan
	enc       encoder
	// msgs are the distinct messages sent, numbered by intern; msgIndex finds one by its encoding,
	// which menc makes.
	msgs       []election.Message
	msgIndex   map[string]uint32
	menc       encoder
	copier     copier
	trace      func(id int, in election.Input, effs []election.Effect)
	promised   map[string]string // property -> why it is not promised under this configuration
	initiators []int
	timerNames []string
	hbScratch  state
	memLimit   uint64
	lookahead  int // rounds of heartbeats looked ahead: the machines' longest patience
	// onDetect is told of the detector's reminders as they are made (the trace writer replays them)
	onDetect    func(id, peer int, suspect bool, reason string)
	onQuiescent func(*state)                          // tests: every quiescent state found
	afterStep   func(id, inc int, m election.Machine) // tests: every machine stepped (not from the cache)
	cache       map[fingerprint]*stepResult
	cacheHits   int64
	scratch     state
	effs        []election.Effect
	// pos is each ID's place on the ring (rings only); breach a send that broke the reduction's
	// assumption (see route), "" while none has.
	pos    [MaxN + 1]int
	oneWay bool // a one-way ring
	breach string
	// pre is the state the transition being made starts from, preOne its oneEpoch (0 not known
	// yet, 1 true, 2 false); stepFrom the sender of the message being delivered (0: none).
	pre      *state
	preOne   int8
	stepFrom int
	// recvID is the number (intern) of the message being delivered, plus one (0: none): the step
	// cache keys a delivery by it rather than by the message's encoding.
	recvID uint32
	// reactive: the machines tell what a message may make them send (election.Reactor), which the
	// reduction on a mesh rests on. react is what the receiver declared for the message being
	// delivered (ReactAny in any other transition), reactNode and reactFrom its receiver and sender.
	reactive bool
	// newsReactive: they also tell what the news of a crash may make them send
	// (election.NewsReactor), and the configuration lets the reduction lean on it (newsReaction).
	newsReactive         bool
	ahead                []election.Message // newsReaction's buffer
	react                election.Reaction
	reactNode, reactFrom int
	reactNews            bool // what is being delivered is the news that reactFrom is gone
	// parts are the nodes and links of the states stowed in the search's levels; pool hands out
	// the links of applyScratch's transitions.
	parts parts
	pool  linkPool
}

// SetStop sets Config.Stop.
func (x *Explorer) SetStop(stop <-chan struct{}) { x.cfg.Stop = stop }

// New checks cfg and prepares a search.
func New(cfg Config) (*Explorer, error) {
	alg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	x := &Explorer{cfg: cfg, alg: alg, n: cfg.N, topology: alg.Topologies[0], counted: map[string]bool{}, cache: map[fingerprint]*stepResult{}}
	for i := 1; i <= cfg.N; i++ {
		x.ids = append(x.ids, i)
	}
	x.ring = cfg.Order
	if x.ring == nil {
		x.ring = append([]int(nil), x.ids...)
	}
	if x.topology == "mesh" {
		x.ring = nil
	}
	for i, id := range x.ring {
		x.pos[id] = i
	}
	x.oneWay = x.topology == "ring"
	x.initiator = make([]bool, cfg.N+1)
	x.initiators = cfg.Initiators
	if x.initiators == nil {
		x.initiators = x.ids
	}
	for _, id := range x.initiators {
		x.initiator[id] = true
	}
	x.memLimit = cfg.MaxMemory
	if x.memLimit == 0 {
		if vm, err := mem.VirtualMemory(); err == nil {
			x.memLimit = vm.Total / 10 * 6
		}
	}
	x.cfg.MaxMemory = x.memLimit
	x.timings.Derive(cfg.Timeout)
	patience := max(x.timings.ElectionTimeout, cfg.Timeout)
	x.lookahead = int((patience+cfg.Heartbeat-1)/cfg.Heartbeat) + 1
	for _, k := range alg.Kinds {
		x.counted[k] = true
	}
	for _, k := range alg.Announce {
		x.counted[k] = true
	}
	switch {
	case alg.EdgeBound != nil:
		edges, err := election.Config{IDs: x.ids, Ring: x.ring, Topology: x.topology}.Graph()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrConfig, err)
		}
		x.bound, x.hasBound = alg.EdgeBound(x.ids, edges, cfg.Options)
	case alg.Bound != nil:
		x.bound, x.hasBound = alg.Bound(cfg.N, countInitiators(x.initiator))
	}
	m, err := x.newMachine(1, 1)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if x.mplan, err = machinePlan(reflect.TypeOf(m)); err != nil {
		return nil, err
	}
	x.msgPlan = planOf(reflect.TypeOf(election.Message{}))
	x.msgIndex = map[string]uint32{}
	x.promised = x.limits()
	return x, nil
}

func countInitiators(in []bool) int {
	k := 0
	for _, b := range in {
		if b {
			k++
		}
	}
	return k
}

func (x *Explorer) newMachine(id, inc int) (election.Machine, error) {
	return x.alg.New(election.Config{
		Self: id, IDs: x.ids, Ring: x.ring, Topology: x.topology, Options: x.cfg.Options,
		Initiator: x.initiator[id], Incarnation: inc,
		ElectionTimeout: x.timings.ElectionTimeout, CoordinatorTimeout: x.timings.CoordinatorTimeout,
	})
}

// cloneMachine deep-copies a machine (see clone.go).
func (x *Explorer) cloneMachine(m election.Machine) election.Machine {
	x.copier.from, x.copier.to = x.copier.from[:0], x.copier.to[:0]
	p := x.copier.ptr(x.mplan.elem, ptrOf(m))
	return view(x.mplan, unsafe.Pointer(&p)).Interface().(election.Machine)
}

// ptrOf is the address of the struct a machine's interface value points at.
func ptrOf(m election.Machine) unsafe.Pointer { return reflect.ValueOf(m).UnsafePointer() }

func ptrOfMsg(m *election.Message) unsafe.Pointer { return unsafe.Pointer(m) }

// initial is the state after every node's start, in ID order, at time 0 (nodes begin at a common
// instant, as the launcher's begin makes them; a start sends but receives nothing, so their
// order changes nothing but the order of the links' contents, which are separate).
func (x *Explorer) initial() *state {
	s := &state{nodes: make([]*nodeState, x.n), links: make([]*link, x.n*x.n)}
	for id := 1; id <= x.n; id++ {
		m, err := x.newMachine(id, 1)
		if err != nil {
			panic(err) // New built node 1 from the same configuration
		}
		x.setNode(s, id-1, &nodeState{m: m, inc: 1})
		_, ok := m.(election.Reactor)
		x.reactive = ok && x.ring == nil
		_, news := m.(election.NewsReactor)
		x.newsReactive = x.reactive && news && x.cfg.Timers != TimersAsync && x.cfg.Restarts == 0
	}
	x.react = election.ReactAny
	for id := 1; id <= x.n; id++ {
		x.step(s, id, election.Input{Kind: election.InStart})
	}
	s.seal()
	return s
}

// memStats is the heap in use now, for the figures.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}
