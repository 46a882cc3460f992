package logs

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// readAll reads a whole log through a stream's reader, keeping copies of its events.
func readAll(r EventReader) (*NodeLog, error) {
	nl := &NodeLog{}
	for {
		e, line, err := r.Next()
		if err == io.EOF {
			nl.Torn = r.Torn()
			return nl, nil
		}
		if err != nil {
			return nil, err
		}
		c := *e
		if e.Msg != nil {
			m := *e.Msg
			c.Msg = &m
		}
		if len(nl.Events) == 0 {
			nl.Node = c.Node
		}
		nl.Events = append(nl.Events, c)
		nl.Line = append(nl.Line, line)
	}
}

// streamLines are logs as the writer makes them and as a kill leaves them, with and without vector
// clocks.
var streamLines = []string{
	lines(line(1, 1, 1, "start"), line(1, 1, 2, "elect"), `{"ts":3,"node":1,"inc":1,"lc":3,"ev":"leader","leader":1}`),
	lines(line(1, 1, 1, "start"), `{"ts":5,"node":1,"in`, line(1, 2, 1, "start")),
	lines(`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"start","vc":{"n1.1":1}}`,
		`{"ts":2,"node":1,"inc":1,"lc":2,"ev":"send","to":2,"msg":{"id":"1.1.1","kind":"election","cand":1},"vc":{"n1.1":2}}`,
		`{"ts":3,"node":1,"inc":1,"lc":5,"ev":"recv","from":2,"msg":{"id":"2.1.1","kind":"ok"},"vc":{"n1.1":3,"n2.1":2,"n10.3":7}}`,
		`{"ts":4,"node":1,"inc":1,"lc":5,"ev":"stats","stats":{"hb_sent":1,"hb_recv":0,"msgs_sent":1,"msgs_recv":1,"drops":0,"hb_drops":0},"vc":{"n1.1":3,"n2.1":2,"n10.3":7}}`,
		`{"ts":5,"node":1,"inc":1,"lc":6,"ev":"elect","vc":{"n2.1":2,"n1.1":4}}`, // not in order: encoding/json's
		`{"ts":6,"node":1,"inc":1,"lc":7,"ev":"elect","vc":{}}`,
		`{"ts":7,"node":1,"inc":1,"lc":8,"ev":"elect","vc":{"n1.1":8`),
}

// TestStreamReadsWhatReadRunReads: a stream's reader (vc checked and dropped, or kept) reads a log as
// ReadNodeLog does — the same events, lines, torn lines and errors — and its fast path takes the
// writer's vc lines.
func TestStreamReadsWhatReadRunReads(t *testing.T) {
	bad := []string{
		lines(line(1, 1, 1, "start"), `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"se`, line(1, 1, 3, "elect")),
		lines(line(1, 1, 1, "start"), line(2, 1, 2, "elect")),
		lines(line(1, 1, 1, "start"), `{"ts":2,"node":1,"inc":1,"lc":2,"ev":"elect","vc":{"n1.01":2}}`),
		lines(line(1, 1, 1, "start"), `{"ts":2,"node":1,"inc":1,"lc":2,"ev":"elect","vc":{"n1.1":0}}`),
		lines(line(1, 1, 1, "start"), `{"ts":2,"node":1,"inc":1,"lc":2,"ev":"elect","vc":{"n1.1":9007199254740992}}`),
	}
	for _, in := range append(append([]string{}, streamLines...), bad...) {
		want, wantErr := readNodeLogBytes([]byte(in), "x.jsonl")
		for _, mode := range []vcMode{vcSkip, vcKeep, vcSkim} {
			keep := mode == vcKeep
			if mode == vcSkim && wantErr != nil {
				continue // it passes over the clocks of lines read (and checked) before
			}
			fast := newFastDecoder()
			fast.vc, fast.one = mode, &election.Message{}
			got, err := readAll(&fileReader{sc: newLogScanner(newLineReader(strings.NewReader(in), "x.jsonl"), "x.jsonl", fast), id: 1, mismatch: "%d %d"})
			if wantErr != nil || err != nil {
				if wantErr == nil || err == nil || err.Error() != wantErr.Error() {
					t.Errorf("keep %v: error %v, ReadNodeLog's %v\n%s", keep, err, wantErr, in)
				}
				continue
			}
			want := *want
			if !keep {
				want.Events = append([]Event{}, want.Events...)
				for i := range want.Events {
					want.Events[i].VC = nil
				}
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("keep %v: read\n%+v\nReadNodeLog read\n%+v", keep, got, want)
			}
		}
	}
	d := newFastDecoder()
	d.vc = vcKeep
	for _, l := range strings.Split(streamLines[2], "\n")[:4] {
		var e Event
		if !d.decode([]byte(l), &e) || e.VC == nil {
			t.Errorf("the fast decoder did not take a vc line of the writer's: %s", l)
		}
	}
}

