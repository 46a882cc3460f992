package report

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// The fixture: Bully among 5 nodes in the simulator (`leaderlab run --sim`), seed 7. The leader (5)
// is killed at 1s and restarted at 2s; node 3 is paused from 2.5s for 300ms; a partition 1,2 | 3,4,5
// from 3.2s is healed at 3.5s.
const (
	fixtureSeed     = 7
	fixturePartAt   = 3200 * time.Millisecond
	fixtureHealAt   = 3500 * time.Millisecond
	fixtureSamples  = 100 * time.Millisecond
	fixtureDuration = 5 * time.Second
)

func fixtureRun(t testing.TB) *logs.Run {
	t.Helper()
	cfg := launcher.DefaultConfig()
	cfg.Seed, cfg.SeedSet = fixtureSeed, true
	cfg.Duration = fixtureDuration
	cfg.VClock = launcher.VClockOff // the export tests add clocks themselves
	cfg.Chaos = fmt.Sprintf("at 1s kill leader; at 2s restart 5; at 2.5s pause 3 for 300ms; at %v partition 1-2|3-5; at %v heal", fixturePartAt, fixtureHealAt)
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s.Run
}

// writeFixture writes the fixture as a run directory with verdict.json and a resources.jsonl of
// made-up samples (the simulator has no processes to sample).
func writeFixture(t testing.TB) (string, *logs.Run) {
	t.Helper()
	run := fixtureRun(t)
	dir := filepath.Join(t.TempDir(), "fixture-run")
	if err := sim.WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	if err := check.Check(run, check.Options{}).WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	writeResources(t, dir, run)
	return dir, run
}

func writeResources(t testing.TB, dir string, run *logs.Run) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, ResourcesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	base := sim.DefaultBase
	for at := fixtureSamples; at < fixtureDuration; at += fixtureSamples {
		for _, id := range run.Cluster.IDs() {
			inc := 1
			if id == 5 {
				switch {
				case at >= time.Second && at < 2*time.Second:
					continue // dead
				case at >= 2*time.Second:
					inc = 2
				}
			}
			s := Sample{TS: base + int64(at), Node: id, Inc: inc, Pid: 1000*id + inc, RSS: uint64(8<<20 + id<<18 + int(at/time.Millisecond)<<8),
				CPU: float64((id*7+int(at/fixtureSamples))%13) / 2, FDs: int32(10 + id)}
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// countEvents counts the events of a run by ev.
func countEvents(run *logs.Run) map[string]int {
	n := map[string]int{}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			n[e.Ev]++
		}
	}
	return n
}

