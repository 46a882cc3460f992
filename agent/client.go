package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/rundir"
)

// ErrClosed is returned by a Client's methods after Close, or after an error broke its connection
// (the error that broke it is returned once, wrapped with the op; ErrClosed afterwards).
var ErrClosed = errors.New("agent: client connection closed")

// RemoteError is an agent's refusal of a request (a bad run ID, a node not in cluster.json, ...).
// The connection stays usable.
type RemoteError struct {
	Addr, Op, Message string
}

func (e *RemoteError) Error() string {
	return fmt.Sprintf("agent %s refused %s: %s", e.Addr, e.Op, e.Message)
}

// Client is an authenticated connection to an agent. It is safe for concurrent use: requests are
// sent one at a time on the connection, so a long-polling Events call holds up the others; give
// events a Client of its own. It does not reconnect: an I/O error closes it (the agent's side of
// a broken session cannot be resumed), and the caller dials again; so does a ctx cancelled while
// its request is under way (the reply would come out of step).
type Client struct {
	addr    string
	timeout time.Duration

	mu   sync.Mutex // held for a whole request and reply
	conn net.Conn
	sess *session
	err  error // once set, the connection is unusable

	renewMu  sync.Mutex
	renewers map[string]context.CancelFunc
	renewWG  sync.WaitGroup
	closed   bool
}

// Dial connects to the agent at addr and authenticates with token. timeout bounds the dial and
// handshake, and then every request (an events request's wait is added to it); ctx may cut the
// dial shorter.
func Dial(ctx context.Context, addr string, token []byte, timeout time.Duration) (*Client, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("agent client timeout %v: want more than 0", timeout)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial agent %s: %w", addr, err)
	}
	dl, _ := ctx.Deadline()
	conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	sess, err := clientHandshake(conn, token)
	stop()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("agent %s: handshake: %w", addr, err)
	}
	conn.SetDeadline(time.Time{})
	return &Client{addr: addr, timeout: timeout, conn: conn, sess: sess, renewers: map[string]context.CancelFunc{}}, nil
}

// Addr is the agent's address as dialled.
func (c *Client) Addr() string { return c.addr }

// call sends one request and decodes its reply into out. extra lengthens the deadline (an events
// request's wait).
func (c *Client) call(ctx context.Context, op string, in, out any, extra time.Duration) error {
	body, err := msgpack.Marshal(in)
	if err != nil {
		return fmt.Errorf("agent %s: encode %s: %w", c.addr, op, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dl := time.Now().Add(c.timeout + extra)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.conn.SetDeadline(dl)
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	rep, err := c.roundTrip(request{Op: op, Body: body})
	if err != nil {
		// The session's sequence numbers are out of step now: the connection is done.
		c.err = ErrClosed
		c.conn.Close()
		if ctx.Err() != nil {
			return fmt.Errorf("agent %s: %s: %w", c.addr, op, ctx.Err())
		}
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, err)
	}
	if rep.Err != "" {
		return &RemoteError{Addr: c.addr, Op: op, Message: rep.Err}
	}
	if err := decodeStrict(rep.Body, out); err != nil {
		return fmt.Errorf("agent %s: %s reply: %w", c.addr, op, err)
	}
	return nil
}

func (c *Client) roundTrip(req request) (reply, error) {
	if err := c.sess.writeMsg(req); err != nil {
		return reply{}, err
	}
	p, err := c.sess.readMsg()
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = fmt.Errorf("the agent closed the connection (see its log): %w", err)
		}
		return reply{}, err
	}
	var rep reply
	if err := decodeStrict(p, &rep); err != nil {
		return reply{}, err
	}
	return rep, nil
}

// Time returns the agent's wall clock.
func (c *Client) Time(ctx context.Context) (time.Time, error) {
	var rep TimeReply
	if err := c.call(ctx, OpTime, struct{}{}, &rep, 0); err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, rep.UnixNano), nil
}

// Host tells which machine the agent runs on (HostReply).
func (c *Client) Host(ctx context.Context) (HostReply, error) {
	var rep HostReply
	err := c.call(ctx, OpHost, struct{}{}, &rep, 0)
	return rep, err
}

