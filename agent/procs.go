package agent

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/internal/osproc"
	"github.com/leaderlab/leaderlab/rundir"
)

// proc is one incarnation of a node process. exited is closed once its exit is known; the fields
// below it are guarded by the run's mutex.
type proc struct {
	node, inc, pid int
	cmd            *exec.Cmd
	exited         chan struct{}

	paused bool
	exit   Event // the exited event, once there is one
	// hwmKB is its VmHWM as the agent was about to end it (TERM or KILL).
	hwmKB atomic.Int64
}

func (p *proc) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// kill sends SIGCONT (a stopped process does not act on SIGKILL until continued on some systems)
// and SIGKILL; false when the process had already exited. os.Process signals through a pidfd, so
// a recycled pid is never hit.
func (p *proc) kill() bool {
	if err := p.cmd.Process.Signal(syscall.SIGCONT); errors.Is(err, os.ErrProcessDone) {
		return false
	}
	return p.cmd.Process.Signal(syscall.SIGKILL) == nil
}

// status is p as status reports it (run's mutex held).
func (p *proc) status() ProcStatus {
	st := ProcStatus{Node: p.node, Inc: p.inc, Pid: p.pid, State: StateRunning}
	switch {
	case !p.running():
		st.State, st.Code, st.Signal, st.Detail = StateExited, p.exit.Code, p.exit.Signal, p.exit.Detail
	case p.paused:
		st.State = StatePaused
	}
	return st
}

// addEvent numbers e, stamps it with the agent's clock and wakes the long-polls (r.mu held).
func (r *run) addEventLocked(e Event) {
	e.Seq = uint64(len(r.events)) + 1
	e.TS = r.s.opts.Now().UnixNano()
	r.events = append(r.events, e)
	close(r.notify)
	r.notify = make(chan struct{})
}

func (s *Server) opStart(body []byte) (any, error) {
	var req StartRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	if req.Inc < 1 || req.Inc > 1<<31-1 {
		return nil, refuse("incarnation %d: want 1 or more", req.Inc)
	}
	c, err := rundir.Load(r.dir)
	if err != nil {
		return nil, refuse("run %s: %v", r.id, err)
	}
	if _, ok := c.Node(req.Node); !ok {
		return nil, refuse("node %d is not in run %s's cluster.json (its nodes: %v)", req.Node, r.id, c.IDs())
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, refuse("run %s is being cleaned up", r.id)
	}
	if p := r.cur[req.Node]; p != nil && p.running() {
		return nil, refuse("node %d is still running (incarnation %d, pid %d); kill it and wait for its exited event first", req.Node, p.inc, p.pid)
	}
	p, out, err := s.spawn(r, req)
	if err != nil {
		return nil, refuse("start node %d of run %s: %v", req.Node, r.id, err)
	}
	r.cur[req.Node] = p
	r.all = append(r.all, p)
	r.addEventLocked(Event{Ev: EventSpawned, Node: p.node, Inc: p.inc, Pid: p.pid})
	s.log.Info("node started", "run", r.id, "node", p.node, "inc", p.inc, "pid", p.pid)
	s.procWG.Add(1)
	go s.watch(r, p, out)
	return StartReply{Pid: p.pid}, nil
}

// spawn starts the node process of req: the agent's own binary and nothing else, in its own
// process group, with stderr appended to the run's stderr/<id>.log (run's mutex held).
func (s *Server) spawn(r *run, req StartRequest) (*proc, io.ReadCloser, error) {
	errf, err := os.OpenFile(rundir.Stderr(r.dir, req.Node), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	defer errf.Close()
	args := []string{"node", "--run", r.dir, "--id", strconv.Itoa(req.Node), "--inc", strconv.Itoa(req.Inc)}
	if req.AwaitBegin {
		args = append(args, "--await-begin")
	}
	cmd := exec.Command(s.opts.Binary, args...)
	cmd.Env = osproc.NodeEnv()
	cmd.Dir = r.dir
	cmd.Stderr = errf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := s.procs.Start(cmd); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", s.opts.Binary, err)
	}
	return &proc{node: req.Node, inc: req.Inc, pid: cmd.Process.Pid, cmd: cmd, exited: make(chan struct{})}, out, nil
}

