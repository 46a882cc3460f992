package sim

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

func mustNew(t *testing.T, cfg Config) *Sim {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// crashRestart runs cfg with its highest node crashed at `crash` (every survivor told at once, as
// a detector would tell it) and restarted at `restart`, to the end.
func crashRestart(t *testing.T, cfg Config, crash, restart time.Duration) *logs.Run {
	t.Helper()
	s := mustNew(t, cfg)
	s.RunUntil(crash)
	if err := s.Crash(cfg.N); err != nil {
		t.Fatal(err)
	}
	for id := 1; id < cfg.N; id++ {
		if err := s.Inject(id, election.Input{Kind: election.InSuspect, From: cfg.N}); err != nil {
			t.Fatal(err)
		}
	}
	s.RunUntil(restart)
	if err := s.Restart(cfg.N); err != nil {
		t.Fatal(err)
	}
	return s.Run()
}

func TestSameSeedSameRun(t *testing.T) {
	cfg := DefaultConfig("bully", 6)
	cfg.Seed, cfg.Initiators, cfg.MaxDelay = 42, []int{2, 5}, 20*time.Millisecond
	a, b := crashRestart(t, cfg, time.Second, 2*time.Second), crashRestart(t, cfg, time.Second, 2*time.Second)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of one configuration differ")
	}
	cfg.Seed++
	if c := crashRestart(t, cfg, time.Second, 2*time.Second); reflect.DeepEqual(a.Nodes, c.Nodes) {
		t.Fatal("another seed made the same run")
	}
}

func TestDroppedToDeadNode(t *testing.T) {
	s := storySim(t, 3)
	s.Crash(3)
	s.Inject(1, election.Input{Kind: election.InSuspect, From: 3})
	evs := s.Log().Nodes[1].Events
	var tail []string
	for _, e := range evs[len(evs)-5:] {
		tail = append(tail, e.Ev)
	}
	// 1 suspects 3 and sends election to 2 and 3; the one to 3 is refused at once.
	if got := strings.Join(tail, " "); got != "suspect elect send send drop" {
		t.Fatalf("node 1's last events: %s", got)
	}
	send, drop := evs[len(evs)-2], evs[len(evs)-1]
	if drop.Msg != send.Msg || drop.To != 3 || drop.TS != send.TS || !strings.Contains(drop.Reason, "refused") {
		t.Fatalf("drop %+v does not match its send %+v", drop, send)
	}
}

func TestPauseHoldsInboxAndTimers(t *testing.T) {
	s := storySim(t, 3)
	s.Pause(3)
	s.Pause(2)
	s.Inject(1, election.Input{Kind: election.InSuspect, From: 3}) // 1 elects: election to 2 and 3
	s.RunFor(100 * time.Millisecond)
	if got := s.Delivered("election"); got != 0 {
		t.Fatalf("%d elections delivered to paused nodes", got)
	}
	if err := s.Resume(2); err != nil {
		t.Fatal(err)
	}
	// 2 reads 1's election at once, answers, and holds its own (to 3, still paused).
	var first *logs.Event
	for i, e := range s.Log().Nodes[2].Events {
		if e.TS == DefaultBase+int64(s.Now()) {
			first = &s.Log().Nodes[2].Events[i]
			break
		}
	}
	if first == nil || first.Ev != logs.EvRecv || first.From != 1 || first.Msg.Kind != "election" {
		t.Fatalf("on resume, 2 did not read 1's election first: %+v", first)
	}
	// 1's T (200ms) fires at 200ms virtual after the inject, unless 2's ok came first: it did.
	s.RunFor(10 * time.Millisecond)
	if !s.Participant(1) || !s.Participant(2) {
		t.Fatal("1 and 2 should be electing")
	}
	// 2 waits T for 3; 3 is paused, so 2 wins after T and announces to 1.
	s.RunFor(300 * time.Millisecond)
	if s.Leader(1) != 2 || s.Leader(2) != 2 {
		t.Fatalf("leaders %d %d, want 2 2", s.Leader(1), s.Leader(2))
	}
	// 3 resumes and reads two elections of a round newer than its own: it answers and, being the
	// highest, announces itself.
	s.Resume(3)
	s.RunFor(20 * time.Millisecond)
	for id := 1; id <= 3; id++ {
		if s.Leader(id) != 3 {
			t.Errorf("node %d follows %d, want 3", id, s.Leader(id))
		}
	}
}

func TestControlErrorsAreRecorded(t *testing.T) {
	s := mustNew(t, DefaultConfig("bully", 3))
	s.RunFor(time.Second)
	if err := s.Restart(2); err == nil || !strings.Contains(err.Error(), "it is running") {
		t.Fatalf("Restart of a running node: %v", err)
	}
	if err := s.Resume(1); err == nil || !strings.Contains(err.Error(), "it is running") {
		t.Fatalf("Resume of a running node: %v", err)
	}
	run := s.Run()
	if len(run.Chaos) != 2 || run.Chaos[0].Error == "" || run.Chaos[1].Error == "" || len(run.Chaos[0].Targets) != 0 {
		t.Fatalf("chaos records %+v", run.Chaos)
	}
	if err := s.Crash(1); err != ErrFinished {
		t.Fatalf("Crash after the end: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Algo: "nope", N: 3}, "unknown algorithm"},
		{Config{Algo: "bully", N: 0}, "N 0"},
		{Config{Algo: "bully", N: 3, Topology: "ring"}, "cannot run on topology"},
		{Config{Algo: "bully", N: 3, MinDelay: 5, MaxDelay: 1}, "MinDelay"},
		{Config{Algo: "bully", N: 3, Heartbeat: time.Second, Timeout: time.Millisecond}, "longer than Heartbeat"},
		{Config{Algo: "bully", N: 3, Order: []int{1, 1, 2}}, "permutation"},
		{Config{Algo: "bully", N: 3, Initiators: []int{4}}, "initiator 4"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one mentioning %q", c.cfg, err, c.want)
		}
	}
}

func TestInjectErrors(t *testing.T) {
	s := storySim(t, 3)
	s.Crash(3)
	s.Pause(2)
	for _, c := range []struct {
		id   int
		in   election.Input
		want string
	}{
		{3, election.Input{Kind: election.InSuspect, From: 1}, "killed"},
		{2, election.Input{Kind: election.InSuspect, From: 1}, "paused"},
		{9, election.Input{Kind: election.InSuspect, From: 1}, "node 9"},
		{1, election.Input{Kind: election.InRecv, From: 2}, "cannot inject"},
	} {
		if err := s.Inject(c.id, c.in); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Inject(%d, %v): %v, want %q", c.id, c.in.Kind, err, c.want)
		}
	}
}

