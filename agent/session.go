package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/wire"
)

// protoLabel starts every MAC input of the handshake, so that no other HMAC the project computes
// under some key (hellos, datagrams, control requests) can be passed off as one of these.
const protoLabel = "leaderlab-agent v1"

const (
	nonceLen = 32
	macLen   = sha256.Size
	// maxHandshakeFrame bounds the frames read before the peer has proved it holds the token, so
	// that a stranger cannot make the agent allocate much.
	maxHandshakeFrame = 256
)

// ErrAuth is wrapped by the errors of a failed handshake or a frame whose MAC does not match.
var ErrAuth = errors.New("agent: authentication failed")

// The three handshake messages (doc.go).
type serverHello struct {
	Proto string `msgpack:"proto"`
	Nonce []byte `msgpack:"nonce"`
}

type clientHello struct {
	Proto string `msgpack:"proto"`
	Nonce []byte `msgpack:"nonce"`
	MAC   []byte `msgpack:"mac"`
}

type serverProof struct {
	MAC []byte `msgpack:"mac"`
}

// handshakeMAC is HMAC(token, label 0 role 0 sn cn). The nonces have a fixed length, so the input
// is unambiguous; role keeps the client's proof, the server's proof and the session key apart.
func handshakeMAC(token []byte, role string, sn, cn []byte) []byte {
	m := hmac.New(sha256.New, token)
	m.Write([]byte(protoLabel))
	m.Write([]byte{0})
	m.Write([]byte(role))
	m.Write([]byte{0})
	m.Write(sn)
	m.Write(cn)
	return m.Sum(nil)
}

// session is an authenticated connection: every frame is MAC || payload, the MAC keyed by the
// direction's key over the direction's frame count and the payload.
type session struct {
	rw               io.ReadWriter
	send, recv       hash.Hash
	sendSeq, recvSeq uint64
	rbuf, wbuf       []byte
}

func newSession(rw io.ReadWriter, token, sn, cn []byte, server bool) *session {
	k := handshakeMAC(token, "session", sn, cn)
	c2s := hmac.New(sha256.New, subkey(k, "c2s"))
	s2c := hmac.New(sha256.New, subkey(k, "s2c"))
	s := &session{rw: rw, send: c2s, recv: s2c}
	if server {
		s.send, s.recv = s2c, c2s
	}
	return s
}

func subkey(k []byte, dir string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(dir))
	return m.Sum(nil)
}

func frameMAC(h hash.Hash, seq uint64, payload []byte, out []byte) []byte {
	h.Reset()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], seq)
	h.Write(b[:])
	h.Write(payload)
	return h.Sum(out)
}

// writeMsg encodes v, seals it with the next send sequence number and writes it as one frame.
func (s *session) writeMsg(v any) error {
	p, err := msgpack.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return s.writePayload(p)
}

// writePayload seals p with the next send sequence number and writes it as one frame.
func (s *session) writePayload(p []byte) error {
	if len(p)+macLen > wire.MaxFrame {
		return fmt.Errorf("%w: a message of %d bytes (limit %d)", wire.ErrFrameTooLarge, len(p), wire.MaxFrame-macLen)
	}
	s.wbuf = frameMAC(s.send, s.sendSeq, p, s.wbuf[:0])
	s.wbuf = append(s.wbuf, p...)
	s.sendSeq++
	return wire.WriteFrame(s.rw, s.wbuf)
}

// readMsg reads one frame, checks its MAC against the next receive sequence number and returns the
// payload (valid until the next read). Nothing of a frame is decoded before its MAC is checked.
func (s *session) readMsg() ([]byte, error) {
	p, err := wire.ReadFrame(s.rw, s.rbuf)
	if err != nil {
		return nil, err
	}
	s.rbuf = p[:cap(p)]
	if len(p) <= macLen {
		return nil, fmt.Errorf("%w: frame %d of %d bytes is too short to carry a MAC and a message", ErrMalformed, s.recvSeq, len(p))
	}
	var sum [macLen]byte
	want := frameMAC(s.recv, s.recvSeq, p[macLen:], sum[:0])
	if !hmac.Equal(p[:macLen], want) {
		return nil, fmt.Errorf("%w: bad MAC on frame %d (forged, replayed or out of order)", ErrAuth, s.recvSeq)
	}
	s.recvSeq++
	return p[macLen:], nil
}

