package explore

// The properties: their names, what each state is judged by, and which ones the algorithm
// does not promise under the faults explored.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/explore/checker"
)

// Property names, after the TLA+ ones of Polyakov et al. (2022) and Vinther (2023).
const (
	// PropSameLeader: once quiescent, the live nodes believe in one leader
	// (ElectionTerminationImpliesSameLeader).
	PropSameLeader = "ElectionTerminationImpliesSameLeader"
	// PropHighest: that leader is the highest live ID and believes in itself
	// (HighestAliveProcessIsLeader; Polyakov et al.'s EventuallySolved).
	PropHighest = "HighestAliveProcessIsLeader"
	// PropWillEnd: every path reaches quiescence with no node still electing: no deadlock with an
	// election open, no cycle without end under fair delivery (ElectionWillEnd).
	PropWillEnd = "ElectionWillEnd"
	// PropBound: a fault-free election sends no more messages than the algorithm's bound.
	PropBound = "MessageBound"
	// PropUnique: until a fault happens, no two live nodes believe in themselves at once, in any
	// state (an invariant, like Vinther's; after a crash or a restart two leaders overlap for a
	// moment in every algorithm, which the run's checker allows a grace for and the explorer, whose
	// deliveries take no time, cannot measure).
	PropUnique = "UniqueLeader"
	// PropPulse: a synchronizer's pulse safety, for synchronous algorithms: no message of the
	// algorithm reaches a node after the node started the pulse that should have taken it, in any
	// state (only ABD, which trusts a delay bound, can break it: under --timers async).
	PropPulse = "PulseSafety"
)

// Properties lists the properties checked, in the order they are reported.
var Properties = []string{PropUnique, PropSameLeader, PropHighest, PropWillEnd, PropBound, PropPulse}

// selfLeaders lists the live nodes that believe in themselves.
func selfLeaders(s *state) []int {
	var out []int
	for i, ns := range s.nodes {
		if ns.alive() && ns.m.Leader() == i+1 {
			out = append(out, i+1)
		}
	}
	return out
}

// lateAt lists the live nodes whose synchronizer counted a late message.
func lateAt(s *state) []int {
	var out []int
	for i, ns := range s.nodes {
		if l, ok := ns.m.(election.WithLate); ok && ns.alive() && l.Late() > 0 {
			out = append(out, i+1)
		}
	}
	return out
}

// sides lists the two sides of a partition mask.
func (x *model) sides(mask uint64) (a, b []int) {
	for id := 1; id <= x.n; id++ {
		if mask>>id&1 != 0 {
			a = append(a, id)
		} else {
			b = append(b, id)
		}
	}
	return a, b
}

// idList writes IDs as the chaos language's groups do: 1,2,4.
func idList(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}

// checkInvariants judges a state first reached by what holds in every state: UniqueLeader until a
// fault, and PulseSafety for a synchronous algorithm, while neither is broken yet.
func (x *model) checkInvariants(t *state, found checker.Found) *checker.Violation {
	if t.crashes+t.restarts == 0 && !t.partUsed && !found.Has(PropUnique) {
		if ls := selfLeaders(t); len(ls) > 1 {
			return x.violation(PropUnique, fmt.Sprintf("with no fault, %s believe in themselves at once", joinIDs(ls)))
		}
	}
	if x.alg.Synchronous && !found.Has(PropPulse) {
		if who := lateAt(t); len(who) > 0 {
			return x.violation(PropPulse, fmt.Sprintf("%s took a message of a pulse it had already left (late: the synchronizer's delay bound was broken)", joinIDs(who)))
		}
	}
	return nil
}

// checkBound judges MessageBound in a state reached: what the fault-free path to it sent.
func (x *model) checkBound(t *state, found checker.Found) *checker.Violation {
	if x.hasBound && t.sent > x.bound && !found.Has(PropBound) {
		return x.violation(PropBound, fmt.Sprintf("a fault-free election sent %d messages, over the bound of %d for %d nodes", t.sent, x.bound, x.n))
	}
	return nil
}

