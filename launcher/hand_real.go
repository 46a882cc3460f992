package launcher

import (
	"context"
	"fmt"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// A real run driven by hand: the runner's own steps (procStep, netStep) carry out what the Hand is
// asked, at the moment it is asked, and the stop moves the end of the observed run.

// attachReal opens the Hand on runner r, once its nodes were told to begin; cancel ends the
// observed run (the stop).
func (h *Hand) attachReal(r *runner, cancel context.CancelFunc) {
	h.mu.Lock()
	h.real, h.cancel = r, cancel
	h.mu.Unlock()
	h.setBegan(r.dir, *r.cluster, r.begin.UnixNano())
}

// detach closes the Hand to faults once the observed run is over, after the pauses it took with a
// "for" have been resumed.
func (h *Hand) detach() {
	h.mu.Lock()
	h.real = nil
	h.mu.Unlock()
	h.wg.Wait()
}

// applyReal carries out st now (h.mu held): its offset is the next whole millisecond after the
// begin, as a replay's schedule line says.
func (h *Hand) applyReal(st chaos.Step) ([]logs.ChaosRecord, error) {
	r := h.real
	st.At = (time.Since(r.begin) + time.Millisecond - 1).Truncate(time.Millisecond)
	st.Text = fmt.Sprintf("at %v %s", st.At, st.Text)
	rng := chaos.StepRand(r.cluster.Seed, len(r.sched.Steps)+len(h.steps))
	h.recMu.Lock()
	from := len(h.recs)
	h.recMu.Unlock()
	switch st.Op {
	case chaos.OpPartition, chaos.OpLink, chaos.OpHeal:
		r.netStep(st, rng)
	default:
		r.procStep(st, rng, &h.wg)
	}
	h.steps = append(h.steps, st.Text)
	h.lastFault = max(h.lastFault, st.At+st.For)
	h.recMu.Lock()
	defer h.recMu.Unlock()
	var out []logs.ChaosRecord
	for _, rec := range h.recs[from:] {
		if rec.Step == st.Text {
			out = append(out, rec)
		}
	}
	return out, nil
}

// noteRecord keeps a chaos record the runner wrote, for Apply's answer.
func (h *Hand) noteRecord(rec logs.ChaosRecord) {
	h.recMu.Lock()
	h.recs = append(h.recs, rec)
	h.recMu.Unlock()
}

// handStopAt is the stop's offset (h.mu held): now, or the settle time after the last fault, at a
// whole millisecond, within Config.Duration.
func (r *runner) handStopAt() time.Duration {
	h := r.cfg.Hand
	d := max(time.Since(r.begin), max(r.sched.LastFault(), h.lastFault)+r.cfg.Settle)
	d = min((d + time.Millisecond - 1).Truncate(time.Millisecond), r.cfg.Duration)
	r.setEnd(r.begin.Add(d))
	return d
}

// handSave writes the hand steps and the run's length into cluster.json, so that a replay makes
// them again.
func (r *runner) handSave() error {
	h := r.cfg.Hand
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.steps) == 0 && h.stop == 0 {
		return nil
	}
	c := *r.cluster
	c.Chaos = handChaos(c.Chaos, h.steps)
	if h.stop > 0 {
		c.Duration = rundir.Duration(h.stop)
	}
	if err := rundir.Save(r.dir, &c); err != nil {
		return fmt.Errorf("save the hand steps in cluster.json: %w", err)
	}
	return nil
}
