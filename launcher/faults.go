package launcher

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// runFaults carries out the chaos schedule, step by step at its offsets from the begin, recording
// each applied fault in chaos.jsonl with its targets resolved to IDs. The resolution of targets and
// of network faults is chaos.Executor's, shared with the simulator; the runner is its Cluster.
//
// Each step draws its random choices (a random target, random-halves) from a source of its own
// (chaos.StepRand): a replay of the run draws the same, and a step's draw does not depend on what
// earlier steps drew, or failed to draw.
func (r *runner) runFaults(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, st := range r.sched.Steps {
		if !r.sleepUntil(ctx, st.At) {
			return
		}
		rng := chaos.StepRand(r.cluster.Seed, i)
		switch st.Op {
		case chaos.OpPartition, chaos.OpLink, chaos.OpHeal:
			r.netStep(st, rng)
		case chaos.OpClock:
			r.clockStep(st, rng)
		default:
			r.procStep(st, rng, &wg)
		}
	}
}

// procStep carries out a kill, stop, pause, resume or restart.
func (r *runner) procStep(st chaos.Step, rng *rand.Rand, wg *sync.WaitGroup) {
	// The record's time is taken right before the signal of a kill or stop, and once the process is
	// seen stopped for a pause (Do notes it), so that no reaction to the fault (a neighbour noticing
	// a dead link) is logged before the fault itself, and no event the
	// node logged while its target was being resolved ("pause leader" asks every node whom it
	// follows: milliseconds) falls after it: the checker takes a node that logs for a running one
	// (seed 970007: a paused leader's last events came 1.5ms after its record, and it counted as
	// running through its pause). An action that was not carried out keeps the step's start.
	rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: st.Op, Step: st.Text, At: int64(st.At), Targets: []int{}}
	id, err := r.exec.Proc(st, rng)
	if id > 0 {
		rec.Targets = []int{id}
		if at, ok := r.actedAt(id); ok && err == nil {
			rec.TS = at
		}
	}
	if err != nil {
		rec.Error = err.Error()
		r.say("leaderlab: %s %s: not applied: %v", r.since(), st.Text, err)
	} else {
		r.fault(fmt.Sprintf("%s %d%s", st.Op, id, TargetNote(st.Target)), "")
	}
	r.recordChaos(rec)
	if st.Op == chaos.OpPause && st.For > 0 && err == nil {
		wg.Add(1)
		go func(st chaos.Step, id int) {
			defer wg.Done()
			// The resume is part of the fault: it happens even when the run's time is up.
			r.sleepUntil(context.Background(), st.At+st.For)
			rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: chaos.OpResume, Step: st.Text, At: int64(st.At + st.For), Targets: []int{id}}
			if err := r.Do(chaos.OpResume, id); err != nil {
				rec.Error = err.Error()
			}
			r.fault(fmt.Sprintf("resume %d", id), "")
			r.recordChaos(rec)
		}(st, id)
	}
}

// TargetNote is how a fault names a target that was not an ID: " (leader)", " (random)".
func TargetNote(t chaos.Target) string {
	if t.Kind == "" || t.Kind == "id" {
		return ""
	}
	return " (" + t.Kind + ")"
}

func (r *runner) recordChaos(rec logs.ChaosRecord) {
	if rec.TS == 0 {
		rec.TS = time.Now().UnixNano()
	}
	_ = r.chaos.Write(rec)
	if h := r.cfg.Hand; h != nil {
		h.noteRecord(rec)
	}
}

