package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// checkShiViz checks an export against ShiViz's rules, as ShiViz reads it: the first line is the
// parser regex and the second the execution delimiter; on each host the own clock entry counts its
// events 1, 2, 3, ...; a recv's clock dominates its send's (every entry at least as large, its own
// larger). A recv of one of orphans (IDs whose send is in no log) must carry no merge. It returns
// the number of events, of recvs matched to a send, and the events per host.
func checkShiViz(t *testing.T, text string, orphans ...string) (events, recvs int, hosts map[string]int) {
	t.Helper()
	parts := strings.SplitN(text, "\n", 3)
	if len(parts) < 3 || parts[0] != ShiVizRegex || parts[1] != "" {
		t.Fatalf("first lines %q: want the regex, then an empty delimiter", parts[:min(2, len(parts))])
	}
	for _, g := range []string{"(?<host>", "(?<clock>", "(?<event>"} {
		if !strings.Contains(parts[0], g) {
			t.Fatalf("the regex lacks %s", g)
		}
	}
	re := regexp.MustCompile(parts[0]) // Go reads (?<name>...) as ShiViz's JavaScript does
	hi, ci, ei := re.SubexpIndex("host"), re.SubexpIndex("clock"), re.SubexpIndex("event")
	hosts = map[string]int{}
	sends := map[string]map[string]int{}
	last := map[string]map[string]int{} // each host's previous clock
	msgID := regexp.MustCompile(`^(send|recv) \S+ (\S+) `)
	body := parts[2]
	ms := re.FindAllStringSubmatch(body, -1)
	if got, want := len(ms), strings.Count(body, "\n")/2; got != want {
		t.Fatalf("the regex matches %d events in %d line pairs", got, want)
	}
	for _, m := range ms {
		host := m[hi]
		var vc map[string]int
		if err := json.Unmarshal([]byte(m[ci]), &vc); err != nil {
			t.Fatalf("clock %q is not JSON: %v", m[ci], err)
		}
		hosts[host]++
		if vc[host] != hosts[host] {
			t.Fatalf("%s's event %d (%s) has own clock %d", host, hosts[host], m[ei], vc[host])
		}
		for h, c := range vc {
			if c < 1 {
				t.Fatalf("%s: entry %s=%d", m[ei], h, c)
			}
		}
		id := msgID.FindStringSubmatch(m[ei])
		switch {
		case id == nil:
		case id[1] == "send":
			sends[id[2]] = vc
		case id[1] == "recv" && slices.Contains(orphans, id[2]):
			for h, c := range vc {
				if h != host && c != last[host][h] {
					t.Fatalf("orphan recv %s merged a clock: %v after %v", id[2], vc, last[host])
				}
			}
		case id[1] == "recv":
			s, ok := sends[id[2]]
			if !ok {
				t.Fatalf("recv of %s comes before its send, or has none", id[2])
			}
			for h, c := range s {
				if vc[h] < c {
					t.Fatalf("recv %s does not dominate its send: %s=%d < %d", id[2], h, vc[h], c)
				}
			}
			if vc[host] <= s[host] {
				t.Fatalf("recv %s: own entry %d not above the send's %d", id[2], vc[host], s[host])
			}
			recvs++
		}
		last[host] = vc
		events++
	}
	return events, recvs, hosts
}

