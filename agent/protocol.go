package agent

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/wire"
)

// The operations of the protocol (a request's op).
const (
	OpTime    = "time"    // the agent's wall clock
	OpPrepare = "prepare" // write a run's cluster.json, open its lease
	OpPorts   = "ports"   // find free TCP+UDP ports on one of the agent's addresses
	OpStart   = "start"   // start one node process
	OpSignal  = "signal"  // send a node process one of Signals
	OpEvents  = "events"  // long-poll a run's process events
	OpStatus  = "status"  // a run's processes
	OpList    = "list"    // a run directory's files
	OpFetch   = "fetch"   // a chunk of one of them
	OpCleanup = "cleanup" // kill a run's processes and (unless kept) remove its directory
	OpRenew   = "renew"   // renew a run's lease and nothing else
	OpHost    = "host"    // which machine the agent runs on
)

// Limits and defaults of the protocol.
const (
	// DefaultIdleTimeout is how long a stream may stay silent before the agent ends it (a
	// launcher renews its runs' leases every few seconds).
	DefaultIdleTimeout = 5 * time.Minute
	// MaxInFlight bounds the requests of one stream handled at once; the agent reads no further
	// request until one of them is answered.
	MaxInFlight = 32
	// DefaultLease is how long a run's processes outlive the launcher's last request when prepare
	// does not say; MinLease and MaxLease bound what it may say.
	DefaultLease = 15 * time.Second
	MinLease     = 100 * time.Millisecond
	MaxLease     = time.Hour
	// MaxChunk is the most a fetch returns, so that a reply stays well under wire.MaxFrame.
	MaxChunk = 512 << 10
	// MaxEventsWait caps how long an events request waits for news.
	MaxEventsWait = 5 * time.Second
	// MaxPorts is the most ports one ports request may ask for.
	MaxPorts = 1024
	// maxEventsPerReply bounds an events reply (a few dozen bytes each).
	maxEventsPerReply = 2048
)

// Signals are the signal names a signal request may carry.
var Signals = []string{"TERM", "KILL", "STOP", "CONT"}

// The process states of ProcStatus.State.
const (
	StateRunning = "running"
	StatePaused  = "paused"
	StateExited  = "exited"
)

// The kinds of Event.Ev: the same words as launcher.jsonl's records (logs.LaunchSpawned, ...).
const (
	EventSpawned = "spawned"
	EventReady   = "ready"
	EventExited  = "exited"
)

// TimeReply is the reply to time: the agent's wall clock.
type TimeReply struct {
	UnixNano int64 `msgpack:"t"`
}

// HostReply is the reply to host: the machine under the agent. Machine is the kernel's boot ID
// (/proc/sys/kernel/random/boot_id; "" where there is none), the same for every agent on one
// kernel — the namespace lab's hosts share it, VMs do not — so the launcher can tell hosts that
// share cores. CPUs is how many the agent may use.
// Addrs are the host's IPv4 addresses other than loopback, with their prefix ("192.168.56.11/24"):
// a launcher that reaches the host through a forwarded port picks the one it shares a network with.
type HostReply struct {
	Machine string   `msgpack:"machine"`
	CPUs    int      `msgpack:"cpus"`
	Addrs   []string `msgpack:"addrs,omitempty"`
}

// PrepareRequest writes Cluster (cluster.json's bytes, which must load with the rundir package)
// into WorkDir/<Run>/ and opens the run's lease of Lease (0: DefaultLease; else MinLease..MaxLease).
type PrepareRequest struct {
	Run     string        `msgpack:"run"`
	Cluster []byte        `msgpack:"cluster"`
	Lease   time.Duration `msgpack:"lease"`
}

// PrepareReply tells where the run directory is on the agent's host, and the lease granted.
type PrepareReply struct {
	Dir   string        `msgpack:"dir"`
	Lease time.Duration `msgpack:"lease"`
}

// PortsRequest asks for Count (1..MaxPorts) ports free for both TCP and UDP on IP, an address of
// the agent's host. They are released before the reply, for the nodes to bind.
type PortsRequest struct {
	IP    string `msgpack:"ip"`
	Count int    `msgpack:"count"`
}

// PortsReply lists the ports found, as host:port.
type PortsReply struct {
	Addrs []string `msgpack:"addrs"`
}

// StartRequest starts incarnation Inc (>= 1) of node Node, which must be listed in the run's
// cluster.json; AwaitBegin adds --await-begin. There is no field for a program or arguments: the
// agent only ever runs its own binary's node command.
type StartRequest struct {
	Run        string `msgpack:"run"`
	Node       int    `msgpack:"node"`
	Inc        int    `msgpack:"inc"`
	AwaitBegin bool   `msgpack:"await_begin"`
}

// StartReply is the started process's ID.
type StartReply struct {
	Pid int `msgpack:"pid"`
}

// SignalRequest sends Signal (one of Signals) to the current incarnation of node Node.
type SignalRequest struct {
	Run    string `msgpack:"run"`
	Node   int    `msgpack:"node"`
	Signal string `msgpack:"signal"`
}

// RunRequest is the body of the requests that name only a run: status, list and renew.
type RunRequest struct {
	Run string `msgpack:"run"`
}

// EventsRequest asks for the run's events with Seq > After, waiting up to Wait (at most
// MaxEventsWait) for one when there is none yet.
type EventsRequest struct {
	Run   string        `msgpack:"run"`
	After uint64        `msgpack:"after"`
	Wait  time.Duration `msgpack:"wait"`
}

// EventsReply holds the events found, in order (possibly none, when the wait ran out).
type EventsReply struct {
	Events []Event `msgpack:"events"`
}

