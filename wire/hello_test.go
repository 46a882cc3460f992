package wire

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func TestHelloSignVerify(t *testing.T) {
	h := NewHello(testSecret, "run-1", 3, 2)
	if !h.Verify(testSecret) {
		t.Fatal("a signed hello does not verify")
	}
	if h.Verify([]byte("another secret")) {
		t.Fatal("a hello verifies under another secret")
	}
	tampered := map[string]func(*Hello){
		"version": func(h *Hello) { h.Version++ },
		"cluster": func(h *Hello) { h.Cluster = "run-2" },
		"node":    func(h *Hello) { h.Node = 4 },
		"inc":     func(h *Hello) { h.Inc = 3 },
		"mac":     func(h *Hello) { h.MAC = bytes.Clone(h.MAC); h.MAC[0] ^= 1 },
		"short":   func(h *Hello) { h.MAC = h.MAC[:16] },
		"no mac":  func(h *Hello) { h.MAC = nil },
	}
	for name, f := range tampered {
		c := h
		f(&c)
		if c.Verify(testSecret) {
			t.Errorf("tampered %s still verifies", name)
		}
	}
}

// The signed encoding is unambiguous: fields cannot slide into each other, and a hello's MAC is not
// a datagram's.
func TestHelloMACUnambiguous(t *testing.T) {
	a := Hello{Version: 1, Cluster: "a\x00", Node: 1, Inc: 1}
	b := Hello{Version: 1, Cluster: "a", Node: 1, Inc: 1}
	if bytes.Equal(a.mac(testSecret), b.mac(testSecret)) {
		t.Fatal("different clusters share a MAC")
	}
	h := Hello{Version: 1, Cluster: "c", Node: 2, Inc: 3}
	d := Datagram{Version: 1, Cluster: "c", From: 2, Inc: 3}
	if bytes.Equal(h.mac(testSecret), d.mac(testSecret)) {
		t.Fatal("a hello and a datagram share a MAC")
	}
}

func TestHelloCodec(t *testing.T) {
	h := NewHello(testSecret, "run-1", 0, 1)
	b, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var got Hello
	if err := got.Unmarshal(b); err != nil || !reflect.DeepEqual(got, h) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	var lib Hello
	if err := msgpack.Unmarshal(b, &lib); err != nil || !reflect.DeepEqual(lib, h) {
		t.Fatalf("library decode: %+v, %v", lib, err)
	}
	lb, _ := msgpack.Marshal(&h)
	if err := got.Unmarshal(lb); err != nil || !reflect.DeepEqual(got, h) {
		t.Fatalf("library encode: %+v, %v", got, err)
	}
	var bad Hello
	if err := bad.Unmarshal(append(b, 0)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("trailing byte: %v", err)
	}
	noMAC := cat(fixmap(4), fixstr("v"), []byte{1}, fixstr("c"), fixstr("x"), fixstr("n"), []byte{1}, fixstr("i"), []byte{1})
	if err := bad.Unmarshal(noMAC); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a hello without a MAC field: %v", err)
	}
	if err := bad.Unmarshal(mustBody(t, map[string]int{"v": 1, "c": 1, "k": 1})); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a wrong type: %v", err)
	}
	if err := got.check(testSecret, "run-1"); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		h   Hello
		err error
	}{
		{Hello{Version: 2, Cluster: "run-1"}, ErrVersion},
		{Hello{Version: 1, Cluster: "run-2"}, ErrCluster},
		{Hello{Version: 1, Cluster: "run-1", MAC: []byte("x")}, ErrBadMAC},
	} {
		if err := tt.h.check(testSecret, "run-1"); !errors.Is(err, tt.err) {
			t.Errorf("%+v: %v, want %v", tt.h, err, tt.err)
		}
	}
	long := Hello{Cluster: string(make([]byte, maxCluster+1))}
	if _, err := long.Marshal(); !errors.Is(err, ErrMalformed) {
		t.Fatalf("a long cluster ID: %v", err)
	}
}
