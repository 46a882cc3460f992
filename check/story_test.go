package check

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Fake algorithms for the checker's tests, under names no real algorithm takes. Their messages are
// Bully's: election and ok for the election, coordinator to announce.
const (
	algoTest        = "logstest-bully"    // bound n*n
	algoTight       = "logstest-tight"    // bound 6
	algoNoBound     = "logstest-no-bound" // states none
	testGrace       = 100 * time.Millisecond
	testTermination = time.Second
	testSettle      = 500 * time.Millisecond
)

func init() {
	fake := func(name string, bound func(n, i int) (int, bool)) {
		election.Register(election.Algorithm{Name: name, Topologies: []string{"mesh"},
			Kinds: []string{"election", "ok"}, Announce: []string{"coordinator"}, Bound: bound})
	}
	fake(algoTest, func(n, _ int) (int, bool) { return n * n, true })
	fake(algoTight, func(int, int) (int, bool) { return 6, true })
	fake(algoNoBound, nil)
}

// base is the story's begin: ms(0).
const base = int64(1_700_000_000_000_000_000)

// ms is a story's time: milliseconds after the begin, as Unix ns.
func ms(x float64) int64 { return base + int64(x*1e6) }

// story builds a Run in memory, step by step, the way a real run would log it. Nodes are spawned at
// -20ms and start at 1ms; the launcher's begin is at 0.
type story struct {
	run  *logs.Run
	inc  map[int]int // the running incarnation
	lc   map[int]uint64
	seq  map[int]int
	live map[int]bool
}

func newStory(algo string, n int) *story {
	s := &story{inc: map[int]int{}, lc: map[int]uint64{}, seq: map[int]int{}, live: map[int]bool{}}
	c := rundir.Cluster{Version: rundir.Version, Algo: algo, Topology: "mesh", Seed: 7,
		Grace: rundir.Duration(testGrace), TerminationBound: rundir.Duration(testTermination),
		Settle: rundir.Duration(testSettle), Duration: rundir.Duration(time.Second)}
	for id := 1; id <= n; id++ {
		c.Nodes = append(c.Nodes, rundir.Node{ID: id, Addr: fmt.Sprintf("127.0.0.1:%d", 7000+id)})
		c.Initiators = append(c.Initiators, id)
	}
	s.run = &logs.Run{Cluster: c, Nodes: map[int]*logs.NodeLog{}}
	for id := 1; id <= n; id++ {
		s.spawn(id, -20)
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchBegin}, 0)
	for id := 1; id <= n; id++ {
		s.event(id, 1, logs.Event{Ev: logs.EvStart, Algo: algo})
	}
	return s
}

func (s *story) launch(r logs.LaunchRecord, at float64) {
	r.TS = ms(at)
	s.run.Launcher = append(s.run.Launcher, r)
}

func (s *story) spawn(id int, at float64) {
	s.inc[id]++
	s.live[id] = true
	s.launch(logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: s.inc[id], Pid: 1000*s.inc[id] + id}, at)
}

func (s *story) exited(id int, at float64, signal string) {
	r := logs.LaunchRecord{Ev: logs.LaunchExited, Node: id, Inc: s.inc[id], Pid: 1000*s.inc[id] + id, Signal: signal}
	if signal == "" {
		code := 0
		r.Code = &code
	}
	s.launch(r, at)
	s.live[id] = false
}

func (s *story) chaos(op string, at float64, targets ...int) {
	s.run.Chaos = append(s.run.Chaos, logs.ChaosRecord{TS: ms(at), Op: op, Targets: targets, At: ms(at) - base})
}

func (s *story) event(id int, at float64, e logs.Event) {
	nl := s.run.Nodes[id]
	if nl == nil {
		nl = &logs.NodeLog{Node: id}
		s.run.Nodes[id] = nl
	}
	s.lc[id]++
	e.TS, e.Node, e.Inc, e.LC = ms(at), id, s.inc[id], s.lc[id]
	nl.Events = append(nl.Events, e)
}

func (s *story) elect(id int, at float64) { s.event(id, at, logs.Event{Ev: logs.EvElect}) }
func (s *story) leader(id int, at float64, l int) {
	s.event(id, at, logs.Event{Ev: logs.EvLeader, Leader: l})
}

// send logs a send and returns the message for its recv.
func (s *story) send(from, to int, at float64, kind string) election.Message {
	s.seq[from]++
	m := election.Message{ID: fmt.Sprintf("%d.%d.%d", from, s.inc[from], s.seq[from]), Kind: kind}
	s.event(from, at, logs.Event{Ev: logs.EvSend, To: to, Msg: &m})
	return m
}