func TestShiVizFollowsClockRules(t *testing.T) {
	run := fixtureRun(t)
	var buf bytes.Buffer
	st, err := WriteShiViz(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	events, recvs, hosts := checkShiViz(t, buf.String())
	evs := countEvents(run)
	want := 0
	for ev, n := range evs {
		if ev != logs.EvStats {
			want += n
		}
	}
	if events != want || st.Events != want {
		t.Errorf("%d events (stats say %d), want every event but stats: %d", events, st.Events, want)
	}
	if recvs != evs[logs.EvRecv] || st.Messages != recvs || st.Unmatched != 0 {
		t.Errorf("%d recvs matched (stats: %+v), want %d", recvs, st, evs[logs.EvRecv])
	}
	if hosts["n5.1"] == 0 || hosts["n5.2"] == 0 || len(hosts) != 6 {
		t.Errorf("hosts %v: want n1.1 .. n5.1 and the restarted n5.2", hosts)
	}
}

// A node whose clock runs 3 ms behind logs some recvs before their sends' times; the clocks still
// follow causality, and a recv whose send is in no log is a local event.
func TestShiVizSkewAndOrphans(t *testing.T) {
	run := fixtureRun(t)
	for i := range run.Nodes[2].Events {
		run.Nodes[2].Events[i].TS -= int64(3 * time.Millisecond)
	}
	nl := run.Nodes[1]
	nl.Events = append(nl.Events, logs.Event{TS: nl.Events[len(nl.Events)-1].TS, Node: 1, Inc: 1, Ev: logs.EvRecv, From: 3, Msg: &election.Message{ID: "3.1.999", Kind: "ok"}})
	var buf bytes.Buffer
	st, err := WriteShiViz(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	if st.Unmatched != 1 {
		t.Errorf("%d unmatched recvs, want 1", st.Unmatched)
	}
	_, recvs, _ := checkShiViz(t, buf.String(), "3.1.999")
	if recvs != countEvents(run)[logs.EvRecv]-1 {
		t.Errorf("%d recvs matched", recvs)
	}
}

type traceEvent struct {
	Ph   string          `json:"ph"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	TS   float64         `json:"ts"`
	Dur  float64         `json:"dur"`
	ID   json.RawMessage `json:"id"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
	BP   string          `json:"bp"`
}

func TestPerfettoFlows(t *testing.T) {
	run := fixtureRun(t)
	var buf bytes.Buffer
	st, err := WritePerfetto(&buf, run)
	if err != nil {
		t.Fatal(err)
	}
	var trace struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &trace); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	type key struct{ pid, tid int }
	tracks := map[key][]traceEvent{}
	starts, ends := map[string]traceEvent{}, map[string]traceEvent{}
	x := 0
	for _, e := range trace.TraceEvents {
		switch e.Ph {
		case "X":
			tracks[key{e.Pid, e.Tid}] = append(tracks[key{e.Pid, e.Tid}], e)
			if e.Tid < beliefTID {
				x++
			}
		case "s", "f":
			id := string(e.ID)
			m := starts
			if e.Ph == "f" {
				m = ends
				if e.BP != "e" {
					t.Errorf("flow end %s without bp:e", id)
				}
			}
			if _, dup := m[id]; dup {
				t.Fatalf("flow id %s has two %q events", id, e.Ph)
			}
			m[id] = e
		}
	}
	evs := countEvents(run)
	if x != evs[logs.EvSend]+evs[logs.EvRecv]+evs[logs.EvDrop]+evs[logs.EvElect]+evs[logs.EvLeader]+evs[logs.EvSuspect]+evs[logs.EvTrust]+evs[logs.EvStart]+evs[logs.EvStop] {
		t.Errorf("%d event slices, want one per event but stats", x)
	}
	if len(starts) != evs[logs.EvRecv] || len(ends) != len(starts) || st.Messages != len(starts) {
		t.Fatalf("%d flow starts and %d ends (stats %+v), want one pair per recv (%d)", len(starts), len(ends), st, evs[logs.EvRecv])
	}
	// Each flow event sits inside a slice of its track (Perfetto binds it to that slice), and the
	// slices of a track do not overlap.
	inside := func(e traceEvent) bool {
		for _, s := range tracks[key{e.Pid, e.Tid}] {
			if s.TS <= e.TS && e.TS <= s.TS+s.Dur && strings.HasSuffix(s.Name, " "+e.Name) {
				return true
			}
		}
		return false
	}
	for id, s := range starts {
		f, ok := ends[id]
		if !ok {
			t.Fatalf("flow %s starts and never ends", id)
		}
		if s.Name != f.Name || s.Cat != f.Cat {
			t.Errorf("flow %s: start %s/%s, end %s/%s", id, s.Cat, s.Name, f.Cat, f.Name)
		}
		if s.Pid == f.Pid && s.Tid == f.Tid && f.TS < s.TS {
			t.Errorf("flow %s ends before it starts", id)
		}
		if !inside(s) || !inside(f) {
			t.Errorf("flow %s is not inside a send and a recv slice", id)
		}
	}
	for k, ss := range tracks {
		for i := 1; i < len(ss); i++ {
			if ss[i].TS < ss[i-1].TS+ss[i-1].Dur-1e-9 {
				t.Errorf("track %v: slice %q at %v overlaps %q ending at %v", k, ss[i].Name, ss[i].TS, ss[i-1].Name, ss[i-1].TS+ss[i-1].Dur)
				break
			}
		}
	}
}
