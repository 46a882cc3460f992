package launcher

// Starting the cluster: every node spawned in ring order, then waited for until ready.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// startAll spawns every node and waits until all are ready.
func (r *runner) startAll(ctx context.Context) error {
	var procs []*proc
	for _, n := range append(r.spawnOrder(), r.cluster.Observers...) {
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