// sleepUntil waits until offset d after the begin; false when ctx ended first.
func (r *runner) sleepUntil(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(time.Until(r.begin.Add(d)))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

var _ chaos.Cluster = (*runner)(nil)

// IDs lists the cluster's nodes (chaos.Cluster).
func (r *runner) IDs() []int { return r.cluster.IDs() }

// Order is the ring order, or the IDs on a mesh (chaos.Cluster).
func (r *runner) Order() []int {
	if len(r.cluster.Ring) == len(r.cluster.Nodes) {
		return r.cluster.Ring
	}
	return r.cluster.IDs()
}

// State is what the launcher knows of a node's process (chaos.Cluster).
func (r *runner) State(id int) chaos.ProcState {
	pr := r.procs.current(id)
	switch {
	case pr == nil || !pr.running():
		return chaos.Dead
	case pr.paused.Load():
		return chaos.Paused
	}
	return chaos.Running
}

// Leader is the node the live nodes follow (chaos.Cluster).
func (r *runner) Leader() int { return r.leader() }

// noteAct records when an action on node id was about to be carried out (see procStep).
func (r *runner) noteAct(id int) {
	r.actMu.Lock()
	defer r.actMu.Unlock()
	if r.acted == nil {
		r.acted = map[int]int64{}
	}
	r.acted[id] = time.Now().UnixNano()
}

// actedAt returns, and forgets, the time noteAct recorded for node id.
func (r *runner) actedAt(id int) (int64, bool) {
	r.actMu.Lock()
	defer r.actMu.Unlock()
	t, ok := r.acted[id]
	delete(r.acted, id)
	return t, ok
}

// Do carries out one action on node id (chaos.Cluster).
func (r *runner) Do(op string, id int) error {
	pr := r.procs.current(id)
	if pr == nil {
		return fmt.Errorf("node %d was never started", id)
	}
	if op == chaos.OpKill || op == chaos.OpStop {
		// The peak memory is read before the fault's time is taken: reading /proc/PID/status is
		// the launcher's bookkeeping (65-110 µs on the 2-core machine), not part of the fault, and
		// it would count in every failover time measured from that instant.
		pr.noteHWM()
		r.noteAct(id)
	}
	switch op {
	case chaos.OpKill:
		return pr.send(syscall.SIGKILL)
	case chaos.OpStop:
		// An orderly shutdown: a paused node is woken first so that it can act on the SIGTERM.
		if err := pr.send(syscall.SIGTERM); err != nil {
			return err
		}
		pr.paused.Store(false)
		return pr.signal(syscall.SIGCONT)
	case chaos.OpPause:
		if err := pr.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		// The pause's time is when the process is seen stopped: a thread may still finish a line
		// it was writing when the signal came, and that line must come before the pause.
		if pr.cmd != nil {
			waitStopped(pr.cmd.Process.Pid, 50*time.Millisecond)
		}
		r.noteAct(id)
		pr.paused.Store(true)
	case chaos.OpResume:
		if err := pr.signal(syscall.SIGCONT); err != nil {
			return err
		}
		pr.paused.Store(false)
		r.net.up(id, nil) // rules changed while it was stopped reach it now
	case chaos.OpRestart:
		if pr.running() {
			return fmt.Errorf("node %d is running (restart starts a killed or stopped node)", id)
		}
		npr, err := r.procs.spawn(id, pr.inc+1)
		if err != nil {
			return err
		}
		go func() {
			// A new incarnation starts with no rules and waits for its begin (--await-begin): it is
			// given the rules in force once it listens, and only then told to begin, so it never
			// hears across a partition it should be inside.
			select {
			case <-npr.ready:
				r.net.up(id, func() {
					n, _ := r.cluster.Node(id)
					if err := r.controlRetry(n, wire.CtlBegin); err != nil {
						r.say("leaderlab: %s node %d: begin after restart: %v", r.since(), id, err)
					}
				})
			case <-npr.exited:
			}
		}()
	default:
		return fmt.Errorf("action %q is not supported", op)
	}
	return nil
}

// statuses asks every running, unpaused node for its state, concurrently.
func (r *runner) statuses() map[int]wire.CtlReply {
	out := map[int]wire.CtlReply{}
	var mu sync.Mutex
	// A poll of a thousand nodes on a machine they saturate takes long: it gives up at the run's
	// end, so that the run ends on time (run -n 1000 once polled for minutes past its end).
	end := r.endTime()
	_ = fanOut(r.cluster.Nodes, controlParallel(), func(n rundir.Node) error {
		pr := r.procs.current(n.ID)
		if pr == nil || !pr.running() || pr.paused.Load() || time.Now().After(end) {
			return nil
		}
		rep, err := r.control(n, wire.CtlStatus)
		if err == nil && rep.Begun {
			mu.Lock()
			out[n.ID] = rep
			mu.Unlock()
		}
		return nil // a node that does not answer is left out of the view
	})
	return out
}

// leader is the node the live nodes currently follow: the belief most of them hold (0 if none).
// SelfLeaders lists the running nodes that believe themselves leader, ascending: the primaries of a
// "partition primaries" (chaos.SelfLeaders).
func (r *runner) SelfLeaders() []int {
	var out []int
	for id, st := range r.statuses() {
		if st.Leader == id {
			out = append(out, id)
		}
	}
	sort.Ints(out)
	return out
}

func (r *runner) leader() int {
	var beliefs []int
	for _, st := range r.statuses() {
		beliefs = append(beliefs, st.Leader)
	}
	return chaos.Followed(beliefs)
}

// watch asks the nodes who follows whom, every 200 ms (4 ms × N for large clusters). On a terminal
// the answer goes to the status line; elsewhere it is printed whenever it changes.
func (r *runner) watch(ctx context.Context) {
	t := time.NewTicker(r.pollEvery())
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := r.statuses()
		if r.con.live {
			r.mu.Lock()
			r.view, r.viewSeen = st, true
			r.mu.Unlock()
			r.drawStatus()
			continue
		}
		view := describe(st) + r.absent(st)
		if view != last {
			r.say("leaderlab: %s %s", r.viewSince(st), view)
			last = view
		}
	}
}

