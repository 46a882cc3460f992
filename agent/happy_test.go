package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// eventWatcher follows a run's events over its own connection, as the launcher does.
type eventWatcher struct {
	t    *testing.T
	c    *Client
	run  string
	seen []Event
}

// next waits for an event that matches and returns it.
func (w *eventWatcher) next(match func(Event) bool) Event {
	w.t.Helper()
	for i := range w.seen {
		if match(w.seen[i]) {
			e := w.seen[i]
			w.seen = slices.Delete(w.seen, 0, i+1)
			return e
		}
	}
	var last uint64
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		evs, err := w.c.Events(context.Background(), w.run, last, 2*time.Second)
		if err != nil {
			w.t.Fatal(err)
		}
		for _, e := range evs {
			if e.Seq != last+1 {
				w.t.Fatalf("event %d after %d", e.Seq, last)
			}
			last = e.Seq
		}
		w.seen = append(w.seen, evs...)
		for i := range w.seen {
			if match(w.seen[i]) {
				e := w.seen[i]
				w.seen = slices.Delete(w.seen, 0, i+1)
				return e
			}
		}
		w.seen = w.seen[:0]
	}
	w.t.Fatal("gave up waiting for an event")
	return Event{}
}

func is(ev string, node, inc int) func(Event) bool {
	return func(e Event) bool { return e.Ev == ev && e.Node == node && e.Inc == inc }
}

// procState is the kernel's state letter of pid (R, S, T, ...).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return ""
	}
	return s[i+2 : i+3]
}

func stateOf(t *testing.T, c *Client, run string, node, inc int) ProcStatus {
	t.Helper()
	ps, err := c.Status(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Node == node && p.Inc == inc {
			return p
		}
	}
	t.Fatalf("status has no node %d.%d: %+v", node, inc, ps)
	return ProcStatus{}
}

