package wire

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/election"
)

// Envelope kinds. Numeric codes are part of the wire format: append only.
const (
	// KindMsg carries an algorithm message in Msg.
	KindMsg uint8 = 1
	// KindCtlReq is a control request from the controller (node 0); Body is opaque msgpack that the
	// node package defines.
	KindCtlReq uint8 = 2
	// KindCtlResp answers a KindCtlReq: same LC (the controller's request number), Body the reply.
	KindCtlResp uint8 = 3
)

// maxIDs bounds Message.IDs so that decoding a frame never allocates more than MaxFrame bytes.
const maxIDs = MaxFrame / 16

// Envelope is what every frame after the hello carries. The msgpack keys are part of the wire
// format; the library encodes and decodes the struct with the same bytes as Marshal/Unmarshal.
type Envelope struct {
	Kind uint8 `msgpack:"k"`
	// LC is the sender's Lamport clock at the send (for control frames, the request number).
	LC uint64 `msgpack:"lc,omitempty"`
	// Msg is the algorithm message of a KindMsg frame (Marshal leaves it out of other kinds when it
	// is zero).
	Msg election.Message `msgpack:"m"`
	// Body is one msgpack value, opaque to this package (control requests and replies).
	Body msgpack.RawMessage `msgpack:"b,omitempty"`
	// VC is the sender's vector clock at the send (KindMsg, when the run has vector clocks on);
	// nil otherwise. Peers that do not know the key skip it.
	VC Clock `msgpack:"vc,omitempty"`
}

// Marshal encodes e as msgpack.
func (e *Envelope) Marshal() ([]byte, error) { return e.AppendMarshal(nil) }

// AppendMarshal appends the msgpack encoding of e to b; with a b of enough capacity it does not
// allocate. It refuses an unknown Kind, a Body that is not exactly one msgpack value, and a VC out
// of order or out of bounds.
func (e *Envelope) AppendMarshal(b []byte) ([]byte, error) {
	if e.Kind < KindMsg || e.Kind > KindCtlResp {
		return b, fmt.Errorf("%w: envelope kind %d (want %d..%d)", ErrMalformed, e.Kind, KindMsg, KindCtlResp)
	}
	if len(e.Body) > 0 {
		if err := oneValue(e.Body); err != nil {
			return b, fmt.Errorf("envelope body: %w", err)
		}
	}
	if len(e.Msg.IDs) > maxIDs {
		return b, fmt.Errorf("%w: message carries %d IDs (limit %d)", ErrMalformed, len(e.Msg.IDs), maxIDs)
	}
	if len(e.VC) > 0 {
		if err := checkClock(e.VC); err != nil {
			return b, err
		}
	}
	withMsg := e.Kind == KindMsg || !zeroMessage(&e.Msg)
	n := 1 + btoi(e.LC != 0) + btoi(withMsg) + btoi(len(e.Body) > 0) + btoi(len(e.VC) > 0)
	b = appendMapLen(b, n)
	b = appendUint(appendStr(b, "k"), uint64(e.Kind))
	if e.LC != 0 {
		b = appendUint(appendStr(b, "lc"), e.LC)
	}
	if withMsg {
		b = appendMessage(appendStr(b, "m"), &e.Msg)
	}
	if len(e.Body) > 0 {
		b = append(appendStr(b, "b"), e.Body...)
	}
	if len(e.VC) > 0 {
		b = appendClock(appendStr(b, "vc"), e.VC)
	}
	return b, nil
}

// Unmarshal decodes b into e, replacing all of e. It never panics; it returns an error wrapping
// ErrMalformed for anything but exactly one well-formed envelope of a known kind (unknown keys are
// skipped, for forward compatibility). e keeps no reference to b.
func (e *Envelope) Unmarshal(b []byte) error {
	*e = Envelope{}
	d := decoder{b: b}
	n, err := d.mapLen()
	if err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	for range n {
		key, err := d.strBytes()
		if err != nil {
			return fmt.Errorf("envelope key: %w", err)
		}
		switch string(key) {
		case "k":
			e.Kind, err = d.uint8()
		case "lc":
			e.LC, err = d.uint64()
		case "m":
			err = decodeMessage(&d, &e.Msg)
		case "vc":
			e.VC, err = decodeClock(&d)
		case "b":
			start := d.off
			if err = d.skip(1); err == nil {
				e.Body = append(msgpack.RawMessage(nil), b[start:d.off]...)
			}
		default:
			err = d.skip(1)
		}
		if err != nil {
			return fmt.Errorf("envelope field %q: %w", key, err)
		}
	}
	if err := d.end(); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	if e.Kind < KindMsg || e.Kind > KindCtlResp {
		return fmt.Errorf("%w: envelope kind %d (want %d..%d)", ErrMalformed, e.Kind, KindMsg, KindCtlResp)
	}
	return nil
}

func appendMessage(b []byte, m *election.Message) []byte {
	n := 2 + btoi(m.Cand != 0) + btoi(m.Round != 0) + btoi(m.Hops != 0) + btoi(m.Dir != 0) +
		btoi(m.Origin != 0) + btoi(m.Phase != 0) + btoi(len(m.IDs) > 0)
	b = appendMapLen(b, n)
	b = appendStr(appendStr(b, "id"), m.ID)
	b = appendStr(appendStr(b, "k"), m.Kind)
	for _, f := range [...]struct {
		key string
		v   int
	}{{"c", m.Cand}, {"r", m.Round}, {"h", m.Hops}, {"d", m.Dir}, {"o", m.Origin}, {"p", m.Phase}} {
		if f.v != 0 {
			b = appendInt(appendStr(b, f.key), int64(f.v))
		}
	}
	if len(m.IDs) > 0 {
		b = appendArrayLen(appendStr(b, "ids"), len(m.IDs))
		for _, id := range m.IDs {
			b = appendInt(b, int64(id))
		}
	}
	return b
}

func decodeMessage(d *decoder, m *election.Message) error {
	n, err := d.mapLen()
	if err != nil {
		return err
	}
	for range n {
		key, err := d.strBytes()
		if err != nil {
			return err
		}
		switch string(key) {
		case "id":
			m.ID, err = d.str()
		case "k":
			m.Kind, err = d.str()
		case "c":
			m.Cand, err = d.int()
		case "r":
			m.Round, err = d.int()
		case "h":
			m.Hops, err = d.int()
		case "d":
			m.Dir, err = d.int()
		case "o":
			m.Origin, err = d.int()
		case "p":
			m.Phase, err = d.int()
		case "ids":
			m.IDs, err = d.ints(maxIDs)
		default:
			err = d.skip(2)
		}
		if err != nil {
			return fmt.Errorf("msg field %q: %w", key, err)
		}
	}
	return nil
}

func zeroMessage(m *election.Message) bool {
	return m.ID == "" && m.Kind == "" && m.Cand == 0 && m.Round == 0 && m.Hops == 0 && m.Dir == 0 &&
		m.Origin == 0 && m.Phase == 0 && len(m.IDs) == 0
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
