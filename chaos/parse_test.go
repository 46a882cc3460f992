package chaos

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestParse checks good schedules by their canonical rendering, which shows every parsed field.
func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"default", "at 1s kill leader", 5, "at 1s kill leader"},
		{"empty", "", 5, ""},
		{"only comments and blanks", "# nothing\n\n   \n# at 1s kill 3\n", 5, ""},
		{"semicolons", "at 1s kill leader; at 2s restart 5", 5, "at 1s kill leader\nat 2s restart 5"},
		{"stray semicolons", ";; at 1s kill 1 ;;at 2s restart 1;", 3, "at 1s kill 1\nat 2s restart 1"},
		{"newlines and CRLF", "at 1s kill 2\r\nat 2s restart 2\r\n", 3, "at 1s kill 2\nat 2s restart 2"},
		{"comment after a step", "at 1s kill 3 # the middle one; at 9s kill 1", 5, "at 1s kill 3"},
		{"comment cuts the rest of the line only", "at 1s kill 3 # x; y\nat 2s restart 3", 5, "at 1s kill 3\nat 2s restart 3"},
		{"sorted by time, stable", "at 3s kill 1; at 1s kill 2; at 3s kill 3; at 1s kill 4", 5,
			"at 1s kill 2\nat 1s kill 4\nat 3s kill 1\nat 3s kill 3"},
		{"extra spaces and tabs", "  at\t1s   kill\t 3  ", 5, "at 1s kill 3"},
		{"fractional and zero times", "at 1.5s kill 1; at 250ms kill 2; at 0s kill 3; at 0 kill 4; at 1m kill 5", 5,
			"at 0s kill 3\nat 0s kill 4\nat 250ms kill 2\nat 1.5s kill 1\nat 1m0s kill 5"},
		{"targets", "at 1s kill highest; at 1s kill lowest; at 1s kill random; at 1s kill 5", 5,
			"at 1s kill highest\nat 1s kill lowest\nat 1s kill random\nat 1s kill 5"},
		{"pause for", "at 1s pause 3 for 500ms", 5, "at 1s pause 3 for 500ms"},
		{"pause and resume", "at 1s pause leader\nat 2s resume leader", 5, "at 1s pause leader\nat 2s resume leader"},
		{"heal", "at 2s heal", 5, "at 2s heal"},
		{"partition groups", "at 1s partition 1-3|4-5", 5, "at 1s partition 1-3|4-5"},
		{"partition groups with spaces", "at 1s partition 1-3 | 4 , 5", 5, "at 1s partition 1-3|4-5"},
		{"partition lists and ranges", "at 1s partition 5,1|2-3,6|4", 6, "at 1s partition 1,5|2-3,6|4"},
		{"partition rest is a group", "at 1s partition 1-2", 5, "at 1s partition 1-2|3-5"},
		{"partition rest among groups", "at 1s partition 1|5", 5, "at 1s partition 1|5|2-4"},
		{"partition single range", "at 1s partition 2-2|1", 2, "at 1s partition 2|1"},
		{"shapes", "at 1s partition halves; at 2s partition random-halves; at 3s partition bridge; at 4s partition majorities-ring", 5,
			"at 1s partition halves\nat 2s partition random-halves\nat 3s partition bridge\nat 4s partition majorities-ring"},
		{"isolate", "at 1s partition isolate leader; at 2s partition isolate 4", 5,
			"at 1s partition isolate leader\nat 2s partition isolate 4"},
		{"link drop", "at 1s link 1->2 drop", 5, "at 1s link 1->2 drop"},
		{"link spaced arrow", "at 1s link 1 -> 2 reorder", 5, "at 1s link 1->2 reorder"},
		{"link symbolic", "at 1s link leader->lowest drop", 5, "at 1s link leader->lowest drop"},
		{"link delay", "at 1s link 2->1 delay 100ms", 5, "at 1s link 2->1 delay 100ms"},
		{"link delay jitter", "at 1s link 2->1 delay 100ms±20ms", 5, "at 1s link 2->1 delay 100ms±20ms"},
		{"link delay jitter ascii", "at 1s link 2->1 delay 100ms +- 20ms", 5, "at 1s link 2->1 delay 100ms±20ms"},
		{"link delay jitter equal", "at 1s link 2->1 delay 1s±1s", 5, "at 1s link 2->1 delay 1s±1s"},
		{"link loss", "at 1s link 3->4 loss 20%", 5, "at 1s link 3->4 loss 20%"},
		{"link loss fraction", "at 1s link 3->4 loss 0.5 %", 5, "at 1s link 3->4 loss 0.5%"},
		{"link dup bounds", "at 1s link 3->4 dup 0%; at 2s link 4->3 dup 100%", 5, "at 1s link 3->4 dup 0%\nat 2s link 4->3 dup 100%"},
		{"one node", "at 1s kill 1; at 2s restart leader", 1, "at 1s kill 1\nat 2s restart leader"},
	} {
		s, err := Parse(tc.in, tc.n)
		if err != nil {
			t.Errorf("%s: Parse(%q): %v", tc.name, tc.in, err)
			continue
		}
		if got := s.String(); got != tc.want {
			t.Errorf("%s: Parse(%q) renders\n%s\nwant\n%s", tc.name, tc.in, got, tc.want)
		}
		again, err := Parse(s.String(), tc.n)
		if err != nil || again.String() != s.String() {
			t.Errorf("%s: the canonical text %q does not parse back: %v", tc.name, s.String(), err)
		}
	}
}

