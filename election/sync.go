package election

// Synchronizers (Aguirre Janampa et al., §IV-B; Awerbuch 1985): a synchronous algorithm acts in
// pulses, and pulse i+1 of a node may begin only once every message its neighbours sent it in pulse
// i has arrived. The network here is asynchronous, so a synchronizer makes the pulses out of
// messages (α, β, γ) or out of a clock and a known bound δ on the delays (ABD). Each synchronizer
// is a Machine carrying a SyncAlgorithm; the drivers run it like any other algorithm and log each
// pulse (EffPulse).
//
// Every synchronizer sends only along the network's links (Config.Graph) and:
//
//   - at InStart plans heartbeats to and from its neighbours, so that the drivers' logs show who
//     stopped hearing whom; it ignores the detector's verdicts (InSuspect, InTrust, InHeartbeat).
//     A synchronizer waits for every neighbour and is not fault-tolerant: a crash stalls the
//     pulses for ever, and the checker explains the stall rather than the algorithm hiding it;
//   - starts at InStart at an initiator, and at a non-initiator with the first message it receives
//     (then handles that message); on starting it is a participant (EffElect);
//   - emits EffPulse{Round: i} when pulse i starts, before that pulse's sends; after the last pulse
//     (SyncAlgorithm.Pulses) it emits EffLeader with the algorithm's leader (when it names one) and
//     stops: no more control messages, Participant false;
//   - tags the algorithm's messages with their pulse (Round) and their number among those it sent
//     the same neighbour in that pulse (Hops, 1, 2, ...): acks name a message by both, and a
//     duplicate (a link that duplicates) is dropped rather than given to the algorithm twice;
//   - buffers messages that arrive ahead of the receiver's pulse (under α, β and γ a neighbour is
//     at most one pulse ahead), and counts, without giving them to the algorithm, the messages
//     that arrive after the receiver started the pulse that should have taken them (Late): only
//     ABD with δ broken (or a duplicate arriving that late) causes one; the receiver's log shows it.
//
// A message belongs to the pulse in its Round; Round 0 is the set-up. The control messages of each
// pulse 1..Pulses-1 are exactly SyncTheory.PerPulse (the pulse's safe messages, and the next
// messages that start it); see SyncControl.
//
// Message kinds (Round: the pulse; Hops: the algorithm message's number in its pulse):
//
//	start   ABD: "I have started" (set-up); wakes a neighbour.
//	ack     α, β, γ: Round, Hops of the algorithm message it acknowledges.
//	safe    α: to every neighbour; β, γ: to the parent: every message of the pulse (of the subtree) is acked.
//	next    β, γ: down the tree: start pulse Round.
//	wake    β, γ: set-up: wake the tree's root (a node woken by anything but a join passes it on).
//	join    β, γ: set-up: "be my child" (the tree is built by flooding joins from the root).
//	accept  β, γ: set-up: the answer of a node that took the sender as its parent.
//	reject  β, γ: set-up: the answer of a node that already has a parent.
//	built   β, γ: set-up: to the parent: the subtree is built (pulse 0's safe).
//	csafe   γ: down the cluster's tree: the whole cluster is safe for pulse Round.
//	xsafe   γ: across a designated inter-cluster edge: my cluster is safe for pulse Round.
//	ready   γ: up the cluster's tree: the cluster and every neighbouring cluster are safe.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/topology"
)

// SyncAlgorithm is a synchronous algorithm: it acts in pulses. Pulse i (1-based) gets the messages
// its neighbours sent it in pulse i-1 and returns the messages to send in pulse i. It must be pure
// like a Machine. The synchronizer owns the Round and Hops of its messages, and its kinds must differ
// from the synchronizers' (start, ack, safe, next, wake, join, accept, reject, built, csafe, xsafe,
// ready).
type SyncAlgorithm interface {
	// Pulse runs pulse i on the messages of pulse i-1, sorted by sender (a pulse's messages are a
	// set: their order of arrival must not matter). The messages returned by the last pulse are not
	// sent: there is no pulse to receive them.
	Pulse(i int, inbox []SyncIn) []SyncOut
	// Pulses is how many pulses every node runs (the same at every node, at least 1); after pulse
	// Pulses() the algorithm is done.
	Pulses() int
	// Leader is its result as a leader (0 for none / not applicable).
	Leader() int
}

