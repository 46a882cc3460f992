package check

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// Options tune a check. A zero field takes cluster.json's value, or a default when cluster.json
// states none (a warning in the verdict says so).
type Options struct {
	// Grace is how long two live nodes may both believe in themselves (uniqueness).
	Grace time.Duration
	// TerminationBound is how much running time an elect may take to end in a leader (termination).
	TerminationBound time.Duration
	// Settle is the quiet time the run must leave after its last fault for agreement to be judged.
	Settle time.Duration
	// Algorithm, when set, is the declaration the run is judged by instead of the registered one
	// of cluster.json's algo (an algorithm that was never registered: explore's test mutants).
	Algorithm *election.Algorithm
}

// Defaults for a cluster.json that states no value.
const (
	DefaultGrace            = 500 * time.Millisecond
	DefaultTerminationBound = 2 * time.Second
	// faultLag is how late a fault may land after its scheduled time and still count from it.
	faultLag      = 50 * time.Millisecond
	DefaultSettle = time.Second
)

// The properties, in the order the verdict lists them.
const (
	PropAgreement   = "agreement"
	PropUniqueness  = "uniqueness"
	PropTermination = "termination"
	PropIntegrity   = "integrity"
	PropComplexity  = "complexity"
)

// maxListed is how many problems a property's detail names before it says "and N more".
const maxListed = 5

// checker holds a run's model and the limits it is judged by, and what each property keeps of the
// run while it is played (streams.go).
type checker struct {
	*model
	grace, term, settle time.Duration
	alg                 election.Algorithm
	algOK               bool
	// undecided: agreement failed only because the live nodes did not agree yet at the end (no
	// wrong leader, no fault too close to the end, no cut in force, no declared limit).
	undecided bool
	// clocks are the clock faults' spans (clocks.go), once computed.
	clocks *[]clockSpan
	streams
}

// Check judges a run against DESIGN.md's properties and measures it. It never fails: what it cannot
// judge it says in the properties' details and the warnings. It judges a run in memory (the
// simulator's, a test's) as CheckStream judges a run directory.
func Check(run *logs.Run, opts Options) *Verdict {
	v, err := CheckStream(logs.StreamOf(run), opts)
	if err != nil {
		panic("check: a run in memory cannot be read: " + err.Error()) // its readers never fail
	}
	return v
}

