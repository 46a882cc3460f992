package sim

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
)

// Network faults as steps: partitions, link rules and heal, their checks, their rendering in the
// chaos language, FaultsFromChaos (which reads a schedule written in it), and how a step is carried
// out and recorded. What the rules then do to each message is netem.go's.

// LinkRule is what a link fault does to the messages and heartbeats on its link, as the chaos
// language's `link <a>-><b> <rule>` says it. Make one with DropRule, DelayRule, LossRule, DupRule
// or ReorderRule.
type LinkRule struct {
	// Kind is one of chaos.LinkKinds: drop, delay, loss, dup, reorder.
	Kind string
	// Delay and Jitter: a delay rule holds each message Delay plus or minus up to Jitter
	// (0 <= Jitter <= Delay), drawn uniformly.
	Delay, Jitter time.Duration
	// Percent is the probability of a loss or dup rule, in percent (0..100).
	Percent float64
}

// DropRule drops every message and heartbeat on the link.
func DropRule() LinkRule { return LinkRule{Kind: chaos.LinkDrop} }

// DelayRule holds every message d plus or minus up to jitter, keeping the link's order.
func DelayRule(d, jitter time.Duration) LinkRule {
	return LinkRule{Kind: chaos.LinkDelay, Delay: d, Jitter: jitter}
}

// LossRule drops each message with probability percent/100.
func LossRule(percent float64) LinkRule { return LinkRule{Kind: chaos.LinkLoss, Percent: percent} }

// DupRule delivers each message a second time with probability percent/100.
func DupRule(percent float64) LinkRule { return LinkRule{Kind: chaos.LinkDup, Percent: percent} }

// ReorderRule frees the link from its order: each message is held a delay of its own (uniform in
// 0..2 × the link's delay, or in 0..20ms without one), so later ones may overtake it.
func ReorderRule() LinkRule { return LinkRule{Kind: chaos.LinkReorder} }

// validateNet checks a partition, link or heal step. What the chaos language checks (IDs in
// range, disjoint groups, a shape the cluster is large enough for, a rule's arguments) is checked by
// chaos.Parse on the step's rendering, so that a Fault is refused exactly when its text would be.
func (f Fault) validateNet(n int) error {
	switch {
	case f.At < 0:
		return fmt.Errorf("time %v: want 0 or later", f.At)
	case f.For != 0:
		return fmt.Errorf("for %v: only a pause takes a duration", f.For)
	}
	switch f.Op {
	case Partition:
		switch {
		case (f.Groups == nil) == (f.Shape == ""):
			return fmt.Errorf("a partition takes either Groups (e.g. [[1 2] [3 4 5]]) or a Shape (%v)", chaos.Shapes)
		case f.Shape == chaos.ShapeIsolate && (f.Node > n || f.Node == 0 || f.Node < TargetRandom):
			return fmt.Errorf("isolate node %d: want an ID in 1..%d or a Target constant", f.Node, n)
		case f.Shape != chaos.ShapeIsolate && f.Node != 0:
			return fmt.Errorf("node %d: only a partition of shape isolate names a node", f.Node)
		case f.From != 0 || f.To != 0 || f.Rule != (LinkRule{}):
			return errors.New("from, to and rule belong to link steps, not to partition")
		}
		for _, g := range f.Groups {
			for _, id := range g {
				if id < 1 || id > n {
					return fmt.Errorf("group %v: node %d is out of range (the IDs are 1..%d)", g, id, n)
				}
			}
		}
	case Link:
		r := f.Rule
		switch {
		case f.Node != 0 || f.Groups != nil || f.Shape != "":
			return errors.New("node, groups and shape belong to other steps, not to link")
		case f.From > n || f.From == 0 || f.From < TargetRandom || f.To > n || f.To == 0 || f.To < TargetRandom:
			return fmt.Errorf("link %d->%d: want IDs in 1..%d or Target constants", f.From, f.To, n)
		case !slices.Contains(chaos.LinkKinds, r.Kind):
			return fmt.Errorf("rule kind %q: want one of %v", r.Kind, chaos.LinkKinds)
		case r.Jitter < 0:
			return fmt.Errorf("jitter %v: want 0..delay", r.Jitter)
		case r.Kind != chaos.LinkDelay && (r.Delay != 0 || r.Jitter != 0):
			return fmt.Errorf("delay %v±%v: only a delay rule takes durations", r.Delay, r.Jitter)
		case r.Kind != chaos.LinkLoss && r.Kind != chaos.LinkDup && r.Percent != 0:
			return fmt.Errorf("percent %v: only loss and dup rules take a probability", r.Percent)
		}
	case Heal:
		if f.Node != 0 || f.Groups != nil || f.Shape != "" || f.From != 0 || f.To != 0 || f.Rule != (LinkRule{}) {
			return errors.New("heal takes nothing: it removes every partition and link rule")
		}
	}
	if _, err := chaos.Parse(f.String(), n); err != nil {
		if inner := errors.Unwrap(err); inner != nil {
			return inner // Parse names the step; the caller names the fault already
		}
		return err
	}
	return nil
}

