package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"reflect"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/election"
)

func mustBody(t testing.TB, v any) msgpack.RawMessage {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func envelopeCases(t testing.TB) map[string]Envelope {
	many := make([]int, 1000)
	for i := range many {
		many[i] = i*7919 - 500
	}
	return map[string]Envelope{
		"election": {Kind: KindMsg, LC: 42, Msg: election.Message{ID: "3.1.17", Kind: "election", Cand: 3}},
		"every field": {Kind: KindMsg, LC: math.MaxUint64, Msg: election.Message{ID: "1.2.3", Kind: "probe",
			Cand: math.MaxInt64, Round: -1, Hops: 1 << 20, Dir: -1, Origin: math.MinInt64, Phase: 7, IDs: []int{5, -3, 1 << 40}}},
		"many ids":     {Kind: KindMsg, Msg: election.Message{ID: "x", Kind: "lelann", IDs: many}},
		"long strings": {Kind: KindMsg, LC: 1, Msg: election.Message{ID: string(bytes.Repeat([]byte("i"), 70000)), Kind: string(bytes.Repeat([]byte("k"), 300))}},
		"ctl req":      {Kind: KindCtlReq, LC: 7, Body: mustBody(t, map[string]any{"op": "status", "peers": []int{1, 2}})},
		"ctl resp":     {Kind: KindCtlResp, LC: 7, Body: mustBody(t, map[string]any{"node": 3, "nested": map[string]any{"a": []any{1.5, "x", nil, true}}})},
		"ctl no body":  {Kind: KindCtlReq},
		"vector clock": {Kind: KindMsg, LC: 9, Msg: election.Message{ID: "2.1.4", Kind: "ok", Cand: 2},
			VC: Clock{{1, 1, 3}, {2, 1, 5}, {2, 3, 1}, {7, 1, 127}, {9, 1, 128}, {300, 2, 70000}}},
		"clock bounds": {Kind: KindMsg, Msg: election.Message{ID: "x", Kind: "k"},
			VC: Clock{{1, 1, 1}, {maxClockID, maxClockID, MaxClockCount}}},
		"16-node clock":  {Kind: KindMsg, LC: 640, Msg: election.Message{ID: "16.1.144", Kind: "election", Cand: 16}, VC: fullClock(16)},
		"256-node clock": {Kind: KindMsg, LC: 99, Msg: election.Message{ID: "3.2.1", Kind: "election", Cand: 3}, VC: fullClock(256)},
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	for name, env := range envelopeCases(t) {
		t.Run(name, func(t *testing.T) {
			b, err := env.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var got Envelope
			if err := got.Unmarshal(b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, env) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", got, env)
			}
		})
	}
}

// The hand-written codec and the msgpack library agree: each decodes what the other encodes, into
// the same struct (whose tags are the wire format's keys).
func TestEnvelopeLibraryCompat(t *testing.T) {
	for name, env := range envelopeCases(t) {
		t.Run(name, func(t *testing.T) {
			lib, err := msgpack.Marshal(&env)
			if err != nil {
				t.Fatal(err)
			}
			var got Envelope
			if err := got.Unmarshal(lib); err != nil {
				t.Fatalf("our decoder on the library's bytes: %v", err)
			}
			if !reflect.DeepEqual(got, env) {
				t.Fatalf("library -> ours:\n got %+v\nwant %+v", got, env)
			}
			ours, err := env.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			var back Envelope
			if err := msgpack.Unmarshal(ours, &back); err != nil {
				t.Fatalf("the library on our bytes: %v", err)
			}
			if len(back.Body) == 0 {
				back.Body = nil
			}
			if !reflect.DeepEqual(back, env) {
				t.Fatalf("ours -> library:\n got %+v\nwant %+v", back, env)
			}
		})
	}
}

func TestEnvelopeMarshalRefuses(t *testing.T) {
	for name, env := range map[string]Envelope{
		"kind 0":           {},
		"kind 4":           {Kind: 4},
		"two body values":  {Kind: KindCtlReq, Body: []byte{0x01, 0x02}},
		"torn body":        {Kind: KindCtlReq, Body: []byte{0x92, 0x01}},
		"too many ids":     {Kind: KindMsg, Msg: election.Message{IDs: make([]int, maxIDs+1)}},
		"clock count 0":    {Kind: KindMsg, VC: Clock{{1, 1, 0}}},
		"clock count 2^53": {Kind: KindMsg, VC: Clock{{1, 1, MaxClockCount + 1}}},
		"clock node 0":     {Kind: KindMsg, VC: Clock{{0, 1, 1}}},
		"clock inc 0":      {Kind: KindMsg, VC: Clock{{1, 0, 1}}},
		"clock node 2^31":  {Kind: KindMsg, VC: Clock{{1 << 31, 1, 1}}},
		"clock unsorted":   {Kind: KindMsg, VC: Clock{{2, 1, 1}, {1, 1, 1}}},
		"clock twice":      {Kind: KindMsg, VC: Clock{{2, 1, 1}, {2, 1, 4}}},
		"clock too long":   {Kind: KindMsg, VC: make(Clock, maxClock+1)},
	} {
		if _, err := env.Marshal(); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: Marshal err = %v, want ErrMalformed", name, err)
		}
	}
}

