package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestDatagramRoundTrip(t *testing.T) {
	d := Datagram{Cluster: "run-1", From: 4, Inc: 2, Seq: 1 << 40, Claim: 5, Ack: true}
	b, err := EncodeDatagram(testSecret, &d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeDatagram(testSecret, "run-1", b)
	if err != nil {
		t.Fatal(err)
	}
	want := d
	want.Version = ProtocolVersion
	want.MAC = want.mac(testSecret)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if d.MAC != nil {
		t.Fatal("EncodeDatagram changed its argument")
	}
	var lib Datagram
	if err := msgpack.Unmarshal(b, &lib); err != nil || !reflect.DeepEqual(lib, want) {
		t.Fatalf("library decode: %+v, %v", lib, err)
	}
}

// signedBy encodes d with the library, MAC as given: the way to build forged datagrams.
func signedBy(t *testing.T, d Datagram, mac []byte) []byte {
	t.Helper()
	d.MAC = mac
	b, err := msgpack.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDatagramRejects(t *testing.T) {
	good := Datagram{Version: ProtocolVersion, Cluster: "run-1", From: 4, Inc: 2, Seq: 9, Claim: 5}
	mac := good.mac(testSecret)
	forged := func(f func(*Datagram)) []byte {
		d := good
		f(&d)
		return signedBy(t, d, mac) // the original MAC over changed fields
	}
	other := good
	other.Cluster = "run-2"
	oldVersion := good
	oldVersion.Version = 2
	tests := []struct {
		name string
		in   []byte
		err  error
	}{
		{"good (library-encoded)", signedBy(t, good, mac), nil},
		{"garbage", []byte("GET / HTTP/1.1\r\n"), ErrMalformed},
		{"empty", nil, ErrMalformed},
		{"trailing byte", append(signedBy(t, good, mac), 0), ErrMalformed},
		{"fields missing", cat(fixmap(1), fixstr("s"), []byte{1}), ErrMalformed},
		{"seq a string", cat(fixmap(1), fixstr("s"), fixstr("1")), ErrMalformed},
		{"too large", bytes.Repeat([]byte{0}, MaxDatagram+1), ErrDatagramTooLarge},
		{"wrong version", signedBy(t, oldVersion, oldVersion.mac(testSecret)), ErrVersion},
		{"wrong cluster", signedBy(t, other, other.mac(testSecret)), ErrCluster},
		{"wrong secret", signedBy(t, good, good.mac([]byte("guess"))), ErrBadMAC},
		{"no MAC", signedBy(t, good, nil), ErrBadMAC},
		{"short MAC", signedBy(t, good, mac[:31]), ErrBadMAC},
		{"forged from", forged(func(d *Datagram) { d.From = 5 }), ErrBadMAC},
		{"forged inc", forged(func(d *Datagram) { d.Inc = 3 }), ErrBadMAC},
		{"forged seq", forged(func(d *Datagram) { d.Seq = 10 }), ErrBadMAC},
		{"forged claim", forged(func(d *Datagram) { d.Claim = 4 }), ErrBadMAC},
		{"forged ack", forged(func(d *Datagram) { d.Ack = true }), ErrBadMAC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeDatagram(testSecret, "run-1", tt.in)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
		})
	}
}
