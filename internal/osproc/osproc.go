// Package osproc holds what the launcher and the host agent both do with node processes on the
// machine they run on: start them from a locked OS thread, read how they exited, and find ports for
// them.
package osproc

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// NodeEnv is the environment of a node process: this process's, with GOMAXPROCS=1 when it sets no
// GOMAXPROCS. A node runs on one P (DESIGN.md, "Start-up"); told so by its environment, its runtime
// starts with one P instead of resizing to one in main, which cost 7% of the CPU of a node's
// start-up (perf record of 30 starts of leaderlab node). GOMAXPROCS set here still decides.
func NodeEnv() []string {
	env := os.Environ()
	if _, ok := os.LookupEnv("GOMAXPROCS"); !ok {
		env = append(env, "GOMAXPROCS=1")
	}
	return env
}

// Spawner starts every child from one locked OS thread that lives until Close: Pdeathsig fires when
// the thread that forked the child exits, not the process, so the thread must live as long as the
// parent does (and when the parent dies, the thread dies with it, and so do the children).
type Spawner struct {
	q    chan spawnReq
	once sync.Once
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

// NewSpawner starts the spawning thread.
func NewSpawner() *Spawner {
	sp := &Spawner{q: make(chan spawnReq)}
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		for r := range sp.q {
			r.err <- r.cmd.Start()
		}
	}()
	return sp
}

// Start starts cmd from the spawning thread.
func (sp *Spawner) Start(cmd *exec.Cmd) error {
	r := spawnReq{cmd: cmd, err: make(chan error, 1)}
	sp.q <- r
	return <-r.err
}

// Close ends the spawning thread (after the last child is gone).
func (sp *Spawner) Close() { sp.once.Do(func() { close(sp.q) }) }

// Exit reads what cmd.Wait returned: an exit code, or the fatal signal's name (SignalName), or, when
// neither is known, a detail.
func Exit(err error) (code *int, signal, detail string) {
	var ee *exec.ExitError
	switch {
	case err == nil:
		c := 0
		return &c, "", ""
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return nil, SignalName(ws.Signal()), ""
		}
		c := ee.ExitCode()
		return &c, "", ""
	}
	return nil, "", err.Error()
}

// SignalName is how launcher.jsonl names a fatal signal: killed, terminated, or the signal's name.
func SignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "killed"
	case syscall.SIGTERM:
		return "terminated"
	}
	return s.String()
}

// FreePorts finds n ports on ip, an address of this machine, that are free for both TCP and UDP.
// The listeners are held until all are found, so no port is handed out twice. The ports are drawn
// below the kernel's ephemeral range: a port picked from inside it (as ":0" does) can be taken,
// between the pick and the node's bind, by an outbound connection of a node that started earlier —
// with hundreds of nodes dialling each other, that happens. what names ip in an error ("--host").
func FreePorts(ip string, n int, what string) ([]string, error) {
	var hold []interface{ Close() error }
	defer func() {
		for _, h := range hold {
			h.Close()
		}
	}()
	lo, hi := PortRange()
	next := lo + rand.IntN(hi-lo)
	var out []string
	for tries := 0; len(out) < n; tries++ {
		if tries > hi-lo {
			return nil, fmt.Errorf("could not find %d free TCP+UDP ports on %s in %d..%d", n, ip, lo, hi-1)
		}
		port := next
		if next++; next >= hi {
			next = lo
		}
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		l, err := net.Listen("tcp", addr)
		if err != nil {
			if tries == 0 && !errors.Is(err, syscall.EADDRINUSE) {
				return nil, fmt.Errorf("listen on %s: %w (is %s an address of this machine?)", addr, err, what)
			}
			continue
		}
		hold = append(hold, l)
		u, err := net.ListenPacket("udp", addr)
		if err != nil {
			continue
		}
		hold = append(hold, u)
		out = append(out, addr)
	}
	return out, nil
}

// PortRange is where FreePorts looks: from 10000 up to the start of the ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range; 32768 when it cannot be read).
func PortRange() (lo, hi int) {
	lo, hi = 10000, 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if v, err := strconv.Atoi(f[0]); err == nil && v > lo+1000 {
				hi = v
			}
		}
	}
	return lo, hi
}

// PeakRSSKB is process pid's peak resident set (VmHWM) in KiB, 0 when it cannot be read. Read it
// before the process ends: the rusage of its exit cannot tell it, because a child forked with
// CLONE_VM (as Go forks) takes its parent's peak into its ru_maxrss at exec.
func PeakRSSKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb
		}
	}
	return 0
}

// CPUMS is the CPU time (user and system) of an exited process, in milliseconds; 0 when unknown.
func CPUMS(st *os.ProcessState) float64 {
	if st == nil {
		return 0
	}
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e6
}

// Interpreter is the dynamic loader an executable names (PT_INTERP), "" for a static one. A Go
// build with cgo (the default where a C compiler is installed: the net and os/user packages use
// libc then) is dynamic, and its processes start and die slower than a static build's: on the lab
// machine a node's start-up took 27% more CPU, and a SIGKILL reached its peers as an EOF about a
// millisecond later (docs/bench.md, "Where a failover's time goes"). An error names the file.
func Interpreter(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", fmt.Errorf("%s: not an executable this machine runs: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return "", fmt.Errorf("%s: its interpreter cannot be read: %w", path, err)
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", nil
}
