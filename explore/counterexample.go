package explore

// A violation's trace: the checker finds the path to it (checker.Finding); the model replays it
// from the initial state and describes each transition as people read it.

import (
	"fmt"

	"github.com/leaderlab/leaderlab/explore/checker"
)

// traced is what the checker found, v along the path f, as the explorer reports it: the path
// replayed into a trace.
func (x *model) traced(v *checker.Violation, f *checker.Finding[event]) *Violation {
	return &Violation{Property: v.Property, Detail: v.Detail, Limit: v.Limit, ev: f.Path, CycleAt: f.CycleAt, Trace: x.replay(f.Path)}
}

// replay runs the events from the initial state and describes each.
func (x *model) replay(evs []event) []Step {
	s := x.initial()
	out := make([]Step, 0, len(evs))
	for _, ev := range evs {
		what := x.describeIn(s, ev)
		s = x.apply(s, ev)
		st := Step{Event: what, Now: s.now, ev: ev}
		for _, ns := range s.nodes {
			b := -1
			if ns.alive() {
				b = ns.m.Leader()
			}
			st.Beliefs = append(st.Beliefs, b)
		}
		out = append(out, st)
	}
	return out
}

// describeIn is describe with what a delivery carries in s: the message's kind and round (or its
// leader), or the detector's news.
func (x *model) describeIn(s *state, ev event) string {
	d := x.describe(ev)
	if ev.kind != evDeliver {
		return d
	}
	l := s.links[x.linkIndex(ev.peer, ev.node)]
	if l == nil {
		return d
	}
	switch p := l.q[0]; p.k {
	case pEOF:
		return d + " end of stream"
	case pHello:
		return d + " hello"
	default:
		m := x.msgs.at(p.id)
		d += " " + m.Kind
		if m.Cand != 0 {
			d += fmt.Sprintf(" cand %d", m.Cand)
		}
		if m.Round != 0 {
			d += fmt.Sprintf(" round %d", m.Round)
		}
		if m.Phase != 0 {
			d += fmt.Sprintf(" phase %d", m.Phase)
		}
		return d
	}
}

func (x *model) describe(ev event) string {
	switch ev.kind {
	case evDeliver:
		return fmt.Sprintf("deliver %d->%d", ev.peer, ev.node)
	case evTimer:
		return fmt.Sprintf("timer %s fires at %d", ev.timer, ev.node)
	case evCrash:
		return fmt.Sprintf("crash %d", ev.node)
	case evRestart:
		return fmt.Sprintf("restart %d", ev.node)
	case evPartition:
		a, b := x.sides(ev.mask)
		return fmt.Sprintf("partition %s|%s", idList(a), idList(b))
	case evHeal:
		return "heal"
	case evTimeout:
		return fmt.Sprintf("%d suspects %d (timeout)", ev.node, ev.peer)
	case evHeartbeat:
		if ev.peer == 1 {
			return "a round of heartbeats"
		}
		return fmt.Sprintf("%d rounds of heartbeats", ev.peer)
	}
	return "?"
}
