package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/internal/osproc"
	"github.com/leaderlab/leaderlab/wire"
)

// Server is an agent: it serves requests that come over a stream (its standard input and output
// under `leaderlab agent --stdio`, an SSH session's channel) and owns the processes it starts.
type Server struct {
	opts  Options
	log   *slog.Logger
	procs *osproc.Spawner

	mu      sync.Mutex
	runs    map[string]*run
	closing bool

	// shaper holds the netem qdiscs of netemRun, the one run that shapes this host (netem_op.go).
	netemMu  sync.Mutex
	shaper   *Shaper
	netemRun string

	reqWG  sync.WaitGroup // requests being handled
	procWG sync.WaitGroup // process watchers
	done   chan struct{}  // closed when the server begins to stop

	// maxWait caps an events request's wait (MaxEventsWait; tests shorten it).
	maxWait time.Duration
}

// New checks opts and makes an agent that serves nothing yet; ServeStream serves a stream, Close
// stops it.
func New(opts Options) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{
		opts:    opts,
		log:     slog.New(slog.NewTextHandler(opts.Log, nil)),
		procs:   osproc.NewSpawner(),
		shaper:  NewShaper(),
		runs:    map[string]*run{},
		done:    make(chan struct{}),
		maxWait: MaxEventsWait,
	}, nil
}

// WorkDir is the directory that holds the run directories.
func (s *Server) WorkDir() string { return s.opts.WorkDir }

// ServeStdio serves the launcher on standard input and output (an SSH session's channel) until
// that stream ends, ctx is done or the launcher breaks the protocol, then kills every process the
// agent started and returns. The end of the session is the end of the agent's nodes: a launcher
// that died or lost its network takes them with it, as a run's lease would a little later.
func ServeStdio(ctx context.Context, opts Options) error {
	s, err := New(opts)
	if err != nil {
		return err
	}
	err = s.ServeStream(ctx, stdio{})
	s.Close()
	return err
}

// stdio is the process's standard input and output as one stream.
type stdio struct{}

func (stdio) Read(p []byte) (int, error)  { return os.Stdin.Read(p) }
func (stdio) Write(p []byte) (int, error) { return os.Stdout.Write(p) }
func (stdio) Close() error                { return os.Stdin.Close() }

