package explore

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

// workerCases are the searches the workers and the spill are held to: every algorithm at N = 3 with
// a crash, with a crash and a restart, with a partition, under async timers (where properties that
// are not promised break along the way, and the search goes on with a grown found set), and the
// mutants of mutants_test.go, caught by an invariant, by the message bound, at a quiescent state,
// by a cycle, or stopping at a broken assumption.
func workerCases() []Config {
	var out []Config
	for _, algo := range Explorable() {
		if a, _ := election.Lookup(algo); a.Synchronous {
			continue
		}
		bound := 10_000
		if raceOn {
			bound = 3_000 // the race detector's searches are ten times slower
		}
		for _, c := range []Config{{Crashes: 1}, {Crashes: 1, Restarts: 1, MaxStates: bound}, {Partitions: true, MaxStates: bound}, {Timers: TimersAsync, MaxStates: bound}} {
			c.Algo, c.N = algo, 3
			out = append(out, c)
		}
	}
	abd := Config{Algo: "floodmax", N: 3, Crashes: 1, Options: map[string]string{election.OptSync: "abd"}}
	async := Config{Algo: "floodmax", N: 3, Timers: TimersAsync, Options: map[string]string{election.OptSync: "abd"}}
	out = append(out, abd, async,
		Config{Algo: mutantCRForwardsSmaller, N: 3},
		Config{Algo: mutantBullyBlindWaitNoT1, N: 3, Crashes: 1},
		Config{Algo: mutantPetersonNoAlias, N: 4},
		Config{Algo: mutantLeLannShortCircle, N: 3},
		Config{Algo: mutantCRSendsBack, N: 4},
		Config{Algo: mutantBullyClaimsSilence, N: 4},
		Config{Algo: mutantBullyNewsFickle, N: 3, Crashes: 1},
		Config{Algo: mutantBullyEcho, N: 3, Crashes: 1},
		Config{Algo: mutantBullyEcho, N: 3, Crashes: 1, NoReduction: true},
	)
	return out
}

// The search finds the same with one worker, two, three, and two whose tables spill to disk past a
// memory bound of 64 KB: the same states expanded (canonical, when it ends), the same counts
// and figures, the same violations with the same shortest traces, the same deepest path, the same
// broken assumption and the same end. Where the graph walked has cycles and the tables spilled,
// the search for a fair cycle is not made (it holds every state in memory) and the outcome says so.
func TestWorkersFindWhatOneFinds(t *testing.T) {
	for _, c := range workerCases() {
		name := fmt.Sprintf("%s/n%d-crash%d-restart%d-%s-part%v-nored%v", c.Algo, c.N, c.Crashes, c.Restarts, c.Timers, c.Partitions, c.NoReduction)
		t.Run(name, func(t *testing.T) {
			base, seen := workersRun(t, c, 1, false)
			for _, v := range []struct {
				workers int
				spill   bool
			}{{2, false}, {3, false}, {2, true}} {
				if raceOn && v.workers == 3 {
					continue
				}
				r, states := workersRun(t, c, v.workers, v.spill)
				sameResult(t, fmt.Sprintf("%d workers, spill %v", v.workers, v.spill), base, r, v.spill)
				if base.Complete && r.Complete && !reflect.DeepEqual(seen, states) {
					t.Errorf("%d workers, spill %v: %d states expanded, one worker %d", v.workers, v.spill, len(states), len(seen))
				}
				if v.spill && r.Distinct > 2000 && r.SpillPeak == 0 {
					t.Errorf("%d states and nothing spilled past 64 KB", r.Distinct)
				}
			}
		})
	}
}

// workersRun explores c with workers, its memory bound 64 KB when spill is set (below what
// Config.MaxMemory takes, to make every table spill), and gives the result and the fingerprints of
// the states expanded.
func workersRun(t *testing.T, c Config, workers int, spill bool) (*Result, map[string]bool) {
	t.Helper()
	c.Workers, c.SpillDir = workers, t.TempDir()
	if c.MaxStates == 0 {
		c.MaxStates = 100_000
	}
	if a, ok := mutants[c.Algo]; ok {
		c.Algorithm = &a
	}
	x, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if spill {
		x.m.cfg.MaxMemory = 64 << 10
	}
	states := map[string]bool{}
	x.m.onVisit = func(s *state) { states[canonical(x.m, s)] = true }
	r := x.Run()
	if left, _ := os.ReadDir(c.SpillDir); len(left) > 0 {
		t.Errorf("%d workers, spill %v: the spill directory was left behind", workers, spill)
	}
	return r, states
}