// SyncIn is a message a SyncAlgorithm receives.
type SyncIn struct {
	From int
	Msg  Message
}

// SyncOut is a message a SyncAlgorithm sends, to a neighbour.
type SyncOut struct {
	To  int
	Msg Message
}

// The synchronizers' options (Config.Options).
const (
	// OptSync chooses the synchronizer of a synchronous algorithm: one of Synchronizers; default
	// alpha.
	OptSync = "sync"
	// OptDelta is ABD's bound δ on a message's delay, a Go duration; default 50ms.
	OptDelta = "delta"
	// OptClusters is γ's number of clusters, at least 1 (topology's Clusters clamps it to N);
	// default ceil(sqrt(N)).
	OptClusters = "clusters"
)

// Synchronizers lists the synchronizers by name, in the order help and errors name them.
var Synchronizers = []string{"abd", "alpha", "beta", "gamma"}

const (
	defaultSync  = "alpha"
	defaultDelta = 50 * time.Millisecond
)

// The synchronizers' message kinds (see the table above).
const (
	SyncStart  = "start"
	SyncAck    = "ack"
	SyncSafe   = "safe"
	SyncNext   = "next"
	SyncWake   = "wake"
	SyncJoin   = "join"
	SyncAccept = "accept"
	SyncReject = "reject"
	SyncBuilt  = "built"
	SyncCSafe  = "csafe"
	SyncXSafe  = "xsafe"
	SyncReady  = "ready"
)

// NewSynchronizer builds the synchronizer kind ("" for the default, alpha) of node c.Self, carrying
// alg. It sends along c.Graph(); ABD reads OptDelta and γ OptClusters from c.Options. Errors name
// the bad value and what is accepted.
func NewSynchronizer(kind string, c Config, alg SyncAlgorithm) (Machine, error) {
	edges, err := c.Graph()
	if err != nil {
		return nil, err
	}
	return newSynchronizer(kind, c, edges, alg)
}

// newSynchronizer is NewSynchronizer with the graph's edges already read.
func newSynchronizer(kind string, c Config, edges [][2]int, alg SyncAlgorithm) (Machine, error) {
	kind, err := syncKind(kind)
	if err != nil {
		return nil, err
	}
	opt, err := parseSyncOptions(c.Options)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(c.IDs, c.Self) {
		return nil, fmt.Errorf("synchronizer %s: node %d is not one of the cluster's IDs %v", kind, c.Self, c.IDs)
	}
	if alg.Pulses() < 1 {
		return nil, fmt.Errorf("synchronizer %s: the algorithm runs %d pulses (want at least 1)", kind, alg.Pulses())
	}
	cfg := &syncConfig{self: c.Self, nb: neighboursOf(c.Self, edges), last: alg.Pulses(), initiator: c.Initiator}
	p := pulser{syncConfig: cfg, alg: alg, inbox: map[int][]SyncIn{}, got: map[int]map[[2]int]bool{}}
	switch kind {
	case "abd":
		cfg.delta = opt.delta
		return &abd{pulser: p}, nil
	case "alpha":
		return &alpha{pulser: p, safeFrom: map[int]map[int]bool{}}, nil
	case "beta":
		return newTree(p, c.Topology, c.IDs, edges, 1)
	default:
		return newTree(p, c.Topology, c.IDs, edges, opt.clusters(len(c.IDs)))
	}
}

