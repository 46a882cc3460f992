package launcher

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
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
// each applied fault in chaos.jsonl with its targets resolved to IDs.
//
// Each step draws its random choices (a random target, random-halves) from a source of its own,
// seeded by the run's seed and the step's position in the schedule: a replay of the run draws the
// same, and a step's draw does not depend on what earlier steps drew, or failed to draw.
func (r *runner) runFaults(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	for i, st := range r.sched.Steps {
		if !r.sleepUntil(ctx, st.At) {
			return
		}
		rng := stepRand(r.cluster.Seed, i)
		switch st.Op {
		case chaos.OpPartition, chaos.OpLink, chaos.OpHeal:
			r.netStep(st, rng)
		default:
			r.procStep(st, rng, &wg)
		}
	}
}

// stepRand is step i's random source (splitmix64 of the seed and i).
func stepRand(seed int64, i int) *rand.Rand {
	h := uint64(seed) ^ 0x9e3779b97f4a7c15*uint64(i+1)
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
	h = (h ^ (h >> 27)) * 0x94d049bb133111eb
	h ^= h >> 31
	return rand.New(rand.NewSource(int64(h)))
}

// procStep carries out a kill, pause, resume or restart.
func (r *runner) procStep(st chaos.Step, rng *rand.Rand, wg *sync.WaitGroup) {
	id, err := r.target(st, rng)
	// The record's time is taken before the action, so that no reaction to the fault (a
	// neighbour noticing a dead link) is logged before the fault itself.
	rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: st.Op, Step: st.Text, At: int64(st.At), Targets: []int{}}
	if err == nil {
		err = r.apply(st.Op, id)
	}
	if id > 0 {
		rec.Targets = []int{id}
	}
	if err != nil {
		rec.Error = err.Error()
		r.say("leaderlab: %s %s: not applied: %v", r.since(), st.Text, err)
	} else {
		r.fault(fmt.Sprintf("%s %d%s", st.Op, id, targetNote(st.Target)), "")
		if st.Target.Kind == chaos.TargetLeader {
			r.mu.Lock()
			switch st.Op {
			case chaos.OpKill, chaos.OpStop:
				r.killedLeaders = append(r.killedLeaders, id)
			case chaos.OpPause:
				r.pausedLeaders = append(r.pausedLeaders, id)
			}
			r.mu.Unlock()
		}
	}
	r.recordChaos(rec)
	if st.Op == chaos.OpPause && st.For > 0 && err == nil {
		wg.Add(1)
		go func(st chaos.Step, id int) {
			defer wg.Done()
			// The resume is part of the fault: it happens even when the run's time is up.
			r.sleepUntil(context.Background(), st.At+st.For)
			rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: chaos.OpResume, Step: st.Text, At: int64(st.At + st.For), Targets: []int{id}}
			if err := r.apply(chaos.OpResume, id); err != nil {
				rec.Error = err.Error()
			}
			r.fault(fmt.Sprintf("resume %d", id), "")
			r.recordChaos(rec)
		}(st, id)
	}
}

