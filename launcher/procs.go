package launcher

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/internal/osproc"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// proc is one incarnation of a node process.
type proc struct {
	id, inc int
	pid     int
	cmd     *exec.Cmd   // a local process; nil for a remote one
	host    *remoteHost // the agent of a remote process
	ready   chan struct{}
	exited  chan struct{}
	paused  atomic.Bool
	hwmKB   atomic.Int64 // its VmHWM as the launcher ended it (noteHWM)
	// orders is a local node's stdin (node --stdin-orders): the launcher writes its begin there and
	// closes it. Nil for a remote node and once used.
	orders   io.WriteCloser
	ordersMu sync.Mutex

	readyOnce, exitOnce sync.Once
}

// exit marks the process exited (once).
func (pr *proc) exit() { pr.exitOnce.Do(func() { close(pr.exited) }) }

// takeOrders hands over the node's stdin for its one order, the begin: once, and nil for a node
// without one (remote, or a restarted incarnation, begun by a control call). An unused one is closed
// by cmd.Wait when the process exits.
func (pr *proc) takeOrders() io.WriteCloser {
	pr.ordersMu.Lock()
	defer pr.ordersMu.Unlock()
	w := pr.orders
	pr.orders = nil
	return w
}

// procs is the launcher's process table: the current incarnation of every node.
type procs struct {
	mu      sync.Mutex
	dir     string
	binary  string
	rec     *logs.JSONLines
	cur     map[int]*proc
	all     []*proc
	spawner *osproc.Spawner
	// remote runs the nodes on agents (run --hosts); nil when they all run here.
	remote *remote
}

// add registers a new incarnation as the current one of its node.
func (p *procs) add(pr *proc) {
	p.mu.Lock()
	p.cur[pr.id] = pr
	p.all = append(p.all, pr)
	p.mu.Unlock()
}

// find returns incarnation inc of node id on host h.
func (p *procs) find(id, inc int, h *remoteHost) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range p.all {
		if pr.id == id && pr.inc == inc && pr.host == h {
			return pr
		}
	}
	return nil
}

func newProcs(dir, binary string, rec *logs.JSONLines) *procs {
	// The spawner's thread lives as long as the launcher: its children's Pdeathsig is tied to it.
	return &procs{dir: dir, binary: binary, rec: rec, cur: map[int]*proc{}, spawner: osproc.NewSpawner()}
}

func (p *procs) record(r logs.LaunchRecord) {
	if r.TS == 0 {
		r.TS = time.Now().UnixNano()
	}
	_ = p.rec.Write(r) // launcher.jsonl is best effort once the run is under way
}

// spawn starts incarnation inc of node id, in its own process group, with a parent-death signal so
// that no node outlives the launcher, even a SIGKILLed one.
func (p *procs) spawn(id, inc int) (*proc, error) {
	if p.remote != nil && p.remote.at[id] != nil {
		return p.remote.spawn(p, id, inc)
	}
	errf, err := os.OpenFile(rundir.Stderr(p.dir, id), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", id, err)
	}
	defer errf.Close()
	cmd := exec.Command(p.binary, "node", "--run", p.dir, "--id", strconv.Itoa(id), "--inc", strconv.Itoa(inc), "--await-begin")
	if rundir.IsObserver(id) {
		cmd = exec.Command(p.binary, "observer", "--run", p.dir, "--id", strconv.Itoa(id))
	} else {
		cmd.Env = osproc.NodeEnv()
	}
	var orders io.WriteCloser
	if inc == 1 && !rundir.IsObserver(id) {
		// The first incarnation's begin comes down its stdin (the restarted ones' by a control
		// call, after their link rules).
		cmd.Args = append(cmd.Args, "--stdin-orders")
		if orders, err = cmd.StdinPipe(); err != nil {
			return nil, fmt.Errorf("node %d: %w", id, err)
		}
	}
	cmd.Stderr = errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("node %d: %w", id, err)
	}
	if err := p.spawner.Start(cmd); err != nil {
		return nil, fmt.Errorf("start node %d (%s): %w", id, p.binary, err)
	}
	pr := &proc{id: id, inc: inc, pid: cmd.Process.Pid, cmd: cmd, ready: make(chan struct{}), exited: make(chan struct{}), orders: orders}
	p.add(pr)
	p.record(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: inc, Pid: cmd.Process.Pid})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "ready ") {
				p.record(logs.LaunchRecord{Ev: logs.LaunchReady, Node: id, Inc: inc, Pid: cmd.Process.Pid})
				pr.readyOnce.Do(func() { close(pr.ready) })
			}
		}
		err := cmd.Wait()
		rec := logs.LaunchRecord{Ev: logs.LaunchExited, Node: id, Inc: inc, Pid: cmd.Process.Pid}
		rec.Code, rec.Signal, rec.Detail = osproc.Exit(err)
		rec.CPUMS = osproc.CPUMS(cmd.ProcessState)
		rec.MaxRSSKB = pr.hwmKB.Load() // 0 (left out) for a process that ended by itself
		p.record(rec)
		pr.exit()
	}()
	return pr, nil
}

