package wire

import "errors"

// Sentinel errors. Callers branch on them with errors.Is; the errors the package returns wrap them
// with the detail (which field, which peer, which value).
var (
	// ErrEmptyFrame: a frame header announced a length of 0. The contract says a frame is at least
	// one byte, so an empty frame is a protocol violation, not a keep-alive.
	ErrEmptyFrame = errors.New("wire: empty frame")
	// ErrFrameTooLarge: a frame header announced more than MaxFrame bytes (or a hello more than its
	// own, smaller limit). Nothing is allocated for it.
	ErrFrameTooLarge = errors.New("wire: frame too large")
	// ErrChecksum: a frame whose CRC-32C does not match its bytes: damaged on the way (the link
	// rules' corrupt). The connection is closed, as for any bad frame.
	ErrChecksum = errors.New("wire: frame checksum mismatch")
	// ErrMalformed: bytes that are not the msgpack this package expects: truncated, a wrong type,
	// trailing bytes, a length beyond the data, nesting too deep, an unknown envelope kind.
	ErrMalformed = errors.New("wire: malformed message")
	// ErrVersion: a hello or datagram of another protocol version.
	ErrVersion = errors.New("wire: protocol version mismatch")
	// ErrCluster: a hello or datagram of another cluster (another run).
	ErrCluster = errors.New("wire: cluster mismatch")
	// ErrBadMAC: an HMAC that does not match the run's secret.
	ErrBadMAC = errors.New("wire: bad MAC")
	// ErrDatagramTooLarge: a datagram above MaxDatagram bytes.
	ErrDatagramTooLarge = errors.New("wire: datagram too large")

	// ErrQueueFull: Send found the peer's queue full (the peer is slow, paused, or the link is
	// stuck). The message is dropped; the caller logs the drop.
	ErrQueueFull = errors.New("wire: send queue full")
	// ErrUnknownPeer: Send or SendDatagram to an ID that is not a peer (or is this node).
	ErrUnknownPeer = errors.New("wire: unknown peer")
	// ErrLinkDown: the link to the peer is down (its connection broke or the dial failed); the
	// message is lost, as on a real network, while re-dialling continues in the background.
	ErrLinkDown = errors.New("wire: link down")
	// ErrClosed: the transport (or control client) is closed.
	ErrClosed = errors.New("wire: transport closed")
)

// Drop reasons that are not specific to one frame. Other reasons are formatted with their detail.
const (
	// ReasonLinkBroke: the frame was queued (or being written) when its connection broke.
	ReasonLinkBroke = "link broke"
	// ReasonLinkDown: the frame was queued while the first dial was in progress and that dial failed
	// (or queued in a race with a link going down).
	ReasonLinkDown = "link down"
	// ReasonClosed: the frame was still queued when the transport was closed.
	ReasonClosed = "transport closed"
)