// msgpack helpers for building hostile inputs by hand.
func fixmap(n int) []byte    { return []byte{0x80 | byte(n)} }
func fixstr(s string) []byte { return append([]byte{0xa0 | byte(len(s))}, s...) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestEnvelopeUnmarshalHostile(t *testing.T) {
	kind1 := cat(fixstr("k"), []byte{1})
	deep := cat(fixmap(2), kind1, fixstr("b"), bytes.Repeat([]byte{0x91}, 40), []byte{0})
	tests := map[string][]byte{
		"empty input":          {},
		"nil":                  {0xc0},
		"an array":             {0x91, 0x01},
		"a string":             fixstr("k"),
		"reserved code":        {0xc1},
		"kind missing":         fixmap(0),
		"kind 0":               cat(fixmap(1), fixstr("k"), []byte{0}),
		"kind 9":               cat(fixmap(1), fixstr("k"), []byte{9}),
		"kind 300":             cat(fixmap(1), fixstr("k"), []byte{0xcd, 0x01, 0x2c}),
		"kind a string":        cat(fixmap(1), fixstr("k"), fixstr("1")),
		"kind a float":         cat(fixmap(1), fixstr("k"), []byte{0xca, 0x3f, 0x80, 0, 0}),
		"lc negative":          cat(fixmap(2), kind1, fixstr("lc"), []byte{0xff}),
		"key an integer":       cat(fixmap(1), []byte{0x01, 0x01}),
		"msg an array":         cat(fixmap(2), kind1, fixstr("m"), []byte{0x90}),
		"msg id an integer":    cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("id"), []byte{0x05}),
		"msg cand a string":    cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("c"), fixstr("3")),
		"msg cand a uint64":    cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("c"), []byte{0xcf, 0xff, 0, 0, 0, 0, 0, 0, 0}),
		"ids hold a string":    cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("ids"), []byte{0x91}, fixstr("x")),
		"ids 2^32-1 elements":  cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("ids"), []byte{0xdd, 0xff, 0xff, 0xff, 0xff, 1}),
		"map 2^32-1 entries":   {0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'k', 1},
		"str beyond the data":  cat(fixmap(2), kind1, fixstr("m"), fixmap(1), fixstr("id"), []byte{0xdb, 0x7f, 0xff, 0xff, 0xff, 'x'}),
		"body beyond the data": cat(fixmap(2), kind1, fixstr("b"), []byte{0xc6, 0x7f, 0xff, 0xff, 0xff}),
		"body nested 40 deep":  deep,
		"trailing byte":        cat(fixmap(1), kind1, []byte{0}),
		"truncated":            cat(fixmap(2), kind1),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			var e Envelope
			if err := e.Unmarshal(in); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

// Unknown keys (a newer peer's fields) are skipped, whatever their values.
func TestEnvelopeSkipsUnknownKeys(t *testing.T) {
	ext := []byte{0xd4, 0x01, 0x02}
	in := cat(fixmap(3), fixstr("zz"), []byte{0x92, 0xcb, 0, 0, 0, 0, 0, 0, 0, 0}, ext,
		fixstr("k"), []byte{1},
		fixstr("m"), fixmap(2), fixstr("k"), fixstr("ok"), fixstr("new"), cat(fixmap(1), fixstr("a"), []byte{0xc4, 1, 9}))
	var e Envelope
	if err := e.Unmarshal(in); err != nil {
		t.Fatal(err)
	}
	if e.Kind != KindMsg || e.Msg.Kind != "ok" {
		t.Fatalf("got %+v", e)
	}
}