// syncKind checks a synchronizer's name ("" is the default); the error names the accepted ones.
func syncKind(kind string) (string, error) {
	k := strings.TrimSpace(kind)
	if k == "" {
		return defaultSync, nil
	}
	if !slices.Contains(Synchronizers, k) {
		return "", &field.Error{Field: "option " + OptSync, Value: fmt.Sprintf("%q", kind), Want: fmt.Sprintf("unknown synchronizer (accepted: %s)", strings.Join(Synchronizers, ", "))}
	}
	return k, nil
}

// syncOptions are the synchronizers' settings read from Config.Options.
type syncOptions struct {
	delta time.Duration
	// k is γ's number of clusters; 0 for the default.
	k int
}

// parseSyncOptions reads OptDelta and OptClusters, whichever synchronizer runs: a bad value is a
// mistake even where it would be unused.
func parseSyncOptions(options map[string]string) (syncOptions, error) {
	o := syncOptions{delta: defaultDelta}
	if v, ok := options[OptDelta]; ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return o, &field.Error{Field: "option " + OptDelta, Value: fmt.Sprintf("%q", v), Want: "want a positive Go duration such as 50ms (ABD's bound on a message's delay)"}
		}
		o.delta = d
	}
	if v, ok := options[OptClusters]; ok {
		k, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || k < 1 {
			return o, &field.Error{Field: "option " + OptClusters, Value: fmt.Sprintf("%q", v), Want: "want a whole number of clusters of at least 1 (γ's; default ceil(sqrt(N)))"}
		}
		o.k = k
	}
	return o, nil
}

// clusters is γ's number of clusters among n nodes: the option, else ceil(sqrt(n)), which balances
// the clusters' depth against the edges between them.
func (o syncOptions) clusters(n int) int {
	if o.k > 0 {
		return o.k
	}
	k := 1
	for k*k < n {
		k++
	}
	return k
}

// neighboursOf lists the other ends of self's edges, ascending.
func neighboursOf(self int, edges [][2]int) []int {
	var out []int
	for _, e := range edges {
		switch self {
		case e[0]:
			out = append(out, e[1])
		case e[1]:
			out = append(out, e[0])
		}
	}
	slices.Sort(out)
	return out
}

// SyncTheory is what a synchronizer costs FloodMax on a graph, for the checker.
type SyncTheory struct {
	// Synchronizer is its name, the default filled in.
	Synchronizer string
	// Pulses is how many pulses FloodMax runs (its rounds + 1; the only registered synchronous
	// algorithm).
	Pulses int
	// PerPulse is the exact count of control messages of each pulse 1..Pulses-1: the messages of
	// Kinds but ack whose Round is that pulse (safe, next, csafe, xsafe, ready). The last pulse costs
	// only the next messages that start it (β: n-1, γ: n-c). The set-up is apart: the InitKinds,
	// and γ's csafe, xsafe and ready of Round 0.
	PerPulse int
	// Formula is PerPulse's formula as the verdict names it, e.g. "2|E|".
	Formula string
	// AckPerMessage: every algorithm message is acked once (α, β, γ).
	AckPerMessage bool
	// Kinds are the control kinds of the pulses; InitKinds the kinds that only set up (all with
	// Round 0). γ also sends csafe, xsafe and ready with Round 0 while it sets up (sync_gamma.go).
	Kinds     []string
	InitKinds []string
}