// synthRun makes a run with about msgs messages among n nodes, for measurements at sizes the
// simulator's elections do not reach quickly: elections of a few thousand messages every 100 ms
// (each live node elects, random messages of Bully's kinds with 0.2-3 ms delays, 1% dropped by their
// sender, then every live node follows the highest live ID), the highest node killed and restarted,
// node 3 paused, and a partition healed.
func synthRun(n, msgs int, seed int64) *logs.Run {
	r := rand.New(rand.NewSource(seed))
	const base = sim.DefaultBase
	per := min(msgs, 2000)
	elections := max(1, (msgs+per-1)/per)
	gap := 100 * time.Millisecond
	duration := time.Duration(elections+4) * gap
	nodes := make([]rundir.Node, n)
	for i := range nodes {
		nodes[i] = rundir.Node{ID: i + 1, Addr: "synth:" + strconv.Itoa(i+1)}
	}
	run := &logs.Run{
		Cluster: rundir.Cluster{Version: rundir.Version, ClusterID: "synth", Algo: "bully", Topology: "mesh", Placement: "ascending",
			InitiatorsSpec: "all", Nodes: nodes, Heartbeat: rundir.Duration(50 * time.Millisecond), Timeout: rundir.Duration(200 * time.Millisecond),
			Settle: rundir.Duration(time.Second), Duration: rundir.Duration(duration), Grace: rundir.Duration(200 * time.Millisecond),
			TerminationBound: rundir.Duration(4 * time.Second), Seed: seed},
		Nodes: map[int]*logs.NodeLog{},
	}
	evs := make([][]logs.Event, n+1)
	inc := make([]int, n+1)
	seq := make([]int, n+1)
	alive := make([]bool, n+1)
	launch := func(at time.Duration, rec logs.LaunchRecord) {
		rec.TS = base + int64(at)
		run.Launcher = append(run.Launcher, rec)
	}
	event := func(id int, at time.Duration, e logs.Event) {
		e.TS, e.Node, e.Inc = base+int64(at), id, inc[id]
		evs[id] = append(evs[id], e)
	}
	start := func(id int, at time.Duration) {
		inc[id]++
		alive[id] = true
		launch(at, logs.LaunchRecord{Ev: logs.LaunchSpawned, Node: id, Inc: inc[id], Pid: 1000*id + inc[id]})
		event(id, at, logs.Event{Ev: logs.EvStart, Algo: "bully", Pid: 1000*id + inc[id]})
	}
	chaos := func(at time.Duration, op string, targets []int, groups [][]int) {
		run.Chaos = append(run.Chaos, logs.ChaosRecord{TS: base + int64(at), Op: op, Targets: targets, Step: "at " + at.String() + " " + op, At: int64(at), Groups: groups})
	}
	for id := 1; id <= n; id++ {
		start(id, 0)
	}
	launch(0, logs.LaunchRecord{Ev: logs.LaunchBegin})
	kinds := []string{election.BullyElection, election.BullyOK, election.BullyCoordinator}
	paused := 0
	sent := 0
	for k := 0; k < elections; k++ {
		t0 := time.Duration(k)*gap + time.Millisecond
		switch k {
		case elections / 4:
			alive[n] = false
			chaos(t0-500*time.Microsecond, "kill", []int{n}, nil)
			launch(t0-500*time.Microsecond, logs.LaunchRecord{Ev: logs.LaunchExited, Node: n, Inc: inc[n], Pid: 1000*n + inc[n], Signal: "killed"})
		case elections / 2:
			chaos(t0-500*time.Microsecond, "restart", []int{n}, nil)
			start(n, t0-400*time.Microsecond)
		case 3 * elections / 4:
			paused = 3
			chaos(t0-500*time.Microsecond, "pause", []int{3}, nil)
		case 3*elections/4 + 1:
			paused = 0
			chaos(t0-500*time.Microsecond, "resume", []int{3}, nil)
			chaos(t0-300*time.Microsecond, "partition", []int{}, [][]int{{1, 2}, {3, 4}})
		case 3*elections/4 + 2:
			chaos(t0-500*time.Microsecond, "heal", []int{}, nil)
		}
		var live []int
		for id := 1; id <= n; id++ {
			if alive[id] && id != paused {
				live = append(live, id)
			}
		}
		for _, id := range live {
			event(id, t0, logs.Event{Ev: logs.EvElect, Round: k + 1})
		}
		for j := 0; j < per && sent < msgs; j++ {
			from, to := live[r.Intn(len(live))], live[r.Intn(len(live))]
			if from == to {
				to = live[(slices.Index(live, from)+1)%len(live)]
			}
			seq[from]++
			m := &election.Message{ID: fmt.Sprintf("%d.%d.%d", from, inc[from], seq[from]), Kind: kinds[r.Intn(len(kinds))], Round: k + 1}
			s := t0 + time.Duration(r.Int63n(int64(20*time.Millisecond)))
			event(from, s, logs.Event{Ev: logs.EvSend, To: to, Msg: m})
			if r.Intn(100) == 0 {
				event(from, s+100*time.Microsecond, logs.Event{Ev: logs.EvDrop, To: to, Msg: m, Reason: "loss"})
			} else {
				d := 200*time.Microsecond + time.Duration(r.Int63n(int64(2800*time.Microsecond)))
				event(to, s+d, logs.Event{Ev: logs.EvRecv, From: from, Msg: m})
			}
			sent++
		}
		top := slices.Max(live)
		for _, id := range live {
			event(id, t0+25*time.Millisecond, logs.Event{Ev: logs.EvLeader, Leader: top})
		}
	}
	end := duration - gap
	launch(end, logs.LaunchRecord{Ev: logs.LaunchStopping})
	for id := 1; id <= n; id++ {
		if alive[id] {
			event(id, end+time.Millisecond, logs.Event{Ev: logs.EvStop, Reason: "terminated"})
			code := 0
			launch(end+2*time.Millisecond, logs.LaunchRecord{Ev: logs.LaunchExited, Node: id, Inc: inc[id], Pid: 1000*id + inc[id], Code: &code})
		}
	}
	launch(end+2*time.Millisecond, logs.LaunchRecord{Ev: logs.LaunchEnd})
	slices.SortStableFunc(run.Launcher, func(a, b logs.LaunchRecord) int { return int(a.TS - b.TS) })
	for id := 1; id <= n; id++ {
		slices.SortStableFunc(evs[id], func(a, b logs.Event) int {
			if a.Inc != b.Inc {
				return a.Inc - b.Inc
			}
			return int(a.TS - b.TS)
		})
		for i := range evs[id] {
			evs[id][i].LC = uint64(i + 1)
		}
		run.Nodes[id] = &logs.NodeLog{Node: id, Events: evs[id]}
	}
	return run
}

// writeSynth writes a synthetic run directory with its verdict.json.
func writeSynth(t testing.TB, dir string, n, msgs int) *logs.Run {
	t.Helper()
	run := synthRun(n, msgs, 1)
	if err := sim.WriteDir(run, dir); err != nil {
		t.Fatal(err)
	}
	if err := check.Check(run, check.Options{}).WriteFile(dir); err != nil {
		t.Fatal(err)
	}
	return run
}