// No prefix of a good encoding decodes, and no single corrupted byte makes the decoder panic.
func TestEnvelopeTruncationsAndMutations(t *testing.T) {
	for name, env := range envelopeCases(t) {
		if name == "long strings" || name == "many ids" || name == "256-node clock" {
			continue
		}
		b, err := env.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		for i := range len(b) {
			var e Envelope
			if e.Unmarshal(b[:i]) == nil {
				t.Errorf("%s: a prefix of %d of %d bytes decoded", name, i, len(b))
			}
			for _, v := range []byte{0x00, 0x7f, 0xc0, 0xc1, 0xdd, 0xdf, 0xff} {
				m := bytes.Clone(b)
				m[i] = v
				e.Unmarshal(m) // must not panic
			}
		}
	}
}

func TestEnvelopeKeepsNoReference(t *testing.T) {
	env := envelopeCases(t)["ctl req"]
	b, _ := env.Marshal()
	var got Envelope
	if err := got.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	for i := range b {
		b[i] = 0
	}
	if !reflect.DeepEqual(got, env) {
		t.Fatal("the decoded envelope changed with its input buffer")
	}
}

func TestDecoderIntegers(t *testing.T) {
	for _, v := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxInt32, math.MaxInt32 + 1,
		math.MaxInt64, -1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		d := decoder{b: appendInt(nil, v)}
		got, err := d.int64()
		if err != nil || got != v || d.rest() != 0 {
			t.Errorf("int %d: got %d, %v", v, got, err)
		}
		lib, _ := msgpack.Marshal(v)
		d = decoder{b: lib}
		if got, err := d.int64(); err != nil || got != v {
			t.Errorf("library int %d: got %d, %v", v, got, err)
		}
	}
	for _, v := range []uint64{0, 200, math.MaxUint32, math.MaxUint64} {
		d := decoder{b: appendUint(nil, v)}
		if got, err := d.uint64(); err != nil || got != v {
			t.Errorf("uint %d: got %d, %v", v, got, err)
		}
	}
	// Every width of every integer code, sign-extended correctly.
	for _, tt := range []struct {
		in   []byte
		want int64
	}{{[]byte{0xd0, 0x80}, -128}, {[]byte{0xd1, 0xff, 0xfe}, -2}, {[]byte{0xd2, 0x80, 0, 0, 0}, math.MinInt32},
		{binary.BigEndian.AppendUint64([]byte{0xd3}, 1<<63), math.MinInt64}, {[]byte{0xcc, 0xff}, 255},
		{[]byte{0xcd, 0xff, 0xff}, 65535}, {[]byte{0xce, 0xff, 0xff, 0xff, 0xff}, math.MaxUint32}} {
		d := decoder{b: tt.in}
		if got, err := d.int64(); err != nil || got != tt.want {
			t.Errorf("% x: got %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

// The control bodies are decoded by the msgpack library, which sizes a slice from its array header
// before reading it: DecodeCtlRequest and DecodeCtlReply check every length against the bytes
// present first, so a body that declares two billion rules is refused without allocating for them.
// Measured in bytes allocated.
func TestCtlDecodeAllocatesNoMoreThanItIsGiven(t *testing.T) {
	for _, in := range [][]byte{
		{0x81, 0xa4, 'd', 'o', 'w', 'n', 0xdd, 0x7f, 0xff, 0xff, 0xff},
		{0x81, 0xa5, 'r', 'u', 'l', 'e', 's', 0xdd, 0x0f, 0xff, 0xff, 0xff, 0x80},
		{0x81, 0xa5, 'e', 'r', 'r', 'o', 'r', 0xdb, 0x7f, 0xff, 0xff, 0xff},
	} {
		for name, decode := range map[string]func([]byte) error{
			"request": func(b []byte) error { _, err := DecodeCtlRequest(b); return err },
			"reply":   func(b []byte) error { _, err := DecodeCtlReply(b); return err },
		} {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := decode(in)
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%s %x: %v, want ErrMalformed", name, in, err)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
				t.Errorf("%s %x: %d bytes allocated to refuse it", name, in, n)
			}
		}
	}
}
