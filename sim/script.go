package sim

import (
	"errors"
	"fmt"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// The script of a scripted Sim (Config.Scripted): one interleaving, chosen step by step, with
// the log a run of it writes. The explorer replays a counterexample so: its run directory is the
// simulator's, event for event what `run --sim` would log had its delays fallen that way.

// ErrNotScripted is returned by the script's controls on a Sim that runs by itself.
var ErrNotScripted = errors.New("sim: not a scripted run (Config.Scripted)")

// Begin carries out every node's start, in ID order, at the current time.
func (s *Sim) Begin() error {
	if !s.cfg.Scripted {
		return ErrNotScripted
	}
	for s.q.len() > 0 && s.q.h[0].kind() == kStart {
		s.dispatch(s.q.pop())
	}
	return nil
}

// AdvanceTo moves virtual time on to t, carrying out nothing.
func (s *Sim) AdvanceTo(t time.Duration) error {
	switch {
	case !s.cfg.Scripted:
		return ErrNotScripted
	case s.finished:
		return ErrFinished
	case t < s.now:
		return fmt.Errorf("sim: advance to %v: the time is %v already", t, s.now)
	}
	s.now = t
	return nil
}

// Deliver hands the oldest message in flight on link from->to to its receiver now.
func (s *Sim) Deliver(from, to int) error {
	n, err := s.scripted(to)
	if err != nil {
		return err
	}
	at := -1
	for i := range s.q.h {
		it := &s.q.h[i]
		if it.kind() != kDeliver || int(it.node) != to || int(it.from) != from || int(it.inc) != n.inc {
			continue
		}
		if at < 0 || it.sk < s.q.h[at].sk {
			at = i
		}
	}
	if at < 0 {
		return fmt.Errorf("sim: deliver %d->%d: no message is in flight on that link", from, to)
	}
	it := s.q.remove(at)
	s.receive(n, &it)
	return nil
}

// Fire fires node id's armed timer now.
func (s *Sim) Fire(id int, timer string) error {
	n, err := s.scripted(id)
	if err != nil {
		return err
	}
	for i := range n.timers {
		t := &n.timers[i]
		if t.name == timer && t.armed {
			t.armed = false
			s.step(n, election.Input{Kind: election.InTimer, Timer: timer})
			return nil
		}
	}
	return fmt.Errorf("sim: fire timer %q at node %d: it is not armed", timer, id)
}

// Detect tells node id's machine what a failure detector concluded about peer (suspect, or trust
// again), logged with the reason.
func (s *Sim) Detect(id, peer int, suspect bool, reason string) error {
	n, err := s.scripted(id)
	if err != nil {
		return err
	}
	if suspect {
		e := s.event(n, logs.EvSuspect)
		e.Peer, e.Reason = peer, reason
		s.step(n, election.Input{Kind: election.InSuspect, From: peer})
		return nil
	}
	s.event(n, logs.EvTrust).Peer = peer
	s.step(n, election.Input{Kind: election.InTrust, From: peer})
	return nil
}

func (s *Sim) scripted(id int) (*node, error) {
	if !s.cfg.Scripted {
		return nil, ErrNotScripted
	}
	return s.running(id)
}

// remove takes item i out of the heap.
func (q *queue) remove(i int) item {
	it := q.h[i]
	last := len(q.h) - 1
	if i == last {
		q.h = q.h[:last]
		return it
	}
	moved := q.h[last]
	q.h = q.h[:last]
	// put the last item in i's place, and restore the order around it
	for i > 0 {
		p := (i - 1) / 4
		if !moved.less(&q.h[p]) {
			break
		}
		q.h[i] = q.h[p]
		i = p
	}
	q.h[i] = moved
	for {
		c := 4*i + 1
		if c >= len(q.h) {
			break
		}
		m := c
		for j := c + 1; j < min(c+4, len(q.h)); j++ {
			if q.h[j].less(&q.h[m]) {
				m = j
			}
		}
		if !q.h[m].less(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return it
}

// Partition records a partition into groups in chaos.jsonl, as the chaos agent does: the script
// itself decides which messages are lost (none is delivered across it).
func (s *Sim) Partition(groups [][]int) error { return s.record(logs.OpPartition, groups) }

// Heal records the end of every partition.
func (s *Sim) Heal() error { return s.record(logs.OpHeal, nil) }

func (s *Sim) record(op string, groups [][]int) error {
	if !s.cfg.Scripted {
		return ErrNotScripted
	}
	rec := logs.ChaosRecord{TS: s.cfg.Base + int64(s.now), Op: op, Targets: []int{}, At: int64(s.now), Groups: groups,
		Acks: map[string]int64{}}
	for _, id := range s.ids {
		if s.nodes[id].alive {
			rec.Targets = append(rec.Targets, id)
			rec.Acks[fmt.Sprint(id)] = rec.TS
		}
	}
	rec.Step = fmt.Sprintf("at %v %s", s.now, op)
	s.run.Chaos = append(s.run.Chaos, rec)
	return nil
}