// Prepare writes cluster (cluster.json's bytes) into the agent's run directory for run and opens
// the run's lease (lease 0: DefaultLease). It returns the run directory's path on the agent's
// host, and keeps the lease renewed (every lease/3) until Cleanup or Close.
func (c *Client) Prepare(ctx context.Context, run string, cluster []byte, lease time.Duration) (string, error) {
	var rep PrepareReply
	if err := c.call(ctx, OpPrepare, PrepareRequest{Run: run, Cluster: cluster, Lease: lease}, &rep, 0); err != nil {
		return "", err
	}
	c.startRenewer(run, rep.Lease)
	return rep.Dir, nil
}

// Ports returns n host:port addresses on ip (an address of the agent's host) whose ports were
// free for both TCP and UDP.
func (c *Client) Ports(ctx context.Context, ip string, n int) ([]string, error) {
	var rep PortsReply
	if err := c.call(ctx, OpPorts, PortsRequest{IP: ip, Count: n}, &rep, 0); err != nil {
		return nil, err
	}
	return rep.Addrs, nil
}

// Start starts incarnation inc of node id of run and returns its pid.
func (c *Client) Start(ctx context.Context, run string, id, inc int, awaitBegin bool) (int, error) {
	var rep StartReply
	if err := c.call(ctx, OpStart, StartRequest{Run: run, Node: id, Inc: inc, AwaitBegin: awaitBegin}, &rep, 0); err != nil {
		return 0, err
	}
	return rep.Pid, nil
}

// Signal sends sig (one of Signals: TERM, KILL, STOP, CONT) to node id's current incarnation.
func (c *Client) Signal(ctx context.Context, run string, id int, sig string) error {
	var rep struct{}
	return c.call(ctx, OpSignal, SignalRequest{Run: run, Node: id, Signal: sig}, &rep, 0)
}

// Events returns run's events after sequence number after, waiting up to wait (at most
// MaxEventsWait) for one; none when the wait ran out.
func (c *Client) Events(ctx context.Context, run string, after uint64, wait time.Duration) ([]Event, error) {
	var rep EventsReply
	if err := c.call(ctx, OpEvents, EventsRequest{Run: run, After: after, Wait: wait}, &rep, max(wait, 0)); err != nil {
		return nil, err
	}
	return rep.Events, nil
}

// Status returns every process of run, in the order they were started.
func (c *Client) Status(ctx context.Context, run string) ([]ProcStatus, error) {
	var rep StatusReply
	if err := c.call(ctx, OpStatus, RunRequest{Run: run}, &rep, 0); err != nil {
		return nil, err
	}
	return rep.Procs, nil
}

// List returns the regular files of run's directory on the agent.
func (c *Client) List(ctx context.Context, run string) ([]FileInfo, error) {
	var rep ListReply
	if err := c.call(ctx, OpList, RunRequest{Run: run}, &rep, 0); err != nil {
		return nil, err
	}
	return rep.Files, nil
}

// Fetch returns up to limit (1..MaxChunk) bytes of the run directory's file (a path as List gives
// it) from offset on.
func (c *Client) Fetch(ctx context.Context, run, file string, offset int64, limit int) (FetchReply, error) {
	var rep FetchReply
	err := c.call(ctx, OpFetch, FetchRequest{Run: run, Path: file, Offset: offset, Max: limit}, &rep, 0)
	return rep, err
}

// Renew renews run's lease.
func (c *Client) Renew(ctx context.Context, run string) error {
	var rep RenewReply
	return c.call(ctx, OpRenew, RunRequest{Run: run}, &rep, 0)
}

// Cleanup kills run's live processes, waits for them and, unless keep, removes the run's
// directory on the agent. It stops the lease renewer Prepare started.
func (c *Client) Cleanup(ctx context.Context, run string, keep bool) (CleanupReply, error) {
	c.stopRenewer(run)
	var rep CleanupReply
	err := c.call(ctx, OpCleanup, CleanupRequest{Run: run, Keep: keep}, &rep, 10*time.Second)
	return rep, err
}

