package chaos

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseNemesisWeights(t *testing.T) {
	kinds, w, err := ParseNemesis("clock=2, kill=3,pause")
	if err != nil || !reflect.DeepEqual(kinds, []string{"kill", "pause", "clock"}) || !reflect.DeepEqual(w, map[string]int{"kill": 3, "pause": 1, "clock": 2}) {
		t.Fatalf("ParseNemesis = %v %v %v", kinds, w, err)
	}
	if got := FormatNemesis(kinds, w); got != "kill=3,pause=1,clock=2" {
		t.Errorf("FormatNemesis = %q", got)
	}
	if _, w, _ := ParseNemesis("kill,pause"); w != nil {
		t.Errorf("no weight given: weights %v, want nil (the unweighted draw)", w)
	}
	for _, bad := range []string{"kill=0", "kill=x", "kill=101", "kill=-1"} {
		if _, _, err := ParseNemesis(bad); err == nil || !strings.Contains(err.Error(), "want a whole number 1..100") {
			t.Errorf("ParseNemesis(%q) error = %v", bad, err)
		}
	}
}

// Weights change the mix: kill drawn 20 times as often as pause draws far more kills.
func TestNemesisWeightsShiftTheMix(t *testing.T) {
	count := func(w map[string]int) (kills, pauses int) {
		for seed := range int64(50) {
			nm := Nemesis{Kinds: []string{NemesisKill, NemesisPause}, Interval: 100 * time.Millisecond, Restart: true, Nodes: 5, Until: 5 * time.Second, MinHold: 50 * time.Millisecond, Weights: w}
			s, err := nm.Draw(seed)
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range s.Steps {
				switch st.Op {
				case OpKill:
					kills++
				case OpPause:
					pauses++
				}
			}
		}
		return kills, pauses
	}
	k1, p1 := count(nil)
	k2, p2 := count(map[string]int{NemesisKill: 20, NemesisPause: 1})
	if float64(k2)/float64(k2+p2) < 0.85 || float64(k1)/float64(k1+p1) > 0.65 {
		t.Errorf("kill share unweighted %d/%d, weighted 20:1 %d/%d", k1, k1+p1, k2, k2+p2)
	}
}

func TestNemesisDrawsClockFaults(t *testing.T) {
	seen := map[string]bool{}
	for seed := range int64(40) {
		nm := Nemesis{Kinds: []string{NemesisClock}, Interval: 300 * time.Millisecond, Nodes: 5, Until: 6 * time.Second, MinHold: 400 * time.Millisecond}
		s, err := nm.Draw(seed)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Parse(s.String(), 5)
		if err != nil {
			t.Fatalf("seed %d: the drawn schedule does not parse: %v\n%s", seed, err, s)
		}
		open := map[string]bool{}
		for _, st := range back.Steps {
			if st.Op != OpClock {
				t.Fatalf("seed %d: a clock nemesis drew %q", seed, st.Text)
			}
			seen[st.Clock.Kind] = true
			if st.Clock.Kind == ClockReset {
				delete(open, st.Target.String())
				if st.Target.Kind == TargetAll {
					clear(open)
				}
			} else if st.Clock.Kind != ClockStrobe {
				open[st.Target.String()] = true
			}
		}
		if len(open) > 0 {
			t.Errorf("seed %d: clock faults never reset: %v\n%s", seed, open, s)
		}
		if last := back.LastFault(); last > nm.Until {
			t.Errorf("seed %d: the last clock fault ends at %v, after %v", seed, last, nm.Until)
		}
	}
	for _, k := range []string{ClockRate, ClockBump, ClockStrobe, ClockReset} {
		if !seen[k] {
			t.Errorf("40 seeds drew no clock %s", k)
		}
	}
}

func TestSwarm(t *testing.T) {
	a, b := Swarm(7, NemesisKinds, time.Second), Swarm(7, NemesisKinds, time.Second)
	if a != b {
		t.Fatalf("the same seed drew %+v and %+v", a, b)
	}
	mixes := map[string]bool{}
	for seed := range int64(200) {
		d := Swarm(seed, NemesisKinds, time.Second)
		kinds, w, err := ParseNemesis(d.Nemesis)
		if err != nil || w == nil {
			t.Fatalf("seed %d drew %q: %v", seed, d.Nemesis, err)
		}
		nm := Nemesis{Kinds: kinds, Weights: w, Interval: d.Interval, Overlap: d.Overlap, Restart: true, Nodes: 5, Until: 5 * time.Second, MinHold: 400 * time.Millisecond}
		if err := nm.Validate(); err != nil {
			t.Fatalf("seed %d drew an invalid nemesis %q: %v", seed, d.Nemesis, err)
		}
		mixes[strings.Join(kinds, ",")] = true
	}
	if len(mixes) < 40 {
		t.Errorf("200 seeds drew only %d mixes of kinds", len(mixes))
	}
}
