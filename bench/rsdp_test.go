package bench

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// wantRefused checks that err refuses a plan (the case name) and says each of want.
func wantRefused(t *testing.T, name string, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not say %q", name, err, w)
		}
	}
}

// TestRSDPPlanValidate: a bad plan is refused with the field it names and what it accepts.
func TestRSDPPlanValidate(t *testing.T) {
	good := RSDPPlan{Ns: []int{3}, Modes: election.RSDPModes, Detectors: RSDPDetectors, Observers: 3, Trials: 1, HealthInterval: 50 * time.Millisecond, Loss: 0.05}
	if err := good.Validate(); err != nil {
		t.Fatalf("good plan refused: %v", err)
	}
	for name, c := range map[string]struct {
		mod  func(*RSDPPlan)
		want []string
	}{
		"mode":      {func(p *RSDPPlan) { p.Modes = []string{"latest", "bogus"} }, []string{"RSDPPlan.Modes", "bogus", "latest, popular, ranked"}},
		"no modes":  {func(p *RSDPPlan) { p.Modes = nil }, []string{"RSDPPlan.Modes", "latest, popular, ranked"}},
		"detector":  {func(p *RSDPPlan) { p.Detectors = []string{"heartbeat"} }, []string{"RSDPPlan.Detectors", "heartbeat", "mutual, observer, observers"}},
		"trials":    {func(p *RSDPPlan) { p.Trials = 0 }, []string{"RSDPPlan.Trials", "at least 1"}},
		"loss 1":    {func(p *RSDPPlan) { p.Loss = 1 }, []string{"RSDPPlan.Loss", "0 <= p < 1"}},
		"loss neg":  {func(p *RSDPPlan) { p.Loss = -0.1 }, []string{"RSDPPlan.Loss", "0 <= p < 1"}},
		"loss NaN":  {func(p *RSDPPlan) { p.Loss = math.NaN() }, []string{"RSDPPlan.Loss"}},
		"observers": {func(p *RSDPPlan) { p.Observers = 0 }, []string{"RSDPPlan.Observers", "1..64"}},
		"health":    {func(p *RSDPPlan) { p.HealthInterval = 0 }, []string{"RSDPPlan.HealthInterval"}},
		"n":         {func(p *RSDPPlan) { p.Ns = []int{100} }, []string{"RSDPPlan.Ns", "2..64"}},
		"no n":      {func(p *RSDPPlan) { p.Ns = nil }, []string{"RSDPPlan.Ns", "2..64"}},
	} {
		p := good
		c.mod(&p)
		wantRefused(t, name, p.Validate(), c.want...)
	}
}

func TestRSDPRowCells(t *testing.T) {
	r := RSDPRow{Metric: "detect_ms", N: 5, Mode: "latest", Detector: "mutual", Measured: 10, Formula: 4, Trials: "1/2",
		Note: "eq.12; 1 of 2 runs FAILED: RUN: node 2 exited; its stderr ends:\nleaderlab: bind: address already in use\n"}
	want := []string{"detect_ms", "5", "latest", "mutual", "10.000", "4.000", "2.500", "1/2",
		"eq.12; 1 of 2 runs FAILED: RUN: node 2 exited; its stderr ends: / leaderlab: bind: address already in use"}
	if got := r.Cells(); !slices.Equal(got, want) {
		t.Errorf("cells\n%q\nwant\n%q", got, want)
	}
	r.Measured, r.Formula = math.NaN(), 1234.5
	if got := r.Cells(); got[4] != "-" || got[5] != "1234.5" || got[6] != "-" {
		t.Errorf("nothing measured: %q", got[4:7])
	}
}

func TestRSDPPlans(t *testing.T) {
	for _, c := range []struct {
		n      int
		det    string
		h, pt  time.Duration
		scaled bool
	}{
		{5, rundir.DetectorMutual, 50 * time.Millisecond, 25 * time.Millisecond, false},
		{13, rundir.DetectorMutual, 50 * time.Millisecond, 25 * time.Millisecond, false},
		{17, rundir.DetectorMutual, 90 * time.Millisecond, 67500 * time.Microsecond, true},
		{33, rundir.DetectorMutual, 320 * time.Millisecond, 240 * time.Millisecond, true},
		{33, rundir.DetectorObservers, 50 * time.Millisecond, 50 * time.Millisecond, false},
		{9, rundir.DetectorObserver, 50 * time.Millisecond, 25 * time.Millisecond, false},
	} {
		p := newRSDPDetectSetup(c.n, c.det, 50*time.Millisecond)
		if p.H != c.h || p.PT != c.pt || p.HScaled != c.scaled {
			t.Errorf("plan(%d, %s) = h %v pt %v scaled %v, want %v %v %v", c.n, c.det, p.H, p.PT, p.HScaled, c.h, c.pt, c.scaled)
		}
		if p.Duration < RSDPKillAt+time.Second || (c.det == rundir.DetectorMutual && p.PT >= p.H) {
			t.Errorf("plan(%d, %s): duration %v leaves no settle after the kill, or the mutual probe timeout %v >= h %v", c.n, c.det, p.Duration, p.PT, p.H)
		}
	}
	for _, c := range []struct {
		i, k int
		u    float64
		want time.Duration
	}{{0, 3, 0, time.Second}, {1, 3, 0.5, 1025 * time.Millisecond}, {2, 3, 0.999999, 1050 * time.Millisecond}, {0, 1, 0.25, 1012500 * time.Microsecond}} {
		if got := rsdpKillTime(50*time.Millisecond, c.i, c.k, c.u); got != c.want {
			t.Errorf("kill time of trial %d of %d, u=%v: %v, want %v", c.i, c.k, c.u, got, c.want)
		}
	}
	if p := newRSDPDetectSetup(3, rundir.DetectorObserver, 2*time.Second); p.Duration < RSDPKillAt+p.H+time.Second {
		t.Errorf("h=2s: duration %v leaves no settle after a kill as late as %v", p.Duration, RSDPKillAt+p.H)
	}
	text := rsdpLossChaos(3, 0.05)
	if want := "at 0s link 1->2 loss 5%; at 0s link 1->3 loss 5%; at 0s link 2->1 loss 5%; at 0s link 2->3 loss 5%; at 0s link 3->1 loss 5%; at 0s link 3->2 loss 5%"; text != want {
		t.Errorf("loss chaos\n%s\nwant\n%s", text, want)
	}
	for _, n := range []int{3, 9} {
		s, err := chaos.Parse(rsdpLossChaos(n, 0.123), n)
		if err != nil {
			t.Fatalf("loss chaos for %d nodes does not parse: %v", n, err)
		}
		if len(s.Steps) != n*(n-1) || s.Steps[0].Link == nil || math.Abs(s.Steps[0].Link.Percent-12.3) > 1e-9 {
			t.Errorf("loss chaos for %d nodes: %d steps, first %+v", n, len(s.Steps), s.Steps[0])
		}
	}
	lp := newRSDPLossSetup(33)
	if lp.Resync != 330*time.Millisecond || lp.StatusTimeout >= lp.Resync || lp.Duration != 33*32*30*time.Millisecond+25*lp.Resync+time.Second {
		t.Errorf("loss plan for 33: %+v", lp)
	}
}
