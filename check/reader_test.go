package check

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// ReadRun and the checker together: what a run directory holds, read back, is judged as the run in
// memory was; the checker takes whatever the reader accepts.

func TestReadRunRoundTrip(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(3, 300)
	s.bully(500, []int{1, 2}, 3)
	s.stop(1000)
	dir := writeRun(t, s.run, nil)
	run, err := logs.ReadRun(dir)
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

func TestReadRunMissingLogs(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	// A node the launcher never spawned may have no log.
	s.run.Cluster.Nodes = append(s.run.Cluster.Nodes, rundir.Node{ID: 4, Addr: "127.0.0.1:7004"})
	dir := writeRun(t, s.run, nil)
	run, err := logs.ReadRun(dir)
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
	if _, err := logs.ReadRun(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "node 2 was spawned") {
		t.Errorf("a spawned node without a log: %v", err)
	}
	for _, f := range []string{rundir.ChaosFile, rundir.LauncherFile} {
		dir := writeRun(t, s.run, nil)
		os.Remove(filepath.Join(dir, f))
		if _, err := logs.ReadRun(dir); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), f) {
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
	_, err := logs.ReadRun(dir)
	var le *logs.LineError
	if !errors.As(err, &le) || le.File != "chaos.jsonl" || le.Line != 2 {
		t.Errorf("a torn chaos.jsonl: %v, want chaos.jsonl:2", err)
	}
	dir = writeRun(t, s.run, nil)
	// Node 2's log holds an event of node 3.
	b, _ := logs.AppendEvent(nil, &logs.Event{TS: ms(5), Node: 3, Inc: 1, LC: 1, Ev: logs.EvStart})
	os.WriteFile(rundir.NodeLog(dir, 2), b, 0o644)
	if _, err := logs.ReadRun(dir); err == nil || err.Error() != "nodes/2.jsonl:1: an event of node 3 in the log of node 2" {
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
			run, err := logs.ReadRun(writeRun(t, tc.s.run, map[int]map[int]string{3: {tc.after: tornLine}}))
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

// FuzzCheckEventLine: the checker takes whatever the node log's reader accepted without panicking
// (logs' FuzzEventLine fuzzes the reader itself).
func FuzzCheckEventLine(f *testing.F) {
	for _, s := range []string{
		line(1, 1, 1, "start") + "\n" + line(1, 1, 2, "elect") + "\n",
		line(1, 1, 1, "start") + "\n" + `{"ts":5,"node":1,"inc":1,"lc":2,"ev":"se` + "\n",
		line(1, 1, 1, "start") + "\n" + `{"ts":5,"node":1,"in` + "\n" + line(1, 2, 1, "start") + "\n",
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"send","to":2,"msg":{"id":"1.1.1","kind":"election","cand":1,"ids":[1,2]}}`,
		`{"ts":1,"node":1,"inc":1,"lc":1,"ev":"stats","stats":{"hb_sent":3}}` + "\n\n",
		`{"ts":1e3,"node":1}`, "\xff\xfe", "[]\n{}", `{"inc":99999999999999999999}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		nl, err := logs.ReadNodeLog(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			return
		}
		run := newStory(algoTest, 3).run
		run.Nodes = map[int]*logs.NodeLog{nl.Node: nl}
		run.Chaos = []logs.ChaosRecord{{TS: ms(2), Op: "kill", Targets: []int{nl.Node}}, {TS: ms(3), Op: "pause", Targets: []int{2}}}
		Check(run, Options{}).Print(io.Discard)
	})
}

// line is one event line of node `node`, incarnation inc.
func line(node, inc int, lc int, ev string) string {
	return fmt.Sprintf(`{"ts":%d,"node":%d,"inc":%d,"lc":%d,"ev":%q}`, ms(float64(lc)), node, inc, lc, ev)
}