// pollEvery is how often the nodes are asked for their state: every 200 ms, 4 ms × N for large
// clusters (a status poll is a control call per node: at a thousand nodes, one every 4 s leaves
// the cores to the nodes).
func (r *runner) pollEvery() time.Duration {
	return max(200*time.Millisecond, time.Duration(len(r.cluster.Nodes))*4*time.Millisecond)
}

func (r *runner) setEnd(t time.Time) {
	r.mu.Lock()
	r.end = t
	r.mu.Unlock()
}

func (r *runner) endTime() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.end
}

// untilElected extends a run whose --duration was not given while an election is still going on
// or due: until every live node answers and follows a leader that runs (unpaused), or the
// termination bound has passed since the planned end (an election begun by then has had its
// bound; the checker judges the rest). A node that follows a dead leader has an election ahead of
// it (its detector has not told it yet). It returns what it did, for the stopping record (""
// when the run was not extended).
func (r *runner) untilElected(ctx context.Context) string {
	electing := func() (int, bool) {
		st := r.statuses()
		n := 0
		for _, s := range st {
			if s.Leader == 0 || r.State(s.Leader) != chaos.Running {
				n++
			}
		}
		return n, n > 0 || len(st) < r.liveCount()
	}
	planned := r.endTime()
	limit := planned.Add(r.cfg.TerminationBound)
	r.setEnd(limit)
	n, going := electing()
	if !going {
		return ""
	}
	r.say("leaderlab: %s %d nodes are electing or follow a dead or paused leader: the run goes on until every live node follows a live leader, for at most the termination bound (%v; give --duration to stop on time)",
		r.since(), n, r.cfg.TerminationBound)
	t := time.NewTicker(r.pollEvery())
	defer t.Stop()
	for time.Now().Before(limit) {
		select {
		case <-ctx.Done():
			return ""
		case <-t.C:
		}
		if _, going = electing(); !going {
			r.say("leaderlab: %s every live node follows a live leader", r.since())
			return fmt.Sprintf("extended by %v: the election went on past --duration", time.Since(planned).Round(time.Millisecond))
		}
	}
	r.say("leaderlab: %s the termination bound passed with nodes still electing", r.since())
	return fmt.Sprintf("extended by %v, the termination bound: nodes were still electing", r.cfg.TerminationBound)
}