// Event is one step in the life of a process the agent started, numbered from 1 per run. Its
// fields are those of a launcher.jsonl record (logs.LaunchRecord), but TS is in the agent's clock:
// subtract the agent's ClockOffset to put it in the launcher's.
type Event struct {
	Seq  uint64 `msgpack:"seq"`
	Ev   string `msgpack:"ev"` // EventSpawned, EventReady or EventExited
	Node int    `msgpack:"node"`
	Inc  int    `msgpack:"inc"`
	Pid  int    `msgpack:"pid"`
	TS   int64  `msgpack:"ts"`
	// Exited: Code when the process exited normally, else Signal (killed, terminated, ...), else
	// Detail says why neither is known.
	Code   *int   `msgpack:"code,omitempty"`
	Signal string `msgpack:"signal,omitempty"`
	Detail string `msgpack:"detail,omitempty"`
	// Exited: the process's CPU time, and its peak resident set (VmHWM) when the agent ended it
	// (0 for one that ended by itself, or was killed by a signal the agent did not send).
	CPUMS    float64 `msgpack:"cpu_ms,omitempty"`
	MaxRSSKB int64   `msgpack:"max_rss_kb,omitempty"`
}

// StatusReply lists every process the run has had, in the order they were started, and how long
// is left of its lease.
type StatusReply struct {
	Procs []ProcStatus  `msgpack:"procs"`
	Lease time.Duration `msgpack:"lease"`
}

// ProcStatus is one process of a run. State is StateRunning, StatePaused or StateExited; an exited
// process has Code, Signal or Detail as its Event has.
type ProcStatus struct {
	Node   int    `msgpack:"node"`
	Inc    int    `msgpack:"inc"`
	Pid    int    `msgpack:"pid"`
	State  string `msgpack:"state"`
	Code   *int   `msgpack:"code,omitempty"`
	Signal string `msgpack:"signal,omitempty"`
	Detail string `msgpack:"detail,omitempty"`
}

// ListReply lists the regular files of the run directory (cluster.json, nodes/*.jsonl,
// stderr/*.log and whatever else a node wrote), with slash-separated paths relative to it.
type ListReply struct {
	Dir   string     `msgpack:"dir"`
	Files []FileInfo `msgpack:"files"`
}

// FileInfo is one file of a run directory.
type FileInfo struct {
	Path string `msgpack:"path"`
	Size int64  `msgpack:"size"`
}

// FetchRequest asks for up to Max (1..MaxChunk) bytes of the run directory's file Path (relative,
// slash-separated, as List gives it) from Offset on.
type FetchRequest struct {
	Run    string `msgpack:"run"`
	Path   string `msgpack:"path"`
	Offset int64  `msgpack:"offset"`
	Max    int    `msgpack:"max"`
}

// FetchReply is a chunk of a file; EOF tells that it reaches the file's end (Size, when read).
type FetchReply struct {
	Data []byte `msgpack:"data"`
	Size int64  `msgpack:"size"`
	EOF  bool   `msgpack:"eof"`
}

// CleanupRequest kills the run's live processes (SIGCONT, then SIGKILL), waits for them, and
// unless Keep removes the run directory.
type CleanupRequest struct {
	Run  string `msgpack:"run"`
	Keep bool   `msgpack:"keep"`
}

// CleanupReply says how many processes were killed and whether the directory was removed.
type CleanupReply struct {
	Killed  int  `msgpack:"killed"`
	Removed bool `msgpack:"removed"`
}

// RenewReply is the lease granted from now.
type RenewReply struct {
	Lease time.Duration `msgpack:"lease"`
}

// request and reply are the envelopes of every frame. Body holds the op's own msgpack message, as
// bytes; ID, chosen by the client, pairs a reply with its request (replies come in the order the
// requests finish, not the order they were sent).
type request struct {
	ID   uint64 `msgpack:"id"`
	Op   string `msgpack:"op"`
	Body []byte `msgpack:"body"`
}

type reply struct {
	ID   uint64 `msgpack:"id"`
	Err  string `msgpack:"err,omitempty"`
	Body []byte `msgpack:"body,omitempty"`
}

// ErrMalformed is wrapped by the errors of messages that are not the msgpack expected.
var ErrMalformed = errors.New("agent: malformed message")

// decodeStrict decodes b into v and refuses unknown fields and trailing bytes: the protocol has
// one version, and anything else is a sign of a confused or hostile peer. It checks every length
// against the bytes present first (wire.CheckValue): the msgpack library would allocate what a
// bin or str header declares before finding the bytes missing, 3.5 GB for a 20-byte request.
func decodeStrict(b []byte, v any) error {
	if err := wire.CheckValue(b); err != nil {
		return fmt.Errorf("%w: %s", ErrMalformed, strings.TrimPrefix(err.Error(), wire.ErrMalformed.Error()+": "))
	}
	r := bytes.NewReader(b)
	d := msgpack.NewDecoder(r)
	d.DisallowUnknownFields(true)
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w: %d bytes after the message", ErrMalformed, r.Len())
	}
	return nil
}

// runIDPattern is what a run ID may be: it names a directory under the work directory.
// It is compiled on first use: its 64 repetitions cost 866 allocations, which every process of
// the binary (a node too) would pay at start-up.
var runIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`) })

// ValidRunID checks a run ID: 1 to 64 of A-Z a-z 0-9 . _ -, and not "." or "..".
func ValidRunID(id string) error {
	if !runIDPattern().MatchString(id) || id == "." || id == ".." {
		return fmt.Errorf("run ID %q: want 1 to 64 characters of A-Z a-z 0-9 . _ - (and not . or ..)", truncate(id, 80))
	}
	return nil
}

// truncate shortens s for an error message or a log line.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
