package launcher

// Starting the cluster: every node spawned in ring order, then waited for until ready.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// spawnOrder is the nodes in ring order (the placement's order, for a mesh too): each node's ring
// neighbours are then spawned just before and just after it, so that its first dials find them
// listening. In ID order, with random IDs, a thousand nodes would each re-dial neighbours not yet
// started, with backoff, for seconds: at 2000 nodes the spawning took 21 s, two thirds of it in
// the kernel.
func (r *runner) spawnOrder() []rundir.Node {
	byID := map[int]rundir.Node{}
	for _, n := range r.cluster.Nodes {
		byID[n.ID] = n
	}
	out := make([]rundir.Node, 0, len(r.cluster.Nodes))
	for _, id := range r.cluster.Ring {
		if n, ok := byID[id]; ok {
			out = append(out, n)
			delete(byID, id)
		}
	}
	for _, n := range r.cluster.Nodes { // any the ring does not list (none, in a well-made run)
		if _, ok := byID[n.ID]; ok {
			out = append(out, n)
		}
	}
	return out
}

// spawnRemote starts the nodes of order that run on SSH hosts, each host's in order, the hosts in
// parallel; the first error wins.
func (r *runner) spawnRemote(order []rundir.Node) ([]*proc, error) {
	if r.remote == nil {
		return nil, nil
	}
	per := map[*remoteHost][]int{}
	for _, n := range order {
		if h := r.remote.at[n.ID]; h != nil {
			per[h] = append(per[h], n.ID)
		}
	}
	var (
		mu    sync.Mutex
		procs []*proc
		first error
		wg    sync.WaitGroup
	)
	for _, ids := range per {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range ids {
				pr, err := r.procs.spawn(id, 1)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				if pr != nil {
					procs = append(procs, pr)
				}
				stop := first != nil
				mu.Unlock()
				if stop {
					return
				}
			}
		}()
	}
	wg.Wait()
	return procs, first
}

// startAll spawns every node and waits until all are ready. On SSH hosts each host's nodes are
// started by a goroutine of their own, in spawn order, so that the hosts start theirs at once (a
// start is a round trip over SSH and a fork there); local processes are started one by one.
func (r *runner) startAll(ctx context.Context) error {
	order := append(r.spawnOrder(), r.cluster.Observers...)
	procs, err := r.spawnRemote(order)
	if err != nil {
		return err
	}
	for _, n := range order {
		if r.remote != nil && r.remote.at[n.ID] != nil {
			continue
		}
		pr, err := r.procs.spawn(n.ID, 1)
		if err != nil {
			return err
		}
		procs = append(procs, pr)
	}
	deadline := time.NewTimer(r.cfg.ReadyTimeout)
	defer deadline.Stop()
	for _, pr := range procs {
		select {
		case <-pr.ready:
		case <-pr.exited:
			return fmt.Errorf("node %d exited before it was ready; its stderr ends:\n%s", pr.id, stderrTail(r.dir, pr.id, 8))
		case <-deadline.C:
			var late []string
			for _, q := range procs {
				select {
				case <-q.ready:
				default:
					late = append(late, strconv.Itoa(q.id))
				}
			}
			return fmt.Errorf("nodes %s were not ready within %v; node %d's stderr ends:\n%s",
				strings.Join(late, ","), r.cfg.ReadyTimeout, pr.id, stderrTail(r.dir, pr.id, 8))
		case <-ctx.Done():
			return fmt.Errorf("interrupted while starting the nodes")
		}
	}
	return nil
}