// liveCount is how many nodes run unpaused.
func (r *runner) liveCount() int {
	n := 0
	for _, nd := range r.cluster.Nodes {
		if r.State(nd.ID) == chaos.Running {
			n++
		}
	}
	return n
}

// statusLine redraws the status line a few times a second while the run lasts (terminals only).
func (r *runner) statusLine(ctx context.Context) {
	if !r.con.live {
		return
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		r.drawStatus()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// drawStatus draws the status line from what the launcher knows now.
func (r *runner) drawStatus() {
	s := status{Elapsed: time.Since(r.begin), Total: len(r.cluster.Nodes), Groups: map[int][]int{}}
	for _, n := range r.cluster.Nodes {
		switch r.State(n.ID) {
		case chaos.Running:
			s.Up++
		case chaos.Paused:
			s.Paused++
		}
	}
	r.mu.Lock()
	for id, st := range r.view {
		s.Groups[st.Leader] = append(s.Groups[st.Leader], id)
	}
	s.Answered, s.LastFault = r.viewSeen, r.lastFault
	r.mu.Unlock()
	r.con.show(s)
}

// absent names the nodes that gave no status: "; paused: 4; down: 2; not answering: 7" ("" when
// every node answered).
func (r *runner) absent(st map[int]wire.CtlReply) string {
	var paused, down, silent []int
	for _, n := range r.cluster.Nodes {
		if _, ok := st[n.ID]; ok {
			continue
		}
		switch r.State(n.ID) {
		case chaos.Paused:
			paused = append(paused, n.ID)
		case chaos.Dead:
			down = append(down, n.ID)
		default:
			silent = append(silent, n.ID)
		}
	}
	out := ""
	for _, g := range []struct {
		name string
		ids  []int
	}{{"paused", paused}, {"down", down}, {"not answering", silent}} {
		if len(g.ids) > 0 {
			out += "; " + g.name + ": " + idRanges(g.ids)
		}
	}
	return out
}

// describe renders statuses as "leader 5: nodes 1-5; electing: 3".
func describe(st map[int]wire.CtlReply) string {
	by := map[int][]int{}
	for id, s := range st {
		by[s.Leader] = append(by[s.Leader], id)
	}
	var leaders []int
	for l := range by {
		leaders = append(leaders, l)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(leaders)))
	var parts []string
	for _, l := range leaders {
		s := idRanges(by[l])
		if l == 0 {
			parts = append(parts, "electing: "+s)
		} else {
			parts = append(parts, fmt.Sprintf("leader %d: nodes %s", l, s))
		}
	}
	if len(parts) == 0 {
		return "no node answers"
	}
	return strings.Join(parts, "; ")
}

// viewSince is when the view in st formed, "+0.712s": the latest change of answer among the nodes
// (on the launcher's clock), which at a thousand nodes, polled every 4 s, is well before the poll
// that saw it; then the poll's time follows, "+0.712s (seen +4.505s)".
func (r *runner) viewSince(st map[int]wire.CtlReply) string {
	var latest int64
	for id, s := range st {
		if s.Since == 0 {
			continue
		}
		at := s.Since
		if h := r.cluster.HostOf(id); h != nil {
			at -= h.OffsetNS // the host's clock is the launcher's plus its offset
		}
		latest = max(latest, at)
	}
	seen := r.since()
	if latest == 0 || r.begin.IsZero() {
		return seen
	}
	formed := time.Unix(0, latest).Sub(r.begin)
	if time.Since(r.begin)-formed < 300*time.Millisecond {
		return seen
	}
	return fmt.Sprintf("+%.3fs (seen %s)", formed.Seconds(), seen)
}

// waitStopped waits, up to limit, until process pid is in the stopped state (/proc/PID/stat's
// state T): a SIGSTOP is delivered asynchronously.
func waitStopped(pid int, limit time.Duration) {
	path := fmt.Sprintf("/proc/%d/stat", pid)
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(path)
		if err != nil {
			return // gone, or no /proc: nothing to wait for
		}
		// "pid (comm) S ...": the state follows the last ')'
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'T' || b[i+2] == 't') {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}
