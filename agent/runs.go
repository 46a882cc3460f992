package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// run is one run directory the agent serves, with its processes, events and lease.
type run struct {
	id, dir string
	s       *Server

	mu       sync.Mutex
	lease    time.Duration
	deadline time.Time   // the lease runs out then
	timer    *time.Timer // fires at the deadline (leaseCheck)
	cur      map[int]*proc
	all      []*proc
	events   []Event
	notify   chan struct{} // closed and replaced when an event is added
	closing  bool          // a cleanup is under way: no more starts
	netChain string        // the run's iptables chain (netrules), removed with its processes (and its netem qdiscs: Server.netemRun)
}

// lookup finds run id and renews its lease. A run the agent does not have in memory but whose
// directory holds a cluster.json (prepared before the agent restarted) is taken up again.
func (s *Server) lookup(id string) (*run, error) {
	if err := ValidRunID(id); err != nil {
		return nil, refuse("%v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, refuse("the agent is stopping")
	}
	r := s.runs[id]
	if r == nil {
		dir := filepath.Join(s.opts.WorkDir, id)
		if _, err := os.Stat(filepath.Join(dir, rundir.ClusterFile)); err != nil {
			return nil, refuse("run %s is not prepared on this agent (no %s; prepare it first)", id, filepath.Join(dir, rundir.ClusterFile))
		}
		r = s.newRun(id, DefaultLease)
	}
	r.renew()
	return r, nil
}

// newRun adds run id to the table (s.mu held).
func (s *Server) newRun(id string, lease time.Duration) *run {
	r := &run{id: id, dir: filepath.Join(s.opts.WorkDir, id), s: s, lease: lease, cur: map[int]*proc{}, notify: make(chan struct{})}
	r.deadline = time.Now().Add(lease)
	r.timer = time.AfterFunc(lease, r.leaseCheck)
	s.runs[id] = r
	return r
}

// renew moves the lease's deadline to a lease from now.
func (r *run) renew() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.deadline = time.Now().Add(r.lease)
	if r.timer != nil {
		r.timer.Reset(r.lease)
	}
}

func (r *run) stopLease() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// leaseCheck runs when the lease timer fires: if no request renewed the lease meanwhile, the
// launcher is gone, and the run's processes are killed. The run stays, for a launcher that comes
// back to fetch its logs.
func (r *run) leaseCheck() {
	r.mu.Lock()
	if r.timer == nil {
		r.mu.Unlock()
		return
	}
	if left := time.Until(r.deadline); left > 0 {
		r.timer.Reset(left)
		r.mu.Unlock()
		return
	}
	live := r.liveLocked()
	r.mu.Unlock()
	if len(live) == 0 {
		r.dropNet() // the nodes are gone; the kernel's rules of the run must go too
		return
	}
	n, err := r.killAll()
	r.s.log.Warn("lease expired: the launcher sent no request for the run within its lease; killed its processes",
		"run", r.id, "lease", r.lease.String(), "killed", n, "nodes", nodesOf(live), "err", err)
}

// dropNet removes the run's kernel rules: its iptables chain and its netem qdiscs.
func (r *run) dropNet() {
	r.mu.Lock()
	chain := r.netChain
	r.netChain = ""
	r.mu.Unlock()
	dropNetChain(chain)
	r.s.dropNetem(r.id)
}

// liveLocked lists the processes that have not exited (r.mu held).
func (r *run) liveLocked() []*proc {
	var live []*proc
	for _, p := range r.all {
		if p.running() {
			live = append(live, p)
		}
	}
	return live
}

func nodesOf(ps []*proc) []int {
	out := make([]int, len(ps))
	for i, p := range ps {
		out[i] = p.node
	}
	return out
}

// killAll sends SIGCONT and SIGKILL to every live process of the run and waits for them to exit.
func (r *run) killAll() (int, error) {
	r.mu.Lock()
	live := r.liveLocked()
	r.mu.Unlock()
	r.dropNet()
	n := 0
	for _, p := range live {
		if p.kill() {
			n++
		}
	}
	timeout := time.After(10 * time.Second)
	for _, p := range live {
		select {
		case <-p.exited:
		case <-timeout:
			return n, fmt.Errorf("node %d (pid %d) has not exited 10s after SIGKILL", p.node, p.pid)
		}
	}
	return n, nil
}

