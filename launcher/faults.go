package launcher

import (
	"context"
	"fmt"
	"math/rand"
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
func (r *runner) runFaults(ctx context.Context) {
	rng := rand.New(rand.NewSource(r.cluster.Seed))
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, st := range r.sched.Steps {
		if !r.sleepUntil(ctx, st.At) {
			return
		}
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
			r.say("leaderlab: %s %s %d%s", r.since(), st.Op, id, targetNote(st.Target))
		}
		r.recordChaos(rec)
		if st.Op == "pause" && st.For > 0 && err == nil {
			wg.Add(1)
			go func(st chaos.Step, id int) {
				defer wg.Done()
				// The resume is part of the fault: it happens even when the run's time is up.
				r.sleepUntil(context.Background(), st.At+st.For)
				rec := logs.ChaosRecord{TS: time.Now().UnixNano(), Op: "resume", Step: st.Text, At: int64(st.At + st.For), Targets: []int{id}}
				if err := r.apply("resume", id); err != nil {
					rec.Error = err.Error()
				}
				r.say("leaderlab: %s resume %d", r.since(), id)
				r.recordChaos(rec)
			}(st, id)
		}
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

// target resolves a step's target to a node ID at this moment.
func (r *runner) target(st chaos.Step, rng *rand.Rand) (int, error) {
	if st.Op == "heal" {
		return 0, nil
	}
	var pool []int
	for _, n := range r.cluster.Nodes {
		pr := r.procs.current(n.ID)
		alive := pr != nil && pr.running()
		if alive == (st.Op != "restart") {
			pool = append(pool, n.ID)
		}
	}
	leader := 0
	if st.Target.Kind == "leader" {
		leader = r.leader()
	}
	return chaos.Resolve(st.Target, pool, leader, rng)
}

// apply carries out one action on node id.
func (r *runner) apply(op string, id int) error {
	pr := r.procs.current(id)
	if pr == nil {
		return fmt.Errorf("node %d was never started", id)
	}
	switch op {
	case "kill":
		return pr.signal(syscall.SIGKILL)
	case "pause":
		if err := pr.signal(syscall.SIGSTOP); err != nil {
			return err
		}
		pr.paused.Store(true)
	case "resume":
		if err := pr.signal(syscall.SIGCONT); err != nil {
			return err
		}
		pr.paused.Store(false)
	case "restart":
		if pr.running() {
			return fmt.Errorf("node %d is running (restart starts a killed node)", id)
		}
		_, err := r.procs.spawn(id, pr.inc+1)
		return err
	default:
		return fmt.Errorf("action %q is not supported yet", op)
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

// watch prints the cluster's view whenever it changes: who follows whom.
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
		view := describe(r.statuses())
		if view != last {
			r.say("leaderlab: %s %s", r.since(), view)
			last = view
		}
	}
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
