package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
)

// ProtocolVersion is the version carried by hellos and datagrams.
const ProtocolVersion = 1

// maxCluster bounds the cluster ID, so that a hello fits maxHelloFrame.
const maxCluster = 256

// Hello is the first frame on every connection: who is dialling, for which run, signed with the
// run's secret. Node 0 is the controller (the launcher's chaos agent), which opens control
// connections; nodes are 1..N.
type Hello struct {
	Version uint8  `msgpack:"v"`
	Cluster string `msgpack:"c"`
	Node    int    `msgpack:"n"`
	Inc     int    `msgpack:"i"`
	MAC     []byte `msgpack:"mac"`
}

// NewHello returns a signed hello of the current protocol version.
func NewHello(secret []byte, cluster string, node, inc int) Hello {
	h := Hello{Version: ProtocolVersion, Cluster: cluster, Node: node, Inc: inc}
	h.Sign(secret)
	return h
}

// Sign sets h.MAC to the HMAC-SHA256, keyed by secret, of the hello's other fields.
func (h *Hello) Sign(secret []byte) { h.MAC = h.mac(secret) }

// Verify tells whether h.MAC is the HMAC of the hello's fields under secret (in constant time).
func (h *Hello) Verify(secret []byte) bool { return hmac.Equal(h.MAC, h.mac(secret)) }

// mac signs an unambiguous encoding: a label that no other signed message uses (so a hello's MAC
// cannot be replayed as a datagram's), then fixed-width integers and a length-prefixed string.
func (h *Hello) mac(secret []byte) []byte {
	b := make([]byte, 0, 64+len(h.Cluster))
	b = append(b, "leaderlab/hello\x00"...)
	b = append(b, h.Version)
	b = appendLenString(b, h.Cluster)
	b = binary.BigEndian.AppendUint64(b, uint64(h.Node))
	b = binary.BigEndian.AppendUint64(b, uint64(h.Inc))
	return sum(secret, b)
}

func appendLenString(b []byte, s string) []byte {
	return append(binary.BigEndian.AppendUint64(b, uint64(len(s))), s...)
}

func sum(secret, b []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return m.Sum(nil)
}

// Marshal encodes h as msgpack.
func (h *Hello) Marshal() ([]byte, error) {
	if len(h.Cluster) > maxCluster {
		return nil, fmt.Errorf("%w: cluster ID of %d bytes (limit %d)", ErrMalformed, len(h.Cluster), maxCluster)
	}
	b := make([]byte, 0, 64+len(h.Cluster))
	b = appendMapLen(b, 5)
	b = appendUint(appendStr(b, "v"), uint64(h.Version))
	b = appendStr(appendStr(b, "c"), h.Cluster)
	b = appendInt(appendStr(b, "n"), int64(h.Node))
	b = appendInt(appendStr(b, "i"), int64(h.Inc))
	b = appendBin(appendStr(b, "mac"), h.MAC)
	return b, nil
}

// Unmarshal decodes b into h, replacing all of h; the rules are Envelope.Unmarshal's. It checks the
// form only: the caller checks the version, the cluster and the MAC.
func (h *Hello) Unmarshal(b []byte) error {
	*h = Hello{}
	d := decoder{b: b}
	n, err := d.mapLen()
	if err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	var seen uint // a bit per known key: each must be present
	for range n {
		key, err := d.strBytes()
		if err != nil {
			return fmt.Errorf("hello key: %w", err)
		}
		switch string(key) {
		case "v":
			seen |= 1 << 0
			h.Version, err = d.uint8()
		case "c":
			seen |= 1 << 1
			h.Cluster, err = d.str()
		case "n":
			seen |= 1 << 2
			h.Node, err = d.int()
		case "i":
			seen |= 1 << 3
			h.Inc, err = d.int()
		case "mac":
			seen |= 1 << 4
			var p []byte
			if p, err = d.binBytes(); err == nil && p != nil {
				h.MAC = append([]byte(nil), p...)
			}
		default:
			err = d.skip(1)
		}
		if err != nil {
			return fmt.Errorf("hello field %q: %w", key, err)
		}
	}
	if err := d.end(); err != nil {
		return fmt.Errorf("hello: %w", err)
	}
	if seen != 1<<5-1 { // an envelope sent first, say
		return fmt.Errorf("%w: hello lacks fields (want v, c, n, i, mac)", ErrMalformed)
	}
	return nil
}

// check verifies a decoded hello against this run: version, cluster, then the MAC. Cheap checks
// come first; none of them tells an unauthenticated client anything the secret protects.
func (h *Hello) check(secret []byte, cluster string) error {
	switch {
	case h.Version != ProtocolVersion:
		return fmt.Errorf("%w: hello version %d, want %d", ErrVersion, h.Version, ProtocolVersion)
	case h.Cluster != cluster:
		return fmt.Errorf("%w: hello for cluster %q, want %q", ErrCluster, h.Cluster, cluster)
	case !h.Verify(secret):
		return fmt.Errorf("%w: hello from node %d", ErrBadMAC, h.Node)
	}
	return nil
}
