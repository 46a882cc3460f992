package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

// FuzzFrame feeds arbitrary bytes to ReadFrame and the envelope decoder: no panic, no payload above
// MaxFrame, and whatever decodes re-encodes to something that decodes to the same envelope.
func FuzzFrame(f *testing.F) {
	for _, env := range []Envelope{
		{Kind: KindMsg, LC: 3, Msg: election.Message{ID: "1.1.1", Kind: "election", Cand: 1, IDs: []int{1, 2}}},
		{Kind: KindCtlReq, LC: 1, Body: []byte{0x81, 0xa2, 'o', 'p', 0xa6, 's', 't', 'a', 't', 'u', 's'}},
		{Kind: KindMsg, LC: 9, Msg: election.Message{ID: "2.1.4", Kind: "ok"}, VC: Clock{{1, 1, 3}, {2, 1, 200}, {2, 2, 70000}}},
	} {
		b, err := appendFrame(nil, &env)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(append(b, b...))
	}
	f.Add(header(0))
	f.Add(header(0x7fffffff))
	f.Add(sealed([]byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x01}))
	vc := withClock(cat(arr32(1<<32-1), []byte{1, 1, 1}))
	f.Add(sealed(vc))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var buf []byte
		for {
			p, err := ReadFrame(r, buf)
			if err != nil {
				return
			}
			if len(p) > MaxFrame || cap(p) > MaxFrame {
				t.Fatalf("a payload of %d bytes (capacity %d)", len(p), cap(p))
			}
			buf = p[:cap(p)]
			var e Envelope
			if e.Unmarshal(p) != nil {
				continue
			}
			b, err := e.Marshal()
			if err != nil {
				t.Fatalf("a decoded envelope does not encode: %v\n%+v", err, e)
			}
			var again Envelope
			if err := again.Unmarshal(b); err != nil {
				t.Fatalf("a re-encoded envelope does not decode: %v", err)
			}
			if !reflect.DeepEqual(again, e) {
				t.Fatalf("re-encoding changed the envelope:\n%+v\n%+v", e, again)
			}
		}
	})
}

// FuzzDatagram: DecodeDatagram never panics; the form decoder (below the MAC check, which random
// bytes never pass) round-trips what it accepts.
func FuzzDatagram(f *testing.F) {
	good, _ := EncodeDatagram(testSecret, &Datagram{Cluster: "run-1", From: 2, Inc: 1, Seq: 7, Claim: 3})
	f.Add(good)
	f.Add([]byte{0x81, 0xa1, 's', 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xc0})
	f.Fuzz(func(t *testing.T, data []byte) {
		DecodeDatagram(testSecret, "run-1", data)
		var d Datagram
		if d.unmarshal(data) != nil {
			return
		}
		b, err := appendDatagram(nil, newDatagramMAC(testSecret), &d)
		if err != nil {
			return // a cluster ID longer than the limit
		}
		if d.Version == 0 {
			d.Version = ProtocolVersion
		}
		d.MAC = d.mac(testSecret)
		var again Datagram
		if err := again.unmarshal(b); err != nil || !reflect.DeepEqual(again, d) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, d, again)
		}
	})
}

// FuzzFrameDamage damages a good frame as the link rules' corrupt does, and more: any burst of up
// to 32 bits (four consecutive bytes XORed with a non-zero mask) anywhere in the frame, length and
// checksum included. The decoder must refuse every one: a CRC-32 detects every burst of up to 32
// bits, so a damaged frame never decodes into a message (a forged candidate, a changed round)
// that could change an election.
func FuzzFrameDamage(f *testing.F) {
	frames := [][]byte{}
	for _, env := range []Envelope{
		{Kind: KindMsg, LC: 3, Msg: election.Message{ID: "1.1.1", Kind: "election", Cand: 1, IDs: []int{1, 2}}},
		{Kind: KindMsg, LC: 7, Msg: election.Message{ID: "5.2.9", Kind: "coordinator", Cand: 5, Round: 2}},
		{Kind: KindMsg, LC: 9, Msg: election.Message{ID: "2.1.4", Kind: "ok"}, VC: Clock{{1, 1, 3}, {2, 1, 200}}},
	} {
		b, err := AppendFrame(nil, &env)
		if err != nil {
			f.Fatal(err)
		}
		frames = append(frames, b)
	}
	f.Add(uint8(0), uint16(9), uint32(1))
	f.Add(uint8(1), uint16(0), uint32(0x01000000))
	f.Add(uint8(2), uint16(40), uint32(0xffffffff))
	f.Fuzz(func(t *testing.T, which uint8, at uint16, mask uint32) {
		if mask == 0 {
			return // no damage
		}
		good := frames[int(which)%len(frames)]
		b := bytes.Clone(good)
		pos := int(at) % len(b)
		for i := range 4 {
			if pos+i < len(b) {
				b[pos+i] ^= byte(mask >> (24 - 8*i))
			}
		}
		if bytes.Equal(b, good) {
			return // the mask's non-zero bytes fell past the end
		}
		if env, err := DecodeFrame(b); err == nil {
			t.Fatalf("a frame damaged at byte %d by %08x decoded into %+v", pos, mask, env)
		}
	})
}
