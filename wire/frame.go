package wire

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// MaxFrame is the largest frame payload, in bytes (DESIGN.md, "Wire format").
const MaxFrame = 1 << 20

// frameHeader is the size of a frame's big-endian length prefix.
const frameHeader = 4

// maxHelloFrame bounds the first frame of a connection, before the peer is authenticated: a hello is
// a few dozen bytes, so an unauthenticated client cannot make the server allocate MaxFrame.
const maxHelloFrame = 1024

// bufPool recycles frame buffers for WriteFrame and the transports' send queues. Buffers that grew
// large (a big control body) are not kept, so the pool does not pin memory.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledBuf = 64 << 10

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= maxPooledBuf {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

// WriteFrame writes one frame: the 4-byte big-endian length of payload, then payload, in a single
// Write call (so concurrent writers to a net.Conn cannot interleave halves of frames).
func WriteFrame(w io.Writer, payload []byte) error {
	if err := checkLen(len(payload), MaxFrame); err != nil {
		return err
	}
	bp := getBuf()
	b := binary.BigEndian.AppendUint32((*bp)[:0], uint32(len(payload)))
	b = append(b, payload...)
	_, err := w.Write(b)
	*bp = b
	putBuf(bp)
	if err != nil {
		return fmt.Errorf("wire: write frame: %w", err)
	}
	return nil
}

// ReadFrame reads one frame and returns its payload. It reuses buf when its capacity is enough (the
// payload then aliases buf), so a reader that passes the previous payload back reads without
// allocating. A header announcing 0 bytes gives ErrEmptyFrame and one above MaxFrame gives
// ErrFrameTooLarge, both before anything is allocated. A stream that ends cleanly between frames
// gives io.EOF; one that ends inside a frame gives an error wrapping io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, buf []byte) ([]byte, error) {
	return readFrame(r, buf, MaxFrame)
}

func readFrame(r io.Reader, buf []byte, limit int) ([]byte, error) {
	// The header is read into buf itself: a local array passed to an io.Reader would escape to the
	// heap and cost an allocation per frame.
	if cap(buf) < frameHeader {
		buf = make([]byte, frameHeader, 512)
	}
	hdr := buf[:frameHeader]
	if _, err := io.ReadFull(r, hdr); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, fmt.Errorf("wire: read frame header: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr)
	if err := checkLen(int64(n), int64(limit)); err != nil {
		return nil, err
	}
	if int(n) > cap(buf) {
		buf = make([]byte, n)
	}
	p := buf[:n]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: read frame of %d bytes: %w", n, err)
	}
	return p, nil
}

func checkLen[T int | int64](n, limit T) error {
	if n == 0 {
		return ErrEmptyFrame
	}
	if n > limit {
		return fmt.Errorf("%w: %d bytes (limit %d)", ErrFrameTooLarge, n, limit)
	}
	return nil
}

// appendFrame appends e as a frame (length prefix and msgpack) to b.
func appendFrame(b []byte, e *Envelope) ([]byte, error) {
	start := len(b)
	b = append(b, 0, 0, 0, 0)
	b, err := e.AppendMarshal(b)
	if err != nil {
		return b[:start], err
	}
	n := len(b) - start - frameHeader
	if err := checkLen(n, MaxFrame); err != nil {
		return b[:start], err
	}
	binary.BigEndian.PutUint32(b[start:], uint32(n))
	return b, nil
}