// CheckStream judges a run read an event at a time (logs.OpenStream), in two passes over its logs,
// in memory bounded by its nodes, the messages in flight and its faults, not by its events. An
// error means its logs cannot be read: the error logs.ReadRun gives.
func CheckStream(s *logs.Stream, opts Options) (*Verdict, error) {
	m, err := newModel(s)
	if err != nil {
		return nil, err
	}
	c := &checker{model: m}
	c.detectStart()
	if err := m.readObservers(c); err != nil {
		return nil, err
	}
	// Every log has been read once, its lines checked: the vector clocks, the longest part of a
	// line, are passed over unread from here on.
	s.VC = logs.VCSkim
	// The options' warnings come after the model's last ones, which the play finds.
	modelWarn := c.warn
	c.warn = nil
	cl := &s.Run.Cluster
	c.grace = c.limit("grace", opts.Grace, cl.Grace.D(), DefaultGrace)
	c.term = c.limit("termination bound", opts.TerminationBound, cl.TerminationBound.D(), DefaultTerminationBound)
	c.settle = c.limit("settle", opts.Settle, cl.Settle.D(), DefaultSettle)
	alg, err := election.Lookup(cl.Algo)
	if opts.Algorithm != nil {
		alg, err = *opts.Algorithm, nil
	}
	if err != nil {
		c.warnf("%v: messages are not classified", err)
	}
	c.alg, c.algOK = alg, err == nil
	c.unknownEvents()
	optWarn := c.warn
	c.warn = modelWarn
	if err := c.play(); err != nil {
		return nil, err
	}
	c.unacknowledgedWarn()
	c.warn = append(c.warn, optWarn...)

	v := &Verdict{
		Algo:               cl.Algo,
		Nodes:              len(cl.Nodes),
		Seed:               cl.Seed,
		BeginNS:            c.begin,
		EndNS:              c.end,
		GraceMS:            roundMS(int64(c.grace), 1000),
		TerminationBoundMS: roundMS(int64(c.term), 1000),
		SettleMS:           roundMS(int64(c.settle), 1000),
	}
	agreement, leader := c.agreement()
	uniqueness, overlaps, windows, split := c.uniqueness()
	elections := c.elections()
	termination, openAtEnd := c.termination()
	v.Properties = []Property{agreement, uniqueness, termination, c.integrity(), c.complexity(elections)}
	pulses, sm, synchronous := c.pulses()
	if synchronous {
		v.Properties = append(v.Properties, pulses)
	}
	v.Leader = leader
	v.OK = true
	for _, p := range v.Properties {
		v.OK = v.OK && p.OK
	}
	v.Outcome = OutcomePass
	if !v.OK {
		v.Outcome = OutcomeFail
		if in := c.inconclusive(v.Properties, openAtEnd, elections); in != nil {
			v.Outcome, v.Reason, v.Inconclusive = OutcomeInconclusive, in.reason(), in
		}
	}
	v.Metrics = Metrics{
		Failovers:     c.failovers(),
		Elections:     make([]Election, len(elections)),
		Overlaps:      overlaps,
		SplitBrain:    windows,
		SplitBrainMS:  roundMS(split, 1000),
		PartitionedMS: roundMS(c.partitioned(), 1000),
		Heals:         c.heals(),
		NodeStats:     c.nodeStats(),
		Detections:    c.detections(),
		Observers:     c.observerStats(),
		Suspicions:    c.suspicions(),
		Sync:          sm,
	}
	for i, e := range elections {
		v.Metrics.Elections[i] = e.Election
	}
	v.Metrics.MessagesTotal, v.Metrics.DropsTotal = c.messagesTotal, c.dropsTotal
	c.faultsThatNeverBit()
	v.Warnings = append([]string{}, c.warn...)
	return v, nil
}

// limit picks an option, else cluster.json's value, else a default (with a warning).
func (c *checker) limit(name string, opt, cluster, def time.Duration) time.Duration {
	switch {
	case opt > 0:
		return opt
	case cluster > 0:
		return cluster
	}
	c.warnf("cluster.json states no %s: using %s", name, def)
	return def
}

// unknownEvents warns of the first event of each kind the contract does not know, in node order
// (the first pass found each log's).
func (c *checker) unknownEvents() {
	warned := map[string]bool{}
	for _, id := range c.ids {
		for _, u := range c.nodes[id].unknown {
			if !warned[u.ev] {
				c.warnf("%s: unknown ev %q (ignored)", u.where, u.ev)
				warned[u.ev] = true // once per kind
			}
		}
	}
}

// agreement: at the end, every live node believes the same ID, the highest live one, which believes
// in itself; and the run left the settle time after its last fault.
func (c *checker) agreement() (Property, *int) {
	p := Property{Name: PropAgreement}
	st := c.endState()
	var live []int
	for k, s := range st {
		if s.live() {
			live = append(live, c.ids[k])
		}
	}
	l, agreed := c.agreed(st)
	var leader *int
	if agreed {
		leader = &l
	}
	at := "at the end (" + c.rel(c.end) + ")"
	switch {
	case len(live) == 0:
		p.Detail = at + " no node is live"
	case !agreed:
		p.Detail = fmt.Sprintf("%s the live nodes do not agree on a live leader: %s", at, c.beliefs(st))
	case l != slices.Max(live):
		p.Detail = fmt.Sprintf("%s the live nodes follow %d, but the highest live ID is %d", at, l, slices.Max(live))
	default:
		p.OK = true
		p.Detail = fmt.Sprintf("%s all %d live nodes follow %d, the highest live ID", at, len(live), l)
	}
	var last *logs.ChaosRecord
	for j := range c.faults {
		if c.faults[j].TS <= c.end {
			last = &c.faults[j]
		}
	}
	if last != nil {
		// A fault counts from its scheduled time when it landed on time (the launcher refuses a
		// schedule that leaves less than settle, and a signal takes a few ms to send); a fault that
		// came late really left less quiet time.
		from := last.TS
		if sched := c.begin + last.At; last.At > 0 && from > sched && from-sched <= int64(faultLag) {
			from = sched
		}
		if from+int64(c.settle) > c.end {
			p.OK = false
			p.Detail = fmt.Sprintf("the run was too short to judge: its last fault (%s at %s) left %s before the end, and settle is %s; %s",
				describeOp(*last), c.rel(last.TS), fmtDur(c.end-last.TS), c.settle, p.Detail)
		}
	}
	tooShort := strings.HasPrefix(p.Detail, "the run was too short")
	if cut := c.cutAtEnd(); cut != "" {
		p.OK = false
		p.Detail = cut + "; " + p.Detail
	} else if !p.OK && !tooShort {
		p.Limit = c.agreementLimit()
		c.undecided = len(live) > 0 && !agreed && p.Limit == ""
	}
	return p, leader
}