// FetchAll copies every file of run's directory on the agent into localDir (created if need be),
// each through a temporary file renamed into place, and returns what it copied. A cluster.json
// that localDir already has is left alone: the launcher's own copy is the reference. Files still
// being written are copied as far as they are when read.
func (c *Client) FetchAll(ctx context.Context, run, localDir string) ([]FileInfo, error) {
	files, err := c.List(ctx, run)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(localDir, 0o755); err != nil {
		return nil, fmt.Errorf("fetch run %s from %s: %w", run, c.addr, err)
	}
	root, err := os.OpenRoot(localDir)
	if err != nil {
		return nil, fmt.Errorf("fetch run %s from %s: %w", run, c.addr, err)
	}
	defer root.Close()
	var got []FileInfo
	for _, f := range files {
		if checkRelPath(f.Path) != nil {
			return got, fmt.Errorf("fetch run %s from %s: the agent listed %q, which is not a path inside a run directory", run, c.addr, f.Path)
		}
		if f.Path == rundir.ClusterFile {
			if _, err := root.Stat(rundir.ClusterFile); err == nil {
				continue
			}
		}
		n, err := c.fetchFile(ctx, root, run, f.Path)
		if err != nil {
			return got, fmt.Errorf("fetch %s of run %s from %s into %s: %w", f.Path, run, c.addr, filepath.Join(localDir, filepath.FromSlash(f.Path)), err)
		}
		got = append(got, FileInfo{Path: f.Path, Size: n})
	}
	return got, nil
}

// fetchFile copies one file into root, through a temporary file next to it.
func (c *Client) fetchFile(ctx context.Context, root *os.Root, run, rel string) (int64, error) {
	local := filepath.FromSlash(rel)
	if dir := filepath.Dir(local); dir != "." {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
	}
	mode := os.FileMode(0o644)
	if rel == rundir.ClusterFile {
		mode = 0o600
	}
	tmp := filepath.Join(filepath.Dir(local), "."+path.Base(rel)+".fetch-"+fmt.Sprint(time.Now().UnixNano()))
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return 0, err
	}
	var off int64
	for err == nil {
		var rep FetchReply
		if rep, err = c.Fetch(ctx, run, rel, off, MaxChunk); err != nil {
			break
		}
		if _, err = f.Write(rep.Data); err != nil {
			break
		}
		off += int64(len(rep.Data))
		if rep.EOF {
			break
		}
		if len(rep.Data) == 0 {
			err = fmt.Errorf("the agent returned no data at offset %d of %d bytes", off, rep.Size)
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = root.Rename(tmp, local)
	}
	if err != nil {
		root.Remove(tmp)
		return 0, err
	}
	return off, nil
}

// startRenewer keeps run's lease renewed every lease/3 until stopRenewer or Close.
func (c *Client) startRenewer(run string, lease time.Duration) {
	if lease <= 0 {
		lease = DefaultLease
	}
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	if c.closed {
		return
	}
	if stop := c.renewers[run]; stop != nil {
		stop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.renewers[run] = cancel
	c.renewWG.Add(1)
	go func() {
		defer c.renewWG.Done()
		t := time.NewTicker(lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			// Not under ctx: stopping the renewer must not cut a renewal short, which would break
			// the connection. A refusal (the run was cleaned up by someone else) or a broken
			// connection ends the renewer.
			if err := c.Renew(context.Background(), run); err != nil {
				var re *RemoteError
				if errors.As(err, &re) || errors.Is(err, ErrClosed) {
					return
				}
			}
		}
	}()
}

func (c *Client) stopRenewer(run string) {
	c.renewMu.Lock()
	defer c.renewMu.Unlock()
	if stop := c.renewers[run]; stop != nil {
		stop()
		delete(c.renewers, run)
	}
}

// Close stops the lease renewers and closes the connection, interrupting a request in progress.
// The agent kills a run's processes when its lease then runs out, unless another client renews it.
func (c *Client) Close() error {
	c.renewMu.Lock()
	if c.closed {
		c.renewMu.Unlock()
		return nil
	}
	c.closed = true
	for run, stop := range c.renewers {
		stop()
		delete(c.renewers, run)
	}
	c.renewMu.Unlock()
	err := c.conn.Close() // first: a renewer waiting for a reply returns
	c.renewWG.Wait()
	c.mu.Lock()
	c.err = ErrClosed
	c.mu.Unlock()
	return err
}
