package chaos

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/leaderlab/leaderlab/wire"
)

// The executor resolves a step's targets against a cluster as it is at that moment and carries the
// step out through the cluster's own means: signals to processes and rule sets sent to nodes for a
// real run (package launcher), the same on simulated processes for the simulator (package sim).
// Both worlds share this one resolution: who "leader", "random" or "highest" is, which leader a
// "restart leader" brings back, what a partition shape cuts, and how the network faults in force
// compose into each node's rule set.

// ProcState is what a world knows of a node's process.
type ProcState int

// The states of a node's process.
const (
	Dead    ProcState = iota // never started, or exited
	Running                  // running and not paused
	Paused                   // stopped by SIGSTOP
)

// Cluster is the world a step is carried out in.
type Cluster interface {
	// IDs lists the nodes, ascending.
	IDs() []int
	// Order is the ring order that shapes cut along (the ID placement on a mesh).
	Order() []int
	// State is node id's process state now.
	State(id int) ProcState
	// Leader is the node the live nodes currently follow (the belief most of them hold; 0 if none).
	Leader() int
	// Do carries out a process action on node id: kill, stop, pause, resume or restart.
	Do(op string, id int) error
}

// Executor carries out steps on one cluster. Its methods may be called from several goroutines.
type Executor struct {
	c  Cluster
	mu sync.Mutex
	// killedLeaders and pausedLeaders are the leaders that "kill leader" (or stop) and "pause
	// leader" took away, most recent last: "restart leader" and "resume leader" bring them back.
	killedLeaders, pausedLeaders []int
	faults                       netFaults
}

// Followed is the leader most of these beliefs name (ties: the higher ID; 0 beliefs, ⊥, do not
// count; 0 when none is named): whom "leader" means, from the live nodes' answers.
func Followed(beliefs []int) int {
	count := map[int]int{}
	best := 0
	for _, l := range beliefs {
		if l == 0 {
			continue
		}
		count[l]++
		if c := count[l]; c > count[best] || (c == count[best] && l > best) {
			best = l
		}
	}
	return best
}

// NewExecutor returns an executor for c.
func NewExecutor(c Cluster) *Executor { return &Executor{c: c} }

// StepRand is the random source of step i of a run with this seed (splitmix64 of the seed and i):
// a replay draws the same, and a step's draw does not depend on what earlier steps drew.
func StepRand(seed int64, i int) *rand.Rand {
	h := uint64(seed) ^ 0x9e3779b97f4a7c15*uint64(i+1)
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	h ^= h >> 31
	return rand.New(rand.NewSource(int64(h)))
}

// In lists, ascending, the nodes in one of the given states.
func (x *Executor) In(states ...ProcState) []int {
	var out []int
	for _, id := range x.c.IDs() {
		if slices.Contains(states, x.c.State(id)) {
			out = append(out, id)
		}
	}
	return out
}

// Proc resolves a kill, stop, pause, resume or restart step and carries it out. It returns the
// node it chose (0 when none could be) and why it could not be done.
func (x *Executor) Proc(st Step, rng *rand.Rand) (int, error) {
	id, err := x.target(st, rng)
	if err != nil {
		return 0, err
	}
	if err := x.c.Do(st.Op, id); err != nil {
		return id, err
	}
	if st.Target.Kind == TargetLeader {
		x.mu.Lock()
		switch st.Op {
		case OpKill, OpStop:
			x.killedLeaders = append(x.killedLeaders, id)
		case OpPause:
			x.pausedLeaders = append(x.pausedLeaders, id)
		}
		x.mu.Unlock()
	}
	return id, nil
}

// target resolves a process step's target at this moment. highest, lowest and random choose among
// the nodes the action applies to: the running ones (paused or not) for kill and stop, the running
// unpaused ones for pause, the paused ones for resume, the dead ones for restart. leader is the node
// the live nodes follow for kill, stop and pause; for restart (resume) it is the leader most
// recently killed (paused) by a "leader" step that is still dead (paused), so that "kill leader ...
// restart leader" brings back the node it took away.
func (x *Executor) target(st Step, rng *rand.Rand) (int, error) {
	var pool []int
	leader := 0
	switch st.Op {
	case OpKill, OpStop:
		pool = x.In(Running, Paused)
	case OpPause:
		pool = x.In(Running)
	case OpResume:
		pool = x.In(Paused)
		leader = x.lastLeader(&x.pausedLeaders, Paused)
	case OpRestart:
		pool = x.In(Dead)
		leader = x.lastLeader(&x.killedLeaders, Dead)
	default:
		return 0, fmt.Errorf("action %q is not a process action", st.Op)
	}
	if st.Target.Kind == TargetLeader && (st.Op == OpKill || st.Op == OpStop || st.Op == OpPause) {
		leader = x.c.Leader()
	}
	return Resolve(st.Target, pool, leader, rng)
}

// lastLeader is the most recent of *ids still in state s; 0 if none.
func (x *Executor) lastLeader(ids *[]int, s ProcState) int {
	x.mu.Lock()
	list := slices.Clone(*ids)
	x.mu.Unlock()
	for i := len(list) - 1; i >= 0; i-- {
		if x.c.State(list[i]) == s {
			return list[i]
		}
	}
	return 0
}

