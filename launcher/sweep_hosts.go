package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"

	"github.com/leaderlab/leaderlab/internal/sshhost"
)

// Sweeps over hosts (bench chaos --sim --hosts, run --sim --count N --hosts): the seeds of a
// simulated sweep spread over SSH hosts, reached as run --hosts reaches them (the inventory, the
// ssh config, known_hosts, the binary put there by its digest). Each host runs one `leaderlab
// sweep-worker` (ServeSweep) over its session, which makes jobs on all the host's cores; the hosts
// take jobs from one queue as they have room, so a fast host takes more, and a lost host's
// unfinished jobs go back to the queue for the others.

// SweepOptions say which hosts a sweep uses: Config's fields of the same names.
type SweepOptions struct {
	Hosts, SSHConfig      string
	InsecureIgnoreHostKey bool
	// Binary is the executable put on the hosts (empty: LEADERLAB_REMOTE_BINARY, else this one).
	Binary string
}

// SweepHost is one host of a sweep, as the summary tells it.
type SweepHost struct {
	Name    string
	CPUs    int
	Machine string // kernel boot ID
	Runs    int    // jobs it finished
	Lost    string // why it was lost; "" while it serves
}

// Sweep is the hosts of a sweep over SSH, their workers started.
type Sweep struct {
	hosts []*sweepConn
}

// sweepConn is one host's worker: its stream and what it has in hand.
type sweepConn struct {
	SweepHost
	w      io.WriteCloser
	r      *bufio.Reader
	stop   func()        // ends the worker's session
	stderr func() string // the worker's last words, for a loss
	// guarded by the sweep's mutex:
	inflight map[int]bool
	dead     bool
}

// workerStderr keeps the last bytes a worker wrote to stderr.
type workerStderr struct {
	mu sync.Mutex
	b  []byte
}

func (w *workerStderr) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > 4096 {
		w.b = w.b[len(w.b)-4096:]
	}
	return len(p), nil
}

func (w *workerStderr) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return lastLines(string(w.b), 3)
}

