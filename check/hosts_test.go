package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Multi-host runs: clocks of other hosts are corrected by the offsets of cluster.json, and where
// the correction is not enough, the logical order (a send before its recv) wins.

func TestCheckRecvBeforeSendIsOrderedCausally(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	// node 1's clock ran 3ms behind: every event of its log is 3ms early, so recvs of messages sent
	// at the same moment precede their sends
	for i := range s.run.Nodes[1].Events {
		s.run.Nodes[1].Events[i].TS -= 3_000_000
	}
	v := Check(s.run, Options{})
	if !v.OK {
		t.Fatalf("verdict:\n%s", summary(v))
	}
	found := false
	for _, w := range v.Warnings {
		if strings.Contains(w, "recv events came before their send") && strings.Contains(w, "as the logical clocks say") {
			found = true
		}
	}
	if !found {
		t.Errorf("no warning about recvs before their sends: %q", v.Warnings)
	}
}

func TestReadRunTakesHostOffsetsOff(t *testing.T) {
	dir := t.TempDir()
	c := &rundir.Cluster{ClusterID: "c", Algo: "bully", Topology: "mesh", Secret: strings.Repeat("ab", 16),
		Nodes: []rundir.Node{{ID: 1, Addr: "10.0.0.1:1", Host: "10.0.0.1:7070"}, {ID: 2, Addr: "10.0.0.2:1", Host: "10.0.0.2:7070"}},
		Hosts: []rundir.Host{{Agent: "10.0.0.1:7070", IDs: []int{1}}, {Agent: "10.0.0.2:7070", IDs: []int{2}, OffsetNS: 5_000_000}}}
	if err := rundir.Save(dir, c); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "nodes"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{rundir.LauncherFile, rundir.ChaosFile} {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for id, ts := range map[int]int64{1: 1_000_000_000, 2: 1_005_000_000} {
		w, err := logs.OpenWriter(rundir.NodeLog(dir, id))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(&logs.Event{TS: ts, Node: id, Inc: 1, LC: 1, Ev: logs.EvStart}); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	// node 2's host runs 5ms ahead: its start, at 1.005s on its clock, was at 1.000s on ours
	if a, b := run.Nodes[1].Events[0].TS, run.Nodes[2].Events[0].TS; a != b {
		t.Errorf("start times %d and %d after the correction, want equal", a, b)
	}
}
