package wire

import (
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Clock is a vector clock as a message carries it: the sender's count of events per host, where a
// host is one node incarnation (a restarted node's clock starts again, so it is a new host). Only
// hosts with a count are listed, in ascending (Node, Inc) order, each once.
//
// On the wire (the envelope's "vc" key) it is one flat msgpack array of unsigned integers, three per
// host: node, incarnation, count, e.g. [1,1,7, 3,1,12, 3,2,4]. Numbers below 128 take one byte,
// below 65536 three, so a host costs 3 to 7 bytes; late in a busy run a message of a 16-node
// cluster carries about 95 bytes of clock, of 64 nodes 325, of 256 nodes 1.4 KiB, where the rest
// of the frame is under 50 (BenchmarkEnvelopeClock). That cost, and the event log's (each line
// carries the clock too), is why clusters of more than AutoClockNodes nodes go without vector
// clocks unless asked (--vclock on).
type Clock []Tick

// Tick is one host's entry of a Clock: node incarnation (Node, Inc) has had N events.
type Tick struct {
	Node, Inc uint32
	N         uint64
}

// AutoClockNodes is the largest cluster that carries vector clocks by default (--vclock auto):
// above it a full vector costs more per message than it tells (Clock says how much).
// ClockOption is the cluster.json option that records the run's choice: "on" or "off".
const (
	AutoClockNodes = 64
	ClockOption    = "vclock"
)

// Bounds of a Clock. Counts stay exact as JSON numbers in every reader (JavaScript's doubles:
// ShiViz, Perfetto, the report page), which also refuses absurd counts from a hostile frame; IDs and
// incarnations are positive int32s, as everywhere. maxClock bounds the hosts so that decoding one
// never allocates more than MaxFrame bytes (a Tick is 16 bytes).
const (
	MaxClockCount = 1<<53 - 1
	maxClockID    = 1<<31 - 1
	maxClock      = MaxFrame / 16
)

// checkClock checks c's bounds and order (what the decoder accepts, so that every clock that is
// sent can be read).
func checkClock(c Clock) error {
	if len(c) > maxClock {
		return fmt.Errorf("%w: a clock of %d hosts (limit %d)", ErrMalformed, len(c), maxClock)
	}
	for i, t := range c {
		if err := checkTick(t); err != nil {
			return err
		}
		if i > 0 && !tickBefore(c[i-1], t) {
			return fmt.Errorf("%w: clock hosts out of order: n%d.%d after n%d.%d", ErrMalformed, t.Node, t.Inc, c[i-1].Node, c[i-1].Inc)
		}
	}
	return nil
}

func checkTick(t Tick) error {
	switch {
	case t.Node-1 >= maxClockID || t.Inc-1 >= maxClockID:
		return fmt.Errorf("%w: clock host n%d.%d (node and incarnation in 1..%d)", ErrMalformed, t.Node, t.Inc, maxClockID)
	case t.N < 1 || t.N > MaxClockCount:
		return fmt.Errorf("%w: clock count %d for n%d.%d (want 1..2^53-1)", ErrMalformed, t.N, t.Node, t.Inc)
	}
	return nil
}

func tickBefore(a, b Tick) bool { return a.Node < b.Node || (a.Node == b.Node && a.Inc < b.Inc) }

// appendClock writes c (already checked) as the flat array.
func appendClock(b []byte, c Clock) []byte {
	b = appendArrayLen(b, 3*len(c))
	for _, t := range c {
		b = appendUint(appendUint(appendUint(b, uint64(t.Node)), uint64(t.Inc)), t.N)
	}
	return b
}

// decodeClock reads the flat array; nil and empty read as nil. The host count is bounded by the
// bytes present (each number takes at least one) and by maxClock before anything is allocated.
func decodeClock(d *decoder) (Clock, error) {
	n, err := d.arrayLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	if n%3 != 0 {
		return nil, d.errorf("a clock of %d numbers (want node, incarnation, count triples)", n)
	}
	if n/3 > maxClock {
		return nil, d.errorf("a clock of %d hosts (limit %d)", n/3, maxClock)
	}
	c := make(Clock, n/3)
	for i := range c {
		node, err := d.smallUint()
		if err != nil {
			return nil, err
		}
		inc, err := d.smallUint()
		if err != nil {
			return nil, err
		}
		count, err := d.smallUint()
		if err != nil {
			return nil, err
		}
		if node-1 >= maxClockID || inc-1 >= maxClockID || count-1 >= MaxClockCount {
			return nil, d.errorf("clock entry n%d.%d = %d (node and incarnation in 1..%d, count in 1..2^53-1)", node, inc, count, maxClockID)
		}
		c[i] = Tick{Node: uint32(node), Inc: uint32(inc), N: count}
		if i > 0 && !tickBefore(c[i-1], c[i]) {
			return nil, d.errorf("clock hosts out of order: n%d.%d after n%d.%d", c[i].Node, c[i].Inc, c[i-1].Node, c[i-1].Inc)
		}
	}
	return c, nil
}

// smallUint is uint64 with a fast path for the forms appendUint writes for numbers below 2^32
// (a clock is made of them; decoding one would otherwise cost most of a frame's decode time).
func (d *decoder) smallUint() (uint64, error) {
	if d.off < len(d.b) && d.b[d.off] <= 0x7f {
		d.off++
		return uint64(d.b[d.off-1]), nil
	}
	return d.wideUint()
}

func (d *decoder) wideUint() (uint64, error) {
	p := d.b[d.off:]
	switch {
	case len(p) >= 2 && p[0] == 0xcc:
		d.off += 2
		return uint64(p[1]), nil
	case len(p) >= 3 && p[0] == 0xcd:
		d.off += 3
		return uint64(binary.BigEndian.Uint16(p[1:])), nil
	case len(p) >= 5 && p[0] == 0xce:
		d.off += 5
		return uint64(binary.BigEndian.Uint32(p[1:])), nil
	}
	return d.uint64()
}

// EncodeMsgpack and DecodeMsgpack give the msgpack library the same flat array, so that it reads
// and writes envelopes as this package does (TestEnvelopeLibraryCompat). The package's own codec
// does not use them.
func (c Clock) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := checkClock(c); err != nil {
		return err
	}
	if err := enc.EncodeArrayLen(3 * len(c)); err != nil {
		return err
	}
	for _, t := range c {
		for _, v := range [3]uint64{uint64(t.Node), uint64(t.Inc), t.N} {
			if err := enc.EncodeUint(v); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeMsgpack: see EncodeMsgpack. The length is checked against maxClock before allocating.
func (c *Clock) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil || n <= 0 {
		*c = nil
		return err
	}
	if n%3 != 0 || n/3 > maxClock {
		return fmt.Errorf("%w: a clock of %d numbers", ErrMalformed, n)
	}
	out := make(Clock, n/3)
	for i := range out {
		var v [3]uint64
		for j := range v {
			if v[j], err = dec.DecodeUint64(); err != nil {
				return err
			}
		}
		if v[0] > maxClockID || v[1] > maxClockID {
			return fmt.Errorf("%w: clock host n%d.%d", ErrMalformed, v[0], v[1])
		}
		out[i] = Tick{Node: uint32(v[0]), Inc: uint32(v[1]), N: v[2]}
	}
	if err := checkClock(out); err != nil {
		return err
	}
	*c = out
	return nil
}

var (
	_ msgpack.CustomEncoder = Clock(nil)
	_ msgpack.CustomDecoder = (*Clock)(nil)
)
