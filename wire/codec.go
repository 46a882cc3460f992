package wire

// A hand-written msgpack subset for the package's four message types.
//
// Why not the msgpack library's reflection decoder: it cannot meet the hot path's allocation budget
// (see BenchmarkFrameRoundTrip), it accepts trailing bytes, and v5.4.1 sizes a slice from the array
// header before reading its elements (decode_slice.go: the alloc limit check is inverted), so a
// 6-byte hostile "ids" field could ask for a 32 GiB []int. This decoder bounds every length by the
// bytes actually present and every nesting by maxDepth. The bytes it writes are ordinary msgpack:
// the library decodes them into the same structs, and this decoder reads what the library writes
// (TestEnvelopeLibraryCompat).

import (
	"fmt"
	"math"
)

// maxDepth bounds the nesting of values skipped or validated (unknown fields, opaque bodies).
const maxDepth = 32

// decoder reads msgpack values from b. Every method either consumes one whole value or returns an
// error wrapping ErrMalformed; none panics, and none allocates more than the bytes it was given.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: %s (at byte %d)", ErrMalformed, fmt.Sprintf(format, args...), d.off)
}

func (d *decoder) rest() int { return len(d.b) - d.off }

func (d *decoder) next() (byte, error) {
	if d.off >= len(d.b) {
		return 0, d.errorf("truncated")
	}
	c := d.b[d.off]
	d.off++
	return c, nil
}

func (d *decoder) take(n uint64) ([]byte, error) {
	if n > uint64(d.rest()) {
		return nil, d.errorf("truncated: a length of %d with %d bytes left", n, d.rest())
	}
	p := d.b[d.off : d.off+int(n) : d.off+int(n)]
	d.off += int(n)
	return p, nil
}

// be reads an n-byte big-endian unsigned number (n is 1, 2, 4 or 8).
func (d *decoder) be(n uint64) (uint64, error) {
	p, err := d.take(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// typeName names a msgpack type code for error messages.
func typeName(c byte) string {
	switch {
	case c <= 0x7f || c >= 0xe0 || (c >= 0xcc && c <= 0xd3):
		return "an integer"
	case c <= 0x8f || c == 0xde || c == 0xdf:
		return "a map"
	case c <= 0x9f || c == 0xdc || c == 0xdd:
		return "an array"
	case c <= 0xbf || (c >= 0xd9 && c <= 0xdb):
		return "a string"
	case c == 0xc0:
		return "nil"
	case c == 0xc2 || c == 0xc3:
		return "a bool"
	case c >= 0xc4 && c <= 0xc6:
		return "binary"
	case c == 0xca || c == 0xcb:
		return "a float"
	case c == 0xc1:
		return "the reserved code 0xc1"
	}
	return "an extension"
}

func (d *decoder) wrongType(want string, c byte) error {
	d.off-- // point at the offending type code
	return d.errorf("want %s, got %s", want, typeName(c))
}

// count checks a container length against the bytes left (each element takes at least min bytes),
// so that no caller sizes an allocation from a length the data cannot back.
func (d *decoder) count(n uint64, min int) (int, error) {
	if n > uint64(d.rest()/min) {
		return 0, d.errorf("truncated: %d elements with %d bytes left", n, d.rest())
	}
	return int(n), nil
}

// mapLen reads a map header; nil reads as an empty map.
func (d *decoder) mapLen() (int, error) {
	c, err := d.next()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == 0x80:
		n = uint64(c & 0x0f)
	case c == 0xde:
		n, err = d.be(2)
	case c == 0xdf:
		n, err = d.be(4)
	case c == 0xc0:
		return 0, nil
	default:
		return 0, d.wrongType("a map", c)
	}
	if err != nil {
		return 0, err
	}
	return d.count(n, 2)
}

// arrayLen reads an array header; nil reads as -1.
func (d *decoder) arrayLen() (int, error) {
	c, err := d.next()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c&0xf0 == 0x90:
		n = uint64(c & 0x0f)
	case c == 0xdc:
		n, err = d.be(2)
	case c == 0xdd:
		n, err = d.be(4)
	case c == 0xc0:
		return -1, nil
	default:
		return 0, d.wrongType("an array", c)
	}
	if err != nil {
		return 0, err
	}
	return d.count(n, 1)
}

