package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
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

// Client speaks to one agent over a stream: the SSH channel of `leaderlab agent --stdio` on a
// host, or any io.ReadWriteCloser (tests use pipes). SSH authenticates and encrypts the stream;
// the client frames requests on it. It is safe for concurrent use, and requests are multiplexed:
// each carries an ID and its reply may come before an earlier request's, so a long-polling Events
// call holds up nothing. A request whose ctx ends is abandoned (its late reply is dropped) and the
// stream stays usable. It does not reconnect: an I/O or protocol error breaks it for every request
// (ErrClosed afterwards), and the caller opens a new stream.
type Client struct {
	addr    string
	timeout time.Duration
	rw      io.ReadWriteCloser

	wmu  sync.Mutex // one frame written at a time
	wbuf []byte

	mu      sync.Mutex
	next    uint64
	pending map[uint64]chan reply
	err     error         // once set, the stream is unusable
	dead    chan struct{} // closed when err is set

	renewMu  sync.Mutex
	renewers map[string]context.CancelFunc
	renewWG  sync.WaitGroup
	closed   bool
}

// NewClient speaks to an agent over rw, which the client owns from now on (Close closes it). addr
// names the agent in errors (e.g. "vagrant@lab1:22"); timeout bounds every request (an events
// request's wait is added to it).
func NewClient(addr string, rw io.ReadWriteCloser, timeout time.Duration) (*Client, error) {
	if timeout <= 0 {
		return nil, fmt.Errorf("agent client timeout %v: want more than 0", timeout)
	}
	c := &Client{addr: addr, timeout: timeout, rw: rw, pending: map[uint64]chan reply{}, dead: make(chan struct{}),
		renewers: map[string]context.CancelFunc{}}
	go c.readLoop()
	return c, nil
}

// readLoop hands each reply to the request waiting for it, until the stream breaks.
func (c *Client) readLoop() {
	var buf []byte
	for {
		p, err := wire.ReadFrame(c.rw, buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("the agent ended the session (its log is in the run directory's hosts/ folder): %w", err)
			}
			c.fail(err)
			return
		}
		buf = p[:cap(p)]
		var rep reply
		if err := decodeStrict(p, &rep); err != nil {
			c.fail(fmt.Errorf("a reply: %w", err))
			return
		}
		c.mu.Lock()
		ch := c.pending[rep.ID]
		delete(c.pending, rep.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- rep // buffered: never blocks
		}
	}
}

// fail breaks the stream for every request, once.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	close(c.dead)
	c.rw.Close()
}

// Addr is the agent's name as given to NewClient.
func (c *Client) Addr() string { return c.addr }

// Err is what broke the stream, or nil while it works.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Done is closed when the stream breaks (the agent ended, the SSH session died, Close).
func (c *Client) Done() <-chan struct{} { return c.dead }

// call sends one request and decodes its reply into out. extra lengthens the deadline (an events
// request's wait).
func (c *Client) call(ctx context.Context, op string, in, out any, extra time.Duration) error {
	body, err := msgpack.Marshal(in)
	if err != nil {
		return fmt.Errorf("agent %s: encode %s: %w", c.addr, op, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ch := make(chan reply, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		if errors.Is(err, ErrClosed) {
			return err
		}
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, err)
	}
	c.next++
	id := c.next
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	p, err := msgpack.Marshal(request{ID: id, Op: op, Body: body})
	if err == nil && len(p) > wire.MaxFrame {
		err = fmt.Errorf("%w: a request of %d bytes (limit %d)", wire.ErrFrameTooLarge, len(p), wire.MaxFrame)
	}
	if err != nil {
		forget()
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, err)
	}
	c.wmu.Lock()
	c.wbuf, err = wire.AppendPayload(c.wbuf[:0], p)
	if err == nil {
		_, err = c.rw.Write(c.wbuf)
	}
	c.wmu.Unlock()
	if err != nil {
		forget()
		c.fail(fmt.Errorf("write: %w", err))
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, c.Err())
	}
	t := time.NewTimer(c.timeout + extra)
	defer t.Stop()
	var rep reply
	select {
	case rep = <-ch:
	case <-c.dead:
		forget()
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, c.Err())
	case <-ctx.Done():
		forget()
		return fmt.Errorf("agent %s: %s: %w", c.addr, op, ctx.Err())
	case <-t.C:
		forget()
		return fmt.Errorf("agent %s: %s: no reply within %v", c.addr, op, c.timeout+extra)
	}
	if rep.Err != "" {
		return &RemoteError{Addr: c.addr, Op: op, Message: rep.Err}
	}
	if err := decodeStrict(rep.Body, out); err != nil {
		return fmt.Errorf("agent %s: %s reply: %w", c.addr, op, err)
	}
	return nil
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
			case <-c.dead:
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

// Close stops the lease renewers and closes the stream, failing the requests in progress. The
// agent kills a run's processes when its stream ends (under --stdio) or its lease runs out.
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
	c.fail(ErrClosed) // first: a renewer waiting for a reply returns
	c.renewWG.Wait()
	return nil
}
