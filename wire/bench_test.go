package wire

import (
	"bytes"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/leaderlab/leaderlab/node/election"
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
	b.ReportAllocs()
	for b.Loop() {
		p, err := appendDatagram(buf[:0], testSecret, &d)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeDatagram(testSecret, d.Cluster, p); err != nil {
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
