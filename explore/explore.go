package explore

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v3/mem"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
	"github.com/leaderlab/leaderlab/internal/field"
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
	// MaxMemory is the memory the search may take, in bytes (0: 60% of the machine's): past
	// their shares of it, the levels, the fingerprints seen, the records of the paths and the
	// graph walked spill to disk and the search goes on (checker.Options.MaxMemory); it stops
	// only if what does not spill (the machines' distinct states, the messages, the step caches)
	// outgrows it. At least MinMemory.
	MaxMemory uint64
	// SpillDir is where the spill files go, in a directory of their own removed at the end ("":
	// os.TempDir()).
	SpillDir string
	// Workers is how many goroutines expand each level of the search (0: runtime.NumCPU()). The
	// states, violations and traces found are the same whatever their number.
	Workers int
	// Bitstate, when not 0, is the size in bytes of a bitstate search's bit array (Holzmann's
	// bitstate hashing): a partial search, for what is beyond memory and disk, that says how
	// much it may have missed; cycles are not judged. At most MaxMemory.
	Bitstate uint64
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

// DefaultMaxStates bounds a search that was given no bound.
const DefaultMaxStates = 20_000_000

// MinMemory is the least Config.MaxMemory: what the search's tables need before anything spills,
// and the runtime's own.
const MinMemory = 16 << 20

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
	if c.MaxMemory != 0 && c.MaxMemory < MinMemory {
		return alg, bad(&field.Error{Field: "explore.Config.MaxMemory", Value: c.MaxMemory, Want: fmt.Sprintf("want at least %d bytes (%d MB): the search's own tables need that much before anything spills (0 for 60%% of the machine's memory)", MinMemory, MinMemory>>20)})
	}
	if c.Workers < 0 {
		return alg, bad(&field.Error{Field: "explore.Config.Workers", Value: c.Workers, Want: "want a number of goroutines, 1 or more (0 for the machine's cores)"})
	}
	if c.Workers == 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Bitstate != 0 && c.MaxMemory != 0 && c.Bitstate > c.MaxMemory {
		return alg, bad(&field.Error{Field: "explore.Config.Bitstate", Value: c.Bitstate, Want: fmt.Sprintf("want a bit array no larger than explore.Config.MaxMemory (%d bytes)", c.MaxMemory), Also: []string{"explore.Config.MaxMemory"}})
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

// Explorer searches one configuration's state space: package checker's search over the model of
// the cluster (model.go).
type Explorer struct {
	m *model
}

// SetStop sets Config.Stop.
func (x *Explorer) SetStop(stop <-chan struct{}) { x.m.cfg.Stop = stop }

// New checks cfg and prepares a search.
func New(cfg Config) (*Explorer, error) {
	alg, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	if cfg.MaxMemory == 0 {
		if vm, err := mem.VirtualMemory(); err == nil {
			cfg.MaxMemory = vm.Total / 10 * 6
		}
		if cfg.Bitstate > cfg.MaxMemory {
			cfg.MaxMemory = cfg.Bitstate
		}
	}
	m, err := newModel(cfg, alg)
	if err != nil {
		return nil, err
	}
	return &Explorer{m: m}, nil
}

// Run searches breadth-first, so that the first violation found has a shortest trace, and replays
// the path of each violation found into its trace.
func (x *Explorer) Run() *Result {
	start := time.Now()
	m := x.m
	m.maxInFlight, m.mostMessages, m.forks = 0, 0, nil
	defer m.shareHooks()()
	c := m.cfg
	o := checker.Run(m, checker.Options{MaxStates: c.MaxStates, MaxDepth: c.MaxDepth, MaxMemory: c.MaxMemory,
		SpillDir: c.SpillDir, Workers: c.Workers, Bitstate: c.Bitstate,
		Reduce: !c.NoReduction, Progress: c.Progress, Stop: c.Stop})
	inFlight, most := m.figures()
	r := &Result{Config: c, Bound: m.bound, HasBound: m.hasBound, NotPromised: m.promised, Synchronous: m.alg.Synchronous,
		Distinct: o.Distinct, Transitions: o.Transitions, Depth: o.Depth, Quiescent: o.Quiescent,
		MaxInFlight: inFlight, MostMessages: most, Complete: o.Complete, StoppedBy: o.StoppedBy,
		CycleCheck: o.CycleCheck, sorted: o.Sorted, HeapBytes: o.HeapBytes, Broken: o.Broken,
		Workers: o.Workers, SpillPeak: o.SpillPeak, SpillError: o.SpillError,
		BitsSet: o.BitsSet, Omission: o.Omission, Lost: o.Lost}
	for _, f := range o.Violations {
		r.Violations = append(r.Violations, m.traced(f.Violation, f))
	}
	if o.Deepest != nil {
		r.Deepest = m.traced(&checker.Violation{Property: "deepest"}, o.Deepest)
	}
	if o.BrokenAt != nil {
		r.BrokenAt = m.traced(&checker.Violation{Property: "route", Detail: o.Broken}, o.BrokenAt)
	}
	r.Elapsed = time.Since(start)
	return r
}
