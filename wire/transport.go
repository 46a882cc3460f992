package wire

// Handler receives what a transport delivers. Its methods are called from the transport's own
// goroutines, concurrently (one per connection, one per outbound link, one for UDP), so they must be
// safe for concurrent use and should return quickly: a slow Message stalls only its connection (the
// sender's queue then fills), a slow Link stalls only that link. A handler must not call the
// transport's Close; no method is called after Close returns.
type Handler interface {
	// Message delivers a frame from an authenticated peer (its ID and incarnation), in arrival order
	// per connection. The handler may keep env.
	Message(from, inc int, env *Envelope)
	// Datagram delivers a verified heartbeat; from is the sender's address.
	Datagram(from string, d Datagram)
	// Drop reports a frame or datagram that was discarded: a bad frame, a bad hello, a bad MAC, a
	// frame still queued when its link broke... env is nil when unknown, peer is 0 when unknown or
	// not a peer.
	Drop(peer int, env *Envelope, reason string)
	// Link reports that the outbound link to peer went up or down; down carries the error that
	// broke the connection or failed the dial. It is called on changes only, in order per peer.
	Link(peer int, up bool, err error)
	// Control answers a control request from the controller (node 0): req and the reply are
	// msgpack bodies, opaque to this package.
	Control(req []byte) []byte
}

// Transport moves envelopes and heartbeats between the nodes of one cluster.
type Transport interface {
	// Send enqueues env on the peer's bounded queue and never blocks. It returns ErrQueueFull,
	// ErrUnknownPeer, ErrLinkDown or ErrClosed (the message is then lost; the caller logs the drop),
	// or an encoding error. env is encoded before Send returns; it must not be changed afterwards
	// (Drop may report it later), except env.VC, which is not kept (Drop reports env without it).
	Send(to int, env *Envelope) error
	// SendDatagram sends a heartbeat; the transport fills in Version, Cluster, From, Inc and the MAC.
	SendDatagram(to int, d *Datagram) error
	// Connect dials these peers now (the topology's neighbours); other known peers are dialled on
	// their first Send. Unknown IDs are ignored.
	Connect(peers []int)
	// LinkUp tells whether the outbound link to peer is up.
	LinkUp(peer int) bool
	// Close closes the listeners and connections and stops the goroutines; it is idempotent.
	Close() error
}

// Resetter is the optional extra of a transport that can reset the connection a peer dialled to
// this node, as a receiver does that finds a damaged frame on it (the link rules' corrupt and
// reset). The peer sees its link break, as when a process dies, and dials again; what was in flight
// on the connection is lost. ResetInbound tells whether there was a connection to reset.
type Resetter interface {
	ResetInbound(peer int) bool
}

var (
	_ Transport = (*TCP)(nil)
	_ Transport = (*MemTransport)(nil)
	_ Resetter  = (*TCP)(nil)
	_ Resetter  = (*MemTransport)(nil)
)