// agreementLimit is the reason an agreement failure is the algorithm's declared limit (""; when it
// is not): a fault of a kind it declares was in force less than the limit's Recovery before the end,
// or, for the kind "crash", a node was killed or stopped at any time.
func (c *checker) agreementLimit() string {
	kinds, why := c.limitsOf(PropAgreement)
	if kinds["clock"] && c.clockBeyond(c.end-c.clockRecovery(), c.end+1) {
		return why
	}
	recovery := c.recoveryOf(PropAgreement)
	if len(kinds) == 0 || recovery == 0 {
		return ""
	}
	if kinds["crash"] {
		for _, op := range c.faults {
			if op.Op == logs.OpKill || op.Op == logs.OpStop {
				return why
			}
		}
	}
	if c.limitNearEnd {
		return why
	}
	return ""
}

// cutAtEnd says which partition or link drop is still in force at the end: agreement cannot be
// demanded of nodes that cannot hear each other. "" when none is.
func (c *checker) cutAtEnd() string {
	if c.endPt == nil {
		return ""
	}
	net := c.endPt.net
	parts, drops := map[int]bool{}, map[int]bool{}
	if net.unknown != 0 {
		parts[net.unknown-1] = true
	}
	for _, h := range net.at {
		if h.accept != nil {
			parts[h.part] = true
		}
		for _, k := range h.links {
			if j, ok := k[linkDrop]; ok {
				drops[j] = true
			}
		}
	}
	name := func(set map[int]bool) string {
		var out []string
		for _, j := range sortedKeys(set) {
			out = append(out, describeOp(c.faults[j])+" at "+c.rel(c.faults[j].TS))
		}
		return strings.Join(out, ", ")
	}
	var why []string
	if len(parts) > 0 {
		why = append(why, fmt.Sprintf("a partition is still in force at the end (%s); heal it before the settle window", name(parts)))
	}
	if len(drops) > 0 {
		what := "a link drop is"
		if len(drops) > 1 {
			what = "link drops are"
		}
		why = append(why, fmt.Sprintf("%s still in force at the end (%s); heal it before the settle window", what, name(drops)))
	}
	return strings.Join(why, "; ")
}

// beliefs renders the nodes' state: "1→4 2→⊥ 3:paused 5:dead".
func (c *checker) beliefs(st []nodeState) string {
	parts := make([]string, len(st))
	for k, s := range st {
		id := c.ids[k]
		switch {
		case s.inc == 0:
			parts[k] = fmt.Sprintf("%d:dead", id)
		case s.paused:
			parts[k] = fmt.Sprintf("%d:paused", id)
		case s.belief == 0:
			parts[k] = fmt.Sprintf("%d→⊥", id)
		default:
			parts[k] = fmt.Sprintf("%d→%d", id, s.belief)
		}
	}
	return strings.Join(parts, " ")
}

// nodeStats keeps each node's last stats event.
func (c *checker) nodeStats() []NodeStats {
	out := []NodeStats{}
	for _, id := range c.ids {
		if st := c.nodes[id].stats; st != nil {
			out = append(out, *st)
		}
	}
	return out
}

// listed joins problems for a detail, naming at most maxListed.
func listed(problems []string) string {
	if len(problems) <= maxListed {
		return strings.Join(problems, "; ")
	}
	return strings.Join(problems[:maxListed], "; ") + fmt.Sprintf("; and %d more", len(problems)-maxListed)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