func (s *Server) opPrepare(body []byte) (any, error) {
	var req PrepareRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if err := ValidRunID(req.Run); err != nil {
		return nil, refuse("%v", err)
	}
	lease := req.Lease
	if lease == 0 {
		lease = DefaultLease
	}
	if lease < MinLease || lease > MaxLease {
		return nil, refuse("lease %v: want %v to %v (or 0 for %v)", req.Lease, MinLease, MaxLease, DefaultLease)
	}
	if err := checkCluster(req.Cluster); err != nil {
		return nil, refuse("run %s: %v", req.Run, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, refuse("the agent is stopping")
	}
	r := s.runs[req.Run]
	if r != nil {
		r.mu.Lock()
		live, closing := r.liveLocked(), r.closing
		r.mu.Unlock()
		if len(live) > 0 || closing {
			return nil, refuse("run %s is in use (live nodes %v); clean it up before preparing it again", req.Run, nodesOf(live))
		}
	}
	dir := filepath.Join(s.opts.WorkDir, req.Run)
	if logs, _ := os.ReadDir(filepath.Join(dir, rundir.NodesDir)); len(logs) > 0 {
		// A run of this ID that was kept or not cleaned up: its nodes' logs would take the new
		// run's events after their own.
		return nil, refuse("run %s: %s already holds node logs of an earlier run of this ID: clean it up (or remove the directory) before preparing it again", req.Run, dir)
	}
	if err := writeRunDir(dir, req.Cluster); err != nil {
		return nil, refuse("run %s: %v", req.Run, err)
	}
	if r == nil {
		r = s.newRun(req.Run, lease)
	}
	r.mu.Lock()
	r.lease = lease
	r.mu.Unlock()
	r.renew()
	s.log.Info("run prepared", "run", req.Run, "dir", dir, "lease", lease.String())
	return PrepareReply{Dir: dir, Lease: lease}, nil
}

// checkCluster refuses bytes that rundir.Load would refuse.
func checkCluster(b []byte) error {
	var c rundir.Cluster
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("cluster.json is not valid: %v", err)
	}
	if c.Version != rundir.Version {
		return fmt.Errorf("cluster.json version %d, this agent reads version %d", c.Version, rundir.Version)
	}
	if len(c.Nodes) == 0 {
		return errors.New("cluster.json lists no nodes")
	}
	return nil
}

// writeRunDir creates dir with nodes/ and stderr/, and writes cluster.json as rundir.Save does:
// mode 0600 (it holds the run's secret), through a temporary file renamed into place.
func writeRunDir(dir string, cluster []byte) error {
	for _, d := range []string{dir, filepath.Join(dir, rundir.NodesDir), filepath.Join(dir, rundir.StderrDir)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create the run directory: %w", err)
		}
	}
	f, err := os.CreateTemp(dir, ".cluster.json.tmp-*") // mode 0600
	if err != nil {
		return fmt.Errorf("write cluster.json: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(cluster)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, rundir.ClusterFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write cluster.json: %w", err)
	}
	if _, err := rundir.Load(dir); err != nil {
		return err
	}
	return nil
}

// runOf decodes a request that names only a run (RunRequest) and finds the run, renewing its lease.
func (s *Server) runOf(body []byte) (*run, error) {
	var req RunRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	return s.lookup(req.Run)
}

func (s *Server) opRenew(body []byte) (any, error) {
	r, err := s.runOf(body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return RenewReply{Lease: r.lease}, nil
}

func (s *Server) opCleanup(body []byte) (any, error) {
	var req CleanupRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return nil, refuse("run %s is being cleaned up by another request", req.Run)
	}
	r.closing = true
	r.mu.Unlock()
	r.stopLease()
	n, err := r.killAll()
	out := CleanupReply{Killed: n}
	if err == nil && !req.Keep {
		if err = os.RemoveAll(r.dir); err == nil {
			out.Removed = true
		}
	}
	s.mu.Lock()
	if s.runs[r.id] == r {
		delete(s.runs, r.id)
	}
	s.mu.Unlock()
	s.log.Info("run cleaned up", "run", r.id, "killed", n, "removed", out.Removed, "err", err)
	if err != nil {
		return nil, refuse("cleanup of run %s: %v", r.id, err)
	}
	return out, nil
}

func (s *Server) opStatus(body []byte) (any, error) {
	r, err := s.runOf(body)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := StatusReply{Procs: make([]ProcStatus, 0, len(r.all)), Lease: max(0, time.Until(r.deadline))}
	for _, p := range r.all {
		out.Procs = append(out.Procs, p.status())
	}
	return out, nil
}
