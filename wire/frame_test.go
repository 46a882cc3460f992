package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func header(n uint32) []byte { return binary.BigEndian.AppendUint32(nil, n) }

// sealed is a whole frame of p: its length, p, its checksum.
func sealed(p []byte) []byte { return seal(append(header(uint32(len(p))), p...)) }

// seal appends the checksum of b, a length prefix and what follows it.
func seal(b []byte) []byte { return binary.BigEndian.AppendUint32(b, frameSum(b)) }

func TestReadFrame(t *testing.T) {
	max := bytes.Repeat([]byte{0xab}, MaxFrame)
	tests := []struct {
		name string
		in   []byte
		want []byte
		err  error
	}{
		{"one byte", sealed([]byte{7}), []byte{7}, nil},
		{"max", sealed(max), max, nil},
		{"damaged payload", func() []byte { b := sealed([]byte{7, 8}); b[5] ^= 0x10; return b }(), nil, ErrChecksum},
		{"damaged length", func() []byte { b := sealed([]byte{7, 8}); b[3] ^= 0x03; return b }(), nil, ErrChecksum},
		{"damaged checksum", func() []byte { b := sealed([]byte{7, 8}); b[7] ^= 0x80; return b }(), nil, ErrChecksum},
		{"no checksum", append(header(1), 7), nil, io.ErrUnexpectedEOF},
		{"empty frame", append(header(0), 1, 2), nil, ErrEmptyFrame},
		{"max+1", append(header(MaxFrame+1), max...), nil, ErrFrameTooLarge},
		{"0x7fffffff", header(0x7fffffff), nil, ErrFrameTooLarge},
		{"0xffffffff", header(0xffffffff), nil, ErrFrameTooLarge},
		{"nothing", nil, nil, io.EOF},
		{"short header", []byte{0, 0, 1}, nil, io.ErrUnexpectedEOF},
		{"short payload", append(header(10), 1, 2, 3), nil, io.ErrUnexpectedEOF},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for _, tt := range tests {
		for rname, wrap := range readers {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				got, err := ReadFrame(wrap(bytes.NewReader(tt.in)), nil)
				if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
					t.Fatalf("err = %v, want %v", err, tt.err)
				}
				if !bytes.Equal(got, tt.want) {
					t.Fatalf("payload of %d bytes, want %d", len(got), len(tt.want))
				}
			})
		}
	}
}

func TestReadFrameSequence(t *testing.T) {
	var stream bytes.Buffer
	for _, p := range []string{"a", "bc", "def"} {
		if err := WriteFrame(&stream, []byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	r := iotest.OneByteReader(&stream)
	buf := make([]byte, 16)
	for _, want := range []string{"a", "bc", "def"} {
		p, err := ReadFrame(r, buf)
		if err != nil || string(p) != want {
			t.Fatalf("ReadFrame = %q, %v; want %q", p, err, want)
		}
		if &p[0] != &buf[0] {
			t.Fatalf("ReadFrame did not reuse a large enough buf")
		}
	}
	if _, err := ReadFrame(r, buf); err != io.EOF {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
}

// The length is checked before anything is allocated for the payload: reading an absurd header
// allocates (almost) nothing, and a good frame into a large enough buf allocates nothing.
func TestReadFrameAllocations(t *testing.T) {
	buf := make([]byte, 64)
	r := bytes.NewReader(nil)
	for _, tt := range []struct {
		name string
		in   []byte
	}{{"empty", header(0)}, {"small", sealed([]byte{1, 2, 3})}} {
		if n := testing.AllocsPerRun(100, func() { r.Reset(tt.in); ReadFrame(r, buf) }); n != 0 {
			t.Errorf("%s: %v allocations per ReadFrame, want 0", tt.name, n)
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		r.Reset(header(0x7fffffff))
		if _, err := ReadFrame(r, buf); !errors.Is(err, ErrFrameTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if perRun := (after.TotalAlloc - before.TotalAlloc) / runs; perRun > 512 {
		t.Errorf("a too-large header allocated %d bytes per read (only its error message should)", perRun)
	}
}

type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) { w.writes++; return w.Buffer.Write(p) }

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

func TestWriteFrame(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		err  error
	}{{"one", 1, nil}, {"max", MaxFrame, nil}, {"empty", 0, ErrEmptyFrame}, {"max+1", MaxFrame + 1, ErrFrameTooLarge}} {
		t.Run(tt.name, func(t *testing.T) {
			var w countingWriter
			p := bytes.Repeat([]byte{1}, tt.n)
			err := WriteFrame(&w, p)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if tt.err != nil {
				if w.Len() != 0 {
					t.Fatalf("wrote %d bytes of a refused frame", w.Len())
				}
				return
			}
			if w.writes != 1 {
				t.Fatalf("%d Write calls, want 1", w.writes)
			}
			if !bytes.Equal(w.Bytes(), sealed(p)) {
				t.Fatal("wrong bytes")
			}
		})
	}
	if err := WriteFrame(failingWriter{}, []byte{1}); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("write error: %v, want it wrapped", err)
	}
}
