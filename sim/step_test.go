package sim

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/rundir"
)

// Step mode: one happening at a time until a leader, back one step is the state before it, and the
// session exports as a run directory the checker reads.
func TestStepperBackAndExport(t *testing.T) {
	st, err := NewStepper(Config{Algo: "bully", N: 5, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.InFlight()) == 0 && len(st.Timers()) == 0 {
		t.Fatal("nothing to do after the start")
	}
	if err := st.Do(Action{Kind: ActDeliver, Peer: 1, Node: 1}); err == nil {
		t.Error("deliver 1->1: no error")
	}
	var before []int
	for k := 0; k < 500; k++ {
		a, ok := st.Next()
		if !ok {
			t.Fatal("nothing left to do and no leader")
		}
		prev := st.beliefs()
		if err := st.Do(a); err != nil {
			t.Fatalf("%s: %v", a, err)
		}
		if st.Sim().Leader(1) == 5 {
			before = prev
			break
		}
	}
	if before == nil {
		t.Fatal("no leader after 500 steps")
	}
	after := st.beliefs()
	n := len(st.acts)
	if err := st.Back(); err != nil {
		t.Fatal(err)
	}
	if got := st.beliefs(); len(st.acts) != n-1 || !slices.Equal(got, before) {
		t.Errorf("back: beliefs %v (actions %d), want %v (%d); after the step they were %v", got, len(st.acts), before, n-1, after)
	}
	if _, err := st.RunToLeaderChange(100); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(Action{Kind: ActCrash, Node: 5}); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(Action{Kind: ActGone, Node: 5}); err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 50; k++ {
		if l, ok := st.Sim().Converged(); ok && l == 4 {
			break
		}
		if n, err := st.RunToLeaderChange(1000); err != nil || n == 0 {
			t.Fatalf("run to the next leader change: %d actions, %v", n, err)
		}
	}
	dir := filepath.Join(t.TempDir(), "step")
	run, err := st.Export(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := rundir.Load(dir)
	if err != nil || c.Chaos == "" {
		t.Fatalf("cluster.json: chaos %q err %v", c.Chaos, err)
	}
	if v := check.Check(run, check.Options{}); !v.OK {
		t.Errorf("the exported run does not pass: %+v", v.Properties)
	}
}
