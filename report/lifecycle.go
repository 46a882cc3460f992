package report

// Each lane's life: its incarnations, dead and paused stretches, and leader beliefs.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// incarnations finds each node's processes from launcher.jsonl (spawned, exited) and the logs (an
// incarnation without launcher records — a node started by hand — lasts from its first event to its
// stop or the end), and the dead stretches between them.
func (b *builder) incarnations() {
	type key struct{ node, inc int }
	found := map[key]*Inc{}
	var order []key
	get := func(node, inc int, t int64) *Inc {
		k := key{node, inc}
		if x := found[k]; x != nil {
			return x
		}
		x := &Inc{Lane: b.lane[node], Inc: inc, From: t, To: -1}
		found[k] = x
		order = append(order, k)
		return x
	}
	for _, r := range b.run.Launcher {
		if _, ok := b.lane[r.Node]; !ok {
			continue
		}
		switch r.Ev {
		case logs.LaunchSpawned:
			x := get(r.Node, r.Inc, b.us(r.TS))
			x.From, x.Pid = min(x.From, b.us(r.TS)), r.Pid
		case logs.LaunchExited:
			x := get(r.Node, r.Inc, b.us(r.TS))
			x.To = b.us(r.TS)
			switch {
			case r.Signal != "":
				x.End = r.Signal
			case r.Code != nil:
				x.End = "exit " + strconv.Itoa(*r.Code)
			default:
				x.End = "exited"
			}
		}
	}
	for id, nl := range b.run.Nodes {
		if _, ok := b.lane[id]; !ok {
			continue
		}
		for i := range nl.Events {
			e := &nl.Events[i]
			t := b.us(e.TS)
			x := get(id, e.Inc, t)
			x.From = min(x.From, t)
			if e.Ev == logs.EvStop && (x.To < 0 || t < x.To) {
				// As for the checker, a node that logged stop takes no further part.
				if x.End == "" {
					x.End = "stop"
				}
				x.To = t
			}
			if e.Ev == logs.EvStart && e.Pid != 0 && x.Pid == 0 {
				x.Pid = e.Pid
			}
		}
	}
	b.incs = make([][]Inc, len(b.d.Lanes))
	for _, k := range order {
		x := found[k]
		b.incs[x.Lane] = append(b.incs[x.Lane], *x)
	}
	for _, xs := range b.incs {
		slices.SortStableFunc(xs, func(p, q Inc) int { return cmp.Compare(p.From, q.From) })
		for i := range xs {
			if xs[i].To < 0 {
				xs[i].To = b.d.To
				if xs[i].End == "" {
					xs[i].End = "running at the end"
				}
			}
		}
	}
	b.kills()
	for l, xs := range b.incs {
		for i := range xs {
			if i+1 < len(xs) && xs[i].To > xs[i+1].From {
				xs[i].To = xs[i+1].From
			}
			xs[i].To = max(xs[i].To, xs[i].From)
		}
		// The last incarnation may end in the run's orderly stop: the lane then ends there, it is
		// not drawn dead.
		if k := len(xs) - 1; k >= 0 && b.runStopped(xs[k]) {
			xs[k].RunStop = true
		}
		// Dead: what no incarnation covers, from the first one's start (a node is not "dead" before
		// it was ever started) to the end.
		at := b.d.From
		if len(xs) > 0 {
			at = max(b.d.From, xs[0].From)
		}
		for _, x := range xs {
			if x.From > at {
				b.d.Dead = append(b.d.Dead, Span{Lane: l, From: at, To: x.From})
			}
			at = max(at, x.To)
		}
		if at < b.d.To && (len(xs) == 0 || !xs[len(xs)-1].RunStop) {
			b.d.Dead = append(b.d.Dead, Span{Lane: l, From: at, To: b.d.To})
		}
		b.d.Incs = append(b.d.Incs, xs...)
	}
	b.runStop()
}

// killSlack is the checker's (check/model.go): an incarnation that died on a signal at most this long
// before a kill record is that kill's victim (the exit may be reaped before the record is written).
const killSlack = int64(100_000) // µs

// kills ends each incarnation that chaos.jsonl says was killed (or stopped by a chaos step) at the
// kill's time, as the checker does: launcher.jsonl's exited is when the launcher reaped the process,
// which can be long after the signal, and until then the node would be drawn alive and following
// itself.
func (b *builder) kills() {
	for _, r := range b.run.Chaos {
		if r.Error != "" || (r.Op != logs.OpKill && r.Op != logs.OpStop) {
			continue
		}
		t := b.us(r.TS)
		for _, id := range r.Targets {
			l, ok := b.lane[id]
			if !ok {
				continue
			}
			xs := b.incs[l]
			k := -1
			for i := range xs {
				if xs[i].From <= t {
					k = i
				}
			}
			if k < 0 {
				continue
			}
			x := &xs[k]
			signalled := x.End != "" && x.End != "stop" && x.End != "running at the end" && x.End != "exited" && !strings.HasPrefix(x.End, "exit ")
			if x.To < t && !(signalled && x.To >= t-killSlack) {
				continue // it was already dead: the kill missed
			}
			x.To = max(min(x.To, t), x.From)
			if x.End == "" || x.End == "running at the end" {
				x.End = map[string]string{logs.OpKill: "killed", logs.OpStop: "stop"}[r.Op]
			}
		}
	}
}