func TestParseFields(t *testing.T) {
	s, err := Parse("# faults\nat 2s pause 3 for 500ms # short\n\nat 1s kill leader; at 3s link 1->2 delay 10ms±2ms\nat 4s partition 1-2", 5)
	if err != nil {
		t.Fatal(err)
	}
	want := []Step{
		{At: time.Second, Op: OpKill, Target: Target{Kind: TargetLeader}, Text: "at 1s kill leader", Line: 4, Pos: 2},
		{At: 2 * time.Second, Op: OpPause, Target: Target{Kind: TargetID, ID: 3}, For: 500 * time.Millisecond,
			Text: "at 2s pause 3 for 500ms", Line: 2, Pos: 1},
		{At: 3 * time.Second, Op: OpLink, Link: &LinkRule{From: Target{TargetID, 1}, To: Target{TargetID, 2},
			Kind: LinkDelay, Delay: 10 * time.Millisecond, Jitter: 2 * time.Millisecond},
			Text: "at 3s link 1->2 delay 10ms±2ms", Line: 4, Pos: 3},
		{At: 4 * time.Second, Op: OpPartition, Groups: [][]int{{1, 2}, {3, 4, 5}}, Text: "at 4s partition 1-2", Line: 5, Pos: 4},
	}
	if !reflect.DeepEqual(s.Steps, want) {
		t.Fatalf("Parse gave\n%+v\nwant\n%+v", s.Steps, want)
	}
	if got := s.LastFault(); got != 4*time.Second {
		t.Errorf("LastFault = %s, want 4s", got)
	}
	iso, _ := Parse("at 1s partition isolate highest", 5)
	if st := iso.Steps[0]; st.Shape != ShapeIsolate || st.Target != (Target{Kind: TargetHighest}) || st.Groups != nil {
		t.Errorf("partition isolate highest parsed as %+v", st)
	}
	loss, _ := Parse("at 1s link 1->2 loss 12.5%", 5)
	if r := loss.Steps[0].Link; r.Kind != LinkLoss || r.Percent != 12.5 {
		t.Errorf("loss 12.5%% parsed as %+v", r)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		in  string
		n   int
		err string
	}{
		{"at 1s kill 3", 0, "a schedule needs a cluster of at least 1 node, got 0"},
		{"at 1s kill 1; at 1s explode 3", 5, `step 2 "at 1s explode 3": unknown action "explode" (accepted: kill, stop, restart, pause, resume, partition, heal, link, clock)`},
		{"at 1s kill 1\n\n# x\nat 1s explode 3", 5, `step 2 (line 4) "at 1s explode 3": unknown action`},
		{"kill 3", 5, `step 1 "kill 3": a step is "at <time> <action>", this one starts with "kill"`},
		{"at", 5, `missing the time after "at" (a Go duration such as 1s, 250ms, 1.5s)`},
		{"at 1s", 5, `missing the action after "at 1s" (accepted: kill, stop, restart`},
		{"at 1 kill 3", 5, `bad time "1" (a Go duration such as 1s, 250ms, 1.5s)`},
		{"at soon kill 3", 5, `bad time "soon"`},
		{"at -1s kill 3", 5, "time -1s is before the cluster's begin (want 0s or later)"},
		{"at 1s kill", 5, "kill needs a target (accepted: an ID 1..5, leader, highest, lowest, random)"},
		{"at 1s restart", 5, "restart needs a target"},
		{"at 1s kill 6", 5, "node 6 is out of range (the IDs are 1..5)"},
		{"at 1s kill 0", 5, "node 0 is out of range"},
		{"at 1s kill -2", 5, "node -2 is out of range"},
		{"at 1s kill 99999999999999999999999", 5, "node 99999999999999999999999 is out of range"},
		{"at 1s kill boss", 5, `unknown target "boss" (accepted: an ID 1..5, leader, highest, lowest, random)`},
		{"at 1s kill Leader", 5, `unknown target "Leader"`},
		{"at 1s kill 1 2", 5, `unexpected "2" after the target (kill takes one target)`},
		{"at 1s resume 1 for 1s", 5, `unexpected "for 1s" after the target (resume takes one target)`},
		{"at 1s pause", 5, "pause needs a target"},
		{"at 1s pause 3 500ms", 5, `unexpected "500ms" after the target (accepted: pause <target> [for <duration>])`},
		{"at 1s pause 3 for", 5, `missing the duration after "for"`},
		{"at 1s pause 3 for ever", 5, `bad pause duration "ever"`},
		{"at 1s pause 3 for 0s", 5, "the pause duration must be positive, got 0s"},
		{"at 1s pause 3 for -1s", 5, "the pause duration must be positive, got -1s"},
		{"at 1s pause 3 for 1s now", 5, `unexpected "now" after the duration`},
		{"at 1s heal now", 5, `unexpected "now" after heal`},
		{"at 1s partition", 5, "partition needs groups or a shape (accepted: groups of IDs such as 1-3|4-5"},
		{"at 1s partition thirds", 5, `unknown partition "thirds" (accepted: groups of IDs such as 1-3|4-5 or 1,3|2,4-5, or a shape: halves, random-halves, isolate <target>, bridge, majorities-ring, minority-third, primaries)`},
		{"at 1s partition halves now", 5, `unexpected "now" after partition halves`},
		{"at 1s partition isolate", 5, "partition isolate needs a target"},
		{"at 1s partition isolate 9", 5, "node 9 is out of range"},
		{"at 1s partition isolate 1 2", 5, `unexpected "2" after partition isolate 1`},
		{"at 1s partition halves", 1, "partition halves needs at least 2 nodes, the cluster has 1"},
		{"at 1s partition bridge", 2, "partition bridge needs at least 3 nodes, the cluster has 2"},
		{"at 1s partition majorities-ring", 2, "partition majorities-ring needs at least 3 nodes"},
		{"at 1s partition 1-3|3-5", 5, `node 3 is in groups 1 and 2 of "1-3|3-5" (groups must be disjoint)`},
		{"at 1s partition 1,1|2", 5, `node 1 appears twice in group 1 of "1,1|2"`},
		{"at 1s partition 1-2||3", 5, `group 2 of "1-2||3" is empty`},
		{"at 1s partition 1-2|", 5, `group 2 of "1-2|" is empty`},
		{"at 1s partition 1-6|7", 5, `group 1 of "1-6|7": node 6 is out of range (the IDs are 1..5)`},
		{"at 1s partition 0|1", 5, "node 0 is out of range"},
		{"at 1s partition 3-1|4", 5, `range "3-1" runs backwards (write 1-3)`},
		{"at 1s partition 1-x|4", 5, `"1-x" is not an ID or a range of IDs such as 2-4`},
		{"at 1s partition 1--2|4", 5, `"1--2" is not an ID`},
		{"at 1s partition 1,|4", 5, "an empty item"},
		{"at 1s partition 1 2|3", 5, `"1 2" is not an ID`},
		{"at 1s partition 1-5", 5, `partition "1-5" leaves every node on one side (want at least two sides, e.g. 1-4|5)`},
		{"at 1s partition 1", 1, "partition needs at least 2 nodes, the cluster has 1"},
		{"at 1s partition 1-2", 2, `leaves every node on one side (want at least two sides, e.g. 1|2)`},
		{"at 1s link", 5, "link needs two nodes and a rule (accepted: link <a>-><b> drop | delay <d>[±<j>] | delay <d> [jitter <j>]"},
		{"at 1s link 1-2 drop", 5, "link needs two nodes and a rule"},
		{"at 1s link ->2 drop", 5, "link needs two nodes and a rule"},
		{"at 1s link 1->", 5, "link needs two nodes and a rule"},
		{"at 1s link 1->2", 5, "link 1->2 needs a rule (accepted: drop, delay, loss, dup, reorder, burst, rate, corrupt, slowclose, reset)"},
		{"at 1s link 1->1 drop", 5, "link 1->1 joins a node to itself"},
		{"at 1s link 7->1 drop", 5, "link source: node 7 is out of range"},
		{"at 1s link 1->x drop", 5, `link destination: unknown target "x"`},
		{"at 1s link 1->2 burn", 5, `unknown link rule "burn" (accepted: drop, delay, loss, dup, reorder, burst, rate, corrupt, slowclose, reset)`},
		{"at 1s link 1->2 drop 5%", 5, `unexpected "5%" after drop (drop takes nothing)`},
		{"at 1s link 1->2 reorder now", 5, `unexpected "now" after reorder`},
		{"at 1s link 1->2 delay", 5, "delay needs a duration, optionally with a jitter (e.g. delay 100ms, delay 100ms±20ms or delay 100ms jitter 20ms normal corr 25%)"},
		{"at 1s link 1->2 delay 0s", 5, "the delay duration must be positive, got 0s"},
		{"at 1s link 1->2 delay 10", 5, `bad delay duration "10"`},
		{"at 1s link 1->2 delay 10ms±", 5, `bad jitter duration ""`},
		{"at 1s link 1->2 delay 10ms±0s", 5, "the jitter duration must be positive"},
		{"at 1s link 1->2 delay 10ms±20ms", 5, "jitter 20ms exceeds the delay 10ms"},
		{"at 1s link 1->2 loss", 5, `loss needs a percentage such as loss 20% or loss 0.5%, got ""`},
		{"at 1s link 1->2 loss 20", 5, `loss needs a percentage such as loss 20% or loss 0.5%, got "20"`},
		{"at 1s link 1->2 loss much%", 5, `got "much%"`},
		{"at 1s link 1->2 loss NaN%", 5, `got "NaN%"`},
		{"at 1s link 1->2 loss 0x10p0%", 5, `got "0x10p0%"`},
		{"at 1s link 1->2 loss 101%", 5, "loss 101% is out of range (want 0%..100%)"},
		{"at 1s link 1->2 dup -1%", 5, "dup -1% is out of range"},
		{"at 1s link 1->2 dup Inf%", 5, "dup Inf% is out of range"},
	} {
		_, err := Parse(tc.in, tc.n)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Parse(%q, %d) error = %v\nwant it to contain %q", tc.in, tc.n, err, tc.err)
		}
	}
}