// SyncControl is the theory of synchronizer kind ("" for the default) running FloodMax over the
// nodes ids and the graph's edges (each once), with the run's options (OptRounds, OptClusters). With
// n nodes, |E| edges, c clusters and d designated edges (one per pair of neighbouring clusters):
//
//	abd    0: pulses follow the clock; set-up: start (at most 2|E|)
//	alpha  2|E|: safe to every neighbour; plus an ack per message
//	beta   2(n-1): safe up and next down the spanning tree; plus acks; set-up: the tree
//	gamma  4(n-c)+2d: safe up, csafe down, ready up and next down the c cluster trees, xsafe both
//	       ways across each designated edge; plus acks; set-up: the trees; with c = 1 it is beta
func SyncControl(kind string, ids []int, edges [][2]int, options map[string]string) (SyncTheory, error) {
	k, err := syncKind(kind)
	if err != nil {
		return SyncTheory{}, err
	}
	opt, err := parseSyncOptions(options)
	if err != nil {
		return SyncTheory{}, err
	}
	rounds, err := floodMaxRounds(ids, edges, options)
	if err != nil {
		return SyncTheory{}, err
	}
	th := SyncTheory{Synchronizer: k, Pulses: rounds + 1}
	n := len(ids)
	treeInit := []string{SyncWake, SyncJoin, SyncAccept, SyncReject, SyncBuilt}
	switch k {
	case "abd":
		th.Formula, th.InitKinds = "0", []string{SyncStart}
		return th, nil
	case "alpha":
		th.PerPulse, th.Formula = 2*len(edges), "2|E|"
		th.AckPerMessage, th.Kinds = true, []string{SyncAck, SyncSafe}
		return th, nil
	}
	c, d := 1, 0
	if k == "gamma" {
		centre, designated, err := clustering("", ids, edges, opt.clusters(n))
		if err != nil {
			return SyncTheory{}, err
		}
		c, d = countCentres(centre), len(designated)
	}
	th.AckPerMessage, th.InitKinds = true, treeInit
	if c == 1 {
		th.PerPulse, th.Formula = 2*(n-1), "2(n-1)"
		th.Kinds = []string{SyncAck, SyncSafe, SyncNext}
		return th, nil
	}
	th.PerPulse = 4*(n-c) + 2*d
	th.Formula = fmt.Sprintf("4(n-c)+2d with c = %d clusters, d = %d designated edges", c, d)
	th.Kinds = []string{SyncAck, SyncSafe, SyncCSafe, SyncXSafe, SyncReady, SyncNext}
	return th, nil
}

// syncConfig is a synchronizer node's configuration, fixed by newSynchronizer (Fixed): what every
// synchronizer reads, and ABD's δ and β's and γ's clusters.
type syncConfig struct {
	_ Fixed

	self      int
	nb        []int // the neighbours, ascending
	last      int   // alg.Pulses()
	initiator bool
	delta     time.Duration // ABD
	// β, γ (sync_beta.go): the root of this node's tree (its cluster's leader), the neighbours in
	// its cluster, ascending (the tree's candidate edges); γ: more than one cluster, and the other
	// ends of this node's designated edges.
	centre  int
	members []int
	multi   bool
	desig   []int
}

// pulser is what every synchronizer shares: the algorithm, its pulse, the messages waiting for
// their pulse, and the effects of the step under way.
type pulser struct {
	*syncConfig
	alg   SyncAlgorithm
	awake bool
	done  bool
	// pulse is the pulse under way; 0 before the first (β, γ: while the trees are built).
	pulse int
	// inbox holds the algorithm's messages by the pulse they were sent in, until the next pulse
	// takes them; got their (sender, number), so that a duplicate is not taken twice.
	inbox map[int][]SyncIn
	got   map[int]map[[2]int]bool
	late  int
	out   []Effect
}

func (c *pulser) emit(e Effect)          { c.out = append(c.out, e) }
func (c *pulser) send(to int, m Message) { c.emit(Effect{Kind: EffSend, To: to, Msg: m}) }

// flush hands the step's effects to the caller, who owns them.
func (c *pulser) flush() []Effect {
	out := c.out
	c.out = nil
	return out
}

// plan is the heartbeat plan: the neighbours, both ways, so that the logs show who went silent.
func (c *pulser) plan() {
	c.emit(Effect{Kind: EffHeartbeat, HeartbeatTo: slices.Clone(c.nb), Watch: slices.Clone(c.nb)})
}

// wakeUp makes the node a participant.
func (c *pulser) wakeUp() {
	c.awake = true
	c.emit(Effect{Kind: EffElect})
}