// runStopped tells whether an incarnation ended in the run's orderly stop: at or after the
// launcher's stopping, by its stop, a clean exit or SIGTERM (not a crash, nor a kill).
func (b *builder) runStopped(x Inc) bool {
	if !b.ended || x.To < b.d.End {
		return false
	}
	switch x.End {
	case "stop", "exit 0", "terminated", "exited", "running at the end":
		return true
	}
	return false
}

// runStop is the run's orderly stop at the end: from the launcher's stopping to the last thing
// observed, when some node ended in it.
func (b *builder) runStop() {
	if !b.ended || b.d.End >= b.d.To {
		return
	}
	stopped, other := 0, 0
	for _, x := range b.d.Incs {
		switch {
		case x.RunStop && x.End != "running at the end":
			stopped++
		case x.To >= b.d.End && x.End != "running at the end":
			other++
		}
	}
	if stopped == 0 {
		return
	}
	label := fmt.Sprintf("the run's stop: the launcher stopped the nodes at %s ms (%d stopped in order", trimFloat(float64(b.d.End)/1000), stopped)
	if other > 0 {
		label += fmt.Sprintf(", %d did not", other)
	}
	b.d.Stop = &Window{From: b.d.End, To: b.d.To, Label: label + ")"}
}

// incEnd is when the incarnation of lane l running at t ends (t itself when none runs).
func (b *builder) incEnd(l int, t int64) int64 {
	for _, x := range b.incs[l] {
		if x.From <= t && t < x.To {
			return x.To
		}
	}
	return t
}

// incTo is when incarnation inc of lane l ended (a kill's time for a killed one); t when the lane
// has no such incarnation.
func (b *builder) incTo(l, inc int, t int64) int64 {
	for _, x := range b.incs[l] {
		if x.Inc == inc {
			return x.To
		}
	}
	return t
}

// pauses turns chaos.jsonl's pause and resume records into paused stretches; a pause without its
// resume lasts until the node dies or the end.
func (b *builder) pauses() {
	open := map[int]int64{}
	for _, r := range b.run.Chaos {
		if r.Error != "" {
			continue
		}
		for _, id := range r.Targets {
			l, ok := b.lane[id]
			if !ok {
				continue
			}
			switch r.Op {
			case "pause":
				if _, already := open[l]; !already {
					open[l] = b.us(r.TS)
				}
			case "resume", "kill":
				if from, ok := open[l]; ok {
					b.d.Paused = append(b.d.Paused, Span{Lane: l, From: from, To: max(from, b.us(r.TS))})
					delete(open, l)
				}
			}
		}
	}
	for l, from := range open {
		b.d.Paused = append(b.d.Paused, Span{Lane: l, From: from, To: max(from, b.incEnd(l, from))})
	}
	slices.SortFunc(b.d.Paused, func(p, q Span) int { return cmp.Or(cmp.Compare(p.From, q.From), cmp.Compare(p.Lane, q.Lane)) })
}

// beliefs follows each node's leader belief: ⊥ from an incarnation's first event and after each
// elect, L after a leader event; nothing while it is dead.
func (b *builder) beliefs() {
	for id, nl := range b.run.Nodes {
		l, ok := b.lane[id]
		if !ok {
			continue
		}
		cur := Belief{Lane: l, From: -1}
		curInc := 0
		incTo := int64(0) // when the current incarnation ended: no belief outlives it
		flush := func(to int64) {
			// A belief replaced within the same microsecond is not drawn (nor is it a belief anyone
			// could act on).
			to = min(to, incTo)
			if cur.From >= 0 && to > cur.From {
				cur.To = to
				b.d.Beliefs = append(b.d.Beliefs, cur)
			}
			cur.From = -1
		}
		for i := range nl.Events {
			e := &nl.Events[i]
			t := b.us(e.TS)
			if e.Inc != curInc {
				if cur.From >= 0 {
					flush(b.incEnd(l, cur.From))
				}
				curInc = e.Inc
				incTo = b.incTo(l, e.Inc, t)
				cur = Belief{Lane: l, From: t, Leader: 0}
			}
			switch e.Ev {
			case logs.EvElect:
				if cur.Leader != 0 {
					flush(t)
					cur = Belief{Lane: l, From: t, Leader: 0}
				}
			case logs.EvLeader:
				if cur.Leader != e.Leader {
					flush(t)
					cur = Belief{Lane: l, From: t, Leader: e.Leader}
				}
			case logs.EvStop:
				flush(t)
			}
		}
		if cur.From >= 0 {
			flush(b.incEnd(l, cur.From))
		}
	}
	slices.SortStableFunc(b.d.Beliefs, func(p, q Belief) int { return cmp.Or(cmp.Compare(p.Lane, q.Lane), cmp.Compare(p.From, q.From)) })
}
