package launcher

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// simRun makes a run in the simulator and returns its directory and exit code.
func simRun(t *testing.T, cfg Config) (string, int) {
	t.Helper()
	cfg.Sim = true
	cfg.Out = filepath.Join(t.TempDir(), "run")
	cfg.Stdout, cfg.Progress = nil, nil
	dir, code, err := RunDir(context.Background(), cfg)
	if err != nil {
		t.Fatalf("run --sim: %v", err)
	}
	return dir, code
}

func nemesisConfig(algo string, seed int64) Config {
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Chaos = algo, 5, ""
	cfg.Nemesis, cfg.NemesisInterval, cfg.NemesisRestart = "kill,pause,restart,partition,link", 500*time.Millisecond, true
	cfg.Duration = 6 * time.Second
	cfg.Seed, cfg.SeedSet = seed, true
	return cfg
}

// TestSimSameSeedSameBytes: two simulated runs of one seed write byte-identical node logs, chaos and
// launcher records, and verdicts.
func TestSimSameSeedSameBytes(t *testing.T) {
	for _, algo := range []string{"bully", "franklin", "rsdp"} {
		a, _ := simRun(t, nemesisConfig(algo, 11))
		b, _ := simRun(t, nemesisConfig(algo, 11))
		files := []string{rundir.ChaosFile, rundir.LauncherFile, rundir.VerdictFile}
		for id := 1; id <= 5; id++ {
			files = append(files, filepath.Join(rundir.NodesDir, filepath.Base(rundir.NodeLog("", id))))
		}
		for _, f := range files {
			x, err := os.ReadFile(filepath.Join(a, f))
			if err != nil {
				t.Fatal(err)
			}
			y, _ := os.ReadFile(filepath.Join(b, f))
			if !bytes.Equal(x, y) {
				t.Errorf("%s seed 11: %s differs between two runs", algo, f)
			}
		}
		c, err := rundir.Load(a)
		if err != nil {
			t.Fatal(err)
		}
		if c.World != rundir.WorldSim {
			t.Errorf("%s: cluster.json world = %q, want %q", algo, c.World, rundir.WorldSim)
		}
	}
}

// TestSimRegressionSeeds are nemesis runs that broke a property outside the algorithm's declared
// limits before their defect was fixed (run --sim with bench chaos's nemesis): Bully kept two
// leaders for T after a one-way link drop healed (803, 1032: the lower one waited T before acting
// on the higher one's claim, so the overlap outlasted the fault by more than the grace; while the
// drop is in force the overlap is the declared limit) and ended without agreement (814).
func TestSimRegressionSeeds(t *testing.T) {
	for _, c := range []struct {
		algo string
		seed int64
	}{{"bully", 803}, {"bully", 814}, {"bully", 1032}} {
		dir, code := simRun(t, nemesisConfig(c.algo, c.seed))
		var v check.Verdict
		b, _ := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		if code != ExitOK && !v.OnlyLimits() {
			t.Errorf("%s seed %d: exit %d, a violation outside the declared limits: %s\nreplay: leaderlab run --sim --replay %s", c.algo, c.seed, code, b, dir)
		}
	}
}

// TestSimStopRestart: a stopped leader (SIGTERM) says its last words, exits within the linger, and
// a restart brings it back as a new incarnation that leads again.
func TestSimStopRestart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Chaos = "at 1s stop leader; at 2s restart 5"
	cfg.Seed, cfg.SeedSet = 3, true
	dir, code := simRun(t, cfg)
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var v check.Verdict
	b, _ := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if code != ExitOK || v.Leader == nil || *v.Leader != 5 {
		t.Fatalf("exit %d, leader %v, want 0 and 5: %s", code, v.Leader, b)
	}
	var stopTS int64
	for _, e := range run.Nodes[5].Events {
		if e.Inc == 1 && e.Ev == logs.EvStop {
			stopTS = e.TS
		}
	}
	var exitTS int64
	for _, r := range run.Launcher {
		if r.Ev == logs.LaunchExited && r.Node == 5 && r.Inc == 1 {
			exitTS = r.TS
		}
	}
	if stopTS == 0 || exitTS == 0 || exitTS-stopTS > int64(100*time.Millisecond) {
		t.Errorf("node 5's first incarnation: stop at %d, exited at %d: want an exit within 100ms of its stop event", stopTS, exitTS)
	}
	if inc := run.Nodes[5].Events[len(run.Nodes[5].Events)-1].Inc; inc != 2 {
		t.Errorf("node 5 ends in incarnation %d, want 2", inc)
	}
}

