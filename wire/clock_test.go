package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"reflect"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// withClock is an envelope whose "vc" value is the raw bytes vc.
func withClock(vc []byte) []byte {
	return cat(fixmap(3), fixstr("k"), []byte{1}, fixstr("m"), fixmap(2), fixstr("id"), fixstr("1.1.1"),
		fixstr("k"), fixstr("e"), fixstr("vc"), vc)
}

// arr32 is an array32 header claiming n elements.
func arr32(n uint32) []byte { return binary.BigEndian.AppendUint32([]byte{0xdd}, n) }

// The flat form is what the contract says: node, incarnation, count triples, smallest integers.
func TestClockWireForm(t *testing.T) {
	b := appendClock(nil, Clock{{1, 1, 7}, {3, 2, 300}})
	want := []byte{0x96, 1, 1, 7, 3, 2, 0xcd, 0x01, 0x2c}
	if !bytes.Equal(b, want) {
		t.Fatalf("% x, want % x", b, want)
	}
	var lib []uint64
	if err := msgpack.Unmarshal(b, &lib); err != nil || !reflect.DeepEqual(lib, []uint64{1, 1, 7, 3, 2, 300}) {
		t.Fatalf("the library reads %v, %v", lib, err)
	}
}

// An empty clock is left out of the frame, and an explicit empty or nil one reads as none.
func TestClockEmpty(t *testing.T) {
	env := Envelope{Kind: KindMsg, LC: 1, Msg: benchEnv.Msg, VC: Clock{}}
	b, err := env.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	plain := benchEnv
	plain.LC = 1
	p, _ := plain.Marshal()
	if !bytes.Equal(b, p) {
		t.Error("an empty clock changed the frame")
	}
	for _, vc := range [][]byte{{0x90}, {0xc0}} {
		var e Envelope
		if err := e.Unmarshal(withClock(vc)); err != nil || e.VC != nil {
			t.Errorf("vc % x: %v, %v", vc, e.VC, err)
		}
	}
}

func TestClockUnmarshalHostile(t *testing.T) {
	one := []byte{1, 1, 1}
	tests := map[string][]byte{
		"2^32-1 numbers, 3 bytes":   cat(arr32(1<<32-1), one),
		"2^32-2 numbers":            cat(arr32(1<<32-2), one),
		"array16 beyond the data":   {0xdc, 0xff, 0xff, 1, 1, 1},
		"not triples":               {0x92, 1, 1},
		"count 0":                   {0x93, 1, 1, 0},
		"count 2^53":                cat([]byte{0x93, 1, 1, 0xcf}, binary.BigEndian.AppendUint64(nil, 1<<53)),
		"count 2^64-1":              {0x93, 1, 1, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		"count negative":            {0x93, 1, 1, 0xff},
		"count a float":             {0x93, 1, 1, 0xca, 0x3f, 0x80, 0, 0},
		"count a string":            cat([]byte{0x93, 1, 1}, fixstr("3")),
		"count nil":                 {0x93, 1, 1, 0xc0},
		"node 0":                    {0x93, 0, 1, 1},
		"inc 0":                     {0x93, 1, 0, 1},
		"node 2^31":                 {0x93, 0xce, 0x80, 0, 0, 0, 1, 1},
		"node 2^63":                 cat([]byte{0x93, 0xcf}, binary.BigEndian.AppendUint64(nil, 1<<63), []byte{1, 1}),
		"hosts out of order":        {0x96, 2, 1, 1, 1, 1, 1},
		"a host twice":              {0x96, 2, 1, 1, 2, 1, 5},
		"a nested array":            {0x93, 0x91, 1, 1, 1},
		"a map":                     {0x81, 0xa4, 'n', '1', '.', '1', 1},
		"a string":                  fixstr("n1.1"),
		"binary":                    {0xc4, 3, 1, 1, 1},
		"truncated in a triple":     {0x96, 1, 1, 1, 2, 1},
		"truncated in a count":      {0x93, 1, 1, 0xcd, 0x01},
		"truncated uint32 count":    {0x93, 1, 1, 0xce, 0, 0},
		"uint8 node then nothing":   {0x93, 0xcc},
		"more hosts than the limit": cat(arr32(3*(maxClock+1)), bytes.Repeat([]byte{1}, 3*(maxClock+1))),
	}
	for name, vc := range tests {
		t.Run(name, func(t *testing.T) {
			in := withClock(vc)
			var e Envelope
			if err := e.Unmarshal(in); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			// Refused without sizing anything from the claimed length: a few hundred bytes for the
			// error, whatever the header says (the limit case carries 196 KiB of valid-looking ones).
			if a := allocated(func() { e.Unmarshal(in) }); a > 4<<10 {
				t.Errorf("refusing it allocated %d bytes", a)
			}
		})
	}
}

// allocated is the heap bytes f allocates, averaged over a few runs.
func allocated(f func()) uint64 {
	const runs = 20
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&b)
	return (b.TotalAlloc - a.TotalAlloc) / runs
}

