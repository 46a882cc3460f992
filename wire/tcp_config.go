package wire

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// TCPConfig configures a TCP transport. Zero durations and QueueLen take their defaults in NewTCP.
type TCPConfig struct {
	// Self is this node's ID, 1 or more (0 is the controller).
	Self int
	// Inc is this node's incarnation, from 1; it goes into every hello and datagram.
	Inc int
	// Cluster is the run's cluster ID (cluster.json "cluster_id"); peers of another run are refused.
	Cluster string
	// Secret keys the HMACs of hellos and datagrams (the run's secret, decoded from hex).
	Secret []byte
	// Listen is the host:port bound for both TCP (frames and control) and UDP (heartbeats), on the
	// same port number. Port 0 picks a free port for both; Addr tells which.
	Listen string
	// Listener and PacketConn, when set, are used instead of binding Listen (tests, socket
	// activation); the transport closes them. Without PacketConn, UDP binds the listener's address.
	Listener   net.Listener
	PacketConn net.PacketConn
	// Peers maps each peer's ID to its host:port (any host: VMs are not on 127.0.0.1). An entry for
	// Self is ignored.
	Peers map[int]string
	// Bind, when set, is the local IP that outbound connections are dialled from.
	Bind string
	// Mark, when above 0, is set as SO_MARK on the outbound connections and the UDP socket, so
	// that a firewall can match this node's packets (Linux; it needs CAP_NET_ADMIN).
	Mark int
	// QueueLen is the capacity of each peer's send queue (default 1024); a full queue fails Send with
	// ErrQueueFull instead of blocking.
	QueueLen int
	// HandshakeTimeout bounds dialling, writing a hello, reading an inbound hello, and writing a
	// control reply (default 2s).
	HandshakeTimeout time.Duration
	// BackoffMin and BackoffMax bound the wait between re-dials of a down link, which doubles from
	// min to max (default 2ms and 500ms). The first re-dial after a break is immediate.
	BackoffMin time.Duration
	BackoffMax time.Duration
	// Handler receives messages, datagrams, drops, link changes and control requests.
	Handler Handler
}

// Limits of TCPConfig values.
const (
	maxQueueLen   = 1 << 20
	maxTimeout    = time.Minute
	maxBackoffCap = time.Minute
)

// DefaultTCPConfig returns the defaults; the caller fills in who it is, the run, the addresses and
// the handler.
func DefaultTCPConfig() TCPConfig {
	return TCPConfig{
		Inc:              1,
		QueueLen:         1024,                   // about 20 s of heartbeat-rate traffic to one peer
		HandshakeTimeout: 2 * time.Second,        // generous for VMs; a local hello takes microseconds
		BackoffMin:       2 * time.Millisecond,   // a restarted peer is reached within milliseconds
		BackoffMax:       500 * time.Millisecond, // a dead peer costs at most two dials a second
	}
}

// withDefaults fills zero values with DefaultTCPConfig's.
func (c TCPConfig) withDefaults() TCPConfig {
	d := DefaultTCPConfig()
	if c.QueueLen == 0 {
		c.QueueLen = d.QueueLen
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = d.HandshakeTimeout
	}
	if c.BackoffMin == 0 {
		c.BackoffMin = d.BackoffMin
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = max(d.BackoffMax, c.BackoffMin)
	}
	return c
}

// validate returns an error naming the first bad value and what would be accepted.
func (c *TCPConfig) validate() error {
	switch {
	case c.Self < 1:
		return fmt.Errorf("wire: Self is %d: want a node ID of 1 or more (0 is the controller)", c.Self)
	case c.Inc < 1:
		return fmt.Errorf("wire: Inc is %d: want an incarnation of 1 or more", c.Inc)
	case c.Cluster == "" || len(c.Cluster) > maxCluster:
		return fmt.Errorf("wire: Cluster %q: want 1..%d bytes", c.Cluster, maxCluster)
	case len(c.Secret) == 0:
		return fmt.Errorf("wire: Secret is empty: want the run's secret (cluster.json \"secret\")")
	case c.Handler == nil:
		return fmt.Errorf("wire: Handler is nil: want a Handler")
	case c.QueueLen < 1 || c.QueueLen > maxQueueLen:
		return fmt.Errorf("wire: QueueLen is %d: want 1..%d", c.QueueLen, maxQueueLen)
	case c.HandshakeTimeout <= 0 || c.HandshakeTimeout > maxTimeout:
		return fmt.Errorf("wire: HandshakeTimeout is %v: want more than 0, at most %v", c.HandshakeTimeout, maxTimeout)
	case c.BackoffMin <= 0 || c.BackoffMin > maxBackoffCap:
		return fmt.Errorf("wire: BackoffMin is %v: want more than 0, at most %v", c.BackoffMin, maxBackoffCap)
	case c.BackoffMax < c.BackoffMin || c.BackoffMax > maxBackoffCap:
		return fmt.Errorf("wire: BackoffMax is %v: want BackoffMin (%v) .. %v", c.BackoffMax, c.BackoffMin, maxBackoffCap)
	case c.Bind != "" && net.ParseIP(c.Bind) == nil:
		return fmt.Errorf("wire: Bind %q: want an IP address, or empty to dial from any", c.Bind)
	}
	if c.Listener == nil {
		if err := checkHostPort(c.Listen, true); err != nil {
			return fmt.Errorf("wire: Listen: %w", err)
		}
	}
	for id, addr := range c.Peers {
		if id < 1 {
			return fmt.Errorf("wire: Peers has ID %d: want IDs of 1 or more", id)
		}
		if err := checkHostPort(addr, false); err != nil {
			return fmt.Errorf("wire: Peers[%d]: %w", id, err)
		}
	}
	return nil
}

func checkHostPort(addr string, zeroOK bool) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port (%v)", addr, err)
	}
	p, err := strconv.Atoi(port)
	lo := 1
	if zeroOK {
		lo = 0
	}
	if err != nil || p < lo || p > 65535 {
		return fmt.Errorf("%q: want a port in %d..65535", addr, lo)
	}
	return nil
}