// current returns the current incarnation of node id, nil if it was never started.
func (p *procs) current(id int) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur[id]
}

// running tells whether pr's process has not exited.
func (pr *proc) running() bool {
	select {
	case <-pr.exited:
		return false
	default:
		return true
	}
}

func (pr *proc) signal(s syscall.Signal) error {
	if s == syscall.SIGTERM || s == syscall.SIGKILL {
		pr.noteHWM()
	}
	return pr.send(s)
}

// send sends s to the process and nothing else (signal notes the peak memory first).
func (pr *proc) send(s syscall.Signal) error {
	if !pr.running() {
		return fmt.Errorf("node %d is not running", pr.id)
	}
	if pr.host != nil {
		return pr.host.rm.signal(pr, s)
	}
	return syscall.Kill(pr.cmd.Process.Pid, s)
}

// noteHWM keeps a local process's peak resident set (VmHWM) as it is about to be ended. The rusage
// of its exit cannot tell it: a child forked with CLONE_VM (as Go forks) takes the parent's peak
// into its ru_maxrss at exec, so every node "peaked" at the launcher's size (152 MB at 2000 nodes).
func (pr *proc) noteHWM() {
	if pr.host != nil || pr.cmd == nil || !pr.running() {
		return
	}
	if kb := osproc.PeakRSSKB(pr.cmd.Process.Pid); kb > 0 {
		pr.hwmKB.Store(kb)
	}
}

// stopAll ends every process: SIGCONT for the paused, SIGTERM, then SIGKILL after grace. It returns
// when every process has exited.
func (p *procs) stopAll(grace time.Duration) {
	p.mu.Lock()
	all := append([]*proc(nil), p.all...)
	p.mu.Unlock()
	for _, pr := range all {
		if pr.running() {
			_ = pr.signal(syscall.SIGCONT)
			_ = pr.signal(syscall.SIGTERM)
		}
	}
	deadline := time.After(grace)
	for _, pr := range all {
		select {
		case <-pr.exited:
		case <-deadline:
			for _, q := range all {
				if q.running() {
					_ = q.signal(syscall.SIGKILL)
				}
			}
			<-pr.exited
		}
	}
}

// stderrTail returns the last lines a node wrote on stderr.
func stderrTail(dir string, id, lines int) string {
	b, err := os.ReadFile(rundir.Stderr(dir, id))
	if err != nil || len(b) == 0 {
		return "(no stderr output)"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(all) > lines {
		all = all[len(all)-lines:]
	}
	return strings.Join(all, "\n")
}

// endRecord is launcher.jsonl's end record, with the launcher's own CPU time and peak resident set
// (its process alone: RUSAGE_SELF).
func endRecord() logs.LaunchRecord {
	rec := logs.LaunchRecord{Ev: logs.LaunchEnd}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rec.CPUMS = float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
		rec.MaxRSSKB = ru.Maxrss
	}
	return rec
}