// strBytes reads a string without copying it (the result aliases the input); nil reads as empty.
func (d *decoder) strBytes() ([]byte, error) {
	c, err := d.next()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch {
	case c&0xe0 == 0xa0:
		n = uint64(c & 0x1f)
	case c == 0xd9:
		n, err = d.be(1)
	case c == 0xda:
		n, err = d.be(2)
	case c == 0xdb:
		n, err = d.be(4)
	case c == 0xc0:
		return nil, nil
	default:
		return nil, d.wrongType("a string", c)
	}
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

func (d *decoder) str() (string, error) {
	p, err := d.strBytes()
	return string(p), err
}

// binBytes reads binary (or a string, which older encoders use for bytes) without copying; nil
// reads as nil.
func (d *decoder) binBytes() ([]byte, error) {
	c, err := d.next()
	if err != nil {
		return nil, err
	}
	var n uint64
	switch c {
	case 0xc4:
		n, err = d.be(1)
	case 0xc5:
		n, err = d.be(2)
	case 0xc6:
		n, err = d.be(4)
	case 0xc0:
		return nil, nil
	default:
		if c&0xe0 == 0xa0 || (c >= 0xd9 && c <= 0xdb) {
			d.off--
			return d.strBytes()
		}
		return nil, d.wrongType("binary", c)
	}
	if err != nil {
		return nil, err
	}
	return d.take(n)
}

// int64 reads any msgpack integer that fits an int64; nil reads as 0.
func (d *decoder) int64() (int64, error) {
	c, err := d.next()
	if err != nil {
		return 0, err
	}
	switch {
	case c <= 0x7f:
		return int64(c), nil
	case c >= 0xe0:
		return int64(int8(c)), nil
	case c == 0xc0:
		return 0, nil
	case c >= 0xcc && c <= 0xcf: // uint 8..64
		v, err := d.be(1 << (c - 0xcc))
		if err == nil && v > math.MaxInt64 {
			d.off -= 9
			return 0, d.errorf("integer %d overflows int64", v)
		}
		return int64(v), err
	case c >= 0xd0 && c <= 0xd3: // int 8..64
		size := uint64(1) << (c - 0xd0)
		v, err := d.be(size)
		shift := 64 - 8*size
		return int64(v<<shift) >> shift, err
	}
	return 0, d.wrongType("an integer", c)
}

// int reads an integer that fits a Go int.
func (d *decoder) int() (int, error) {
	v, err := d.int64()
	if err == nil && int64(int(v)) != v {
		return 0, d.errorf("integer %d overflows int", v)
	}
	return int(v), err
}

// uint64 reads a non-negative integer; nil reads as 0.
func (d *decoder) uint64() (uint64, error) {
	if d.off < len(d.b) && d.b[d.off] == 0xcf {
		d.off++
		return d.be(8)
	}
	v, err := d.int64()
	if err == nil && v < 0 {
		return 0, d.errorf("want a non-negative integer, got %d", v)
	}
	return uint64(v), err
}

// uint8 reads an integer in 0..255.
func (d *decoder) uint8() (uint8, error) {
	v, err := d.int64()
	if err == nil && (v < 0 || v > math.MaxUint8) {
		return 0, d.errorf("want an integer in 0..255, got %d", v)
	}
	return uint8(v), err
}

// bool reads a bool; nil reads as false.
func (d *decoder) bool() (bool, error) {
	c, err := d.next()
	switch {
	case err != nil:
		return false, err
	case c == 0xc3:
		return true, nil
	case c == 0xc2 || c == 0xc0:
		return false, nil
	}
	return false, d.wrongType("a bool", c)
}

// ints reads an array of integers (at most limit of them); nil and empty read as nil.
func (d *decoder) ints(limit int) ([]int, error) {
	n, err := d.arrayLen()
	if err != nil || n <= 0 {
		return nil, err
	}
	if n > limit {
		return nil, d.errorf("%d elements, limit %d", n, limit)
	}
	out := make([]int, n)
	for i := range out {
		if out[i], err = d.int(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// skip consumes one value of any type, nested at most maxDepth-depth levels deeper.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.errorf("nested deeper than %d", maxDepth)
	}
	c, err := d.next()
	if err != nil {
		return err
	}
	var n uint64
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3:
		return nil
	case c&0xf0 == 0x80:
		return d.skipN(2*uint64(c&0x0f), depth)
	case c&0xf0 == 0x90:
		return d.skipN(uint64(c&0x0f), depth)
	case c&0xe0 == 0xa0:
		_, err = d.take(uint64(c & 0x1f))
		return err
	case c == 0xc4 || c == 0xd9: // bin8, str8
		n, err = d.be(1)
	case c == 0xc5 || c == 0xda:
		n, err = d.be(2)
	case c == 0xc6 || c == 0xdb:
		n, err = d.be(4)
	case c >= 0xc7 && c <= 0xc9: // ext8..32: length, then a type byte and the data
		n, err = d.be(1 << (c - 0xc7))
		n++
	case c == 0xca:
		n = 4
	case c == 0xcb:
		n = 8
	case c >= 0xcc && c <= 0xcf:
		n = 1 << (c - 0xcc)
	case c >= 0xd0 && c <= 0xd3:
		n = 1 << (c - 0xd0)
	case c >= 0xd4 && c <= 0xd8: // fixext 1..16, plus the type byte
		n = 1<<(c-0xd4) + 1
	case c == 0xdc || c == 0xdd:
		if n, err = d.be(2 << (c - 0xdc)); err != nil {
			return err
		}
		return d.skipN(n, depth)
	case c == 0xde || c == 0xdf:
		if n, err = d.be(2 << (c - 0xde)); err != nil {
			return err
		}
		return d.skipN(2*n, depth)
	default:
		return d.wrongType("a msgpack value", c)
	}
	if err != nil {
		return err
	}
	_, err = d.take(n)
	return err
}

func (d *decoder) skipN(n uint64, depth int) error {
	if _, err := d.count(n, 1); err != nil {
		return err
	}
	for ; n > 0; n-- {
		if err := d.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

// CheckValue tells whether b is exactly one msgpack value, every length in it within the bytes
// present and its nesting within maxDepth (the error wraps ErrMalformed and says where). Run it
// before the msgpack library decodes untrusted bytes: the library sizes a []byte from its bin or
// str header, and a slice from its array header, before reading them, so a few hostile bytes could
// make it allocate gigabytes.
func CheckValue(b []byte) error { return oneValue(b) }

// oneValue checks that b is exactly one msgpack value.
func oneValue(b []byte) error {
	d := decoder{b: b}
	if err := d.skip(0); err != nil {
		return err
	}
	return d.end()
}

// end checks that nothing follows the value just read.
func (d *decoder) end() error {
	if d.rest() != 0 {
		return d.errorf("%d trailing bytes", d.rest())
	}
	return nil
}