// readSmallFrame reads a frame of at most limit bytes (a handshake frame), refusing a larger one
// before allocating it.
func readSmallFrame(r io.Reader, limit int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("read frame header: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	switch {
	case n == 0:
		return nil, wire.ErrEmptyFrame
	case n > uint32(limit):
		return nil, fmt.Errorf("%w: %d bytes during the handshake (limit %d)", wire.ErrFrameTooLarge, n, limit)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return nil, fmt.Errorf("read frame of %d bytes: %w", n, err)
	}
	return p, nil
}

// writeHandshake writes one handshake message as a frame.
func writeHandshake(w io.Writer, v any) error {
	p, err := msgpack.Marshal(v)
	if err != nil {
		return err
	}
	return wire.WriteFrame(w, p)
}

func newNonce() []byte {
	b := make([]byte, nonceLen)
	if _, err := rand.Read(b); err != nil {
		panic("agent: no randomness: " + err.Error()) // crypto/rand does not fail on Linux
	}
	return b
}

// serverHandshake runs the agent's side of the handshake on rw (whose deadline the caller set).
func serverHandshake(rw io.ReadWriter, token []byte) (*session, error) {
	sn := newNonce()
	if err := writeHandshake(rw, serverHello{Proto: protoLabel, Nonce: sn}); err != nil {
		return nil, fmt.Errorf("send challenge: %w", err)
	}
	p, err := readSmallFrame(rw, maxHandshakeFrame)
	if err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	var ch clientHello
	if err := decodeStrict(p, &ch); err != nil {
		return nil, fmt.Errorf("handshake: %w", err)
	}
	switch {
	case ch.Proto != protoLabel:
		return nil, fmt.Errorf("handshake: %w: protocol %q, want %q", ErrMalformed, truncate(ch.Proto, 40), protoLabel)
	case len(ch.Nonce) != nonceLen || len(ch.MAC) != macLen:
		return nil, fmt.Errorf("handshake: %w: nonce of %d bytes and MAC of %d, want %d and %d", ErrMalformed, len(ch.Nonce), len(ch.MAC), nonceLen, macLen)
	case !hmac.Equal(ch.MAC, handshakeMAC(token, "client", sn, ch.Nonce)):
		return nil, fmt.Errorf("handshake: %w: bad MAC (the client does not hold this agent's token)", ErrAuth)
	}
	if err := writeHandshake(rw, serverProof{MAC: handshakeMAC(token, "server", sn, ch.Nonce)}); err != nil {
		return nil, fmt.Errorf("send proof: %w", err)
	}
	return newSession(rw, token, sn, ch.Nonce, true), nil
}

// clientHandshake runs the client's side of the handshake on rw (whose deadline the caller set).
func clientHandshake(rw io.ReadWriter, token []byte) (*session, error) {
	p, err := readSmallFrame(rw, maxHandshakeFrame)
	if err != nil {
		return nil, fmt.Errorf("read the agent's challenge: %w", err)
	}
	var sh serverHello
	if err := decodeStrict(p, &sh); err != nil {
		return nil, fmt.Errorf("the agent's challenge: %w", err)
	}
	if sh.Proto != protoLabel || len(sh.Nonce) != nonceLen {
		return nil, fmt.Errorf("%w: the peer does not speak %s (is it a leaderlab agent?)", ErrMalformed, protoLabel)
	}
	cn := newNonce()
	if err := writeHandshake(rw, clientHello{Proto: protoLabel, Nonce: cn, MAC: handshakeMAC(token, "client", sh.Nonce, cn)}); err != nil {
		return nil, fmt.Errorf("send the answer: %w", err)
	}
	p, err = readSmallFrame(rw, maxHandshakeFrame)
	if err != nil {
		return nil, fmt.Errorf("%w: the agent refused the token or went away (%v); see the agent's log", ErrAuth, err)
	}
	var pr serverProof
	if err := decodeStrict(p, &pr); err != nil {
		return nil, fmt.Errorf("the agent's proof: %w", err)
	}
	if !hmac.Equal(pr.MAC, handshakeMAC(token, "server", sh.Nonce, cn)) {
		return nil, fmt.Errorf("%w: the agent could not prove it holds the token (a different token, or not our agent)", ErrAuth)
	}
	return newSession(rw, token, sh.Nonce, cn, false), nil
}