// TestWriteDir writes a run with faults as a run directory and reads it back as the checker would.
func TestWriteDir(t *testing.T) {
	cfg := DefaultConfig("bully", 5)
	cfg.Seed = 7
	run := crashRestart(t, cfg, 200*time.Millisecond, 400*time.Millisecond)
	dir := t.TempDir()
	if err := WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	c, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(dir, rundir.ClusterFile)); st.Mode().Perm() != 0o600 {
		t.Errorf("cluster.json mode %v, want 0600", st.Mode().Perm())
	}
	if !reflect.DeepEqual(*c, run.Cluster) {
		t.Errorf("cluster.json reads back as %+v, want %+v", *c, run.Cluster)
	}
	for id, nl := range run.Nodes {
		var back []logs.Event
		readLines(t, rundir.NodeLog(dir, id), func(b []byte) {
			var e logs.Event
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("node %d: %v", id, err)
			}
			back = append(back, e)
		})
		if !reflect.DeepEqual(back, nl.Events) {
			t.Errorf("node %d: the log reads back differently", id)
		}
	}
	var chaos []logs.ChaosRecord
	readLines(t, filepath.Join(dir, rundir.ChaosFile), func(b []byte) {
		var r logs.ChaosRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		chaos = append(chaos, r)
	})
	if !reflect.DeepEqual(chaos, run.Chaos) {
		t.Errorf("chaos.jsonl reads back as %+v, want %+v", chaos, run.Chaos)
	}
	var launch []string
	readLines(t, filepath.Join(dir, rundir.LauncherFile), func(b []byte) {
		var r logs.LaunchRecord
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		launch = append(launch, r.Ev)
	})
	if launch[0] != logs.LaunchSpawned || launch[len(launch)-1] != logs.LaunchEnd || len(launch) != len(run.Launcher) {
		t.Errorf("launcher.jsonl: %v", launch)
	}
	// Every incarnation the launcher started is accounted for: an exited record for each.
	spawned, exited := map[[2]int]bool{}, map[[2]int]bool{}
	for _, r := range run.Launcher {
		switch r.Ev {
		case logs.LaunchSpawned:
			spawned[[2]int{r.Node, r.Inc}] = true
		case logs.LaunchExited:
			exited[[2]int{r.Node, r.Inc}] = true
			if (r.Signal == "killed") == (r.Code != nil) {
				t.Errorf("exited record %+v: want a signal or a code", r)
			}
		}
	}
	if !reflect.DeepEqual(spawned, exited) {
		t.Errorf("spawned %v, exited %v", spawned, exited)
	}
}

func readLines(t *testing.T, path string, f func([]byte)) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestEventsOfARun checks the stamping of events: timestamps from the base, Lamport clocks that
// rise at every event and jump past the sender's on a recv, message IDs "node.inc.seq", and the
// start, stats and stop events of every incarnation that lived to the end.
func TestEventsOfARun(t *testing.T) {
	cfg := DefaultConfig("bully", 4)
	run := crashRestart(t, cfg, time.Second, 2*time.Second)
	for id, nl := range run.Nodes {
		var lc uint64
		inc := 0
		for i, e := range nl.Events {
			if e.Node != id || e.TS < DefaultBase || e.TS > DefaultBase+int64(cfg.Duration+stopDelay) {
				t.Fatalf("node %d event %d: %+v", id, i, e)
			}
			if e.Inc != inc {
				if e.Ev != logs.EvStart || e.Inc != inc+1 {
					t.Fatalf("node %d: incarnation %d begins with %s", id, e.Inc, e.Ev)
				}
				inc, lc = e.Inc, 0
			}
			if e.LC <= lc {
				t.Fatalf("node %d event %d: lc %d after %d", id, i, e.LC, lc)
			}
			lc = e.LC
			if e.Ev == logs.EvSend && !strings.HasPrefix(e.Msg.ID, strings.Join([]string{itoa(id), itoa(e.Inc), ""}, ".")) {
				t.Fatalf("node %d: message id %s", id, e.Msg.ID)
			}
		}
		last := nl.Events[len(nl.Events)-2:]
		if last[0].Ev != logs.EvStats || last[1].Ev != logs.EvStop || last[0].Stats.MsgsSent == 0 {
			t.Errorf("node %d ends with %s %s", id, last[0].Ev, last[1].Ev)
		}
	}
	if incs := run.Nodes[4].Events[len(run.Nodes[4].Events)-1].Inc; incs != 2 {
		t.Errorf("node 4 ends in incarnation %d, want 2", incs)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
