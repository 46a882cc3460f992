package logs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/rundir"
)

// ms is a test's time: milliseconds after a fixed begin, as Unix ns (as check's stories).
func ms(x float64) int64 { return 1_700_000_000_000_000_000 + int64(x*1e6) }

// line is one event line of node `node`, incarnation inc.
func line(node, inc int, lc int, ev string) string {
	return fmt.Sprintf(`{"ts":%d,"node":%d,"inc":%d,"lc":%d,"ev":%q}`, ms(float64(lc)), node, inc, lc, ev)
}

func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

func TestReadNodeLog(t *testing.T) {
	ok := line(1, 1, 1, "start")
	for _, tc := range []struct {
		name, in string
		events   int
		torn     []TornLine
		err      string // a substring of the error; "" for none
	}{
		{name: "whole", in: lines(ok, line(1, 1, 2, "elect"), `{"ts":3,"node":1,"inc":1,"lc":3,"ev":"leader","leader":1}`), events: 3},
		{name: "no final newline", in: ok + "\n" + line(1, 1, 2, "elect"), events: 2},
		{name: "blank lines", in: "\n" + ok + "\n\n  \n" + line(1, 1, 2, "elect") + "\n", events: 2},
		{name: "torn last line", in: lines(ok, `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"se`), events: 1, torn: []TornLine{{Line: 2, Inc: 1}}},
		{name: "torn before the next incarnation", in: lines(ok, `{"ts":5,"node":1,"in`, line(1, 2, 1, "start")), events: 2, torn: []TornLine{{Line: 2, Inc: 1}}},
		{name: "torn line names its incarnation", in: lines(ok, `{"ts":5,"node":1,"inc":2,"lc":1,"e`, line(1, 3, 1, "start")), events: 2, torn: []TornLine{{Line: 2, Inc: 2}}},
		{name: "torn first line", in: lines(`{"ts":5,`, line(1, 2, 1, "start")), events: 1, torn: []TornLine{{Line: 1, Inc: 1}}},
		{name: "last line lacks fields", in: lines(ok, `{"ts":5,"node":1}`), events: 1, torn: []TornLine{{Line: 2, Inc: 1}}},
		{name: "torn line in the middle", in: lines(ok, `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"se`, line(1, 1, 3, "elect")),
			err: "x.jsonl:2: not JSON (unexpected end of JSON input); a torn line is accepted only as the last line of an incarnation"},
		{name: "torn first line, same incarnation after", in: lines(`{"ts":5,`, ok), err: "x.jsonl:1: not JSON"},
		{name: "two torn lines", in: lines(ok, `{"ts":5`, `{"ts":6`), err: "x.jsonl:2: not JSON"},
		{name: "lacks fields in the middle", in: lines(ok, `{"ts":5,"node":1,"inc":1,"ev":"elect"}`, line(1, 1, 3, "elect")), err: "x.jsonl:2: lacks lc"},
		{name: "ts not an integer", in: lines(ok, `{"ts":1.5,"node":1,"inc":1,"lc":2,"ev":"elect"}`), err: "x.jsonl:2: not an event"},
		{name: "not an object", in: lines(ok, `[1,2]`), err: "x.jsonl:2: not an event"},
		{name: "send without msg id", in: lines(ok, `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"send","to":2,"msg":{"kind":"ok"}}`), err: "x.jsonl:2: send without msg.id"},
		{name: "leader without leader", in: lines(ok, line(1, 1, 2, "leader")), err: "x.jsonl:2: leader event without a leader ID"},
		{name: "another node", in: lines(ok, line(2, 1, 2, "elect")), err: "x.jsonl:2: an event of node 2 in a log of node 1"},
		{name: "inc zero", in: lines(line(1, 0, 2, "elect")), err: "x.jsonl:1: inc 0"},
	} {
		for _, r := range nodeLogReaders {
			t.Run(tc.name+"/"+r.name, func(t *testing.T) {
				nl, err := r.read([]byte(tc.in), "x.jsonl")
				if tc.err != "" {
					var le *LineError
					if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.As(err, &le) {
						t.Fatalf("error %v, want a LineError containing %q", err, tc.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(nl.Events) != tc.events || len(nl.Line) != tc.events || !reflect.DeepEqual(nl.Torn, tc.torn) {
					t.Fatalf("%d events (lines %v), torn %v; want %d events, torn %v", len(nl.Events), nl.Line, nl.Torn, tc.events, tc.torn)
				}
			})
		}
	}
}

// nodeLogReaders are the two ways a node's log is read: streamed (ReadNodeLog, for any reader)
// and whole in memory (ReadRun's way, readNodeLogBytes). They must agree on every input.
var nodeLogReaders = []struct {
	name string
	read func(data []byte, name string) (*NodeLog, error)
}{
	{"streamed", func(data []byte, name string) (*NodeLog, error) { return ReadNodeLog(bytes.NewReader(data), name) }},
	{"in-memory", readNodeLogBytes},
}

func TestReadNodeLogLongLines(t *testing.T) {
	for _, r := range nodeLogReaders {
		t.Run(r.name, func(t *testing.T) { testLongLines(t, r.read) })
	}
}

func testLongLines(t *testing.T, read func([]byte, string) (*NodeLog, error)) {
	peers := make([]int, 40000) // a line of ~80 KiB: past bufio.Scanner's default limit
	for i := range peers {
		peers[i] = i + 1
	}
	long, _ := AppendEvent(nil, &Event{TS: 1, Node: 1, Inc: 1, LC: 1, Ev: EvStart, Peers: peers})
	nl, err := read(append(long, lines(line(1, 1, 2, "elect"))...), "x.jsonl")
	if err != nil || len(nl.Events) != 2 || len(nl.Events[0].Peers) != len(peers) {
		t.Fatalf("a long line: %v", err)
	}

	huge := `{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stop","reason":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	_, err = read([]byte(lines(line(1, 1, 1, "start"), huge, line(1, 1, 3, "elect"))), "x.jsonl")
	var le *LineError
	if !errors.Is(err, ErrLineTooLong) || !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("a line over 1 MiB: %v, want ErrLineTooLong at line 2", err)
	}
	// Exactly the limit is fine.
	exact := `{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stop","reason":"` + `"}`
	exact = exact[:len(exact)-2] + strings.Repeat("y", MaxLineBytes-len(exact)) + `"}`
	if _, err := read([]byte(exact), "x.jsonl"); err != nil {
		t.Fatalf("a line of exactly 1 MiB: %v", err)
	}
}

func TestReadRunNotARun(t *testing.T) {
	for name, dir := range map[string]string{"missing": filepath.Join(t.TempDir(), "nowhere"), "empty": t.TempDir()} {
		if _, err := ReadRun(dir); !errors.Is(err, rundir.ErrNotRun) {
			t.Errorf("%s directory: %v, want ErrNotRun", name, err)
		}
	}
}

func FuzzEventLine(f *testing.F) {
	for _, s := range []string{
		lines(line(1, 1, 1, "start"), line(1, 1, 2, "elect")),
		lines(line(1, 1, 1, "start"), `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"se`),
		lines(line(1, 1, 1, "start"), `{"ts":5,"node":1,"in`, line(1, 2, 1, "start")),
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"send","to":2,"msg":{"id":"1.1.1","kind":"election","cand":1,"ids":[1,2]}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":{"hb_sent":3}}` + "\n\n",
		`{"ts":1e3,"node":1}`, "\xff\xfe", "[]\n{}", `{"inc":99999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nl, err := ReadNodeLog(bytes.NewReader(data), "fuzz.jsonl")
		inMem, errInMem := readNodeLogBytes(slices.Clone(data), "fuzz.jsonl")
		if fmt.Sprint(err) != fmt.Sprint(errInMem) || (err == nil && !reflect.DeepEqual(nl, inMem)) {
			t.Fatalf("the two readers differ:\nstreamed  %v %+v\nin memory %v %+v", err, nl, errInMem, inMem)
		}
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 {
				t.Fatalf("an error that names no line: %v", err)
			}
			return
		}
		if len(nl.Events) != len(nl.Line) {
			t.Fatalf("%d events, %d line numbers", len(nl.Events), len(nl.Line))
		}
		for i, e := range nl.Events {
			if e.Node != nl.Node || e.Inc < 1 || e.Ev == "" {
				t.Fatalf("event %d accepted: %+v", i, e)
			}
		}
		// What was accepted reads back the same once written by the writer.
		var b []byte
		for i := range nl.Events {
			b, err = AppendEvent(b, &nl.Events[i])
			if err != nil {
				t.Fatal(err)
			}
		}
		again, err := ReadNodeLog(bytes.NewReader(b), "again.jsonl")
		if err != nil {
			t.Fatalf("the writer's output does not read back: %v", err)
		}
		x, _ := json.Marshal(nl.Events)
		y, _ := json.Marshal(again.Events)
		if !bytes.Equal(x, y) {
			t.Fatalf("events change on a round trip:\n%s\n%s", x, y)
		}
	})
}
