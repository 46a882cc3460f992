package logs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/rundir"
)

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

func TestReadRunRoundTrip(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(3, 300)
	s.bully(500, []int{1, 2}, 3)
	s.stop(1000)
	dir := writeRun(t, s.run, nil)
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	for id, nl := range run.Nodes {
		nl.Line = nil // the only thing a file adds
		if !reflect.DeepEqual(nl.Events, s.run.Nodes[id].Events) {
			t.Errorf("node %d: events differ after a round trip", id)
		}
	}
	if !reflect.DeepEqual(run.Chaos, s.run.Chaos) || !reflect.DeepEqual(run.Launcher, s.run.Launcher) {
		t.Errorf("chaos or launcher records differ after a round trip")
	}
	if run.Dir != dir || run.Cluster.Algo != algoTest {
		t.Errorf("run %q algo %q", run.Dir, run.Cluster.Algo)
	}
	if got, want := summary(Check(run, Options{})), summary(Check(s.run, Options{})); got != want {
		t.Errorf("read back, the verdict differs:\n%s\nin memory:\n%s", got, want)
	}
}

func TestReadRunNotARun(t *testing.T) {
	for name, dir := range map[string]string{"missing": filepath.Join(t.TempDir(), "nowhere"), "empty": t.TempDir()} {
		if _, err := ReadRun(dir); !errors.Is(err, rundir.ErrNotRun) {
			t.Errorf("%s directory: %v, want ErrNotRun", name, err)
		}
	}
}

func TestReadRunMissingLogs(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	// A node the launcher never spawned may have no log.
	s.run.Cluster.Nodes = append(s.run.Cluster.Nodes, rundir.Node{ID: 4, Addr: "127.0.0.1:7004"})
	dir := writeRun(t, s.run, nil)
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatalf("a node never spawned, without a log: %v", err)
	}
	if _, ok := run.Nodes[4]; ok {
		t.Errorf("node 4 has a log")
	}
	// A spawned node must have one.
	if err := os.Remove(rundir.NodeLog(dir, 2)); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRun(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "node 2 was spawned") {
		t.Errorf("a spawned node without a log: %v", err)
	}
	for _, f := range []string{rundir.ChaosFile, rundir.LauncherFile} {
		dir := writeRun(t, s.run, nil)
		os.Remove(filepath.Join(dir, f))
		if _, err := ReadRun(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), f) {
			t.Errorf("no %s: %v", f, err)
		}
	}
}

func TestReadRunBadRecord(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	dir := writeRun(t, s.run, nil)
	f, _ := os.OpenFile(filepath.Join(dir, rundir.ChaosFile), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"ts":5,"op":"kill","targets":[3]}` + "\n" + `{"ts":6,"op":"ki` + "\n")
	f.Close()
	_, err := ReadRun(dir)
	var le *LineError
	if !errors.As(err, &le) || le.File != "chaos.jsonl" || le.Line != 2 {
		t.Errorf("a torn chaos.jsonl: %v, want chaos.jsonl:2", err)
	}
	dir = writeRun(t, s.run, nil)
	// Node 2's log holds an event of node 3.
	b, _ := AppendEvent(nil, &Event{TS: ms(5), Node: 3, Inc: 1, LC: 1, Ev: EvStart})
	os.WriteFile(rundir.NodeLog(dir, 2), b, 0o644)
	if _, err := ReadRun(dir); err == nil || err.Error() != "nodes/2.jsonl:1: an event of node 3 in the log of node 2" {
		t.Errorf("a log of the wrong node: %v", err)
	}
}

// A torn line is fine at the end of a killed incarnation, at the end of the file or before the next
// incarnation; at the end of one that exited cleanly it breaks integrity.
func TestReadRunTornLines(t *testing.T) {
	tornLine := `{"ts":1700000000299000000,"node":3,"inc":1,"lc":40,"ev":"se`

	killed := cleanElection(algoTest)
	killed.kill(3, 300)
	killed.bully(500, []int{1, 2}, 3)
	killed.stop(1000)
	n3 := len(killed.run.Nodes[3].Events)

	restarted := cleanElection(algoTest)
	restarted.kill(3, 300)
	restarted.bully(500, []int{1, 2}, 3)
	last3 := len(restarted.run.Nodes[3].Events) - 1
	restarted.restart(3, 700)
	restarted.bully(706, []int{3})
	for _, id := range []int{1, 2} {
		m := restarted.send(3, id, 726, "coordinator")
		restarted.recv(id, 3, 727, m)
		restarted.leader(id, 727, 3)
	}
	restarted.stop(1500)

	clean := cleanElection(algoTest)
	clean.stop(1000)
	c3 := len(clean.run.Nodes[3].Events)

	for _, tc := range []struct {
		name   string
		s      *story
		after  int
		ok     bool
		detail string
	}{
		{"killed, end of file", killed, n3 - 1, true,
			fmt.Sprintf("11 recvs matched a send; 3 processes spawned, all exited; 1 torn line, each ending a killed incarnation (nodes/3.jsonl:%d)", n3+1)},
		{"killed, then restarted", restarted, last3, true,
			fmt.Sprintf("13 recvs matched a send; 4 processes spawned, all exited; 1 torn line, each ending a killed incarnation (nodes/3.jsonl:%d)", last3+2)},
		{"exited cleanly", clean, c3 - 1, false,
			fmt.Sprintf("1 problem: nodes/3.jsonl:%d: a torn line ends incarnation 1, which exited with code 0, not on a signal", c3+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, err := ReadRun(writeRun(t, tc.s.run, map[int]map[int]string{3: {tc.after: tornLine}}))
			if err != nil {
				t.Fatal(err)
			}
			v := Check(run, Options{})
			if p := v.Properties[3]; p.OK != tc.ok || p.Detail != tc.detail || v.OK != tc.ok {
				t.Errorf("integrity %v: %s\nwant %v: %s", p.OK, p.Detail, tc.ok, tc.detail)
			}
		})
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
		// The checker takes whatever the reader accepted without panicking.
		run := newStory(algoTest, 3).run
		run.Nodes = map[int]*NodeLog{nl.Node: nl}
		run.Chaos = []ChaosRecord{{TS: ms(2), Op: "kill", Targets: []int{nl.Node}}, {TS: ms(3), Op: "pause", Targets: []int{2}}}
		Check(run, Options{}).Print(io.Discard)
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