// watch reads p's stdout for its "ready " line, then waits for it to exit, and records both.
func (s *Server) watch(r *run, p *proc, out io.Reader) {
	defer s.procWG.Done()
	sc := bufio.NewScanner(out)
	ready := false
	for sc.Scan() {
		if !ready && strings.HasPrefix(sc.Text(), "ready ") {
			ready = true
			r.mu.Lock()
			r.addEventLocked(Event{Ev: EventReady, Node: p.node, Inc: p.inc, Pid: p.pid})
			r.mu.Unlock()
		}
	}
	io.Copy(io.Discard, out) // after a line too long for the scanner: keep the pipe flowing
	err := p.cmd.Wait()
	e := Event{Ev: EventExited, Node: p.node, Inc: p.inc, Pid: p.pid, CPUMS: osproc.CPUMS(p.cmd.ProcessState), MaxRSSKB: p.hwmKB.Load()}
	e.Code, e.Signal, e.Detail = osproc.Exit(err)
	r.mu.Lock()
	r.addEventLocked(e)
	p.exit = r.events[len(r.events)-1]
	p.paused = false
	close(p.exited)
	r.mu.Unlock()
	how := []any{"run", r.id, "node", p.node, "inc", p.inc, "pid", p.pid}
	switch {
	case e.Code != nil:
		how = append(how, "code", *e.Code)
	case e.Signal != "":
		how = append(how, "signal", e.Signal)
	default:
		how = append(how, "detail", e.Detail)
	}
	s.log.Info("node exited", how...)
}

var signalsByName = map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "STOP": syscall.SIGSTOP, "CONT": syscall.SIGCONT}

func (s *Server) opSignal(body []byte) (any, error) {
	var req SignalRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	sig, ok := signalsByName[req.Signal]
	if !ok {
		return nil, refuse("signal %q: want one of %s", truncate(req.Signal, 40), strings.Join(Signals, ", "))
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.cur[req.Node]
	if p == nil {
		return nil, refuse("node %d of run %s was never started on this agent", req.Node, r.id)
	}
	if !p.running() {
		return nil, refuse("node %d of run %s (incarnation %d, pid %d) has exited", req.Node, r.id, p.inc, p.pid)
	}
	if sig == syscall.SIGTERM || sig == syscall.SIGKILL {
		p.hwmKB.Store(osproc.PeakRSSKB(p.pid))
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return nil, refuse("signal %s to node %d (pid %d): %v", req.Signal, p.node, p.pid, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT, syscall.SIGKILL:
		p.paused = false
	}
	return struct{}{}, nil
}

func (s *Server) opEvents(body []byte) (any, error) {
	var req EventsRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	if req.Wait < 0 || req.Wait > MaxEventsWait {
		return nil, refuse("wait %v: want 0 to %v", req.Wait, MaxEventsWait)
	}
	r, err := s.lookup(req.Run)
	if err != nil {
		return nil, err
	}
	wait := min(req.Wait, s.maxWait)
	var timeout <-chan time.Time
	for {
		r.mu.Lock()
		var evs []Event
		if req.After < uint64(len(r.events)) {
			evs = r.events[req.After:]
			evs = append([]Event(nil), evs[:min(len(evs), maxEventsPerReply)]...)
		}
		ch := r.notify
		r.mu.Unlock()
		if len(evs) > 0 || wait <= 0 {
			return EventsReply{Events: evs}, nil
		}
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-ch:
		case <-timeout:
			return EventsReply{}, nil
		case <-s.done:
			return EventsReply{}, nil
		}
	}
}
