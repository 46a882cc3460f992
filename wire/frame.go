package wire

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"sync"
)

// MaxFrame is the largest frame payload, in bytes (DESIGN.md, "Wire format").
const MaxFrame = 1 << 20

// frameHeader is the size of a frame's big-endian length prefix.
const frameHeader = 4

// frameTrailer is the size of a frame's checksum: a big-endian CRC-32C (Castagnoli) of the length
// prefix and the payload. TCP's own checksum keeps a real connection's bytes whole, but the link
// rules damage frames on receipt (corrupt), and msgpack cannot tell a damaged frame from another
// good one: a flipped bit in a candidate's ID is still a well-formed integer. The CRC detects every
// error burst of up to 32 bits, so every frame that corrupt damages (one bit) is refused.
const frameTrailer = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameSum is the checksum of a frame's header and payload.
func frameSum(hdrAndPayload []byte) uint32 { return crc32.Checksum(hdrAndPayload, castagnoli) }

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

// WriteFrame writes one frame: the 4-byte big-endian length of payload, then payload, then the
// checksum, in a single Write call (so concurrent writers to a net.Conn cannot interleave halves of
// frames).
func WriteFrame(w io.Writer, payload []byte) error {
	if err := checkLen(len(payload), MaxFrame); err != nil {
		return err
	}
	bp := getBuf()
	b := binary.BigEndian.AppendUint32((*bp)[:0], uint32(len(payload)))
	b = append(b, payload...)
	b = binary.BigEndian.AppendUint32(b, frameSum(b))
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
// gives io.EOF; one that ends inside a frame gives an error wrapping io.ErrUnexpectedEOF; a frame
// whose checksum does not match gives ErrChecksum.
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
	// The checksum covers the header, summed before the payload overwrites it in buf.
	sum := crc32.Update(0, castagnoli, hdr)
	need := int(n) + frameTrailer
	if need > cap(buf) {
		buf = make([]byte, need)
	}
	p := buf[:need]
	if _, err := io.ReadFull(r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: read frame of %d bytes: %w", n, err)
	}
	sum = crc32.Update(sum, castagnoli, p[:n])
	if got := binary.BigEndian.Uint32(p[n:]); got != sum {
		return nil, fmt.Errorf("%w: frame of %d bytes carries %08x, its bytes sum to %08x", ErrChecksum, n, got, sum)
	}
	return p[:n], nil
}

// DecodeFrame decodes b, which must hold exactly one frame (length, payload, checksum), into an
// envelope: what a connection's reader does with the bytes of one frame. The link rules use it to
// show what the decoder makes of a frame they damaged; its errors wrap ErrChecksum, ErrMalformed,
// ErrEmptyFrame or ErrFrameTooLarge.
func DecodeFrame(b []byte) (*Envelope, error) {
	if len(b) < frameHeader+frameTrailer {
		return nil, fmt.Errorf("%w: %d bytes are no frame (want at least %d)", ErrMalformed, len(b), frameHeader+1+frameTrailer)
	}
	n := binary.BigEndian.Uint32(b)
	if err := checkLen(int64(n), MaxFrame); err != nil {
		return nil, err
	}
	if want := frameHeader + int64(n) + frameTrailer; int64(len(b)) != want {
		return nil, fmt.Errorf("%w: a frame announcing %d bytes of payload in %d bytes (want %d)", ErrMalformed, n, len(b), want)
	}
	end := frameHeader + int(n)
	if got, sum := binary.BigEndian.Uint32(b[end:]), frameSum(b[:end]); got != sum {
		return nil, fmt.Errorf("%w: frame of %d bytes carries %08x, its bytes sum to %08x", ErrChecksum, n, got, sum)
	}
	env := new(Envelope)
	if err := env.Unmarshal(b[frameHeader:end]); err != nil {
		return nil, err
	}
	return env, nil
}

// AppendPayload appends payload as a frame (length, payload, checksum) to b: WriteFrame without
// the write, for writers that keep a buffer of their own.
func AppendPayload(b, payload []byte) ([]byte, error) {
	if err := checkLen(len(payload), MaxFrame); err != nil {
		return b, err
	}
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = append(b, payload...)
	return binary.BigEndian.AppendUint32(b, frameSum(b[start:])), nil
}

// AppendFrame appends e as a frame (length, msgpack, checksum) to b: the bytes a connection carries.
func AppendFrame(b []byte, e *Envelope) ([]byte, error) { return appendFrame(b, e) }

func checkLen[T int | int64](n, limit T) error {
	if n == 0 {
		return ErrEmptyFrame
	}
	if n > limit {
		return fmt.Errorf("%w: %d bytes (limit %d)", ErrFrameTooLarge, n, limit)
	}
	return nil
}

// appendFrame appends e as a frame (length prefix, msgpack, checksum) to b.
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
	return binary.BigEndian.AppendUint32(b, frameSum(b[start:])), nil
}
