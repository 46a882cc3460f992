package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/election"
)

var benchEnv = Envelope{Kind: KindMsg, LC: 1234, Msg: election.Message{ID: "3.1.17", Kind: "election", Cand: 3, Round: 2}}

// BenchmarkFrameRoundTrip: encode a small election message into a frame, write it, read it back
// and decode it, with buffers reused as the transports reuse them.
func BenchmarkFrameRoundTrip(b *testing.B) {
	var stream bytes.Buffer
	wbuf := make([]byte, 0, 256)
	rbuf := make([]byte, 256)
	var got Envelope
	b.ReportAllocs()
	for b.Loop() {
		stream.Reset()
		p, err := benchEnv.AppendMarshal(wbuf[:0])
		if err != nil {
			b.Fatal(err)
		}
		if err := WriteFrame(&stream, p); err != nil {
			b.Fatal(err)
		}
		q, err := ReadFrame(&stream, rbuf)
		if err != nil {
			b.Fatal(err)
		}
		if err := got.Unmarshal(q); err != nil {
			b.Fatal(err)
		}
	}
	if got.Msg.ID != benchEnv.Msg.ID {
		b.Fatal("wrong round trip")
	}
}

// BenchmarkFrameRoundTripLibrary is the same with the msgpack library's reflection codec (encoder
// and decoder reused), for comparison.
func BenchmarkFrameRoundTripLibrary(b *testing.B) {
	var stream, payload bytes.Buffer
	enc := msgpack.NewEncoder(&payload)
	dec := msgpack.NewDecoder(nil)
	rbuf := make([]byte, 256)
	r := bytes.NewReader(nil)
	var got Envelope
	b.ReportAllocs()
	for b.Loop() {
		stream.Reset()
		payload.Reset()
		if err := enc.Encode(&benchEnv); err != nil {
			b.Fatal(err)
		}
		if err := WriteFrame(&stream, payload.Bytes()); err != nil {
			b.Fatal(err)
		}
		q, err := ReadFrame(&stream, rbuf)
		if err != nil {
			b.Fatal(err)
		}
		r.Reset(q)
		dec.Reset(r)
		got = Envelope{}
		if err := dec.Decode(&got); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDatagramRoundTrip(b *testing.B) {
	d := Datagram{Cluster: "20250101T000000Z-bully-n5", From: 3, Inc: 1, Seq: 99, Claim: 5}
	buf := make([]byte, 0, 256)
	mac, check := newDatagramMAC(testSecret), newDatagramMAC(testSecret) // the sender's and the receiver's, kept as the transport keeps them
	b.ReportAllocs()
	for b.Loop() {
		p, err := appendDatagram(buf[:0], mac, &d)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := decodeDatagram(check, d.Cluster, p); err != nil {
			b.Fatal(err)
		}
	}
}

// counter is a Handler that counts messages.
type counter struct {
	recorder
	n atomic.Int64
}

func (c *counter) Message(int, int, *Envelope) { c.n.Add(1) }

// BenchmarkTCPSend: one message from Send to the receiver's Handler over loopback TCP (throughput,
// with frames batched by the writer).
func BenchmarkTCPSend(b *testing.B) {
	recv := &counter{}
	c := newTCPCluster(b, 1, 2)
	a := c.start(1, &recorder{}, 0)
	c.start(2, recv, 0)
	sent := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		for {
			err := a.Send(2, &benchEnv)
			if err == nil {
				break
			}
			if !errors.Is(err, ErrQueueFull) {
				b.Fatal(err)
			}
			runtime.Gosched()
		}
		sent++
	}
	for recv.n.Load() < sent {
		runtime.Gosched()
	}
}

// clockEnv is the envelope of a Bully election message at the end of a busy run of n nodes
// (message IDs and clocks of that size).
func clockEnv(n int) Envelope {
	return Envelope{Kind: KindMsg, LC: uint64(40 * n), Msg: election.Message{ID: fmt.Sprintf("%d.1.%d", n, 9*n), Kind: "election", Cand: n, Round: 3}}
}

// fullClock is the vector clock a node of an n-node cluster holds late in a busy run: every node
// heard of, with tens to thousands of events each (one to three bytes per count), and two nodes
// restarted (their old incarnations stay in the clock).
func fullClock(n int) Clock {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	var c Clock
	for id := uint32(1); id <= uint32(n); id++ {
		c = append(c, Tick{Node: id, Inc: 1, N: 50 + rng.Uint64N(2950)})
		if id == uint32(n) || id == uint32(n/2) {
			c = append(c, Tick{Node: id, Inc: 2, N: 1 + rng.Uint64N(500)})
		}
	}
	return c
}

// BenchmarkEnvelopeClock: the cost of vector clocks on the wire. For N = 16, 64 (the largest
// cluster with vector clocks by default) and 256, one election message encoded into a frame and
// decoded again, with the Lamport clock alone (the envelope as it was before vector clocks, byte
// for byte) and with the sender's full vector clock. frame-bytes is the frame's size, length
// prefix included.
func BenchmarkEnvelopeClock(b *testing.B) {
	for _, n := range []int{16, 64, 256} {
		env := clockEnv(n)
		b.Run(fmt.Sprintf("N=%d/lamport", n), func(b *testing.B) { benchEnvelope(b, &env) })
		withVC := env
		withVC.VC = fullClock(n)
		b.Run(fmt.Sprintf("N=%d/vclock", n), func(b *testing.B) { benchEnvelope(b, &withVC) })
	}
}

// benchEnvelope encodes and decodes env with reused buffers, and reports the frame's bytes.
func benchEnvelope(b *testing.B, env *Envelope) {
	buf := make([]byte, 0, 8<<10)
	var got Envelope
	var p []byte
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if p, err = appendFrame(buf[:0], env); err != nil {
			b.Fatal(err)
		}
		if err := got.Unmarshal(p[frameHeader:]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(p)), "frame-bytes")
}