func (s *story) recv(to, from int, at float64, m election.Message) {
	s.event(to, at, logs.Event{Ev: logs.EvRecv, From: from, Msg: &m})
}

// bully plays a Bully election from t0 among the live nodes: each elects and sends election to every
// higher node (the unreachable ones too), the live ones answer ok, and the highest live node wins at t0+20 and
// announces itself; the others follow it at t0+21.
func (s *story) bully(t0 float64, live []int, dead ...int) {
	sort.Ints(live)
	type sent struct {
		from, to int
		m        election.Message
	}
	var elections []sent
	for _, i := range live {
		s.elect(i, t0)
		for _, j := range append(append([]int{}, live...), dead...) {
			if j > i {
				elections = append(elections, sent{i, j, s.send(i, j, t0, "election")})
			}
		}
	}
	var oks []sent
	for _, e := range elections {
		if contains(live, e.to) {
			s.recv(e.to, e.from, t0+1, e.m)
		}
	}
	for _, e := range elections {
		if contains(live, e.to) {
			oks = append(oks, sent{e.to, e.from, s.send(e.to, e.from, t0+2, "ok")})
		}
	}
	for _, o := range oks {
		s.recv(o.to, o.from, t0+3, o.m)
	}
	top := live[len(live)-1]
	s.leader(top, t0+20, top)
	for _, i := range live[:len(live)-1] {
		m := s.send(top, i, t0+20, "coordinator")
		s.recv(i, top, t0+21, m)
		s.leader(i, t0+21, top)
	}
}

// kill: SIGKILL at `at`; the launcher sees the exit half a millisecond later.
func (s *story) kill(id int, at float64) {
	s.chaos("kill", at, id)
	s.exited(id, at+0.5, "killed")
}

// restart spawns the next incarnation at `at`, which starts 5ms later.
func (s *story) restart(id int, at float64) {
	s.spawn(id, at)
	s.chaos("restart", at+0.5, id)
	s.event(id, at+5, logs.Event{Ev: logs.EvStart, Algo: s.run.Cluster.Algo})
}

// stop ends the story: the launcher's stopping at `at`, then each live node logs its stats and stop
// and exits cleanly. Nodes listed in `stuck` never exit.
func (s *story) stop(at float64, stuck ...int) {
	s.launch(logs.LaunchRecord{Ev: logs.LaunchStopping}, at)
	ids := make([]int, 0, len(s.live))
	for id := range s.live {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		if !s.live[id] || contains(stuck, id) {
			continue
		}
		st := logs.Stats{HeartbeatsSent: 40, HeartbeatsRecv: 38, MsgsSent: int64(id), MsgsRecv: 3}
		s.event(id, at+5, logs.Event{Ev: logs.EvStats, Stats: &st})
		s.event(id, at+5, logs.Event{Ev: logs.EvStop, Reason: "stopped"})
		s.exited(id, at+10, "")
	}
	s.launch(logs.LaunchRecord{Ev: logs.LaunchEnd}, at+20)
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// writeRun lays a Run out as a run directory. torn maps a node to a line to append after its event
// at index i (the line cut short by a kill).
func writeRun(t *testing.T, run *logs.Run, torn map[int]map[int]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, rundir.NodesDir), 0o755); err != nil {
		t.Fatal(err)
	}
	c := run.Cluster
	if err := rundir.Save(dir, &c); err != nil {
		t.Fatal(err)
	}
	for id, nl := range run.Nodes {
		var b []byte
		for i := range nl.Events {
			var err error
			if b, err = logs.AppendEvent(b, &nl.Events[i]); err != nil {
				t.Fatal(err)
			}
			if line, ok := torn[id][i]; ok {
				b = append(b, line...)
				b = append(b, '\n')
			}
		}
		if err := os.WriteFile(rundir.NodeLog(dir, id), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeLines(t, filepath.Join(dir, rundir.ChaosFile), run.Chaos)
	writeLines(t, filepath.Join(dir, rundir.LauncherFile), run.Launcher)
	// Whatever the test does to the directory, it is judged streamed as it is in memory.
	t.Cleanup(func() { sameStreamed(t, dir) })
	return dir
}

func writeLines[T any](t *testing.T, path string, recs []T) {
	t.Helper()
	j, err := logs.OpenJSONLines(path)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for _, r := range recs {
		if err := j.Write(r); err != nil {
			t.Fatal(err)
		}
	}
}

type electionMsg = election.Message
