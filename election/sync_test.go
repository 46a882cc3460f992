package election

import (
	"container/heap"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/topology"
)

// syGraph is a test graph: a generated family with IDs placed at random.
type syGraph struct {
	spec  string
	ids   []int // ascending
	edges [][2]int
	topo  *topology.Topology
}

// syRandomGraph draws a graph of 2..20 nodes: random:3, grid:RxC, tree:K or torus:RxC, with distinct
// IDs drawn from 1..3n.
func syRandomGraph(t *testing.T, rng *rand.Rand) syGraph {
	t.Helper()
	var spec string
	var n int
	switch rng.Intn(4) {
	case 0:
		n = 4 + rng.Intn(17)
		spec = "random:3"
	case 1:
		r, c := 1+rng.Intn(4), 2+rng.Intn(4)
		n, spec = r*c, fmt.Sprintf("grid:%dx%d", r, c)
	case 2:
		n, spec = 2+rng.Intn(19), fmt.Sprintf("tree:%d", 1+rng.Intn(3))
	default:
		r, c := 2+rng.Intn(3), 3+rng.Intn(3)
		n, spec = r*c, fmt.Sprintf("torus:%dx%d", r, c)
	}
	pos, err := topology.Generate(spec, n, rng.Int63())
	if err != nil {
		t.Fatal(err)
	}
	order := rng.Perm(3 * n)[:n]
	for i := range order {
		order[i]++
	}
	g, err := topology.NewGraph(spec, order, topology.OnIDs(pos, order))
	if err != nil {
		t.Fatal(err)
	}
	ids := slices.Sorted(slices.Values(order))
	return syGraph{spec: spec, ids: ids, edges: g.Edges(), topo: g}
}

// syEvent is one thing the test network will do: start a node, deliver a message, fire a timer.
type syEvent struct {
	at    time.Duration
	seq   int
	kind  InputKind
	to    int
	from  int
	msg   Message
	timer string
	gen   int
}

type syQueue []*syEvent