func TestUnsupported(t *testing.T) {
	now := map[string]bool{OpKill: true, OpRestart: true, OpPause: true, OpResume: true}
	s, err := Parse("at 1s kill leader\nat 3s heal\nat 2s partition halves", 5)
	if err != nil {
		t.Fatal(err)
	}
	err = s.Unsupported(now)
	want := `step 3 "at 2s partition halves": "partition" is not supported yet (supported now: kill, restart, pause, resume)`
	if err == nil || err.Error() != want {
		t.Fatalf("Unsupported = %v\nwant %s", err, want)
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("Unsupported's error does not wrap ErrUnsupported")
	}
	ok, _ := Parse("at 1s kill leader; at 2s pause 1 for 1s; at 3s resume 1; at 4s restart leader", 5)
	if err := ok.Unsupported(now); err != nil {
		t.Errorf("a kill/pause/resume/restart schedule was refused: %v", err)
	}
	if err := s.Unsupported(map[string]bool{"heal": true, "zap": true}); err == nil ||
		!strings.Contains(err.Error(), `"kill" is not supported yet (supported now: heal, zap)`) {
		t.Errorf("Unsupported with odd keys = %v", err)
	}
	if err := s.Unsupported(nil); err == nil || !strings.Contains(err.Error(), "(supported now: none)") {
		t.Errorf("Unsupported(nil) = %v", err)
	}
}