// netString renders a partition, link or heal step in the chaos language.
func (f Fault) netString() string {
	st := chaos.Step{At: f.At, Op: string(f.Op)}
	switch f.Op {
	case Partition:
		st.Shape = f.Shape
		if f.Shape == chaos.ShapeIsolate {
			st.Target = chaosTarget(f.Node)
		}
		for _, g := range f.Groups {
			st.Groups = append(st.Groups, slices.Sorted(slices.Values(g)))
		}
	case Link:
		st.Link = f.Rule.chaos(f.From, f.To)
	}
	return st.String()
}

// chaos is the rule as the chaos package holds it.
func (r LinkRule) chaos(from, to int) *chaos.LinkRule {
	return &chaos.LinkRule{From: chaosTarget(from), To: chaosTarget(to), Kind: r.Kind, Delay: r.Delay, Jitter: r.Jitter, Percent: r.Percent}
}

// text is the rule without its ends, as chaos.jsonl's rule field holds it: "drop",
// "delay 20ms±5ms", "loss 10%", "dup 5%", "reorder".
func (r LinkRule) text() string {
	_, after, _ := strings.Cut(r.chaos(1, 2).String(), " ")
	return after
}

func chaosTarget(t int) chaos.Target {
	switch t {
	case TargetLeader:
		return chaos.Target{Kind: chaos.TargetLeader}
	case TargetHighest:
		return chaos.Target{Kind: chaos.TargetHighest}
	case TargetLowest:
		return chaos.Target{Kind: chaos.TargetLowest}
	case TargetRandom:
		return chaos.Target{Kind: chaos.TargetRandom}
	}
	return chaos.Target{Kind: chaos.TargetID, ID: t}
}

func simTarget(t chaos.Target) int {
	switch t.Kind {
	case chaos.TargetLeader:
		return TargetLeader
	case chaos.TargetHighest:
		return TargetHighest
	case chaos.TargetLowest:
		return TargetLowest
	case chaos.TargetRandom:
		return TargetRandom
	}
	return t.ID
}

// FaultsFromChaos reads a schedule in the chaos language (`leaderlab run --chaos`) for a cluster of
// n nodes into Config.Faults, in time order. Parse errors are chaos.Parse's, naming the step and
// the accepted forms. The simulator carries each step out as the launcher does, with one
// difference: its random choices (a random target, random-halves) come from the run's one seeded
// source rather than a source per step.
func FaultsFromChaos(text string, n int) ([]Fault, error) {
	sched, err := chaos.Parse(text, n)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	out := make([]Fault, 0, len(sched.Steps))
	for _, st := range sched.Steps {
		f := Fault{At: st.At, Op: Op(st.Op)}
		switch st.Op {
		case chaos.OpKill, chaos.OpRestart, chaos.OpResume:
			f.Node = simTarget(st.Target)
		case chaos.OpPause:
			f.Node, f.For = simTarget(st.Target), st.For
		case chaos.OpPartition:
			f.Shape, f.Groups = st.Shape, st.Groups
			if st.Shape == chaos.ShapeIsolate {
				f.Node = simTarget(st.Target)
			}
		case chaos.OpLink:
			l := st.Link
			f.From, f.To = simTarget(l.From), simTarget(l.To)
			f.Rule = LinkRule{Kind: l.Kind, Delay: l.Delay, Jitter: l.Jitter, Percent: l.Percent}
		case chaos.OpHeal:
		default:
			return nil, fmt.Errorf("sim: step %d %q: %q is not supported", st.Pos, st.Text, st.Op)
		}
		out = append(out, f)
	}
	return out, nil
}