func (q syQueue) Len() int { return len(q) }
func (q syQueue) Less(i, j int) bool {
	return q[i].at < q[j].at || q[i].at == q[j].at && q[i].seq < q[j].seq
}
func (q syQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *syQueue) Push(x any)   { *q = append(*q, x.(*syEvent)) }
func (q *syQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// syNet is a small asynchronous network in virtual time: every node starts at 0, each message is
// delivered after a delay the test draws (per link in order unless fifo is off; duplicated with
// probability dup), timers fire when they are due. It records each node's pulses (EffPulse), the
// messages sent by kind and pulse, and the algorithm messages that arrived after their receiver had
// started the next pulse.
type syNet struct {
	t        *testing.T
	g        syGraph
	rng      *rand.Rand
	m        map[int]Machine
	algKinds []string
	delay    func(from, to int, m Message) time.Duration
	fifo     bool
	dup      float64
	// crash: node crash[0] dies as it starts pulse crash[1]: the rest of that step is lost, and
	// nothing reaches it any more.
	crash [2]int

	now      time.Duration
	q        syQueue
	seq      int
	linkLast map[[2]int]time.Duration
	gens     map[int]map[string]int
	pulse    map[int]int
	dead     map[int]bool
	sent     map[string]map[int]int // kind → Round → messages sent
	arrived  map[string]bool        // message IDs delivered (a duplicate is judged once)
	late     []string
	errs     []string
}

func newSyNet(t *testing.T, g syGraph, rng *rand.Rand, algKinds []string) *syNet {
	return &syNet{t: t, g: g, rng: rng, m: map[int]Machine{}, algKinds: algKinds, fifo: true,
		linkLast: map[[2]int]time.Duration{}, gens: map[int]map[string]int{}, pulse: map[int]int{},
		dead: map[int]bool{}, sent: map[string]map[int]int{}, arrived: map[string]bool{}}
}

func (n *syNet) push(e *syEvent) {
	n.seq++
	e.seq = n.seq
	heap.Push(&n.q, e)
}

func (n *syNet) errorf(format string, args ...any) {
	if len(n.errs) < 10 {
		n.errs = append(n.errs, fmt.Sprintf("%v: ", n.now)+fmt.Sprintf(format, args...))
	}
}

// run starts every node and runs until nothing is left to do.
func (n *syNet) run() {
	for _, id := range n.g.ids {
		n.push(&syEvent{kind: InStart, to: id})
	}
	for steps := 0; n.q.Len() > 0; steps++ {
		if steps > 5_000_000 {
			n.t.Fatalf("%s: still running after %d events", n.g.spec, steps)
		}
		e := heap.Pop(&n.q).(*syEvent)
		n.now = e.at
		if n.dead[e.to] {
			continue
		}
		in := Input{Kind: e.kind, Now: n.now, From: e.from, Msg: e.msg, Timer: e.timer}
		switch e.kind {
		case InRecv:
			if slices.Contains(n.algKinds, e.msg.Kind) && !n.arrived[e.msg.ID] && n.pulse[e.to] > e.msg.Round {
				n.late = append(n.late, fmt.Sprintf("node %d got node %d's %s of pulse %d in its pulse %d", e.to, e.from, e.msg.Kind, e.msg.Round, n.pulse[e.to]))
			}
			n.arrived[e.msg.ID] = true
		case InTimer:
			if n.gens[e.to][e.timer] != e.gen {
				continue
			}
		}
		n.step(e.to, in)
	}
}

// step feeds one input and carries out the effects.
func (n *syNet) step(id int, in Input) {
	for _, e := range n.m[id].Step(in) {
		switch e.Kind {
		case EffPulse:
			if e.Round != n.pulse[id]+1 {
				n.errorf("node %d started pulse %d after pulse %d", id, e.Round, n.pulse[id])
			}
			n.pulse[id] = e.Round
			if n.crash == [2]int{id, e.Round} {
				n.dead[id] = true
				return
			}
		case EffSend:
			n.send(id, e.To, e.Msg)
		case EffSetTimer:
			if n.gens[id] == nil {
				n.gens[id] = map[string]int{}
			}
			n.gens[id][e.Timer]++
			n.push(&syEvent{at: n.now + e.After, kind: InTimer, to: id, timer: e.Timer, gen: n.gens[id][e.Timer]})
		case EffCancelTimer:
			if n.gens[id] != nil {
				n.gens[id][e.Timer]++
			}
		}
	}
}

func (n *syNet) send(from, to int, m Message) {
	if !slices.Contains(n.g.topo.Neighbours(from), to) {
		n.errorf("node %d sent %s to %d, not a neighbour", from, m.Kind, to)
	}
	if slices.Contains(n.algKinds, m.Kind) && m.Round != n.pulse[from] {
		n.errorf("node %d sent %s of pulse %d in its pulse %d", from, m.Kind, m.Round, n.pulse[from])
	}
	if n.sent[m.Kind] == nil {
		n.sent[m.Kind] = map[int]int{}
	}
	n.sent[m.Kind][m.Round]++
	m.ID = fmt.Sprint(n.seq)
	copies := 1
	if n.rng.Float64() < n.dup {
		copies = 2
	}
	for range copies {
		at := n.now + n.delay(from, to, m)
		if n.fifo {
			link := [2]int{from, to}
			at = max(at, n.linkLast[link])
			n.linkLast[link] = at
		}
		n.push(&syEvent{at: at, kind: InRecv, to: to, from: from, msg: m})
	}
}

// syAsyncDelay: mostly up to 10ms, one message in ten up to 200ms.
func syAsyncDelay(rng *rand.Rand) func(int, int, Message) time.Duration {
	return func(int, int, Message) time.Duration {
		if rng.Intn(10) == 0 {
			return time.Duration(rng.Int63n(int64(200 * time.Millisecond)))
		}
		return time.Duration(rng.Int63n(int64(10 * time.Millisecond)))
	}
}

// syBoundedDelay: below delta, as ABD assumes.
func syBoundedDelay(rng *rand.Rand, delta time.Duration) func(int, int, Message) time.Duration {
	return func(int, int, Message) time.Duration { return time.Duration(rng.Int63n(int64(delta))) }
}

// syInitiators draws each node as an initiator with probability 1/3, at least one.
func syInitiators(rng *rand.Rand, ids []int) map[int]bool {
	out := map[int]bool{}
	for _, id := range ids {
		out[id] = rng.Intn(3) == 0
	}
	out[ids[rng.Intn(len(ids))]] = true
	return out
}

// syOptions are the options of a run of sync: γ's clusters drawn among the default, 1, 2 and n.
func syOptions(rng *rand.Rand, sync string, n int) map[string]string {
	opts := map[string]string{OptSync: sync}
	if sync == "gamma" {
		switch rng.Intn(4) {
		case 1:
			opts[OptClusters] = "1"
		case 2:
			opts[OptClusters] = "2"
		case 3:
			opts[OptClusters] = fmt.Sprint(n)
		}
	}
	return opts
}

// syFloodMax builds FloodMax at every node of net through the registry.
func syFloodMax(t *testing.T, net *syNet, inits map[int]bool, opts map[string]string) {
	t.Helper()
	alg, err := Lookup("floodmax")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range net.g.ids {
		m, err := alg.New(Config{Self: id, IDs: net.g.ids, Topology: net.g.spec, Edges: net.g.edges, Initiator: inits[id], Options: opts})
		if err != nil {
			t.Fatal(err)
		}
		net.m[id] = m
	}
}

// syCheckFloodMax checks a run without faults: every node ran every pulse in order and elected the
// largest ID; no message arrived late (nor was found late by a node, unless links duplicate); the
// messages are R·2|E| floods, the control messages of each pulse 1..Pulses-1 SyncControl's figure,
// an ack per flood, and Round 0 only for the set-up.
func syCheckFloodMax(t *testing.T, what string, net *syNet, opts map[string]string) {
	t.Helper()
	g := net.g
	th, err := SyncControl(opts[OptSync], g.ids, g.edges, opts)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, e := range net.errs {
		t.Errorf("%s: %s", what, e)
	}
	if len(net.late) > 0 {
		t.Errorf("%s: pulse safety broken: %s", what, strings.Join(net.late, "; "))
	}
	top := g.ids[len(g.ids)-1]
	for _, id := range g.ids {
		m := net.m[id]
		if net.pulse[id] != th.Pulses || m.Leader() != top || m.Participant() {
			t.Errorf("%s: node %d ran %d of %d pulses, leader %d (want %d), participant %v", what, id, net.pulse[id], th.Pulses, m.Leader(), top, m.Participant())
		}
		if l := m.(WithLate).Late(); l > 0 && net.dup == 0 {
			t.Errorf("%s: node %d counted %d late messages", what, id, l)
		}
	}
	floods := 0
	for _, c := range net.sent[FloodMaxFlood] {
		floods += c
	}
	if want := (th.Pulses - 1) * 2 * len(g.edges); floods != want {
		t.Errorf("%s: %d floods, want rounds × 2|E| = %d", what, floods, want)
	}
	if b, ok := floodMaxBound(g.ids, g.edges, opts); !ok || b != floods {
		t.Errorf("%s: EdgeBound %d %v, the run sent %d", what, b, ok, floods)
	}
	perPulse := map[int]int{}
	for kind, byRound := range net.sent {
		if kind != FloodMaxFlood && !slices.Contains(th.Kinds, kind) && !slices.Contains(th.InitKinds, kind) {
			t.Errorf("%s: kind %q is neither FloodMax's nor the synchronizer's %v %v", what, kind, th.Kinds, th.InitKinds)
		}
		for r, c := range byRound {
			switch {
			case slices.Contains(th.InitKinds, kind) && r != 0:
				t.Errorf("%s: %d set-up %s messages of pulse %d", what, c, kind, r)
			case r == 0 && kind != FloodMaxFlood && !slices.Contains(th.InitKinds, kind) && !slices.Contains([]string{SyncCSafe, SyncXSafe, SyncReady}, kind):
				t.Errorf("%s: %d %s messages of round 0 (the set-up's)", what, c, kind)
			case kind != FloodMaxFlood && kind != SyncAck && !slices.Contains(th.InitKinds, kind) && r >= 1:
				perPulse[r] += c
			}
		}
	}
	for r := 1; r < th.Pulses; r++ {
		if perPulse[r] != th.PerPulse {
			t.Errorf("%s: pulse %d had %d control messages, SyncControl says %s = %d", what, r, perPulse[r], th.Formula, th.PerPulse)
		}
	}
	for r := 0; r <= th.Pulses; r++ {
		acks, want := net.sent[SyncAck][r], 0
		if th.AckPerMessage {
			want = net.sent[FloodMaxFlood][r]
		}
		if acks != want {
			t.Errorf("%s: %d acks of pulse %d for %d floods (ack per message: %v)", what, acks, r, net.sent[FloodMaxFlood][r], th.AckPerMessage)
		}
	}
}

// sySweepRun draws one run of a sweep from seed: a random graph, a network carrying the algorithm's
// kind with random delays (ABD's within δ), and the synchronizer's options.
func sySweepRun(t *testing.T, sync string, seed int64, kind string) (*rand.Rand, syGraph, *syNet, map[string]string) {
	rng := rand.New(rand.NewSource(seed))
	g := syRandomGraph(t, rng)
	net := newSyNet(t, g, rng, []string{kind})
	opts := syOptions(rng, sync, len(g.ids))
	net.delay = syAsyncDelay(rng)
	if sync == "abd" {
		net.delay = syBoundedDelay(rng, defaultDelta)
	}
	return rng, g, net, opts
}

// sySeeds is how many random runs a sweep makes per synchronizer.
func sySeeds() int {
	if testing.Short() {
		return 60
	}
	return 300
}

// TestFloodMaxOverSynchronizers: FloodMax on random graphs under every synchronizer, initiators and
// delays drawn at random (ABD's below δ): pulse safety, the largest ID elected everywhere, and the
// messages exactly as SyncControl says, pulse by pulse.
func TestFloodMaxOverSynchronizers(t *testing.T) {
	for _, sync := range Synchronizers {
		t.Run(sync, func(t *testing.T) {
			for seed := range int64(sySeeds()) {
				rng, g, net, opts := sySweepRun(t, sync, seed, FloodMaxFlood)
				syFloodMax(t, net, syInitiators(rng, g.ids), opts)
				net.run()
				syCheckFloodMax(t, fmt.Sprintf("seed %d %s n=%d %v", seed, g.spec, len(g.ids), opts), net, opts)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestSynchronizersWithoutFIFO: links that reorder and duplicate (a quarter of the messages twice):
// the synchronizers key everything by sender and pulse, so the runs are as exact as with FIFO links.
func TestSynchronizersWithoutFIFO(t *testing.T) {
	for _, sync := range Synchronizers {
		t.Run(sync, func(t *testing.T) {
			for seed := range int64(sySeeds() / 3) {
				rng, g, net, opts := sySweepRun(t, sync, 1000+seed, FloodMaxFlood)
				net.fifo, net.dup = false, 0.25
				syFloodMax(t, net, syInitiators(rng, g.ids), opts)
				net.run()
				syCheckFloodMax(t, fmt.Sprintf("seed %d %s n=%d %v, no FIFO, duplicates", 1000+seed, g.spec, len(g.ids), opts), net, opts)
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestSyncBFSUnderSynchronizers: the synchronous BFS tree under every synchronizer is the BFS tree:
// each node's depth is its distance from the root, its parent the lowest-ID neighbour one closer.
func TestSyncBFSUnderSynchronizers(t *testing.T) {
	for _, sync := range Synchronizers {
		t.Run(sync, func(t *testing.T) {
			for seed := range int64(sySeeds() / 3) {
				rng, g, net, opts := sySweepRun(t, sync, 2000+seed, SyncBFSSearch)
				root := g.ids[rng.Intn(len(g.ids))]
				pulses := g.topo.Diameter() + 1
				inits := syInitiators(rng, g.ids)
				bfs := map[int]*SyncBFS{}
				for _, id := range g.ids {
					bfs[id] = NewSyncBFS(id, root, g.topo.Neighbours(id), pulses)
					m, err := NewSynchronizer(sync, Config{Self: id, IDs: g.ids, Topology: g.spec, Edges: g.edges, Initiator: inits[id], Options: opts}, bfs[id])
					if err != nil {
						t.Fatal(err)
					}
					net.m[id] = m
				}
				net.run()
				what := fmt.Sprintf("seed %d %s n=%d root %d %v", 2000+seed, g.spec, len(g.ids), root, opts)
				for _, e := range net.errs {
					t.Errorf("%s: %s", what, e)
				}
				if len(net.late) > 0 {
					t.Errorf("%s: pulse safety broken: %s", what, strings.Join(net.late, "; "))
				}
				dist := g.topo.Distances(root)
				for _, id := range g.ids {
					want := 0
					if id != root {
						want = slices.Min(slices.DeleteFunc(slices.Clone(g.topo.Neighbours(id)), func(q int) bool { return dist[q] != dist[id]-1 }))
					}
					if b := bfs[id]; b.Depth() != dist[id] || b.Parent() != want || net.pulse[id] != pulses {
						t.Errorf("%s: node %d depth %d parent %d after %d pulses; want depth %d parent %d after %d", what, id, b.Depth(), b.Parent(), net.pulse[id], dist[id], want, pulses)
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestABDLateMessage: ABD trusts δ and waits for nothing: one FloodMax message delayed by 3δ arrives
// after its receiver started the next pulse, and both the network and the receiver see it late. A
// synchronizer that waited for the message would pass this run with no late message.
func TestABDLateMessage(t *testing.T) {
	for seed := range int64(20) {
		rng := rand.New(rand.NewSource(3000 + seed))
		g := syRandomGraph(t, rng)
		net := newSyNet(t, g, rng, []string{FloodMaxFlood})
		bounded := syBoundedDelay(rng, defaultDelta)
		slow := [2]int{}
		net.delay = func(from, to int, m Message) time.Duration {
			if m.Kind == FloodMaxFlood && slow == [2]int{} {
				slow = [2]int{from, to}
				return 3 * defaultDelta
			}
			return bounded(from, to, m)
		}
		syFloodMax(t, net, syInitiators(rng, g.ids), map[string]string{OptSync: "abd"})
		net.run()
		what := fmt.Sprintf("seed %d %s n=%d, %d->%d delayed 3δ", 3000+seed, g.spec, len(g.ids), slow[0], slow[1])
		if len(net.late) == 0 || !strings.HasPrefix(net.late[0], fmt.Sprintf("node %d got node %d's flood of pulse 1 in its pulse 2", slow[1], slow[0])) {
			t.Errorf("%s: late messages %q, want the slow one first", what, net.late)
		}
		if l := net.m[slow[1]].(WithLate).Late(); l == 0 {
			t.Errorf("%s: node %d counted no late message", what, slow[1])
		}
		for _, id := range g.ids {
			if net.pulse[id] != net.m[id].(*abd).last {
				t.Errorf("%s: node %d stopped at pulse %d: ABD never waits", what, id, net.pulse[id])
			}
		}
	}
}

// TestSynchronizerCrashStalls: a node that dies as it starts pulse 2 stalls α, β and γ: its
// neighbours never start pulse 3 (α, β, γ wait for its safe 2), and with rounds = diameter + 4 no
// live node anywhere reaches the last pulse or a leader. ABD, which waits for nobody, runs on.
func TestSynchronizerCrashStalls(t *testing.T) {
	for _, sync := range Synchronizers {
		t.Run(sync, func(t *testing.T) {
			for seed := range int64(sySeeds() / 3) {
				rng := rand.New(rand.NewSource(4000 + seed))
				g := syRandomGraph(t, rng)
				net := newSyNet(t, g, rng, []string{FloodMaxFlood})
				opts := syOptions(rng, sync, len(g.ids))
				opts[OptRounds] = fmt.Sprint(g.topo.Diameter() + 4)
				net.delay = syAsyncDelay(rng)
				if sync == "abd" {
					net.delay = syBoundedDelay(rng, defaultDelta)
				}
				x := g.ids[rng.Intn(len(g.ids))]
				net.crash = [2]int{x, 2}
				syFloodMax(t, net, syInitiators(rng, g.ids), opts)
				net.run()
				what := fmt.Sprintf("seed %d %s n=%d %v, node %d dies in pulse 2", 4000+seed, g.spec, len(g.ids), opts, x)
				last := g.topo.Diameter() + 5
				if !net.dead[x] {
					t.Fatalf("%s: node %d never reached pulse 2", what, x)
				}
				for _, id := range g.ids {
					m := net.m[id]
					switch {
					case id == x:
					case sync == "abd":
						if net.pulse[id] != last || m.Leader() == 0 {
							t.Errorf("%s: ABD node %d stopped at pulse %d of %d, leader %d", what, id, net.pulse[id], last, m.Leader())
						}
					case net.pulse[id] >= last || m.Leader() != 0:
						t.Errorf("%s: node %d reached pulse %d of %d, leader %d, past a dead node", what, id, net.pulse[id], last, m.Leader())
					case slices.Contains(g.topo.Neighbours(x), id) && (net.pulse[id] > 2 || !m.Participant()):
						t.Errorf("%s: neighbour %d reached pulse %d (participant %v), want it stalled at 2 at most", what, id, net.pulse[id], m.Participant())
					}
				}
				if t.Failed() {
					return
				}
			}
		})
	}
}

// TestSyncControlFormulas: the figures on grid:4x4 (n 16, |E| 24, diameter 6), and γ's extremes:
// one cluster is β, one cluster per node costs 2|E| (every edge designated, no tree edge).
func TestSyncControlFormulas(t *testing.T) {
	ids := make([]int, 16)
	for i := range ids {
		ids[i] = i + 1
	}
	pos, _ := topology.Generate("grid:4x4", 16, 1)
	edges := topology.OnIDs(pos, ids)
	for _, c := range []struct {
		sync     string
		opts     map[string]string
		perPulse int
		acks     bool
	}{
		{"abd", nil, 0, false},
		{"alpha", nil, 48, true},
		{"", nil, 48, true},
		{"beta", nil, 30, true},
		{"gamma", map[string]string{OptClusters: "1"}, 30, true},
		{"gamma", map[string]string{OptClusters: "16"}, 48, true},
	} {
		th, err := SyncControl(c.sync, ids, edges, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if th.Pulses != 7 || th.PerPulse != c.perPulse || th.AckPerMessage != c.acks {
			t.Errorf("%s %v: %+v; want 7 pulses, %d per pulse, acks %v", c.sync, c.opts, th, c.perPulse, c.acks)
		}
	}
	th, err := SyncControl("gamma", ids, edges, nil)
	if err != nil || th.PerPulse < 30 || !strings.Contains(th.Formula, "4 clusters") {
		t.Errorf("gamma on grid:4x4: %+v %v; want 4 clusters", th, err)
	}
	if _, err := SyncControl("zeta", ids, edges, nil); err == nil || !strings.Contains(err.Error(), "abd, alpha, beta, gamma") {
		t.Errorf("SyncControl(zeta): %v", err)
	}
}

// TestDiameterShortcuts: the mesh and ring shortcuts agree with the breadth-first searches.
func TestDiameterShortcuts(t *testing.T) {
	for n := 1; n <= 9; n++ {
		ids := make([]int, n)
		for i := range ids {
			ids[i] = 10 * (n - i)
		}
		for _, kind := range []string{topology.Mesh, topology.BiRing} {
			tp, err := topology.New(kind, ids)
			if err != nil {
				t.Fatal(err)
			}
			g, err := topology.NewGraph("", ids, tp.Edges())
			if err != nil {
				t.Fatal(err)
			}
			if d, err := diameter(slices.Sorted(slices.Values(ids)), tp.Edges()); err != nil || d != g.Diameter() {
				t.Errorf("%s of %d: diameter %d %v, want %d", kind, n, d, err, g.Diameter())
			}
		}
	}
}