// begin starts pulse p: from now on the messages of pulse p-1 are late.
func (c *pulser) begin(p int) {
	c.pulse = p
	c.emit(Effect{Kind: EffPulse, Round: p})
}

// run runs the algorithm's pulse on the messages of the pulse before and returns the messages to
// send, numbered; at the last pulse it decides and stops instead, and returns none.
func (c *pulser) run() []SyncOut {
	p := c.pulse
	in := c.inbox[p-1]
	delete(c.inbox, p-1)
	delete(c.got, p-1)
	slices.SortStableFunc(in, func(a, b SyncIn) int { return a.From - b.From })
	outs := c.alg.Pulse(p, in)
	if p == c.last {
		c.done = true
		if l := c.alg.Leader(); l != 0 {
			c.emit(Effect{Kind: EffLeader, Leader: l})
		}
		return nil
	}
	return outs
}

// sendAll sends the algorithm's messages of the pulse under way and returns them as the set of
// (receiver, number) that acks will name.
func (c *pulser) sendAll(outs []SyncOut) map[[2]int]bool {
	sent := make(map[[2]int]bool, len(outs))
	seq := map[int]int{}
	for _, o := range outs {
		seq[o.To]++
		m := o.Msg
		m.Round, m.Hops = c.pulse, seq[o.To]
		c.send(o.To, m)
		sent[[2]int{o.To, m.Hops}] = true
	}
	return sent
}

// take files an algorithm message for the pulse after its own. It tells whether the message was
// taken: not a duplicate, and not late (its pulse's successor already began without it).
func (c *pulser) take(from int, m Message) bool {
	if m.Round < c.pulse {
		c.late++
		return false
	}
	key := [2]int{from, m.Hops}
	if c.got[m.Round][key] {
		return false
	}
	if c.got[m.Round] == nil {
		c.got[m.Round] = map[[2]int]bool{}
	}
	c.got[m.Round][key] = true
	c.inbox[m.Round] = append(c.inbox[m.Round], SyncIn{From: from, Msg: m})
	return true
}

// ack acknowledges a message take accepted.
func (c *pulser) ack(to int, m Message) {
	c.send(to, Message{Kind: SyncAck, Round: m.Round, Hops: m.Hops})
}

// Leader is the algorithm's result once the last pulse ran, ⊥ before.
func (c *pulser) Leader() int {
	if !c.done {
		return 0
	}
	return c.alg.Leader()
}

// Participant: started, and not past the last pulse.
func (c *pulser) Participant() bool { return c.awake && !c.done }

// Late counts the algorithm messages that arrived after their receiver had started the pulse that
// should have taken them; they were not given to the algorithm (WithLate).
func (c *pulser) Late() int { return c.late }

// clustering is γ's partition of the graph: each node's cluster leader (topology's Clusters(k):
// the centre, the root of the cluster's tree) and the designated edges, one per pair of
// neighbouring clusters: the smallest edge between them, so that every node computes the same ones.
func clustering(spec string, ids []int, edges [][2]int, k int) (map[int]int, [][2]int, error) {
	g, err := topology.NewGraph(spec, ids, edges)
	if err != nil {
		return nil, nil, err
	}
	centre := g.Clusters(k)
	best := map[[2]int][2]int{}
	for _, e := range edges {
		a, b := centre[e[0]], centre[e[1]]
		if a == b {
			continue
		}
		pair := [2]int{min(a, b), max(a, b)}
		if d, ok := best[pair]; !ok || e[0] < d[0] || e[0] == d[0] && e[1] < d[1] {
			best[pair] = e
		}
	}
	designated := make([][2]int, 0, len(best))
	for _, e := range best {
		designated = append(designated, e)
	}
	slices.SortFunc(designated, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return centre, designated, nil
}

// countCentres counts the clusters of a clustering.
func countCentres(centre map[int]int) int {
	seen := map[int]bool{}
	for _, c := range centre {
		seen[c] = true
	}
	return len(seen)
}