func targetNote(t chaos.Target) string {
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

// nodeState is what the launcher knows of a node's process.
type nodeState int

const (
	stDead    nodeState = iota // never started, or exited
	stRunning                  // running and not paused
	stPaused                   // stopped by SIGSTOP
)

func (r *runner) state(id int) nodeState {
	pr := r.procs.current(id)
	switch {
	case pr == nil || !pr.running():
		return stDead
	case pr.paused.Load():
		return stPaused
	}
	return stRunning
}

// nodesIn lists, ascending, the nodes in one of the given states.
func (r *runner) nodesIn(states ...nodeState) []int {
	var out []int
	for _, n := range r.cluster.Nodes {
		if slices.Contains(states, r.state(n.ID)) {
			out = append(out, n.ID)
		}
	}
	sort.Ints(out)
	return out
}

// target resolves a kill, pause, resume or restart target to a node ID at this moment. highest,
// lowest and random choose among the nodes the action applies to: the running ones (paused or not)
// for kill, the running unpaused ones for pause, the paused ones for resume, the dead ones for
// restart. leader is the node the live nodes follow for kill and pause; for restart (resume) it is
// the leader most recently killed (paused) by a "leader" step that is still dead (paused), so that
// "kill leader ... restart leader" brings back the node it took away.
func (r *runner) target(st chaos.Step, rng *rand.Rand) (int, error) {
	var pool []int
	leader := 0
	switch st.Op {
	case chaos.OpKill, chaos.OpStop:
		pool = r.nodesIn(stRunning, stPaused)
	case chaos.OpPause:
		pool = r.nodesIn(stRunning)
	case chaos.OpResume:
		pool = r.nodesIn(stPaused)
		leader = r.lastLeader(r.pausedLeaders, stPaused)
	case chaos.OpRestart:
		pool = r.nodesIn(stDead)
		leader = r.lastLeader(r.killedLeaders, stDead)
	}
	if st.Target.Kind == chaos.TargetLeader && (st.Op == chaos.OpKill || st.Op == chaos.OpStop || st.Op == chaos.OpPause) {
		leader = r.leader()
	}
	return chaos.Resolve(st.Target, pool, leader, rng)
}

// lastLeader is the most recent of ids (leaders a step took away) still in state s; 0 if none.
func (r *runner) lastLeader(ids []int, s nodeState) int {
	r.mu.Lock()
	ids = slices.Clone(ids)
	r.mu.Unlock()
	for i := len(ids) - 1; i >= 0; i-- {
		if r.state(ids[i]) == s {
			return ids[i]
		}
	}
	return 0
}

// apply carries out one action on node id.
func (r *runner) apply(op string, id int) error {
	pr := r.procs.current(id)
	if pr == nil {
		return fmt.Errorf("node %d was never started", id)
	}
	switch op {
	case chaos.OpKill:
		return pr.signal(syscall.SIGKILL)
	case chaos.OpStop:
		// An orderly shutdown: a paused node is woken first so that it can act on the SIGTERM.
		if err := pr.signal(syscall.SIGTERM); err != nil {
			return err
		}
		pr.paused.Store(false)
		return pr.signal(syscall.SIGCONT)
	case chaos.OpPause:
		if err := pr.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		pr.paused.Store(true)
	case chaos.OpResume:
		if err := pr.signal(syscall.SIGCONT); err != nil {
			return err
		}
		pr.paused.Store(false)
		r.net.up(id, nil) // rules changed while it was stopped reach it now
	case chaos.OpRestart:
		if pr.running() {
			return fmt.Errorf("node %d is running (restart starts a killed node)", id)
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
					if _, err := r.control(n, wire.CtlBegin); err != nil {
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
	var wg sync.WaitGroup
	for _, n := range r.cluster.Nodes {
		pr := r.procs.current(n.ID)
		if pr == nil || !pr.running() || pr.paused.Load() {
			continue
		}
		wg.Add(1)
		go func(n rundir.Node) {
			defer wg.Done()
			rep, err := r.control(n, wire.CtlStatus)
			if err == nil && rep.Begun {
				mu.Lock()
				out[n.ID] = rep
				mu.Unlock()
			}
		}(n)
	}
	wg.Wait()
	return out
}

// leader is the node the live nodes currently follow: the belief most of them hold (0 if none).
func (r *runner) leader() int {
	count := map[int]int{}
	for _, st := range r.statuses() {
		if st.Leader != 0 {
			count[st.Leader]++
		}
	}
	best := 0
	for l, c := range count {
		if c > count[best] || (c == count[best] && l > best) {
			best = l
		}
	}
	return best
}

// watch asks the nodes who follows whom, every 200 ms (2 ms × N for large clusters). On a terminal
// the answer goes to the status line; elsewhere it is printed whenever it changes.
func (r *runner) watch(ctx context.Context) {
	every := max(200*time.Millisecond, time.Duration(len(r.cluster.Nodes))*2*time.Millisecond)
	t := time.NewTicker(every)
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
		view := describe(st)
		if view != last {
			r.say("leaderlab: %s %s", r.since(), view)
			last = view
		}
	}
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
		switch r.state(n.ID) {
		case stRunning:
			s.Up++
		case stPaused:
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

// describe renders statuses as "leader 5: nodes 1,2,3,4,5; electing: 3".
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
		ids := by[l]
		sort.Ints(ids)
		s := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(ids)), ","), "[]")
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
