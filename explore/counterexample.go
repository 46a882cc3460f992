package explore

// A violation's trace: the seen table keeps each state's parent and the event that led to it,
// packed in 32 bits; withTrace walks back to the initial state and replays the events as Steps.

import (
	"fmt"
	"slices"
)

// pack and unpack store an event in 32 bits: kind, node, peer, and the timer's name as an index into
// the explorer's table of names.
func (x *Explorer) pack(ev event) uint32 {
	t := 0
	if ev.kind == evTimer {
		t = slices.Index(x.timerNames, ev.timer)
		if t < 0 {
			x.timerNames = append(x.timerNames, ev.timer)
			t = len(x.timerNames) - 1
		}
	}
	if ev.kind == evPartition {
		return uint32(ev.kind) | uint32(ev.mask)<<4
	}
	return uint32(ev.kind) | uint32(ev.node)<<4 | uint32(ev.peer)<<12 | uint32(t)<<20
}

func (x *Explorer) unpack(p uint32) event {
	if evKind(p&0xf) == evPartition {
		return event{kind: evPartition, mask: uint64(p >> 4)}
	}
	ev := event{kind: evKind(p & 0xf), node: int(p >> 4 & 0xff), peer: int(p >> 12 & 0xff)}
	if ev.kind == evTimer {
		ev.timer = x.timerNames[p>>20]
	}
	return ev
}

// withTrace rebuilds the path to the state fp from the parents' records, and replays it.
func (x *Explorer) withTrace(v *Violation, seen *seenTable, fp fingerprint) *Violation {
	var evs []event
	for {
		r, _ := seen.get(fp)
		if r.idx == 0 {
			break
		}
		evs = append(evs, x.unpack(r.ev))
		fp = r.parent
	}
	slices.Reverse(evs)
	v.ev = evs
	v.Trace = x.replay(evs)
	return v
}

// replay runs the events from the initial state and describes each.
func (x *Explorer) replay(evs []event) []Step {
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
func (x *Explorer) describeIn(s *state, ev event) string {
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
		m := &x.msgs[p.id]
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

func (x *Explorer) describe(ev event) string {
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