// NetChange is what a partition, link or heal step resolved to.
type NetChange struct {
	// What names the change for people: "partition 1-2|3-5 (halves)", "link 2->3 loss 10%", "heal".
	What string
	// Send lists the nodes to tell: every running or paused node for a partition and a heal (the dead
	// are told when restarted), the receiving end for a link.
	Send []int
	// Groups or Reach is the partition drawn (chaos.jsonl's groups or reach).
	Groups [][]int
	Reach  map[int][]int
	// From, To and Rule are a link step's resolved ends and its fault ("loss 10%").
	From, To int
	Rule     string
}

// Net resolves a partition, link or heal step and updates the network faults in force; Rules then
// gives every node's complete rule set.
func (x *Executor) Net(st Step, rng *rand.Rand) (NetChange, error) {
	live := orEmpty(x.In(Running, Paused))
	x.mu.Lock()
	defer x.mu.Unlock()
	switch st.Op {
	case OpHeal:
		x.faults.heal()
		return NetChange{What: "heal", Send: live}, nil
	case OpPartition:
		p, note, err := x.partition(st, rng)
		if err != nil {
			return NetChange{}, err
		}
		if cut := x.faults.partition(p, x.c.IDs(), st.Text); len(cut) == 0 {
			note += ", which separates nobody"
		}
		ch := NetChange{Send: live}
		if p.Reach != nil {
			ch.Reach = p.Reach
			ch.What = "partition " + FormatReach(p.Reach) + note
		} else {
			ch.Groups = p.Groups
			ch.What = "partition " + FormatGroups(p.Groups) + note
		}
		return ch, nil
	case OpLink:
		l := st.Link
		from, err := x.linkEnd(l.From, live, 0, rng)
		if err != nil {
			return NetChange{}, fmt.Errorf("link source: %w", err)
		}
		to, err := x.linkEnd(l.To, live, from, rng)
		if err != nil {
			return NetChange{}, fmt.Errorf("link destination: %w", err)
		}
		if from == to {
			return NetChange{}, fmt.Errorf("link %s resolves to %d->%d, a node to itself", l, from, to)
		}
		x.faults.link(from, to, *l, st.Text)
		rule := RuleText(*l)
		return NetChange{What: fmt.Sprintf("link %d->%d %s", from, to, rule), Send: []int{to}, From: from, To: to, Rule: rule}, nil
	}
	return NetChange{}, fmt.Errorf("action %q is not a network fault", st.Op)
}

// Rules is every node's complete rule set under the faults in force: one wire.LinkRule per peer it
// treats specially, ascending by From, and an empty (non-nil) set for a node that hears everyone.
func (x *Executor) Rules() map[int][]wire.LinkRule {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.faults.rules(x.c.IDs())
}

// partition draws a step's partition over every node of the cluster, in ring order (so halves and
// bridge cut a ring into arcs; for a mesh the ring order is the ID placement).
func (x *Executor) partition(st Step, rng *rand.Rand) (Partition, string, error) {
	if st.Shape == "" {
		return Partition{Groups: st.Groups}, "", nil
	}
	order := x.c.Order()
	target, note := 0, " ("+st.Shape+")"
	if st.Shape == ShapeIsolate {
		leader := 0
		if st.Target.Kind == TargetLeader {
			leader = x.c.Leader()
		}
		var err error
		if target, err = Resolve(st.Target, x.In(Running, Paused), leader, rng); err != nil {
			return Partition{}, "", fmt.Errorf("isolate %s: %w", st.Target, err)
		}
		note = fmt.Sprintf(" (isolate %s)", st.Target)
		if st.Target.Kind == TargetID {
			note = " (isolate)"
		}
	}
	if st.Shape == ShapePrimaries {
		var prim []int
		if sl, ok := x.c.(SelfLeaders); ok {
			prim = sl.SelfLeaders()
		} else if l := x.c.Leader(); l != 0 {
			prim = []int{l}
		}
		p, err := Primaries(order, prim)
		return p, fmt.Sprintf(" (primaries %s)", FormatGroups([][]int{prim})), err
	}
	p, err := Shape(st.Shape, order, target, rng)
	return p, note, err
}

// linkEnd resolves one end of a link among the live nodes other than not.
func (x *Executor) linkEnd(t Target, live []int, not int, rng *rand.Rand) (int, error) {
	leader := 0
	if t.Kind == TargetLeader {
		leader = x.c.Leader()
	}
	var pool []int
	for _, id := range live {
		if id != not {
			pool = append(pool, id)
		}
	}
	return Resolve(t, pool, leader, rng)
}

func orEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// FormatReach renders a Reach-form partition: "1<2,5 2<1,3 ...".
func FormatReach(reach map[int][]int) string {
	ids := make([]int, 0, len(reach))
	for id := range reach {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	parts := make([]string, len(ids))
	for i, id := range ids {
		peers := make([]string, len(reach[id]))
		for j, p := range reach[id] {
			peers[j] = strconv.Itoa(p)
		}
		parts[i] = strconv.Itoa(id) + "<" + strings.Join(peers, ",")
	}
	return strings.Join(parts, " ")
}
