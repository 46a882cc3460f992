package checker

import "testing"

// The seen table keeps every fingerprint it is given, through its growth, with the number it was
// first given, and the zero Fingerprint too; set renumbers.
func TestSeenTable(t *testing.T) {
	tb := newTable(10)
	want := map[Fingerprint]uint32{}
	for i := uint64(0); i < 100_000; i++ {
		fp := Fingerprint{i * 0x9e3779b97f4a7c15, i}
		if _, had := tb.add(fp, uint32(i)); had {
			t.Fatalf("add(%v): there already", fp)
		}
		if i%3 == 0 { // a second add keeps the first number, and adds nothing
			if n, had := tb.add(fp, uint32(i)+1); !had || n != uint32(i) {
				t.Fatalf("add again: %d, %v", n, had)
			}
		}
		want[fp] = uint32(i)
	}
	if tb.Len() != len(want) {
		t.Fatalf("Len %d, want %d", tb.Len(), len(want))
	}
	for fp, n := range want {
		if got, ok := tb.get(fp); !ok || got != n {
			t.Fatalf("get(%v) = %v, %v; want %v", fp, got, ok, n)
		}
	}
	if _, ok := tb.get(Fingerprint{1, 2}); ok {
		t.Fatal("found a Fingerprint never added")
	}
	tb.set(Fingerprint{0, 0}, 7)
	if n, ok := tb.get(Fingerprint{}); !ok || n != 7 {
		t.Fatalf("set(0) then get: %d, %v", n, ok)
	}
}