// applyNet carries out a partition, link or heal and records it in chaos.jsonl as the launcher
// does: targets are the nodes told (the live ones; a link's receiving end), groups or reach, the
// link's ends and rule, and acks — every running node takes its rules at once, a paused one when it
// resumes (no ack), a dead one when it restarts.
func (s *Sim) applyNet(f Fault, step string) error {
	rec := logs.ChaosRecord{TS: s.cfg.Base + int64(s.now), Op: string(f.Op), Targets: []int{}, Step: step, At: int64(s.now)}
	var targets []int
	var err error
	switch f.Op {
	case Heal:
		s.net = network{}
		targets = s.aliveIDs()
	case Partition:
		var p chaos.Partition
		if p, err = s.partition(f); err == nil {
			s.net.part = newCut(p, s.cfg.N, step)
			rec.Groups, rec.Reach = p.Groups, p.Reach
			targets = s.aliveIDs()
		}
	case Link:
		var from, to int
		if from, to, err = s.linkEnds(f); err == nil {
			s.net.links = append(s.net.links, linkFault{from: from, to: to, rule: f.Rule, why: step})
			s.net.compose()
			rec.From, rec.To, rec.Rule = from, to, f.Rule.text()
			targets = []int{to}
		}
	default:
		err = fmt.Errorf("%s is not a network fault", f.Op)
	}
	if err != nil {
		rec.Error = err.Error()
		s.run.Chaos = append(s.run.Chaos, rec)
		return err
	}
	rec.Targets = append(rec.Targets, targets...)
	for _, id := range targets {
		if n := s.nodes[id]; n.alive && !n.paused {
			if rec.Acks == nil {
				rec.Acks = map[string]int64{}
			}
			rec.Acks[strconv.Itoa(id)] = rec.TS
		}
	}
	s.run.Chaos = append(s.run.Chaos, rec)
	return nil
}

// partition draws a partition step's sides over every node, in ring order (the ID placement on a
// mesh), as the launcher does; explicit groups get the nodes they leave out as one more side.
func (s *Sim) partition(f Fault) (chaos.Partition, error) {
	if f.Groups != nil {
		seen := make([]bool, s.cfg.N+1)
		var groups [][]int
		for _, g := range f.Groups {
			g = slices.Sorted(slices.Values(g))
			for _, id := range g {
				seen[id] = true
			}
			groups = append(groups, g)
		}
		var rest []int
		for _, id := range s.ids {
			if !seen[id] {
				rest = append(rest, id)
			}
		}
		if rest != nil {
			groups = append(groups, rest)
		}
		return chaos.Partition{Groups: groups}, nil
	}
	order := s.run.Cluster.Ring
	if len(order) != s.cfg.N {
		order = s.ids
	}
	target := 0
	if f.Shape == chaos.ShapeIsolate {
		var err error
		if target, err = s.resolve(Partition, f.Node); err != nil {
			return chaos.Partition{}, fmt.Errorf("isolate %s: %w", targetName(f.Node), err)
		}
	}
	return chaos.Shape(f.Shape, order, target, s.rng)
}

// linkEnds resolves a link's ends among the live nodes, the destination among those other than the
// source.
func (s *Sim) linkEnds(f Fault) (from, to int, err error) {
	if from, err = s.pick(f.From, Link, 0); err != nil {
		return 0, 0, fmt.Errorf("link source: %w", err)
	}
	if to, err = s.pick(f.To, Link, from); err != nil {
		return 0, 0, fmt.Errorf("link destination: %w", err)
	}
	if from == to {
		return 0, 0, fmt.Errorf("link %s resolves to %d->%d, a node to itself", f.Rule.chaos(f.From, f.To), from, to)
	}
	return from, to, nil
}

// aliveIDs lists the running and paused nodes, ascending.
func (s *Sim) aliveIDs() []int {
	var out []int
	for _, id := range s.ids {
		if s.nodes[id].alive {
			out = append(out, id)
		}
	}
	return out
}
