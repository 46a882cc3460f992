package wire

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash"
)

// MaxDatagram is the largest datagram accepted, in bytes.
const MaxDatagram = 64 << 10

// Datagram is a UDP heartbeat: one msgpack message, signed like a hello.
type Datagram struct {
	Version uint8  `msgpack:"v"`
	Cluster string `msgpack:"c"`
	From    int    `msgpack:"f"`
	Inc     int    `msgpack:"i"`
	Seq     uint64 `msgpack:"s"`
	// Claim is the sender's leader belief, 0 for none (⊥).
	Claim int `msgpack:"cl"`
	// Ack marks a reply to a heartbeat (for detectors that ping and wait for an answer).
	Ack bool   `msgpack:"a"`
	MAC []byte `msgpack:"mac"`
}

// EncodeDatagram encodes d signed with secret. d.MAC is ignored (and left alone); a zero d.Version
// means ProtocolVersion.
func EncodeDatagram(secret []byte, d *Datagram) ([]byte, error) {
	return appendDatagram(nil, newDatagramMAC(secret), d)
}

func appendDatagram(b []byte, m *datagramMAC, d *Datagram) ([]byte, error) {
	dd := *d
	if dd.Version == 0 {
		dd.Version = ProtocolVersion
	}
	if len(dd.Cluster) > maxCluster {
		return nil, fmt.Errorf("%w: cluster ID of %d bytes (limit %d)", ErrMalformed, len(dd.Cluster), maxCluster)
	}
	b = appendMapLen(b, 8)
	b = appendUint(appendStr(b, "v"), uint64(dd.Version))
	b = appendStr(appendStr(b, "c"), dd.Cluster)
	b = appendInt(appendStr(b, "f"), int64(dd.From))
	b = appendInt(appendStr(b, "i"), int64(dd.Inc))
	b = appendUint(appendStr(b, "s"), dd.Seq)
	b = appendInt(appendStr(b, "cl"), int64(dd.Claim))
	b = appendBool(appendStr(b, "a"), dd.Ack)
	b = appendBin(appendStr(b, "mac"), m.of(&dd))
	return b, nil
}

// DecodeDatagram decodes and verifies a datagram of this cluster. Errors wrap ErrDatagramTooLarge,
// ErrMalformed, ErrVersion, ErrCluster or ErrBadMAC.
func DecodeDatagram(secret []byte, cluster string, b []byte) (Datagram, error) {
	return decodeDatagram(newDatagramMAC(secret), cluster, b)
}

func decodeDatagram(m *datagramMAC, cluster string, b []byte) (Datagram, error) {
	if len(b) > MaxDatagram {
		return Datagram{}, fmt.Errorf("%w: %d bytes (limit %d)", ErrDatagramTooLarge, len(b), MaxDatagram)
	}
	var d Datagram
	if err := d.unmarshal(b); err != nil {
		return Datagram{}, err
	}
	switch {
	case d.Version != ProtocolVersion:
		return Datagram{}, fmt.Errorf("%w: datagram version %d, want %d", ErrVersion, d.Version, ProtocolVersion)
	case d.Cluster != cluster:
		return Datagram{}, fmt.Errorf("%w: datagram for cluster %q, want %q", ErrCluster, d.Cluster, cluster)
	case !hmac.Equal(d.MAC, m.of(&d)):
		return Datagram{}, fmt.Errorf("%w: datagram from node %d", ErrBadMAC, d.From)
	}
	return d, nil
}

// datagramMAC signs datagrams with one secret. It keeps the keyed HMAC and its buffers from one
// datagram to the next: hmac.New for each cost the key's two blocks of SHA-256 again and 10
// allocations, for every heartbeat sent and received (a third of a node's CPU in heartbeats, in
// perf record of a 100-node ring). Not safe for concurrent use.
type datagramMAC struct {
	h       hash.Hash
	in, out []byte
}

func newDatagramMAC(secret []byte) *datagramMAC {
	return &datagramMAC{h: hmac.New(sha256.New, secret)}
}

// of returns d's MAC, valid until the next call.
func (m *datagramMAC) of(d *Datagram) []byte {
	m.in = d.signed(m.in[:0])
	m.h.Reset()
	m.h.Write(m.in)
	m.out = m.h.Sum(m.out[:0])
	return m.out
}

// mac is d's MAC under secret.
func (d *Datagram) mac(secret []byte) []byte { return sum(secret, d.signed(nil)) }

// signed appends what d's MAC is over: every field but MAC, with its own label (see Hello.mac).
func (d *Datagram) signed(b []byte) []byte {
	b = append(b, "leaderlab/datagram\x00"...)
	b = append(b, d.Version)
	b = appendLenString(b, d.Cluster)
	b = binary.BigEndian.AppendUint64(b, uint64(d.From))
	b = binary.BigEndian.AppendUint64(b, uint64(d.Inc))
	b = binary.BigEndian.AppendUint64(b, d.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(d.Claim))
	b = append(b, byte(btoi(d.Ack)))
	return b
}

// unmarshal decodes the form only (the rules of Envelope.Unmarshal).
func (d *Datagram) unmarshal(b []byte) error {
	*d = Datagram{}
	r := decoder{b: b}
	n, err := r.mapLen()
	if err != nil {
		return fmt.Errorf("datagram: %w", err)
	}
	var seen uint // a bit per known key: each must be present
	for range n {
		key, err := r.strBytes()
		if err != nil {
			return fmt.Errorf("datagram key: %w", err)
		}
		switch string(key) {
		case "v":
			seen |= 1 << 0
			d.Version, err = r.uint8()
		case "c":
			seen |= 1 << 1
			d.Cluster, err = r.str()
		case "f":
			seen |= 1 << 2
			d.From, err = r.int()
		case "i":
			seen |= 1 << 3
			d.Inc, err = r.int()
		case "s":
			seen |= 1 << 4
			d.Seq, err = r.uint64()
		case "cl":
			seen |= 1 << 5
			d.Claim, err = r.int()
		case "a":
			seen |= 1 << 6
			d.Ack, err = r.bool()
		case "mac":
			seen |= 1 << 7
			var p []byte
			if p, err = r.binBytes(); err == nil && p != nil {
				d.MAC = append([]byte(nil), p...)
			}
		default:
			err = r.skip(1)
		}
		if err != nil {
			return fmt.Errorf("datagram field %q: %w", key, err)
		}
	}
	if err := r.end(); err != nil {
		return fmt.Errorf("datagram: %w", err)
	}
	if seen != 1<<8-1 {
		return fmt.Errorf("%w: datagram lacks fields (want v, c, f, i, s, cl, a, mac)", ErrMalformed)
	}
	return nil
}