// TestSimRefuses: what the simulator cannot do is refused with the reason.
func TestSimRefuses(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sim, cfg.Detector = true, "observers"
	cfg.Algo = "rsdp"
	if _, _, err := RunDir(context.Background(), cfg); err == nil {
		t.Error("run --sim --detector observers was accepted")
	}
	cfg = DefaultConfig()
	cfg.Sim, cfg.Hosts = true, "hosts.txt"
	if _, _, err := RunDir(context.Background(), cfg); err == nil {
		t.Error("run --sim --hosts was accepted")
	}
}

// benchChaosConfig is the run bench chaos --sim makes of one seed (bench_chaos.go's
// chaosBenchRun) with the given nemesis kinds.
func benchChaosConfig(algo, nemesis string, seed int64) Config {
	cfg := DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Chaos = algo, 5, ""
	cfg.Nemesis, cfg.NemesisInterval, cfg.NemesisRestart = nemesis, 500*time.Millisecond, true
	cfg.Duration = 6 * time.Second
	cfg.Seed, cfg.SeedSet = seed, true
	return cfg
}

// simVerdict reads a simulated run's verdict.
func simVerdict(t *testing.T, dir string) (check.Verdict, []byte) {
	t.Helper()
	var v check.Verdict
	b, err := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v, b
}

// TestSimRegressionSeedsStrict are bench chaos --sim seeds whose defect was fixed at the root, and
// which now pass outright: not even a declared limit may fail (the partial partitions they run
// under would excuse the old defect as Bully's limit).
//
// Bully under a majorities-ring (seeds 1060 with --nemesis kill,pause,restart,partition,link; 5023,
// 5075 with kill,pause,restart,partition):
// node 3 suspected 4 since 4's crash and never heard from it after its restart, so when 5 went
// silent it won at once; 4's ok to its election came a millisecond later and was ignored, and 3 led
// beside 5 until the heal (uniqueness, 250-600ms). A leader now steps down at a higher node's ok.

// Bully with 6 nodes (seed 921999, every kind): a majorities-ring dropped 6's coordinator of round
// 9 to 2 and 3, which waited for a coordinator; after the heal their next election was of round 9,
// which 6 answered with ok alone (it had announced that round), and T1 came round again after the
// end: no agreement. A node awaiting a coordinator now takes a higher leader's heartbeat claim for
// it.
func TestSimRegressionSeedsStrict(t *testing.T) {
	const links, noLinks = "kill,pause,restart,partition,link", "kill,pause,restart,partition"
	for _, c := range []struct {
		algo, nemesis string
		n             int
		seed          int64
	}{
		{"bully", links, 5, 1060}, {"bully", noLinks, 5, 5023}, {"bully", noLinks, 5, 5075},
		{"bully", links + ",stop", 6, 921999},
	} {
		cfg := benchChaosConfig(c.algo, c.nemesis, c.seed)
		cfg.Nodes = c.n
		dir, code := simRun(t, cfg)
		if _, b := simVerdict(t, dir); code != ExitOK {
			t.Errorf("%s -n %d seed %d (--nemesis %s): exit %d: %s", c.algo, c.n, c.seed, c.nemesis, code, b)
		}
	}
}

