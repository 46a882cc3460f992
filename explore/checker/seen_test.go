package checker

import "testing"

// The seen table keeps every state it is given, through its growth, with its last record (but the
// number it was first given), and the zero Fingerprint too.
func TestSeenTable(t *testing.T) {
	tb := newSeenTable(10)
	want := map[Fingerprint]rec{}
	for i := uint64(0); i < 100_000; i++ {
		fp := Fingerprint{i * 0x9e3779b97f4a7c15, i}
		r := rec{ev: uint32(i), idx: uint32(i % 77)}
		tb.put(fp, r)
		if i%3 == 0 { // a second put replaces the record but its number, and adds nothing
			tb.put(fp, rec{ev: r.ev + 1, idx: r.idx + 1})
			r.ev++
		}
		want[fp] = r
	}
	tb.put(Fingerprint{}, rec{ev: 1, idx: 6}) // i = 0 put it first, with number 0
	want[Fingerprint{}] = rec{ev: 1, idx: 0}
	if tb.Len() != len(want) {
		t.Fatalf("Len %d, want %d", tb.Len(), len(want))
	}
	for fp, r := range want {
		if got, ok := tb.get(fp); !ok || got != r {
			t.Fatalf("get(%v) = %v, %v; want %v", fp, got, ok, r)
		}
	}
	if _, ok := tb.get(Fingerprint{1, 2}); ok {
		t.Fatal("found a Fingerprint never put")
	}
}
