package report

import (
	"strings"
	"testing"
	"time"
)

// A window keeps the chosen nodes' events within the stretch, and nothing else; the exports of it
// count the recvs whose send fell outside as unmatched.
func TestWindowedExport(t *testing.T) {
	run := fixtureRun(t)
	w := ExportWindow{Nodes: []int{1, 2}, From: 900 * time.Millisecond, To: 2 * time.Second}
	got, err := Windowed(run, w)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Nodes) != 2 || got.Nodes[1] == nil || got.Nodes[2] == nil {
		t.Fatalf("nodes %v, want 1 and 2", len(got.Nodes))
	}
	origin := runOrigin(run)
	kept := 0
	for id, nl := range got.Nodes {
		for _, e := range nl.Events {
			if e.TS < origin+int64(w.From) || e.TS > origin+int64(w.To) {
				t.Fatalf("node %d: an event at %v is outside the window", id, time.Duration(e.TS-origin))
			}
			kept++
		}
		all := 0
		for _, e := range run.Nodes[id].Events {
			if e.TS >= origin+int64(w.From) && e.TS <= origin+int64(w.To) {
				all++
			}
		}
		if all != len(nl.Events) {
			t.Errorf("node %d: %d events kept of the %d in the window", id, len(nl.Events), all)
		}
	}
	if kept == 0 {
		t.Fatal("the window kept nothing: the test would not see a mistake")
	}
	if len(run.Nodes) != 5 {
		t.Fatal("Windowed changed the run it was given")
	}
	var b strings.Builder
	st, err := WriteShiViz(&b, got)
	// (ShiViz takes the events that happen, not the counters: stats lines are left out.)
	if err != nil || st.Hosts != 2 || st.Events == 0 || st.Events > kept || st.Unmatched == 0 {
		t.Errorf("ShiViz of the window: %+v, %v (want 2 hosts, at most %d events, some recvs without their send)", st, err, kept)
	}
	for _, bad := range []ExportWindow{{Nodes: []int{9}}, {From: time.Second, To: time.Second}} {
		if _, err := Windowed(run, bad); err == nil {
			t.Errorf("Windowed accepted %+v", bad)
		}
	}
	if same, _ := Windowed(run, ExportWindow{}); same != run {
		t.Error("the whole window copied the run")
	}
}
