package logs

import (
	"reflect"
	"testing"
)

// fastLines are lines as the node's writer makes them, of every kind the fast decoder takes.
var fastLines = []string{
	`{"ts":1795646603154057249,"node":1000,"inc":1,"lc":1,"ev":"start","algo":"chang-roberts","peers":[949],"pid":15959}`,
	`{"ts":1795646603154118721,"node":1000,"inc":1,"lc":2,"ev":"elect","round":1}`,
	`{"ts":1795646603154122877,"node":1000,"inc":1,"lc":3,"ev":"send","to":949,"msg":{"id":"1000.1.1","kind":"election","cand":1000,"round":1}}`,
	`{"ts":1795646603218343523,"node":1000,"inc":1,"lc":4,"ev":"recv","from":986,"msg":{"id":"986.1.1","kind":"election","cand":986,"round":1}}`,
	`{"ts":5,"node":3,"inc":2,"lc":9,"ev":"send","to":4,"msg":{"id":"3.2.7","kind":"probe","cand":3,"round":2,"hops":4,"dir":-1,"origin":3,"ids":[1,2,3],"phase":2}}`,
	`{"ts":5,"node":3,"inc":2,"lc":9,"ev":"drop","to":4,"msg":{"id":"3.2.8","kind":"ok"},"reason":"link down"}`,
	`{"ts":6,"node":3,"inc":2,"lc":10,"ev":"suspect","peer":4}`,
	`{"ts":7,"node":3,"inc":2,"lc":11,"ev":"leader","leader":5}`,
	`{"ts":8,"node":3,"inc":2,"lc":12,"ev":"stop","reason":"SIGTERM"}`,
	`{"ts":8,"node":3,"inc":2,"lc":12,"ev":"start","peers":[]}`,
	`{"ts":9,"node":1,"inc":1,"lc":28,"ev":"stats","stats":{"hb_sent":2,"hb_recv":2,"msgs_sent":13,"msgs_recv":12,"drops":0,"hb_drops":0}}`,
	`{"ts":9,"node":1,"inc":1,"lc":28,"ev":"stats","stats":{}}`,
}

// TestFastEventDecodesTheWritersLines: the writer's lines take the fast path, and come out as
// encoding/json reads them.
func TestFastEventDecodesTheWritersLines(t *testing.T) {
	d := newFastDecoder()
	for _, l := range fastLines {
		var got Event
		if !d.decode([]byte(l), &got) {
			t.Errorf("not decoded fast: %s", l)
			continue
		}
		want, bad, err := decodeEvent([]byte(l))
		if err != nil || bad != "" {
			t.Fatalf("encoding/json: %v %s", err, bad)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Errorf("%s\nfast %+v\njson %+v", l, got, *want)
		}
	}
	// What it leaves to encoding/json.
	for _, l := range []string{
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":{"hb_sent":3,"hb_sent":4}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":{"hb_sent":3,"cpu":4}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":{"hb_sent":1.5}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":null}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","vc":{"n1.1":1}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stop","reason":"caf\u00e9"}`,
		`{"ts":1.5,"node":1,"inc":1,"lc":1,"ev":"elect"}`,
		`{"ts":1, "node":1,"inc":1,"lc":1,"ev":"elect"}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","ev":"start"}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","TS":2}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","msg":null}`,
		`{"ts":1,"node":1,"inc":1,"lc":-1,"ev":"elect"}`,
		`{"ts":01,"node":1,"inc":1,"lc":1,"ev":"elect"}`,
		`{"ts":1,"node":1,"inc":1,"lc":1}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect"}x`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"se`,
		`{"ts":99999999999999999999,"node":1,"inc":1,"lc":1,"ev":"elect"}`,
	} {
		var e Event
		if d.decode([]byte(l), &e) {
			t.Errorf("decoded fast, but it is not the writer's shape: %s", l)
		}
	}
}

// FuzzFastEvent holds the fast decoder to encoding/json: whatever line it takes, encoding/json
// takes too and reads the same event.
func FuzzFastEvent(f *testing.F) {
	for _, l := range fastLines {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"ts":-0,"node":1,"inc":1,"lc":1,"ev":"elect"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var got Event
		if !newFastDecoder().decode(line, &got) {
			return
		}
		want, bad, err := decodeEvent(line)
		if err != nil || bad != "" {
			t.Fatalf("decoded fast, but encoding/json says %v %q: %q", err, bad, line)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Fatalf("%q\nfast %+v\njson %+v", line, got, *want)
		}
	})
}
