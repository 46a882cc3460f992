package launcher

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// A simulated run driven by hand: the leader killed when asked, the stop when asked; the run
// directory holds the kill in chaos.jsonl and the schedule in cluster.json, check passes it, and a
// replay in the simulator logs the same bytes.
func TestHandSimKillReplays(t *testing.T) {
	h := NewHand()
	cfg := DefaultConfig()
	cfg.Sim, cfg.Chaos, cfg.Seed, cfg.SeedSet = true, "", 11, true
	cfg.Duration, cfg.Hand = time.Hour, h
	cfg.Out = filepath.Join(t.TempDir(), "hand")
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	if err := h.SetSpeed(20); err != nil {
		t.Fatal(err)
	}
	type out struct {
		res Result
		err error
	}
	done := make(chan out, 1)
	go func() { r, err := Launch(context.Background(), cfg); done <- out{r, err} }()
	<-h.Began()
	leader := func() int {
		l := map[int]int{}
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			for _, e := range h.Next().Events {
				if e.Ev == logs.EvLeader {
					l[e.Node] = e.Leader
				}
			}
			if len(l) > 0 && l[1] != 0 && l[1] == l[2] {
				return l[1]
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("no leader seen: %v", l)
		return 0
	}
	if got := leader(); got != 5 {
		t.Fatalf("leader %d, want 5", got)
	}
	if _, err := h.Apply("kill leader"); err == nil || !strings.Contains(err.Error(), "by its ID") {
		t.Errorf("kill leader by hand: err %v, want a refusal asking for an ID", err)
	}
	if _, err := h.Apply("explode 5"); err == nil {
		t.Errorf("explode 5: no error")
	}
	recs, err := h.Apply("kill 5")
	if err != nil || len(recs) != 1 || recs[0].Targets[0] != 5 {
		t.Fatalf("kill 5: %v %+v", err, recs)
	}
	if _, err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	o := <-done
	if o.err != nil || o.res.Code != ExitOK {
		t.Fatalf("run: code %d err %v", o.res.Code, o.err)
	}
	c, err := rundir.Load(o.res.Dir)
	if err != nil || !strings.Contains(c.Chaos, " kill 5") {
		t.Fatalf("cluster.json chaos %q err %v", c.Chaos, err)
	}
	base := DefaultConfig()
	base.Sim, base.Out, base.Stdout, base.Progress = true, filepath.Join(t.TempDir(), "replay"), io.Discard, io.Discard
	dir, code, err := ReplayDir(context.Background(), o.res.Dir, base)
	if err != nil || code != ExitOK {
		t.Fatalf("replay: code %d err %v", code, err)
	}
	for _, f := range []string{"nodes/1.jsonl", "nodes/5.jsonl", "chaos.jsonl", "launcher.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(o.res.Dir, f))
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%s differs between the hand-made run and its replay (%d and %d bytes)", f, len(a), len(b))
		}
	}
}

// Every kind of fault by hand in the simulator: each lands in chaos.jsonl, the replay in the
// simulator logs the same bytes, and check passes the run.
func TestHandSimFaultsReplay(t *testing.T) {
	h := NewHand()
	cfg := DefaultConfig()
	cfg.Sim, cfg.Chaos, cfg.Seed, cfg.SeedSet = true, "", 5, true
	cfg.Duration, cfg.Hand = time.Hour, h
	cfg.Out = filepath.Join(t.TempDir(), "hand")
	cfg.Stdout, cfg.Progress = io.Discard, io.Discard
	_ = h.SetSpeed(20)
	done := make(chan Result, 1)
	go func() { r, _ := Launch(context.Background(), cfg); done <- r }()
	<-h.Began()
	actions := []string{"pause 2", "resume 2", "partition 1-2|3-5", "heal", "link 1->2 loss 50%", "link 3->4 delay 5ms", "heal", "stop 3", "restart 3", "kill 5", "partition isolate 4", "heal"}
	for _, a := range actions {
		time.Sleep(30 * time.Millisecond)
		if _, err := h.Apply(a); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
	}
	if _, err := h.Apply("partition random-halves"); err == nil {
		t.Error("partition random-halves by hand: no error (a draw would not replay the same)")
	}
	if _, err := h.Stop(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.Code != ExitOK {
		t.Fatalf("the run: exit %d", r.Code)
	}
	run, err := logs.ReadRun(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Chaos) != len(actions) {
		t.Errorf("chaos.jsonl has %d records, want %d (one per action)", len(run.Chaos), len(actions))
	}
	base := DefaultConfig()
	base.Sim, base.Out, base.Stdout, base.Progress = true, filepath.Join(t.TempDir(), "replay"), io.Discard, io.Discard
	dir, code, err := ReplayDir(context.Background(), r.Dir, base)
	if err != nil || code != ExitOK {
		t.Fatalf("replay: code %d err %v", code, err)
	}
	for _, f := range []string{"nodes/1.jsonl", "nodes/3.jsonl", "chaos.jsonl", "launcher.jsonl"} {
		a, _ := os.ReadFile(filepath.Join(r.Dir, f))
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the hand-made run and its replay", f)
		}
	}
}