// OpenSweep connects to every host of o in parallel, puts the binary there (unless the host has
// it by its digest) and starts a worker on each. Any host that cannot be reached, trusted or used
// is an error naming it and the cure; so is an inventory that names none.
func OpenSweep(ctx context.Context, o SweepOptions) (*Sweep, error) {
	cfg := Config{Hosts: o.Hosts, SSHConfig: o.SSHConfig, InsecureIgnoreHostKey: o.InsecureIgnoreHostKey, Binary: o.Binary}
	inv, sc, err := inventory(cfg)
	if err != nil {
		return nil, err
	}
	bin, err := uploadBinary(cfg)
	if err != nil {
		return nil, err
	}
	opts := sshhost.DialOptions{InsecureIgnoreHostKey: o.InsecureIgnoreHostKey}
	s := &Sweep{hosts: make([]*sweepConn, len(inv))}
	errs := make([]error, len(inv))
	var wg sync.WaitGroup
	for k, h := range inv {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := openSweepHost(ctx, sc, h, bin, opts)
			if err != nil {
				errs[k] = fmt.Errorf("%s: %w", h.where(), err)
				return
			}
			s.hosts[k] = c
		}()
	}
	wg.Wait()
	if err := multierror.Append(&multierror.Error{ErrorFormat: joinErrors}, errs...).ErrorOrNil(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// sweepHelloTimeout bounds the wait for a worker's hello.
const sweepHelloTimeout = 30 * time.Second

// openSweepHost dials one host, installs the binary and starts its worker, which must say hello.
func openSweepHost(ctx context.Context, sc *sshhost.Config, h HostSpec, bin sshhost.Binary, o sshhost.DialOptions) (*sweepConn, error) {
	t, err := sc.Resolve(h.Target)
	if err != nil {
		return nil, err
	}
	ssh, err := dialSSH(ctx, t, o)
	if err != nil {
		return nil, err
	}
	ictx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	inst, err := ssh.Install(ictx, bin, "leaderlab")
	cancel()
	if err != nil {
		return nil, err
	}
	stderr := &workerStderr{}
	cmd := "exec " + sshhost.Quote(inst.Path) + " sweep-worker"
	st, err := ssh.Start(cmd, stderr)
	if err != nil {
		return nil, err
	}
	c := &sweepConn{SweepHost: SweepHost{Name: h.Target}, w: st, r: bufio.NewReaderSize(st, 64<<10),
		stop: func() { st.Close() }, stderr: stderr.String, inflight: map[int]bool{}}
	hello := make(chan error, 1)
	go func() {
		l, err := readSweepLine(c.r)
		switch {
		case err != nil:
			hello <- err
		case l.Hello == nil || l.Hello.CPUs < 1:
			hello <- fmt.Errorf("its first line is not a hello: %.200s", l.raw)
		default:
			c.CPUs, c.Machine = l.Hello.CPUs, l.Hello.Machine
			hello <- nil
		}
	}()
	select {
	case err = <-hello:
	case <-time.After(sweepHelloTimeout):
		err = fmt.Errorf("no hello within %v", sweepHelloTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("the sweep worker (%s) did not start: %v; its stderr: %s", cmd, err, stderr.String())
	}
	return c, nil
}

// parsedLine is a protocol line as read, with its bytes for messages.
type parsedLine struct {
	sweepLine
	raw []byte
}

// readSweepLine reads one line of a worker's output.
func readSweepLine(r *bufio.Reader) (parsedLine, error) {
	b, err := r.ReadBytes('\n')
	if err != nil {
		if len(b) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return parsedLine{}, err
	}
	l := parsedLine{raw: bytes.TrimSpace(b)}
	if err := json.Unmarshal(l.raw, &l.sweepLine); err != nil {
		return l, fmt.Errorf("a line that is not the protocol's (%v): %.200s", err, l.raw)
	}
	return l, nil
}

// Hosts lists the sweep's hosts, in the inventory's order, with what they did.
func (s *Sweep) Hosts() []SweepHost {
	out := make([]SweepHost, len(s.hosts))
	for i, h := range s.hosts {
		out[i] = h.SweepHost
	}
	return out
}

// Describe is the line that says which hosts take part: "h1 (2 cores), h2 (2 cores; the same
// machine as h1)".
func (s *Sweep) Describe() string {
	var parts []string
	first := map[string]string{}
	for _, h := range s.hosts {
		p := fmt.Sprintf("%s (%d cores", h.Name, h.CPUs)
		if other, ok := first[h.Machine]; ok && h.Machine != "" {
			p += "; the same machine as " + other
		} else {
			first[h.Machine] = h.Name
		}
		parts = append(parts, p+")")
	}
	return strings.Join(parts, ", ")
}

// Close ends every worker's session (a worker ends when its input closes).
func (s *Sweep) Close() {
	for _, h := range s.hosts {
		if h != nil && h.stop != nil {
			h.stop()
		}
	}
}

// SweepJobs is what Run hands out: Count jobs (0: without end, until Done cuts), job i being
// Job(i), marshalled as JSON.
type SweepJobs struct {
	Count int
	Job   func(i int) any
	// Done receives each job's result (called from several goroutines at once, in any order; a
	// job a lost host had finished but not yet reported may be made again elsewhere, and Done is
	// called once per index). It returns true when no job after i is needed.
	Done func(i int, host string, result json.RawMessage) (cut bool)
	// Lost is told of a host lost mid-sweep and why (its jobs go to the others).
	Lost func(host, why string)
}

// ErrHostsLost is Run's error when every host was lost with jobs still to make.
var ErrHostsLost = errors.New("every host of the sweep was lost")

// Run hands the jobs out over the hosts until every one has its result, the context ends, a
// worker refuses a job, or every host is lost (ErrHostsLost, naming them and why).
func (s *Sweep) Run(ctx context.Context, jobs SweepJobs) error {
	var (
		mu    sync.Mutex
		cond  = sync.NewCond(&mu)
		q     = newSweepQueue(jobs.Count)
		fatal error
		given = map[int]bool{} // indices whose Done was called
		ended bool             // Run is returning: the sessions it closes are not lost hosts
		wg    sync.WaitGroup
	)
	stopWake := context.AfterFunc(ctx, func() { mu.Lock(); cond.Broadcast(); mu.Unlock() })
	defer stopWake()
	over := func() bool { // under mu
		if fatal != nil || ctx.Err() != nil || q.exhausted() {
			return true
		}
		for _, h := range s.hosts {
			if !h.dead {
				return false
			}
		}
		return true
	}
	lose := func(h *sweepConn, why string) { // under mu
		if h.dead || ended {
			return
		}
		h.dead, h.Lost = true, why
		var back []int
		for i := range h.inflight {
			back = append(back, i)
		}
		clear(h.inflight)
		q.giveBack(back)
		cond.Broadcast()
		h.stop()
		if jobs.Lost != nil && !over() {
			jobs.Lost(h.Name, why)
		}
	}
	for _, h := range s.hosts {
		if h.dead {
			continue
		}
		room := 2 * h.CPUs // the worker's cores, and as many waiting so that none idles
		wg.Add(2)
		go func() { // the feeder: a job whenever the host has room
			defer wg.Done()
			enc := json.NewEncoder(h.w)
			for {
				mu.Lock()
				for !over() && !h.dead && (len(h.inflight) >= room || !q.available()) {
					cond.Wait()
				}
				if over() || h.dead {
					mu.Unlock()
					return
				}
				i, _ := q.take()
				h.inflight[i] = true
				mu.Unlock()
				job, err := json.Marshal(jobs.Job(i))
				if err == nil {
					err = enc.Encode(sweepLine{ID: &i, Job: job})
				}
				if err != nil {
					mu.Lock()
					lose(h, "sending a job: "+err.Error())
					mu.Unlock()
					return
				}
			}
		}()
		go func() { // the reader: results as they come
			defer wg.Done()
			for {
				l, err := readSweepLine(h.r)
				if err != nil {
					why := err.Error()
					if errors.Is(err, io.EOF) {
						why = "its worker's session ended"
					}
					if tail := h.stderr(); tail != "(empty)" {
						why += " (its stderr: " + tail + ")"
					}
					mu.Lock()
					lose(h, why)
					mu.Unlock()
					return
				}
				if l.Error != "" || l.ID == nil {
					mu.Lock()
					if fatal == nil {
						what := fmt.Sprintf("line %d", l.Line)
						if l.ID != nil {
							what = fmt.Sprintf("job %d", *l.ID)
						}
						fatal = fmt.Errorf("host %s refused %s: %s", h.Name, what, strings.TrimSpace(l.Error+" "+string(l.raw[:min(len(l.raw), 200)])))
					}
					cond.Broadcast()
					mu.Unlock()
					if l.Error != "" {
						return
					}
					continue
				}
				i := *l.ID
				mu.Lock()
				mine := h.inflight[i] && !given[i]
				delete(h.inflight, i)
				if mine {
					given[i] = true
					h.Runs++
				}
				mu.Unlock()
				if !mine {
					continue // given back when the host looked lost, or a duplicate
				}
				cut := jobs.Done(i, h.Name, l.Result)
				mu.Lock()
				q.finish(i)
				if cut {
					q.cutAfter(i)
				}
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	mu.Lock()
	for !over() {
		cond.Wait()
	}
	done, made := q.exhausted(), q.done
	ended = true
	err := fatal
	var lost []string
	for _, h := range s.hosts {
		if h.dead {
			lost = append(lost, h.Name+": "+h.Lost)
		}
	}
	mu.Unlock()
	if err == nil && !done && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil && !done {
		err = fmt.Errorf("%w (%d jobs made): %s", ErrHostsLost, made, strings.Join(lost, "; "))
	}
	// The workers are done with: closing their input ends them, and the readers with them.
	s.Close()
	wg.Wait()
	return err
}

// CheckSweepRun checks a simulated run's configuration as the hosts will make it (the hosts
// themselves aside), so that a bad flag is said before any host is dialled.
func CheckSweepRun(cfg Config) error {
	cfg.Sim = true
	cfg.Hosts, cfg.SSHConfig, cfg.InsecureIgnoreHostKey = "", "", false
	_, err := resolve(cfg)
	return err
}

// SweepSeed is the base seed of a sweep given none: drawn as a run draws its own.
func SweepSeed() int64 { return randomSeed() }