func TestHappyPath(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	w := &eventWatcher{t: t, c: a.dial(t), run: "happy-1"}
	ctx := context.Background()
	const run = "happy-1"

	// The machine: this kernel's boot ID, which an agent in a network namespace shares.
	host, err := c.Host(ctx)
	bootID, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || host.Machine != strings.TrimSpace(string(bootID)) || host.CPUs < 1 {
		t.Fatalf("Host = %+v, %v; want machine %q", host, err, bootID)
	}

	addrs, err := c.Ports(ctx, "127.0.0.1", 2)
	if err != nil || len(addrs) != 2 || addrs[0] == addrs[1] {
		t.Fatalf("Ports = %v, %v", addrs, err)
	}
	dir, err := c.Prepare(ctx, run, testCluster(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(a.s.WorkDir(), run); dir != want {
		t.Fatalf("run directory %s, want %s", dir, want)
	}
	if st, err := os.Stat(filepath.Join(dir, rundir.ClusterFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("cluster.json: %v, %v (want mode 0600)", st, err)
	}
	if _, err := rundir.Load(dir); err != nil {
		t.Fatal(err)
	}

	// Start, ready, pause, resume, kill.
	pid, err := c.Start(ctx, run, 1, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if e := w.next(is(EventSpawned, 1, 1)); e.Pid != pid {
		t.Fatalf("spawned %+v, want pid %d", e, pid)
	}
	w.next(is(EventReady, 1, 1))
	if _, err := c.Start(ctx, run, 1, 2, false); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("a second start of a running node: %v", err)
	}
	if err := c.Signal(ctx, run, 1, "STOP"); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(t, c, run, 1, 1); st.State != StatePaused {
		t.Fatalf("after STOP: %+v", st)
	}
	waitFor(t, "the kernel to stop the process", func() bool { return procState(pid) == "T" })
	if err := c.Signal(ctx, run, 1, "CONT"); err != nil {
		t.Fatal(err)
	}
	if st := stateOf(t, c, run, 1, 1); st.State != StateRunning {
		t.Fatalf("after CONT: %+v", st)
	}
	waitFor(t, "the kernel to continue the process", func() bool { return procState(pid) != "T" })
	if err := c.Signal(ctx, run, 1, "KILL"); err != nil {
		t.Fatal(err)
	}
	// The exit carries the process's peak memory, read before the signal (the rusage's would be
	// the agent's own, through CLONE_VM), and its CPU time.
	if e := w.next(is(EventExited, 1, 1)); e.Signal != "killed" || e.Code != nil || e.Pid != pid || e.MaxRSSKB <= 0 || e.CPUMS <= 0 {
		t.Fatalf("exited %+v, want signal killed with max_rss_kb and cpu_ms", e)
	}
	if st := stateOf(t, c, run, 1, 1); st.State != StateExited || st.Signal != "killed" {
		t.Fatalf("after KILL: %+v", st)
	}
	if err := c.Signal(ctx, run, 1, "KILL"); err == nil || !strings.Contains(err.Error(), "has exited") {
		t.Fatalf("signal to an exited node: %v", err)
	}

	// TERM: the fake node stops cleanly.
	if _, err := c.Start(ctx, run, 2, 1, false); err != nil {
		t.Fatal(err)
	}
	w.next(is(EventReady, 2, 1))
	if err := c.Signal(ctx, run, 2, "TERM"); err != nil {
		t.Fatal(err)
	}
	if e := w.next(is(EventExited, 2, 1)); e.Code == nil || *e.Code != 0 {
		t.Fatalf("exited %+v, want code 0", e)
	}

	// A restart, left running for cleanup.
	pid2, err := c.Start(ctx, run, 1, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	w.next(is(EventReady, 1, 2))

	// List and fetch.
	files, err := c.List(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	for _, want := range []string{"cluster.json", "nodes/1.jsonl", "nodes/2.jsonl", "stderr/1.log", "stderr/2.log"} {
		if !slices.Contains(paths, want) {
			t.Errorf("List = %v, lacks %s", paths, want)
		}
	}
	want, err := os.ReadFile(rundir.NodeLog(dir, 1))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(want, []byte(`"inc":2,"ev":"start"`)) {
		t.Fatalf("the fake node's log: %s", want)
	}
	var got []byte
	for off := int64(0); ; { // in small chunks
		rep, err := c.Fetch(ctx, run, "nodes/1.jsonl", off, 7)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, rep.Data...)
		off += int64(len(rep.Data))
		if rep.EOF {
			break
		}
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("fetched %q, want %q", got, want)
	}
	local := filepath.Join(t.TempDir(), "local-run")
	fetched, err := c.FetchAll(ctx, run, local)
	if err != nil {
		t.Fatal(err)
	}
	if len(fetched) != len(files) {
		t.Errorf("FetchAll fetched %v, want the %d files listed", fetched, len(files))
	}
	for _, f := range files {
		remote, _ := os.ReadFile(filepath.Join(dir, f.Path))
		mine, err := os.ReadFile(filepath.Join(local, f.Path))
		if err != nil || !bytes.Equal(remote, mine) {
			t.Errorf("FetchAll %s: %q, %v; want %q", f.Path, mine, err, remote)
		}
	}
	if st, _ := os.Stat(filepath.Join(local, "cluster.json")); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the fetched cluster.json is %v, want mode 0600", st)
	}

	// Cleanup kills what still runs and removes the directory.
	rep, err := c.Cleanup(ctx, run, false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Killed != 1 || !rep.Removed {
		t.Fatalf("Cleanup = %+v, want 1 killed and the directory removed", rep)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the run directory is still there: %v", err)
	}
	if err := syscall.Kill(pid2, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("node 1.2 (pid %d) is still there after cleanup: %v", pid2, err)
	}
	if _, err := c.Status(ctx, run); err == nil || !strings.Contains(err.Error(), "not prepared") {
		t.Fatalf("status after cleanup: %v", err)
	}
	a.waitLog(t, "run cleaned up", "run="+run)
}

// TestLeaseExpiry: when the launcher goes away, the run's processes are killed once the lease
// runs out.
func TestLeaseExpiry(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	ctx := context.Background()
	const run = "lease-1"
	if _, err := c.Prepare(ctx, run, testCluster(t), 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	pid, err := c.Start(ctx, run, 1, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	c.Close() // the launcher is gone: no renewer, no requests
	p := a.proc(t, run, 1, 1)
	select {
	case <-p.exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the lease ran out and the process lives on")
	}
	a.waitLog(t, "lease expired", "run="+run, "killed=1")
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Fatalf("pid %d is still there: %v", pid, err)
	}
	// The run stays for a launcher that comes back to fetch the logs.
	c2 := a.dial(t)
	st := stateOf(t, c2, run, 1, 1)
	if st.State != StateExited || st.Signal != "killed" {
		t.Fatalf("status %+v", st)
	}
}

// TestLeaseRenewed: the client's renewer keeps a short lease alive.
func TestLeaseRenewed(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	ctx := context.Background()
	const run = "lease-2"
	if _, err := c.Prepare(ctx, run, testCluster(t), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Start(ctx, run, 1, 1, false); err != nil {
		t.Fatal(err)
	}
	p := a.proc(t, run, 1, 1)
	select {
	case <-p.exited:
		t.Fatalf("the process died while the client renewed the lease; log:\n%s", a.log.String())
	case <-time.After(3 * time.Second):
	}
	if _, err := c.Cleanup(ctx, run, false); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownKillsAll: stopping the agent kills every process it started.
func TestShutdownKillsAll(t *testing.T) {
	a := startAgent(t, nil)
	c := a.dial(t)
	ctx := context.Background()
	var pids []int
	for _, run := range []string{"stop-1", "stop-2"} {
		if _, err := c.Prepare(ctx, run, testCluster(t), 0); err != nil {
			t.Fatal(err)
		}
		for id := 1; id <= 2; id++ {
			pid, err := c.Start(ctx, run, id, 1, false)
			if err != nil {
				t.Fatal(err)
			}
			pids = append(pids, pid)
		}
	}
	if err := c.Signal(ctx, "stop-1", 2, "STOP"); err != nil { // a paused one too
		t.Fatal(err)
	}
	a.stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d outlived the agent: %v", pid, err)
		}
	}
}

// proc finds a process of the server, for tests that watch it from the inside.
func (a *testAgent) proc(t *testing.T, run string, node, inc int) *proc {
	t.Helper()
	a.s.mu.Lock()
	r := a.s.runs[run]
	a.s.mu.Unlock()
	if r == nil {
		t.Fatalf("no run %s", run)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.all {
		if p.node == node && p.inc == inc {
			return p
		}
	}
	t.Fatalf("no process %d.%d in run %s", node, inc, run)
	return nil
}
