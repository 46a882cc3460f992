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
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/internal/osproc"
	"github.com/vmihailenco/msgpack/v5"
)

// Server is a running agent.
type Server struct {
	opts  Options
	log   *slog.Logger
	ln    net.Listener
	procs *osproc.Spawner

	mu      sync.Mutex
	runs    map[string]*run
	conns   map[net.Conn]struct{}
	closing bool

	connWG sync.WaitGroup // connection goroutines
	procWG sync.WaitGroup // process watchers
	done   chan struct{}  // closed when the server begins to stop
	slots  chan struct{}  // one per connection being served (MaxConns)

	// maxWait caps an events request's wait (MaxEventsWait; tests shorten it).
	maxWait time.Duration
}

// newServer makes a server that serves nothing yet (ln may be nil: tests hand it connections).
func newServer(opts Options, ln net.Listener) (*Server, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Server{
		opts:    opts,
		log:     slog.New(slog.NewTextHandler(opts.Log, nil)),
		ln:      ln,
		procs:   osproc.NewSpawner(),
		runs:    map[string]*run{},
		conns:   map[net.Conn]struct{}{},
		done:    make(chan struct{}),
		slots:   make(chan struct{}, opts.MaxConns),
		maxWait: MaxEventsWait,
	}, nil
}

// Listen checks opts and listens on opts.Listen; Serve then serves.
func Listen(opts Options) (*Server, error) {
	if _, _, err := net.SplitHostPort(opts.Listen); err != nil {
		return nil, fmt.Errorf("listen address %q: %v (want host:port, e.g. 0.0.0.0:7070 or 192.168.56.11:7070)", opts.Listen, err)
	}
	if err := checkToken(opts.Token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", opts.Listen, err)
	}
	s, err := newServer(opts, ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return s, nil
}

// ListenAndServe is Listen, then Serve.
func ListenAndServe(ctx context.Context, opts Options) error {
	s, err := Listen(opts)
	if err != nil {
		return err
	}
	return s.Serve(ctx)
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// WorkDir is the directory that holds the run directories.
func (s *Server) WorkDir() string { return s.opts.WorkDir }

// Serve accepts connections until ctx is done, then closes them, kills every process the agent
// started, waits for them, and returns nil. It returns an error when accepting fails for good
// (after the same cleanup). Call it once.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	s.log.Info("agent listening", "addr", s.ln.Addr().String(), "workdir", s.opts.WorkDir, "binary", s.opts.Binary)
	var err error
	for backoff := time.Duration(0); ; {
		conn, aerr := s.ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			var ne net.Error
			if errors.As(aerr, &ne) && ne.Timeout() || errors.Is(aerr, os.ErrDeadlineExceeded) || isTemporary(aerr) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accept failed; retrying", "err", aerr, "in", backoff)
				time.Sleep(backoff)
				continue
			}
			err = fmt.Errorf("accept on %s: %w", s.ln.Addr(), aerr)
			break
		}
		backoff = 0
		select {
		case s.slots <- struct{}{}:
		default:
			s.log.Warn("connection refused", "remote", conn.RemoteAddr().String(), "reason", fmt.Sprintf("too many connections (limit %d)", s.opts.MaxConns))
			conn.Close()
			continue
		}
		if !s.track(conn) {
			<-s.slots
			conn.Close()
			break
		}
		s.connWG.Add(1)
		go func() {
			defer func() { <-s.slots }()
			s.serveConn(conn)
		}()
	}
	s.ln.Close()
	s.shutdown()
	return err
}