// checkCycle is ElectionWillEnd broken by a cycle of n transitions that fair delivery keeps.
func (x *model) checkCycle(n int) *checker.Violation {
	return x.violation(PropWillEnd, fmt.Sprintf("a cycle of %d transitions that fair delivery does not leave: the election never ends", n))
}

// checkQuiescent judges a state where nothing more happens without a fault.
func (x *model) checkQuiescent(s *state) *checker.Violation {
	if s.sent >= 0 {
		x.mostMessages = max(x.mostMessages, s.sent)
	}
	if s.part == 0 {
		return x.checkComponent(s, nil, "")
	}
	a, b := x.sides(s.part)
	if v := x.checkComponent(s, a, "the side "+idList(a)+" of the partition: "); v != nil {
		return v
	}
	return x.checkComponent(s, b, "the side "+idList(b)+" of the partition: ")
}

// checkComponent judges the live nodes of one component (nil: every node).
func (x *model) checkComponent(s *state, comp []int, where string) *checker.Violation {
	in := func(id int) bool { return comp == nil || slices.Contains(comp, id) }
	top := 0
	var leaders []int
	for i, ns := range s.nodes {
		if !ns.alive() || !in(i+1) {
			continue
		}
		top = i + 1
		if ns.m.Leader() == i+1 {
			leaders = append(leaders, i+1)
		}
	}
	if top == 0 {
		return nil
	}
	for i, ns := range s.nodes {
		if ns.alive() && in(i+1) && (ns.m.Participant() || ns.m.Leader() == 0) {
			return x.violation(PropWillEnd, fmt.Sprintf("%snothing is left in flight and no timer is armed, but node %d is still electing (its leader is ⊥): the election never ends", where, i+1))
		}
	}
	if len(leaders) > 1 {
		return x.violation(PropSameLeader, fmt.Sprintf("%squiescent with %d leaders: %s each believe in themselves", where, len(leaders), joinIDs(leaders)))
	}
	want := s.nodes[top-1].m.Leader()
	for i, ns := range s.nodes {
		if ns.alive() && in(i+1) && ns.m.Leader() != want {
			return x.violation(PropSameLeader, fmt.Sprintf("%squiescent with nodes disagreeing: node %d follows %d, node %d follows %d", where, top, want, i+1, ns.m.Leader()))
		}
	}
	if want != top {
		return x.violation(PropHighest, fmt.Sprintf("%squiescent with every live node following %d, but the highest live ID is %d", where, want, top))
	}
	return nil
}

func (x *model) violation(prop, detail string) *checker.Violation {
	return &checker.Violation{Property: prop, Detail: detail, Limit: x.promised[prop]}
}

func joinIDs(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	switch len(s) {
	case 1:
		return s[0]
	case 2:
		return s[0] + " and " + s[1]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// limits says which properties the algorithm does not promise under this configuration.
func (x *model) limits() map[string]string {
	out := map[string]string{}
	if x.alg.Limits == nil {
		return out
	}
	var faults []string
	if x.cfg.Timers == TimersAsync {
		faults = append(faults, "async timers")
	}
	if x.cfg.Partitions {
		faults = append(faults, "partition")
	}
	if x.cfg.Crashes > 0 {
		faults = append(faults, "crash")
	}
	for _, l := range x.alg.Limits(x.cfg.Options) {
		for _, f := range l.Faults {
			if !slices.Contains(faults, f) {
				continue
			}
			switch l.Property {
			case "uniqueness":
				out[PropSameLeader] = l.Why
				out[PropUnique] = l.Why
			case "agreement":
				out[PropHighest] = l.Why
				out[PropWillEnd] = l.Why
			case "complexity":
				out[PropBound] = l.Why
			case "pulses":
				out[PropPulse] = l.Why
			}
		}
	}
	return out
}