// TestSimRegressionSeedsLimited are bench chaos --sim seeds that broke a property outside the
// algorithm's declared limits before their defect was fixed, or that fail only under a declared
// limit; either way a violation outside the limits is a regression.
//
// Bully under a majorities-ring (seed 5135, --nemesis kill,pause,restart,partition): 2 hears only
// 1 and 3, 5 only 1 and 4; 2, which led its side of an earlier partition, never hears 5 and 5
// never hears it, so both lead until the heal: Bully's "partial partition" limit.
//
// RSDP (latest), both overlaps that outlasted their link fault until the next resync (up to 1s):
// 20070 (link 4->5 drop): 5 trusted 4 again after the heal without a session, because the others'
// shares already counted 4 as a member; 20006 (link 3->5 loss): a session closed on 4 at 1..4 and
// on 5 at 5, and nothing reconciled them after the heal. Trust now always opens a session, and so
// does a heartbeat that names another leader.
//
// RSDP (latest) 910526, 911229: after a partition isolating the leader healed, the first heartbeat
// each way came up to an interval later, and the session its trust opened waited a status timeout
// for a node just paused: the overlap ended 230ms and 241ms after the heal, beyond the grace; the
// declared recovery now counts the heartbeat interval before the trust.
//
// Chang-Roberts, LeLann and Peterson (seed 911509, every kind): link 2->3 dropped epoch 9 for 713ms; 3
// suspected 2 and, trusting it again, reopened epoch 8, which 4 still held: the election waited for
// the stall timer, after the end (agreement, the rings' declared limit under message loss).
//
// RSDP with 6 nodes (seed 300017, every kind): after a majorities-ring 4 led 2..4 and did not
// watch 6, no member of its; while 6 was paused the others' sessions overtook each of 4's before
// its status timeout, and the share windows that ended meanwhile waited for the mutex: 4 led beside
// 5 for 780ms with no network fault. A share window now ends when it ends (rsdp.go's header); what
// is left is the overlap of the partition itself, RSDP latest's declared limit.
//
// RSDP 941389 (-n 5) and 940252 (-n 7): a node paused just as the session that would end an
// overlap ran (after a restart): the session waited T for it; RSDP's declared "pause" limit.
//
// RSDP 920510 and 921340 (every kind): a paused leader resumed, and the session that reconciled it
// waited a status timeout for a node paused a moment later, holding the shares that would have
// ended the overlap (T + a heartbeat, no network fault). Now a pass.
func TestSimRegressionSeedsLimited(t *testing.T) {
	const links, all = "kill,pause,restart,partition,link", "kill,pause,restart,partition,link,stop"
	for _, c := range []struct {
		algo, nemesis string
		seed          int64
		n             int
	}{
		{"rsdp", all, 300017, 6}, {"rsdp", all, 920510, 5}, {"rsdp", all, 921340, 5},
		{"bully", "kill,pause,restart,partition", 5135, 5}, {"rsdp", links, 20070, 5}, {"rsdp", all, 20006, 5},
		{"rsdp", all, 910526, 5}, {"rsdp", all, 911229, 5}, {"rsdp", all, 941389, 5}, {"rsdp", all, 940252, 7},
		{"chang-roberts", all, 911509, 5}, {"lelann", all, 911509, 5}, {"peterson", all, 911509, 5},
	} {
		cfg := benchChaosConfig(c.algo, c.nemesis, c.seed)
		cfg.Nodes = c.n
		dir, code := simRun(t, cfg)
		if v, b := simVerdict(t, dir); code != ExitOK && !v.OnlyLimits() {
			t.Errorf("%s seed %d (--nemesis %s): exit %d, a violation outside the declared limits: %s", c.algo, c.seed, c.nemesis, code, b)
		}
	}
}

// TestSimLogsWrittenAsTheyGo: run --sim's nodes write their logs into the run directory as they go
// (sim.Options.LogDir); the bytes are those of the same run made in memory and written whole
// (Simulate, WriteDir), and so is the verdict.
func TestSimLogsWrittenAsTheyGo(t *testing.T) {
	for _, algo := range []string{"bully", "lelann"} {
		cfg := nemesisConfig(algo, 21)
		streamed, _ := simRun(t, cfg)
		s, err := Simulate(cfg)
		if err != nil {
			t.Fatal(err)
		}
		whole := filepath.Join(t.TempDir(), "whole")
		if err := s.WriteDir(whole); err != nil {
			t.Fatal(err)
		}
		files := []string{rundir.ChaosFile, rundir.LauncherFile, rundir.VerdictFile}
		for id := 1; id <= cfg.Nodes; id++ {
			files = append(files, filepath.Join(rundir.NodesDir, filepath.Base(rundir.NodeLog("", id))))
		}
		for _, f := range files {
			x, err := os.ReadFile(filepath.Join(streamed, f))
			if err != nil {
				t.Fatal(err)
			}
			y, _ := os.ReadFile(filepath.Join(whole, f))
			if !bytes.Equal(x, y) {
				t.Errorf("%s: %s written as the nodes go differs from the run written whole", algo, f)
			}
		}
	}
}