// TestOpenStreamIsReadRun: a run directory read through OpenStream holds what ReadRun reads (a
// host's clock offset taken off), and where ReadRun refuses a run, Err says why in its words.
func TestOpenStreamIsReadRun(t *testing.T) {
	dir := t.TempDir()
	c := &rundir.Cluster{ClusterID: "c", Algo: "bully", Topology: "mesh", Secret: strings.Repeat("ab", 16),
		Nodes: []rundir.Node{{ID: 1, Addr: "10.0.0.1:1", Host: "h1"}, {ID: 2, Addr: "10.0.0.2:1", Host: "h2"}, {ID: 3, Addr: "10.0.0.3:1", Host: "h1"}},
		Hosts: []rundir.Host{{Agent: "h1", IDs: []int{1, 3}}, {Agent: "h2", IDs: []int{2}, OffsetNS: 5_000_000}}}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(rundir.LauncherFile, `{"ts":1,"ev":"spawned","node":1,"inc":1}`+"\n"+`{"ts":1,"ev":"spawned","node":2,"inc":1}`+"\n")
	write(rundir.ChaosFile, "")
	write("nodes/1.jsonl", streamLines[0])
	write("nodes/2.jsonl", strings.ReplaceAll(streamLines[1], `"node":1`, `"node":2`))
	// node 3 was never spawned and has no log
	run, err := ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenStream(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s.Nodes, []int{1, 2}) || !reflect.DeepEqual(s.Run.Launcher, run.Launcher) || s.Run.Nodes != nil {
		t.Fatalf("nodes %v, launcher %v", s.Nodes, s.Run.Launcher)
	}
	for _, from := range []*Stream{s, StreamOf(run)} {
		for _, id := range from.Nodes {
			r, err := from.Node(id)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			got.Node = id
			if !reflect.DeepEqual(got, run.Nodes[id]) {
				t.Errorf("node %d: streamed\n%+v\nReadRun\n%+v", id, got, run.Nodes[id])
			}
		}
	}
	if err := s.Err(); err != nil {
		t.Errorf("Err on a good run: %v", err)
	}
	// Node 2 torn in the middle, node 1 of the wrong node: ReadRun names node 1's first.
	write("nodes/2.jsonl", lines(line(2, 1, 1, "start"), `{"ts":5,`, line(2, 1, 3, "elect")))
	write("nodes/1.jsonl", lines(line(3, 1, 1, "start")))
	_, want := ReadRun(dir)
	s, err = OpenStream(dir)
	if err != nil || want == nil {
		t.Fatal(err, want)
	}
	r, _ := s.Node(2)
	if _, err := readAll(r); err == nil {
		t.Errorf("node 2's torn line in the middle was read")
	}
	if got := s.Err(); got == nil || got.Error() != want.Error() {
		t.Errorf("Err %v, ReadRun's %v", got, want)
	}
	// A spawned node without a log.
	os.Remove(filepath.Join(dir, "nodes/1.jsonl"))
	write("nodes/2.jsonl", strings.ReplaceAll(streamLines[1], `"node":1`, `"node":2`))
	_, want = ReadRun(dir)
	if s, err = OpenStream(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Node(1); err == nil {
		t.Errorf("node 1's missing log was opened")
	}
	if got := s.Err(); got == nil || want == nil || got.Error() != want.Error() || !errors.Is(got, os.ErrNotExist) {
		t.Errorf("Err %v, ReadRun's %v", got, want)
	}
}

// FuzzFastVC holds the fast decoder's vc to encoding/json's: whatever line it takes with vc, encoding/json
// takes too and reads the same event.
func FuzzFastVC(f *testing.F) {
	for _, l := range strings.Split(streamLines[2], "\n") {
		f.Add([]byte(l))
	}
	f.Add([]byte(`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","vc":{"n1.1":1,"n1.1":2}}`))
	f.Add([]byte(`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"elect","vc":{"n2147483648.1":1}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		d := newFastDecoder()
		d.vc = vcKeep
		var got Event
		if !d.decode(line, &got) {
			return
		}
		want, bad, err := decodeEvent(line)
		if err != nil || bad != "" {
			t.Fatalf("decoded fast, but encoding/json says %v %q: %q", err, bad, line)
		}
		if !reflect.DeepEqual(got, *want) {
			t.Fatalf("%q\nfast %+v\njson %+v", line, got, *want)
		}
		kept := got
		for _, mode := range []vcMode{vcSkip, vcSkim} {
			d.vc = mode
			if !d.decode(bytes.Clone(line), &got) || got.VC != nil {
				t.Fatalf("vc mode %d: the fast decoder does not take %q as it does keeping vc", mode, line)
			}
			got.VC = kept.VC
			if !reflect.DeepEqual(got, kept) {
				t.Fatalf("vc mode %d: %q read as\n%+v\nnot\n%+v", mode, line, got, kept)
			}
		}
	})
}
