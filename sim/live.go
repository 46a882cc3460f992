package sim

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Live driving of a Cluster (leaderlab ui): the run advanced a slice of virtual time at a time,
// which the caller paces against the wall clock; faults carried out when asked; the stop chosen
// when asked. A step taken by hand is carried out at a whole millisecond after the begin, before
// anything else that falls due at that instant, which is where a scheduled step of the same offset
// runs (beginAll schedules the steps before anything else): so the schedule the hand steps make,
// written into cluster.json, replays the run event for event with `run --sim --replay`.

// liveState is what live driving adds to a Cluster.
type liveState struct {
	on     bool
	stopAt time.Duration // the stop's offset from the begin; 0: not chosen yet
	hand   []string      // the hand steps, as schedule lines
	done   bool
	err    error
}

// ErrLiveOver is returned by Apply once the run has stopped (or its stop was chosen).
var ErrLiveOver = errors.New("the run is stopping: no more faults")

// Start spawns the nodes and runs until every one of them has been told to begin (the launcher's
// readiness barrier), then holds: what comes later happens in AdvanceTo. The stop at the end of the
// cluster's Duration stays as a bound; StopAt chooses an earlier one.
func (s *Cluster) Start() error {
	s.live.on = true
	for _, id := range s.ids {
		if err := s.spawn(s.procs[id], false); err != nil {
			return err
		}
	}
	limit := 10 * time.Second
	for !s.begun {
		if len(s.q) == 0 || s.q[0].at > limit {
			return fmt.Errorf("sim: %d of %d nodes were ready after %v of virtual time", s.readyN, len(s.ids), limit)
		}
		s.dispatch(s.q.pop())
	}
	return nil
}

// Begin is the virtual time of the begin record (the schedule's origin).
func (s *Cluster) Begin() time.Duration { return s.begin }

// Now is the virtual time.
func (s *Cluster) Now() time.Duration { return s.now }

// Log is the run as logged so far: the caller reads it between calls, never during one.
func (s *Cluster) Log() *logs.Run { return &s.run }

// Done tells whether the run is over (every node stopped after the stop).
func (s *Cluster) Done() bool { return s.live.done }

// AdvanceTo carries out everything due before virtual time t and moves the time to t; past the
// chosen stop, it stops the nodes and carries on until they are gone. It returns true once the run
// is over.
func (s *Cluster) AdvanceTo(t time.Duration) (bool, error) {
	if s.live.done {
		return true, s.live.err
	}
	if s.live.stopAt > 0 && t >= s.begin+s.live.stopAt {
		s.runBefore(s.begin + s.live.stopAt)
		s.stopEv.off = true
		s.stopAll()
		return true, s.drain()
	}
	s.runBefore(t)
	if s.ended { // the cluster's Duration ran out
		return true, s.drain()
	}
	s.now = max(s.now, t)
	return false, nil
}

// runBefore dispatches every event due before t, and stops at the run's own end.
func (s *Cluster) runBefore(t time.Duration) {
	for len(s.q) > 0 && s.q[0].at < t && !s.ended {
		s.dispatch(s.q.pop())
	}
	if !s.ended {
		s.now = max(s.now, t)
	}
}

// drain runs what is left after the stop until every node is gone, as Run does, and ends the log.
func (s *Cluster) drain() error {
	for len(s.q) > 0 && !s.allDead() {
		s.dispatch(s.q.pop())
		if s.now > s.begin+s.cluster.Duration.D()+5*time.Second {
			s.errs = append(s.errs, errors.New("sim: nodes still running 5s after their SIGTERM"))
			break
		}
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchEnd})
	s.live.done = true
	s.live.err = errors.Join(s.errs...)
	return s.live.err
}

// Apply carries out a step now: at the next whole millisecond after the begin (the step's At is
// set to it, and its text to the schedule line that replays it), through the executor, recorded in
// chaos.jsonl. It returns the records the step wrote.
func (s *Cluster) Apply(st chaos.Step) ([]logs.ChaosRecord, error) {
	if !s.begun {
		return nil, errors.New("the nodes have not begun yet")
	}
	if s.live.stopAt > 0 || s.ended || s.live.done {
		return nil, ErrLiveOver
	}
	at := (s.now - s.begin + time.Millisecond - 1).Truncate(time.Millisecond)
	s.runBefore(s.begin + at)
	st.At = at
	st.Text = strings.TrimSpace(fmt.Sprintf("at %v %s", at, strings.TrimSpace(st.Text)))
	st.Pos = len(s.sched.Steps) + 1
	s.sched.Steps = append(s.sched.Steps, st)
	s.live.hand = append(s.live.hand, st.Text)
	n := len(s.run.Chaos)
	s.step(len(s.sched.Steps)-1, st)
	return append([]logs.ChaosRecord(nil), s.run.Chaos[n:]...), nil
}

// StopAt chooses the stop: offset d after the begin, at least the settle time after the last fault
// (the checker needs it) and not before now. It returns the offset chosen, which becomes the
// cluster's Duration, and writes the hand steps into the cluster's schedule.
func (s *Cluster) StopAt(d time.Duration) time.Duration {
	if s.live.stopAt > 0 {
		return s.live.stopAt
	}
	d = max(d, s.now-s.begin, s.sched.LastFault()+s.cluster.Settle.D())
	d = (d + time.Millisecond - 1).Truncate(time.Millisecond)
	d = min(d, s.cluster.Duration.D())
	s.live.stopAt = d
	chaosText := s.cluster.Chaos
	if len(s.live.hand) > 0 {
		if chaosText != "" {
			chaosText += "\n"
		}
		chaosText += HandComment + "\n" + strings.Join(s.live.hand, "\n")
	}
	for _, c := range []*rundir.Cluster{s.cluster, &s.run.Cluster} {
		c.Duration = rundir.Duration(d)
		c.Chaos = chaosText
	}
	return d
}

// HandComment heads the steps taken by hand in a run's schedule (cluster.json's chaos).
const HandComment = "# by hand (leaderlab ui):"