// A clock of maxClock hosts, the most a frame may carry, round-trips; its decoding allocates the
// clock (16 bytes a host) and not much more.
func TestClockLimit(t *testing.T) {
	c := make(Clock, maxClock)
	for i := range c {
		c[i] = Tick{Node: uint32(i/2 + 1), Inc: uint32(i%2 + 1), N: uint64(i + 1)}
	}
	env := Envelope{Kind: KindMsg, Msg: benchEnv.Msg, VC: c}
	b, err := appendFrame(nil, &env)
	if err != nil {
		t.Fatalf("the largest clock does not fit a frame: %v", err)
	}
	var got Envelope
	if err := got.Unmarshal(b[frameHeader : len(b)-frameTrailer]); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, env) {
		t.Fatal("round trip changed the clock")
	}
	if a := allocated(func() { got.Unmarshal(b[frameHeader : len(b)-frameTrailer]) }); a > 16*maxClock+4<<10 {
		t.Errorf("decoding %d hosts allocated %d bytes", maxClock, a)
	}
}

// The library refuses what the package refuses (its decoder is only used by tests, but a user of
// the library must not get a clock the package would not send).
func TestClockLibraryRefuses(t *testing.T) {
	for name, vc := range map[string][]byte{
		"2^32-1 numbers": cat(arr32(1<<32-1), []byte{1, 1, 1}),
		"count 0":        {0x93, 1, 1, 0},
		"unsorted":       {0x96, 2, 1, 1, 1, 1, 1},
		"node 2^31":      {0x93, 0xce, 0x80, 0, 0, 0, 1, 1},
	} {
		var c Clock
		if err := msgpack.Unmarshal(vc, &c); err == nil {
			t.Errorf("%s: the library decoded %v", name, c)
		}
	}
}

// Send keeps the envelope for Drop without its clock, so the node may reuse the clock's memory.
func TestSendKeepsNoClock(t *testing.T) {
	block := make(chan struct{})
	ls := newLinks(&recorder{}, 4, 0, 0, func(int) bool { return true }, func(int) (peerConn, error) {
		<-block // the first dial stays in progress: frames wait in the queue
		return nil, ErrClosed
	})
	defer func() { close(block); ls.close() }()
	env := &Envelope{Kind: KindMsg, Msg: benchEnv.Msg, VC: Clock{{1, 1, 2}}}
	if err := sendFrame(ls, 2, env); err != nil {
		t.Fatal(err)
	}
	f := <-ls.m[2].q
	if f.env.VC != nil || f.env.Msg.ID != env.Msg.ID || env.VC == nil {
		t.Fatalf("queued %+v (caller's %+v)", f.env, env)
	}
	var got Envelope
	if err := got.Unmarshal((*f.buf)[frameHeader : len(*f.buf)-frameTrailer]); err != nil || !reflect.DeepEqual(got.VC, env.VC) {
		t.Fatalf("the frame carries %v, %v", got.VC, err)
	}
}
