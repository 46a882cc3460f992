package report

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestLongRunDrawnInWindows: a run over the drawing limit (lowered here to the fixture's size) is
// streamed, not read whole: the diagram holds its windows' events, every node's state changes and
// the time axis of the whole run; the overview strip and the rates count every message; the page
// says so; an export takes a window of it, not all of it.
func TestLongRunDrawnInWindows(t *testing.T) {
	dir, run := writeFixture(t)
	whole, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	wd := BuildData(whole.Run, whole.Verdict, "fixture")
	sends := 0
	for _, k := range wd.Kinds {
		sends += k.Count
	}

	events := 0
	for _, nl := range run.Nodes {
		events += len(nl.Events)
	}
	defer func(n, b int) { drawWhole, drawBudget = n, b }(drawWhole, drawBudget)
	drawWhole, drawBudget = events-1, 100 // the first election alone
	in, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if in.long == nil {
		t.Fatalf("a run of %d events over a limit of %d was read whole", events, drawWhole)
	}
	drawn := 0
	for _, nl := range in.Run.Nodes {
		drawn += len(nl.Events)
	}
	t.Logf("%d events drawn of %d, in %d windows", drawn, events, len(in.long.windows))
	if drawn == 0 || drawn > events*3/4 {
		t.Errorf("%d events drawn of %d, in %d windows", drawn, events, len(in.long.windows))
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "a long run (") {
		t.Errorf("the page does not say the run was drawn in windows")
	}
	d := BuildData(in.Run, in.Verdict, "fixture")
	if d.From != wd.From || d.To != wd.To || d.End != wd.End {
		t.Errorf("time axis [%d, %d] end %d, drawn whole [%d, %d] end %d", d.From, d.To, d.End, wd.From, wd.To, wd.End)
	}
	counts, err := in.long.rates(d)
	if err != nil {
		t.Fatal(err)
	}
	density := 0
	for _, n := range d.Density {
		density += n
	}
	if counts.sends != sends || density != sends {
		t.Errorf("the rates count %d sends and the strip %d, the run has %d", counts.sends, density, sends)
	}
	if len(d.Incs) != len(wd.Incs) || len(d.Beliefs) != len(wd.Beliefs) {
		t.Errorf("%d incarnations and %d beliefs drawn, %d and %d drawn whole", len(d.Incs), len(d.Beliefs), len(wd.Incs), len(wd.Beliefs))
	}
	if _, err := in.Export(ExportWindow{}); err == nil {
		t.Errorf("a long run exported whole")
	}
	part, err := in.Export(ExportWindow{From: time.Second, To: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Windowed(whole.Run, ExportWindow{From: time.Second, To: 2 * time.Second})
	for id, nl := range want.Nodes {
		if got := part.Nodes[id]; got == nil || len(got.Events) != len(nl.Events) {
			t.Errorf("node %d: the window exported from the stream differs from the one of the run read whole", id)
		}
	}
}