// isTemporary tells whether an accept error is worth retrying (out of file descriptors, a
// connection aborted before it was accepted).
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// track registers a connection so that shutdown can close it; false when shutting down.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// shutdown closes every connection, kills every process and waits for all of it.
func (s *Server) shutdown() {
	s.mu.Lock()
	s.closing = true
	close(s.done)
	for c := range s.conns {
		c.Close()
	}
	runs := make([]*run, 0, len(s.runs))
	for _, r := range s.runs {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	s.connWG.Wait() // no request is in progress from here on: no more starts
	for _, r := range runs {
		r.stopLease()
		if n, err := r.killAll(); n > 0 || err != nil {
			s.log.Info("agent stopping: killed the run's processes", "run", r.id, "killed", n, "err", err)
		}
	}
	s.procWG.Wait()
	s.procs.Close()
}

// serveConn serves one connection: the handshake, then requests until an error. It never panics
// and always closes the connection, then writes one log line saying why.
func (s *Server) serveConn(conn net.Conn) {
	defer s.connWG.Done()
	defer s.untrack(conn)
	remote := conn.RemoteAddr().String()
	msg, level, reason := "connection closed", slog.LevelInfo, "the client closed the connection"
	defer func() {
		if p := recover(); p != nil {
			level, reason = slog.LevelError, fmt.Sprintf("agent bug: %v\n%s", p, debug.Stack())
		}
		lingerClose(conn)
		s.log.Log(context.Background(), level, msg, "remote", remote, "reason", reason)
	}()
	fail := func(r string) { level, reason = slog.LevelWarn, r }

	conn.SetDeadline(time.Now().Add(s.opts.HandshakeTimeout))
	sess, err := serverHandshake(conn, s.opts.Token)
	if err != nil {
		msg = "connection refused"
		fail(describe(err, "handshake"))
		return
	}
	s.log.Info("session open", "remote", remote)
	for {
		select {
		case <-s.done:
			reason = "the agent is stopping"
			return
		default:
		}
		conn.SetDeadline(time.Now().Add(s.opts.IdleTimeout))
		p, err := sess.readMsg()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				fail(describe(err, "request"))
			}
			return
		}
		var req request
		if err := decodeStrict(p, &req); err != nil {
			fail(fmt.Sprintf("request %d: %v", sess.recvSeq-1, err))
			return
		}
		rep, err := s.handle(remote, req)
		if err != nil { // a protocol violation: no reply
			fail(fmt.Sprintf("request %d (%s): %v", sess.recvSeq-1, truncate(req.Op, 40), err))
			return
		}
		conn.SetDeadline(time.Now().Add(s.opts.IdleTimeout))
		if err := sess.writeMsg(rep); err != nil {
			fail(fmt.Sprintf("reply to %s: %v", req.Op, err))
			return
		}
	}
}

// describe words a read error for the log.
func describe(err error, what string) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return what + ": timed out waiting for the client: " + err.Error()
	}
	return err.Error()
}

// lingerClose closes c after sending FIN and briefly discarding what the peer still sends, so
// that it reads what the agent sent (the challenge) before the close rather than a reset.
func lingerClose(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.CopyN(io.Discard, c, 64<<10)
	}
	c.Close()
}

// refusal is an error the client gets as a reply (the connection stays up).
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refuse(format string, args ...any) error { return &refusal{fmt.Sprintf(format, args...)} }

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
}

// handle runs one request. A refusal becomes a reply with err set (and a log line); any other
// error is a protocol violation that closes the connection.
func (s *Server) handle(remote string, req request) (reply, error) {
	h, ok := handlers[req.Op]
	if !ok {
		return reply{}, fmt.Errorf("unknown op %q (want one of time, prepare, ports, start, signal, events, status, list, fetch, cleanup, renew)", truncate(req.Op, 40))
	}
	out, err := h(s, req.Body)
	var ref *refusal
	if errors.As(err, &ref) {
		s.log.Warn("request refused", "remote", remote, "op", req.Op, "reason", ref.msg)
		return reply{Err: ref.msg}, nil
	}
	if err != nil {
		return reply{}, err
	}
	b, err := msgpack.Marshal(out)
	if err != nil {
		return reply{}, fmt.Errorf("encode the reply: %w", err)
	}
	return reply{Body: b}, nil
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
	return HostReply{Machine: strings.TrimSpace(string(id)), CPUs: runtime.NumCPU()}, nil
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