func TestLastFault(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"at 1s kill 1", time.Second},
		{"at 1s kill 1; at 2s restart 1", 2 * time.Second},
		{"at 1s pause 2 for 3s; at 2s kill 1", 4 * time.Second},
		{"at 1s pause 2; at 2s kill 1", 2 * time.Second},
		{"at 3s heal; at 1s link 1->2 delay 5s", 3 * time.Second},
	} {
		s, err := Parse(tc.in, 5)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.LastFault(); got != tc.want {
			t.Errorf("LastFault(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestLoadSpec(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "faults.txt")
	text := "# a file\nat 1s kill leader\nat 2s restart 5\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := LoadSpec("@" + file); err != nil || got != text {
		t.Errorf("LoadSpec(@file) = %q, %v; want the file's text", got, err)
	}
	if got, err := LoadSpec("at 1s kill 3"); err != nil || got != "at 1s kill 3" {
		t.Errorf("LoadSpec(text) = %q, %v", got, err)
	}
	if got, err := LoadSpec(""); err != nil || got != "" {
		t.Errorf("LoadSpec(\"\") = %q, %v", got, err)
	}
	missing := filepath.Join(dir, "nope.txt")
	_, err := LoadSpec("@" + missing)
	if err == nil || !strings.Contains(err.Error(), `reading the chaos schedule file "`+missing+`"`) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadSpec(@missing) error = %v, want it to name the file and wrap ErrNotExist", err)
	}
	if _, err := LoadSpec("@"); err == nil || !strings.Contains(err.Error(), "a file name must follow @") {
		t.Errorf("LoadSpec(@) error = %v", err)
	}
	if _, err := LoadSpec("@" + dir); err == nil || !strings.Contains(err.Error(), dir) {
		t.Errorf("LoadSpec(@dir) error = %v, want it to name the directory", err)
	}
}