// sameResult fails the test unless r is base, but for what the spill may leave out.
func sameResult(t *testing.T, what string, base, r *Result, spill bool) {
	t.Helper()
	bv := base.Violations
	if spill && r.CycleCheck == "memory" {
		if base.CycleCheck == "acyclic" || base.sorted == "acyclic" {
			t.Errorf("%s: the cycle search was left out, where the topological sort decided", what)
		}
		if n := len(bv); n > 0 && bv[n-1].CycleAt >= 0 {
			bv = bv[:n-1]
		}
		var out strings.Builder
		r.Print(&out)
		if r.Complete || !strings.Contains(out.String(), "ElectionWillEnd's cycles unjudged") {
			t.Errorf("%s: cycles unjudged, complete %v, and the output:\n%s", what, r.Complete, out.String())
		}
	} else if r.Complete != base.Complete || r.StoppedBy != base.StoppedBy || r.CycleCheck != base.CycleCheck || r.sorted != base.sorted {
		t.Errorf("%s: complete %v, stopped by %q, cycles %q, sorted %q; one worker: %v, %q, %q, %q", what,
			r.Complete, r.StoppedBy, r.CycleCheck, r.sorted, base.Complete, base.StoppedBy, base.CycleCheck, base.sorted)
	}
	if r.Distinct != base.Distinct || r.Transitions != base.Transitions || r.Depth != base.Depth || r.Quiescent != base.Quiescent {
		t.Errorf("%s: %d states, %d transitions, depth %d, %d quiescent; one worker: %d, %d, %d, %d", what,
			r.Distinct, r.Transitions, r.Depth, r.Quiescent, base.Distinct, base.Transitions, base.Depth, base.Quiescent)
	}
	if base.Complete && (r.MaxInFlight != base.MaxInFlight || r.MostMessages != base.MostMessages) {
		t.Errorf("%s: at most %d in flight, %d messages; one worker: %d, %d", what, r.MaxInFlight, r.MostMessages, base.MaxInFlight, base.MostMessages)
	}
	same := func(a, b *Violation) bool {
		return a == nil && b == nil || a != nil && b != nil && a.Property == b.Property && a.Detail == b.Detail &&
			a.Limit == b.Limit && a.CycleAt == b.CycleAt && reflect.DeepEqual(a.Trace, b.Trace)
	}
	if len(r.Violations) != len(bv) {
		t.Fatalf("%s: %d violations, one worker %d", what, len(r.Violations), len(bv))
	}
	for i := range bv {
		if !same(r.Violations[i], bv[i]) {
			t.Errorf("%s: violation %d is %s in %d transitions, one worker's %s in %d", what, i,
				r.Violations[i].Property, len(r.Violations[i].Trace), bv[i].Property, len(bv[i].Trace))
		}
	}
	if !same(r.Deepest, base.Deepest) || !same(r.BrokenAt, base.BrokenAt) || r.Broken != base.Broken {
		t.Errorf("%s: the deepest path or the broken assumption differs (%q; one worker %q)", what, r.Broken, base.Broken)
	}
}

// canonical is a state as the tests compare states across searches: its fingerprint hashes the
// numbers of the messages in flight, which are given in the order they are first sent, and that
// order is the workers'; here each message is its content.
func canonical(x *model, s *state) string {
	var b strings.Builder
	for _, ns := range s.nodes {
		fmt.Fprintf(&b, "%x|", ns.h)
	}
	for i, l := range s.links {
		if l == nil {
			continue
		}
		fmt.Fprintf(&b, "%d:", i)
		for _, p := range l.q {
			fmt.Fprintf(&b, "%d", p.k)
			if p.k == pMsg {
				fmt.Fprintf(&b, "%+v", *x.msgs.at(p.id))
			}
			b.WriteByte(',')
		}
	}
	fmt.Fprintf(&b, "|%d %d %d %d %v %d %d", s.now, s.crashes, s.restarts, s.part, s.partUsed, s.partAt, s.sent)
	return b.String()
}

// A bitstate search with room to spare finds what the exact one finds and says it is partial, with
// its chance of omission; one stopped by a bound says both.
func TestBitstateSaysPartial(t *testing.T) {
	c := DefaultConfig("franklin", 4)
	c.Crashes = 1
	exact := explore(t, c)
	c.Bitstate = 1 << 20
	r := explore(t, c)
	var out strings.Builder
	r.Print(&out)
	if r.Complete || r.StoppedBy != "bitstate" || r.Distinct != exact.Distinct || r.Omission <= 0 || r.Omission > 1e-4 ||
		!strings.Contains(out.String(), "PARTIAL search (bitstate hashing, --bitstate 1 MB") || !strings.Contains(out.String(), "ok so far") {
		t.Errorf("bitstate: complete %v, stopped by %q, %d states (exact %d), omission %g:\n%s", r.Complete, r.StoppedBy, r.Distinct, exact.Distinct, r.Omission, out.String())
	}
	c.MaxStates = 1000
	r = explore(t, c)
	out.Reset()
	r.Print(&out)
	if r.StoppedBy != "max-states" || !strings.Contains(out.String(), "and PARTIAL besides") {
		t.Errorf("bitstate bounded: stopped by %q:\n%s", r.StoppedBy, out.String())
	}
}
