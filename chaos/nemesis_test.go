package chaos

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseNemesisKinds(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{in: "kill,pause,partition", want: []string{"kill", "pause", "partition"}},
		{in: "link, kill ,kill", want: []string{"kill", "link"}}, // folded, grammar order
		{in: "stop,kill,pause,restart,partition,link,clock", want: NemesisKinds},
		{in: "stop,restart", want: []string{"restart", "stop"}},
		{in: "kill,nuke", err: `unknown fault kind "nuke" in "kill,nuke" (accepted: a comma-separated list of kill, pause, restart, partition, link, stop, clock, each optionally weighted as kind=w)`},
		{in: " , ", err: `no fault kind in " , "`},
	} {
		got, err := ParseNemesisKinds(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseNemesisKinds(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseNemesisKinds(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func nemesis(kinds string) Nemesis {
	k, err := ParseNemesisKinds(kinds)
	if err != nil {
		panic(err)
	}
	return Nemesis{Kinds: k, Interval: 500 * time.Millisecond, Nodes: 5, Until: 5 * time.Second, MinHold: 400 * time.Millisecond}
}

func TestNemesisValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Nemesis)
		err  string
	}{
		{"restart alone", func(n *Nemesis) { n.Kinds = []string{"restart"} }, "needs kill or stop in the list too"},
		{"no interval", func(n *Nemesis) { n.Interval = 0 }, "--nemesis-interval 0s: want a positive duration"},
		{"one node", func(n *Nemesis) { n.Nodes = 1 }, "at least 2 nodes"},
		{"no time", func(n *Nemesis) { n.Until = 100 * time.Millisecond }, "leaves 100ms, less than the shortest fault (400ms)"},
		{"negative time", func(n *Nemesis) { n.Until = -time.Second }, "leaves 0s"},
		{"bad link kind", func(n *Nemesis) { n.LinkKinds = []string{"teleport"} }, `link rule "teleport"`},
	} {
		nm := nemesis("kill,pause,partition")
		tc.edit(&nm)
		if _, err := nm.Draw(1); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: Draw error = %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestNemesisDeterministic: the same seed draws the same schedule, another seed another one, and
// the text parses back to the same steps (so cluster.json's copy replays it).
func TestNemesisDeterministic(t *testing.T) {
	nm := nemesis("kill,pause,restart,partition,link")
	a, err := nm.Draw(7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := nm.Draw(7)
	if a.String() != b.String() {
		t.Fatalf("seed 7 drew two schedules:\n%s\n---\n%s", a, b)
	}
	if len(a.Steps) == 0 {
		t.Fatalf("seed 7 drew nothing")
	}
	differs := false
	for seed := int64(8); seed < 20 && !differs; seed++ {
		c, _ := nm.Draw(seed)
		differs = c.String() != a.String()
	}
	if !differs {
		t.Errorf("seeds 8..19 all drew seed 7's schedule")
	}
	back, err := Parse(a.String(), nm.Nodes)
	if err != nil {
		t.Fatalf("the drawn schedule does not parse: %v\n%s", err, a)
	}
	if back.String() != a.String() {
		t.Errorf("parse(render) changed the schedule:\n%s\n---\n%s", a, back)
	}
}

// TestNemesisSeven pins one schedule, so that a change to the generator, which would change every
// saved nemesis run's meaning for a given seed, is a deliberate one.
func TestNemesisSeven(t *testing.T) {
	nm := nemesis("kill,pause,partition")
	s, err := nm.Draw(7)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"at 338ms partition isolate leader",
		"at 738ms heal",
		"at 823ms partition random-halves",
		"at 1.795s heal",
		"at 2.673s kill random",
		"at 3.63s partition halves",
		"at 4.03s heal",
	}, "\n")
	if s.String() != want {
		t.Errorf("seed 7 draws\n%s\nwant\n%s", s, want)
	}
}

// nemesisStates replays a drawn schedule's bookkeeping: for every moment a step fires, how many
// nodes are dead or paused, and which network faults are in force.
func TestNemesisProperties(t *testing.T) {
	configs := map[string]Nemesis{}
	for _, kinds := range []string{"kill", "pause", "kill,pause,restart", "partition,link", "kill,pause,restart,partition,link", "stop,restart", "kill,pause,restart,partition,link,stop"} {
		for _, overlap := range []bool{false, true} {
			for _, restart := range []bool{false, true} {
				for _, n := range []int{2, 3, 5} {
					nm := nemesis(kinds)
					nm.Overlap, nm.Restart, nm.Nodes = overlap, restart, n
					nm.Interval = 200 * time.Millisecond
					configs[kinds+map[bool]string{true: " overlap", false: ""}[overlap]+map[bool]string{true: " restart", false: ""}[restart]+" n"+string(rune('0'+n))] = nm
				}
			}
		}
	}
	for name, nm := range configs {
		for seed := int64(0); seed < 40; seed++ {
			s, err := nm.Draw(seed)
			if err != nil {
				t.Fatalf("%s seed %d: %v", name, seed, err)
			}
			checkNemesis(t, name, seed, nm, s)
		}
	}
}

func checkNemesis(t *testing.T, name string, seed int64, nm Nemesis, s *Schedule) {
	t.Helper()
	fail := func(format string, a ...any) {
		t.Helper()
		t.Fatalf("%s seed %d: "+format+"\n%s", append([]any{name, seed}, append(a, s)...)...)
	}
	if last := s.LastFault(); last > nm.Until {
		fail("the last fault ends at %v, after %v (the settle window)", last, nm.Until)
	}
	// Walk the steps: the network faults in force, and the nodes kept down (killed or paused).
	type pause struct{ end time.Duration }
	var pauses []pause
	dead, net := 0, 0
	var faultEnd time.Duration // without overlap: when the fault in force is undone
	for i, st := range s.Steps {
		if i > 0 && st.At < s.Steps[i-1].At {
			fail("steps out of order at %q", st.Text)
		}
		if !contains(nm.Kinds, kindOf(st)) && st.Op != OpHeal && !(st.Op == OpRestart && nm.Restart) {
			fail("step %q is not of a kind in %v", st.Text, nm.Kinds)
		}
		live := pauses[:0]
		for _, p := range pauses {
			if p.end > st.At {
				live = append(live, p)
			}
		}
		pauses = live
		isUndo := st.Op == OpHeal || (st.Op == OpRestart && nm.Restart)
		if !nm.Overlap && !isUndo && st.At < faultEnd {
			fail("step %q starts before the previous fault is undone at %v (no --nemesis-overlap)", st.Text, faultEnd)
		}
		switch st.Op {
		case OpKill, OpStop:
			dead++
		case OpRestart:
			dead--
			if dead < 0 {
				fail("step %q restarts a node nothing killed", st.Text)
			}
		case OpPause:
			pauses = append(pauses, pause{end: st.At + st.For})
			if st.For < nm.MinHold {
				fail("pause %q is shorter than the minimum hold %v", st.Text, nm.MinHold)
			}
		case OpPartition, OpLink:
			net++
		case OpHeal:
			net = 0
		}
		if dead+len(pauses) >= nm.Nodes {
			fail("after %q, %d nodes are dead and %d paused: none of %d is left running", st.Text, dead, len(pauses), nm.Nodes)
		}
		if st.Op == OpLink && st.Link.From.ID == st.Link.To.ID {
			fail("link %q joins a node to itself", st.Text)
		}
		if !isUndo {
			faultEnd = st.At + st.For
			// the fault's undo is the next heal/restart; find it for the overlap check
			for _, u := range s.Steps[i+1:] {
				if (st.Op == OpPartition || st.Op == OpLink) && u.Op == OpHeal {
					faultEnd = u.At
					break
				}
				if (st.Op == OpKill || st.Op == OpStop) && nm.Restart && u.Op == OpRestart {
					faultEnd = u.At
					break
				}
			}
		}
	}
	if net != 0 {
		fail("a network fault is still in force at the end")
	}
	if nm.Restart && dead != 0 {
		fail("with --nemesis-restart, %d killed nodes are never restarted", dead)
	}
}

// kindOf is the nemesis kind a step belongs to.
func kindOf(st Step) string {
	switch st.Op {
	case OpKill:
		return NemesisKill
	case OpStop:
		return NemesisStop
	case OpPause:
		return NemesisPause
	case OpRestart:
		return NemesisRestart
	case OpPartition:
		return NemesisPartition
	case OpLink:
		return NemesisLink
	}
	return st.Op
}

// TestNemesisOverlap: with overlap, some seed draws a fault that starts while another is in force.
func TestNemesisOverlap(t *testing.T) {
	nm := nemesis("pause,partition")
	nm.Overlap = true
	for seed := int64(0); seed < 50; seed++ {
		s, _ := nm.Draw(seed)
		inForce := time.Duration(-1)
		for _, st := range s.Steps {
			if st.Op == OpHeal {
				continue
			}
			if st.At < inForce {
				return
			}
			end := st.At + st.For
			if st.Op == OpPartition {
				for _, u := range s.Steps {
					if u.Op == OpHeal && u.At >= st.At {
						end = u.At
						break
					}
				}
			}
			inForce = max(inForce, end)
		}
	}
	t.Errorf("with --nemesis-overlap no seed in 0..49 drew overlapping faults")
}

// TestNemesisLinkKinds: a restricted set of link rules (the iptables backend's) is respected.
func TestNemesisLinkKinds(t *testing.T) {
	nm := nemesis("link")
	nm.LinkKinds = []string{LinkDrop, LinkLoss}
	for seed := int64(0); seed < 30; seed++ {
		s, _ := nm.Draw(seed)
		for _, st := range s.Steps {
			if st.Op == OpLink && st.Link.Kind != LinkDrop && st.Link.Kind != LinkLoss {
				t.Fatalf("seed %d drew %q with link kinds drop, loss", seed, st.Text)
			}
		}
	}
}