// ServeStream serves requests from rw until it ends (nil), ctx is done (nil), no request comes for
// IdleTimeout, or the peer breaks the protocol (an error saying how; rw is closed and nothing more
// is read from it). Requests are handled concurrently, at most MaxInFlight at a time (the reader
// waits for a slot), and each reply carries its request's ID. It never panics on what it reads and
// writes one log line when the stream ends, saying why.
func (s *Server) ServeStream(ctx context.Context, rw io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	reason, level := "the launcher closed the stream", slog.LevelInfo
	var bmu sync.Mutex
	var broke error // the protocol violation that ended the stream
	breakWith := func(err error) {
		bmu.Lock()
		if broke == nil {
			broke = err
		}
		bmu.Unlock()
		cancel()
	}
	broken := func() error {
		bmu.Lock()
		defer bmu.Unlock()
		return broke
	}
	stop := context.AfterFunc(ctx, func() { rw.Close() })
	defer stop()
	idle := time.AfterFunc(s.opts.IdleTimeout, func() {
		s.log.Warn("stream idle: no request for the idle timeout", "timeout", s.opts.IdleTimeout.String())
		cancel()
	})
	defer idle.Stop()
	var wmu sync.Mutex
	var wbuf []byte
	send := func(rep reply) error {
		p, err := msgpack.Marshal(rep)
		if err != nil {
			return err
		}
		wmu.Lock()
		defer wmu.Unlock()
		if len(p) > wire.MaxFrame {
			return fmt.Errorf("%w: a reply of %d bytes (limit %d)", wire.ErrFrameTooLarge, len(p), wire.MaxFrame)
		}
		if wbuf, err = wire.AppendPayload(wbuf[:0], p); err != nil {
			return err
		}
		_, err = rw.Write(wbuf)
		return err
	}
	slots := make(chan struct{}, MaxInFlight)
	var inflight sync.WaitGroup
	defer func() {
		if p := recover(); p != nil {
			level, reason = slog.LevelError, fmt.Sprintf("agent bug: %v\n%s", p, debug.Stack())
			breakWith(fmt.Errorf("agent bug: %v", p))
		}
		rw.Close()
		inflight.Wait()
		s.log.Log(context.Background(), level, "stream closed", "reason", reason)
	}()
	fail := func(err error) error {
		level, reason = slog.LevelWarn, err.Error()
		breakWith(err)
		return err
	}
	var rbuf []byte
	for n := uint64(0); ; n++ {
		p, err := wire.ReadFrame(rw, rbuf)
		if err != nil {
			if ctx.Err() != nil {
				reason = "cut: the agent is stopping or the stream was idle"
				if err := broken(); err != nil {
					level, reason = slog.LevelWarn, err.Error()
					return err
				}
				return nil
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fail(fmt.Errorf("frame %d: %w", n, err))
		}
		rbuf = p[:cap(p)]
		idle.Reset(s.opts.IdleTimeout)
		var req request
		if err := decodeStrict(p, &req); err != nil {
			return fail(fmt.Errorf("request %d: %w", n, err))
		}
		if _, ok := handlers[req.Op]; !ok {
			return fail(fmt.Errorf("request %d: unknown op %q (want one of %s)", n, truncate(req.Op, 40), opNames()))
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		inflight.Add(1)
		s.reqWG.Add(1)
		go func(req request) {
			defer func() { <-slots; inflight.Done(); s.reqWG.Done() }()
			rep, err := s.handle(req)
			if err != nil { // a protocol violation: no reply, the stream is done
				breakWith(fmt.Errorf("request %d (%s): %w", req.ID, truncate(req.Op, 40), err))
				return
			}
			if err := send(rep); err != nil {
				breakWith(fmt.Errorf("reply to request %d (%s): %w", req.ID, req.Op, err))
			}
		}(req)
	}
}

// Close stops the agent: every stream still served is cut, every process it started is killed,
// and it waits for all of that. Call it once, after ServeStream returned.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return
	}
	s.closing = true
	close(s.done)
	runs := make([]*run, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	s.reqWG.Wait() // no request is in progress from here on: no more starts
	for _, r := range runs {
		r.stopLease()
		if n, err := r.killAll(); n > 0 || err != nil {
			s.log.Info("agent stopping: killed the run's processes", "run", r.id, "killed", n, "err", err)
		}
	}
	s.procWG.Wait()
	s.procs.Close()
}

// refusal is an error the client gets as a reply (the connection stays up).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

// opNames lists the ops, for an error message.
func opNames() string {
	names := make([]string, 0, len(handlers))
	for op := range handlers {
		names = append(names, op)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// handler is one op: it decodes its body and returns its reply body.
type handler func(s *Server, body []byte) (any, error)

var handlers = map[string]handler{
	OpTime:     (*Server).opTime,
	OpPrepare:  (*Server).opPrepare,
	OpPorts:    (*Server).opPorts,
	OpStart:    (*Server).opStart,
	OpSignal:   (*Server).opSignal,
	OpEvents:   (*Server).opEvents,
	OpStatus:   (*Server).opStatus,
	OpList:     (*Server).opList,
	OpFetch:    (*Server).opFetch,
	OpCleanup:  (*Server).opCleanup,
	OpRenew:    (*Server).opRenew,
	OpHost:     (*Server).opHost,
	OpNetRules: (*Server).opNetRules,
	OpNetem:    (*Server).opNetem,
}

// handle runs one request. A refusal becomes a reply with err set (and a log line); any other
// error is a protocol violation that closes the connection.
func (s *Server) handle(req request) (reply, error) {
	h := handlers[req.Op]
	out, err := h(s, req.Body)
	var ref *refusal
	if errors.As(err, &ref) {
		s.log.Warn("request refused", "op", req.Op, "id", req.ID, "reason", ref.msg)
		return reply{ID: req.ID, Err: ref.msg}, nil
	}
	if err != nil {
		return reply{}, err
	}
	b, err := msgpack.Marshal(out)
	if err != nil {
		return reply{}, fmt.Errorf("encode the reply: %w", err)
	}
	return reply{ID: req.ID, Body: b}, nil
}

// decodeBody decodes a request body; a malformed one is a protocol violation.
func decodeBody(body []byte, v any) error {
	if len(body) == 0 {
		return fmt.Errorf("%w: the request has no body", ErrMalformed)
	}
	return decodeStrict(body, v)
}

func (s *Server) opTime(body []byte) (any, error) {
	var v struct{}
	if err := decodeBody(body, &v); err != nil {
		return nil, err
	}
	return TimeReply{UnixNano: s.opts.Now().UnixNano()}, nil
}

func (s *Server) opHost(body []byte) (any, error) {
	var v struct{}
	if err := decodeBody(body, &v); err != nil {
		return nil, err
	}
	id, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	rep := HostReply{Machine: strings.TrimSpace(string(id)), CPUs: runtime.NumCPU()}
	if as, err := net.InterfaceAddrs(); err == nil {
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
				rep.Addrs = append(rep.Addrs, n.String())
			}
		}
	}
	return rep, nil
}

func (s *Server) opPorts(body []byte) (any, error) {
	var req PortsRequest
	if err := decodeBody(body, &req); err != nil {
		return nil, err
	}
	addrs, err := freePorts(req.IP, req.Count)
	if err != nil {
		return nil, refuse("%v", err)
	}
	return PortsReply{Addrs: addrs}, nil
}
