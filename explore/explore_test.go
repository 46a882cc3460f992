package explore

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// subsets lists every non-empty subset of 1..n.
func subsets(n int) [][]int {
	var out [][]int
	for mask := 1; mask < 1<<n; mask++ {
		var s []int
		for id := 1; id <= n; id++ {
			if mask&(1<<(id-1)) != 0 {
				s = append(s, id)
			}
		}
		out = append(out, s)
	}
	return out
}

func explore(t *testing.T, c Config) *Result {
	t.Helper()
	x, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return x.Run()
}

// Every asynchronous algorithm, every cluster of up to 4 nodes, every set of initiators, one crash
// at any point: explored to the end, no property broken. (Under the race detector, 4 nodes with all initiators
// and with the lowest alone; every set up to 3.)
func TestSmallClustersEveryInitiatorSetOneCrash(t *testing.T) {
	for _, algo := range Explorable() {
		if a, _ := election.Lookup(algo); a.Synchronous {
			continue // a crash stalls a synchronizer (its declared limit): TestSynchronizersExplored
		}
		t.Run(algo, func(t *testing.T) {
			for n := 1; n <= 4; n++ {
				for _, inits := range subsets(n) {
					if raceOn && n == 4 && len(inits) != n && !slices.Equal(inits, []int{1}) {
						continue
					}
					c := DefaultConfig(algo, n)
					c.Initiators = inits
					c.Crashes = min(1, n-1)
					r := explore(t, c)
					if len(r.Violations) == 0 && !r.Complete {
						t.Fatalf("n=%d initiators %v: not complete (%d states, stopped by %s)", n, inits, r.Distinct, r.StoppedBy)
					}
					if len(r.Violations) > 0 {
						v := r.Violations[0]
						t.Fatalf("n=%d initiators %v: complete %v, %s: %s\n%s", n, inits, r.Complete, v.Property, v.Detail, mustTrace(t, c, v))
					}
					if r.HasBound && r.MostMessages > r.Bound {
						t.Fatalf("n=%d initiators %v: %d messages over the bound %d, not reported", n, inits, r.MostMessages, r.Bound)
					}
				}
			}
		})
	}
}

func mustTrace(t *testing.T, c Config, v *Violation) string {
	x, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return x.TraceText(v)
}

// The seeds' worst cases come out of the exhaustive search exactly: Chang-Roberts with every node
// initiating on the worst placement sends n(n+1)/2 + n on every path, LeLann n² always.
func TestFaultFreeMessageCountsAreTheTextbooks(t *testing.T) {
	for _, tc := range []struct {
		algo  string
		n     int
		order []int
		want  int
	}{
		{"chang-roberts", 5, []int{5, 4, 3, 2, 1}, 5*6/2 + 5},
		{"chang-roberts", 4, []int{4, 3, 2, 1}, 4*5/2 + 4},
		{"lelann", 4, nil, 16},
		{"bully", 4, nil, 15}, // n²-1, reached when every node initiates
	} {
		c := DefaultConfig(tc.algo, tc.n)
		c.Order = tc.order
		r := explore(t, c)
		if len(r.Violations) > 0 || r.MostMessages != tc.want {
			t.Errorf("%s n=%d %v: most messages %d (want %d), violations %d", tc.algo, tc.n, tc.order, r.MostMessages, tc.want, len(r.Violations))
		}
	}
}

// The reduction must not lose a quiescent state: with and without it, the same set.
func TestReductionKeepsEveryQuiescentState(t *testing.T) {
	for _, algo := range Explorable() {
		for _, c := range []Config{{N: 3, Crashes: 1}, {N: 4}, {N: 3, Crashes: 1, Restarts: 1}, {N: 3, Timers: TimersAsync, MaxStates: 0}} {
			c.Algo, c.Timeout = algo, 200*time.Millisecond
			if c.Timers == TimersAsync && algo == "bully" {
				continue // its async state space has no end
			}
			if c.Restarts > 0 && raceOn {
				continue
			}
			name := fmt.Sprintf("%s/n%d-crash%d-restart%d-%s", algo, c.N, c.Crashes, c.Restarts, c.Timers)
			t.Run(name, func(t *testing.T) { sameQuiescentStates(t, c) })
		}
	}
}

// On the rings the reduction leans on where a node may send (mayReach): only along its routes or
// back to the sender of a stale message, and in one epoch only forward on a one-way ring. Larger
// rings, crashes (after which the reduction applies again), a restart, partitions (after the
// heal), a lone initiator and a random placement, each against the full search; and the
// reduction must do its work on a fault-free one-way ring where every node initiates.
func TestRingReductionKeepsEveryQuiescentState(t *testing.T) {
	for _, algo := range Explorable() {
		if algo == "bully" || algo == "floodmax" {
			continue
		}
		for _, c := range []Config{{N: 5}, {N: 4, Crashes: 1}, {N: 5, Initiators: []int{2}}, {N: 5, Order: []int{3, 1, 5, 2, 4}, Placement: "3,1,5,2,4"}, {N: 4, Crashes: 2}, {N: 3, Partitions: true}, {N: 4, Partitions: true}, {N: 3, Crashes: 1, Restarts: 1}} {
			c.Algo, c.Timeout = algo, 200*time.Millisecond
			if raceOn && (c.Crashes > 1 || c.Partitions || c.Restarts > 0 || algo == "hirschberg-sinclair") {
				continue
			}
			if c.Partitions && (algo == "franklin" || algo == "hirschberg-sinclair") && c.N > 3 {
				continue // not finite, or too large, within the test's bound
			}
			name := fmt.Sprintf("%s/n%d-crash%d-restart%d-part%v-inits%v-ids%s", algo, c.N, c.Crashes, c.Restarts, c.Partitions, c.Initiators, c.Placement)
			t.Run(name, func(t *testing.T) {
				reduced, full := sameQuiescentStates(t, c)
				oneWay := algo == "chang-roberts" || algo == "lelann" || algo == "peterson"
				if c.Crashes == 0 && !c.Partitions && c.Initiators == nil && oneWay && reduced.Distinct*3 > full.Distinct {
					t.Errorf("a fault-free one-way ring, all initiating: %d states with the reduction, %d without: want it to cut them at least threefold", reduced.Distinct, full.Distinct)
				}
			})
		}
	}
}

// On Bully's mesh the reduction leans on what each message may make its receiver send
// (election.Reactor, answers): with nothing in flight that may set a node other than i sending
// anything, only answers to i's own messages can reach i (nor can the news of the last crash where
// its receiver declares it sends nothing on it: election.NewsReactor). Against the full search:
// fault-free, lone and partial initiators, crashes (after which the reduction applies again), with
// lone and partial initiators too, a restart, a crash of the leader (at N = 5 too, where only 5
// initiates: the re-election after its death, 9,530 states against 246,344), a partition; and the
// reduction must do its work on a fault-free election.
func TestMeshReductionKeepsEveryQuiescentState(t *testing.T) {
	for _, c := range []Config{{N: 4}, {N: 4, Initiators: []int{1}}, {N: 4, Initiators: []int{2, 3}}, {N: 4, Crashes: 1}, {N: 4, Crashes: 1, Initiators: []int{1}}, {N: 4, Crashes: 1, Initiators: []int{2, 3}}, {N: 4, Crashes: 2}, {N: 4, Crashes: 1, CrashTargets: CrashLeader}, {N: 5, Initiators: []int{5}, Crashes: 1, CrashTargets: CrashLeader}, {N: 3, Crashes: 1, Restarts: 1}, {N: 3, Partitions: true}} {
		c.Algo, c.Timeout = "bully", 200*time.Millisecond
		if raceOn && (c.Crashes > 1 || c.Restarts > 0 || c.N > 4) {
			continue
		}
		name := fmt.Sprintf("n%d-crash%d-%s-restart%d-part%v-inits%v", c.N, c.Crashes, c.CrashTargets, c.Restarts, c.Partitions, c.Initiators)
		t.Run(name, func(t *testing.T) {
			reduced, full := sameQuiescentStates(t, c)
			if c.Crashes == 0 && !c.Partitions && c.Initiators == nil && reduced.Distinct*10 > full.Distinct {
				t.Errorf("a fault-free election, all initiating: %d states with the reduction, %d without: want it to cut them at least tenfold", reduced.Distinct, full.Distinct)
			}
		})
	}
}

// sameQuiescentStates explores c with and without the reduction and fails the test unless both
// reach the same quiescent states and the reduction explores no more states.
func sameQuiescentStates(t *testing.T, c Config) (reduced, full *Result) {
	t.Helper()
	sets := [2]map[fingerprint]bool{}
	var results [2]*Result
	for i, noRed := range []bool{false, true} {
		c := c
		c.NoReduction = noRed
		c.MaxStates = 300_000
		x, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		sets[i] = map[fingerprint]bool{}
		x.m.onQuiescent = func(s *state) { sets[i][s.fp] = true }
		results[i] = x.Run()
		if results[i].Broken != "" {
			t.Fatalf("the reduction's assumption broke: %s", results[i].Broken)
		}
		if !results[i].Complete {
			t.Skipf("not complete within %d states (reduction %v)", c.MaxStates, !noRed)
		}
	}
	if len(sets[0]) != len(sets[1]) {
		t.Fatalf("%d quiescent states with the reduction, %d without", len(sets[0]), len(sets[1]))
	}
	for fp := range sets[1] {
		if !sets[0][fp] {
			t.Fatalf("a quiescent state without the reduction is missing with it")
		}
	}
	if results[0].Distinct > results[1].Distinct {
		t.Errorf("the reduction explored more states (%d) than the full search (%d)", results[0].Distinct, results[1].Distinct)
	}
	for i, r := range results {
		for _, v := range r.Violations {
			if v.Limit == "" {
				t.Errorf("reduction %v: %s: %s", i == 0, v.Property, v.Detail)
			}
		}
	}
	if len(results[0].Violations) != len(results[1].Violations) {
		t.Errorf("%d violations with the reduction, %d without", len(results[0].Violations), len(results[1].Violations))
	}
	return results[0], results[1]
}

// A copy is a machine of its own: stepping it leaves the original as it was, and a copy of a
// machine in some state fingerprints like that machine.
func TestCopyIsIndependentAndFingerprintsAlike(t *testing.T) {
	for _, algo := range Explorable() {
		c := DefaultConfig(algo, 4)
		c.Crashes = 1
		x, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		s := x.m.initial()
		for depth := 0; depth < 12; depth++ {
			evs := x.m.enabled(s, nil)
			if len(evs) == 0 {
				break
			}
			before := make([][2]uint64, len(s.nodes))
			for i, ns := range s.nodes {
				x.m.encodeNode(ns)
				before[i] = ns.h
				if ns.alive() {
					cp := x.m.cloneNode(ns)
					x.m.encodeNode(cp)
					if cp.h != ns.h {
						t.Fatalf("%s: node %d: a copy fingerprints differently from its original", algo, i+1)
					}
				}
			}
			for _, ev := range evs {
				x.m.apply(s, ev)
			}
			for i, ns := range s.nodes {
				x.m.encodeNode(ns)
				if ns.h != before[i] {
					t.Fatalf("%s: node %d changed when its successors were made", algo, i+1)
				}
			}
			s = x.m.apply(s, evs[depth%len(evs)])
		}
	}
}

// A machine's configuration (election.Fixed) is shared by every copy and left out of fingerprints:
// it must never change after New. Every machine stepped in a search is compared with a new one.
func TestFixedNeverChanges(t *testing.T) {
	for _, algo := range Explorable() {
		c := DefaultConfig(algo, 4)
		c.Crashes, c.Restarts = 1, 1
		c.MaxStates = 20_000
		x, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		fresh := map[[2]int]election.Machine{}
		checked, fixed := 0, 0
		x.m.afterStep = func(id, inc int, m election.Machine) {
			checked++
			key := [2]int{id, inc}
			f, ok := fresh[key]
			if !ok {
				if f, err = x.m.newMachine(id, inc); err != nil {
					t.Fatal(err)
				}
				fresh[key] = f
			}
			diff, n := fixedDiff(x.m.mplan.elem, ptrOf(f), ptrOf(m), algo, 0)
			if diff != "" {
				t.Fatalf("%s node %d: configuration %s changed after New", algo, id, diff)
			}
			fixed = n
		}
		x.Run()
		if checked == 0 || fixed == 0 {
			t.Fatalf("%s: %d steps checked, %d configurations compared", algo, checked, fixed)
		}
	}
}

// fixedDiff names the first configuration (a pointer to an election.Fixed struct) whose struct
// differs between the structs of type p at a and b (looking into embedded and pointed-to structs),
// and counts the configurations compared.
func fixedDiff(p *plan, a, b unsafe.Pointer, path string, depth int) (string, int) {
	if p.kind != reflect.Struct || depth > 3 {
		return "", 0
	}
	count := 0
	for _, f := range p.fields {
		fa, fb := unsafe.Add(a, f.off), unsafe.Add(b, f.off)
		name := path + "." + f.name
		switch {
		case f.p.kind == reflect.Struct:
			d, n := fixedDiff(f.p, fa, fb, name, depth+1)
			count += n
			if d != "" {
				return d, count
			}
		case f.p.kind == reflect.Pointer && f.p.elem.kind == reflect.Struct:
			pa, pb := *(*unsafe.Pointer)(fa), *(*unsafe.Pointer)(fb)
			if pa == nil || pb == nil {
				continue
			}
			if f.p.fixed {
				count++
				if !reflect.DeepEqual(view(f.p.elem, pa).Interface(), view(f.p.elem, pb).Interface()) {
					return name, count
				}
				continue
			}
			d, n := fixedDiff(f.p.elem, pa, pb, name, depth+1)
			count += n
			if d != "" {
				return d, count
			}
		}
	}
	return "", count
}

// Bad configurations are refused with the field and its value named and what is accepted (the CLI
// writes the field as its flag: main's flagnames.go).
func TestBadConfigurationsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		c    Config
		want string
	}{
		{Config{Algo: "nosuch", N: 3}, "accepted: bully"},
		{Config{Algo: "rsdp", N: 3}, "explore.Config.Algo rsdp: not explorable"},
		{Config{Algo: "bully", N: 0}, "explore.Config.N 0: want 1..16"},
		{Config{Algo: "bully", N: 17}, "want 1..16"},
		{Config{Algo: "bully", N: 3, Crashes: 3}, "explore.Config.Crashes 3: want 0..2"},
		{Config{Algo: "bully", N: 3, Crashes: 1, Restarts: 2}, "explore.Config.Restarts 2"},
		{Config{Algo: "bully", N: 3, Timers: "fast"}, "explore.Config.Timers \"fast\": want timely or async"},
		{Config{Algo: "bully", N: 3, CrashTargets: "nobody"}, "explore.Config.CrashTargets \"nobody\": want any or leader"},
		{Config{Algo: "bully", N: 3, MaxStates: -1}, "explore.Config.MaxStates -1"},
		{Config{Algo: "lelann", N: 3, Order: []int{1, 1, 2}}, "explore.Config.Order [1 1 2]: want a ring order, a permutation"},
		{Config{Algo: "bully", N: 3, Initiators: []int{4}}, "explore.Config.Initiators 4"},
		{Config{Algo: "bully", N: 3, Initiators: []int{}}, "explore.Config.Initiators: none"},
		{Config{Algo: "bully", N: 3, Workers: -1}, "explore.Config.Workers -1: want a number of goroutines, 1 or more"},
		{Config{Algo: "bully", N: 3, MaxMemory: 1 << 20}, "explore.Config.MaxMemory 1048576: want at least 16777216 bytes"},
		{Config{Algo: "bully", N: 3, MaxMemory: 64 << 20, Bitstate: 65 << 20}, "explore.Config.Bitstate 68157440: want a bit array no larger than explore.Config.MaxMemory"},
	} {
		_, err := New(tc.c)
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want ErrConfig naming %q", tc.c, err, tc.want)
		}
	}
}

// Bully under async timers: two nodes believe in themselves at once — the limit its declaration
// states — and the shortest trace to it is a run directory that the checker fails,
// read back from disk as `leaderlab check` reads it, and that holds to the run directory contract.
func TestBullyAsyncCounterexampleIsARunThatFails(t *testing.T) {
	c := DefaultConfig("bully", 3)
	c.Timers = TimersAsync
	c.MaxStates = 100_000
	x, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	r := x.Run()
	var v *Violation
	for _, w := range r.Violations {
		if w.Property == PropUnique {
			v = w
		}
	}
	if v == nil || v.Limit == "" {
		t.Fatalf("want an unpromised %s violation, got %+v", PropUnique, r.Violations)
	}
	if r.Violation() != nil {
		t.Fatalf("bully promises nothing it broke here, but %s was reported as promised", r.Violation().Property)
	}
	if len(v.Trace) > 10 {
		t.Errorf("trace of %d transitions; the shortest known is 10:\n%s", len(v.Trace), x.TraceText(v))
	}
	dir := filepath.Join(t.TempDir(), "cx")
	verdict, err := x.WriteDir(v, dir)
	if err != nil {
		t.Fatal(err)
	}
	if verdict.OK {
		t.Fatalf("the checker passed the counterexample")
	}
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if again := check.Check(run, check.Options{}); again.OK {
		t.Fatalf("the counterexample read from disk passes the checker")
	}
	if _, err := os.Stat(filepath.Join(dir, TraceFile)); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join("..", "..", "shared", "checks", "rundir.py")
	if _, err := os.Stat(script); err != nil {
		t.Skipf("no run directory contract check beside the project (%v)", err)
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the run directory contract check needs it")
	}
	out, err := exec.Command("python3", script, dir, "1").CombinedOutput()
	if err != nil {
		t.Fatalf("run directory contract: %v\n%s", err, out)
	}
	if _, err := x.WriteDir(v, dir); err == nil {
		t.Fatalf("a second trace was written over the first")
	}
}

// Found by the explorer (the mutant tests' controls, with two crashes): a node that no election
// had reached slept with no leader for ever when the initiators died first. Bully and the ring core
// now open an election when such a node sees a node (a ring: a neighbour) die.
func TestInitiatorsDeadBeforeAnyMessage(t *testing.T) {
	for _, algo := range Explorable() {
		for _, tc := range []struct {
			n     int
			inits []int
		}{{3, []int{2}}, {3, []int{1}}} {
			c := DefaultConfig(algo, tc.n)
			c.Initiators, c.Crashes = tc.inits, 2
			c.MaxStates = 2_000_000
			r := explore(t, c)
			if v := r.Violation(); v != nil {
				t.Errorf("%s n=%d initiators %v, 2 crashes: %s: %s\n%s", algo, tc.n, tc.inits, v.Property, v.Detail, mustTrace(t, c, v))
			}
		}
	}
}

// One partition into any two sides at any point, and its heal at any point after: explored to the
// end at 3 nodes, no property broken (each side judged on its own while the partition holds).
// Franklin is left out: with a node that still suspects the healed side, its messages multiply with
// no end while the model holds heartbeats back (they come only with nothing in flight), so its
// search does not finish; docs/explorer.md, "Findings", says so.
func TestPartitionsSmall(t *testing.T) {
	for _, algo := range Explorable() {
		if algo == "franklin" {
			continue
		}
		c := DefaultConfig(algo, 3)
		c.Partitions = true
		c.MaxStates = 500_000
		r := explore(t, c)
		if v := r.Violation(); v != nil || !r.Complete {
			msg := ""
			if v != nil {
				msg = v.Property + ": " + v.Detail + "\n" + mustTrace(t, c, v)
			}
			t.Errorf("%s -n 3 --partitions: complete %v (%d states) %s", algo, r.Complete, r.Distinct, msg)
		}
	}
}

// The synchronizers carrying FloodMax, explored: under timely timers (ABD's δ holds) no
// interleaving breaks pulse safety or elects anyone but the highest ID, over every synchronizer; a
// crash stalls them (agreement is FloodMax's declared limit: the stall is found and reported as
// such); and under async timers ABD's pulse timer outruns a message, which the explorer finds as a
// late message (declared too), while α, which has no timer, stays safe.
func TestSynchronizersExplored(t *testing.T) {
	for _, sync := range election.Synchronizers {
		// N = 3 at most: a mesh of 4 is 826,185 states under ABD (3 s) and more than 3 M under α,
		// β and γ, whose acks and safes multiply the interleavings.
		for n := 1; n <= 3; n++ {
			c := DefaultConfig("floodmax", n)
			c.Options = map[string]string{election.OptSync: sync}
			if sync == "gamma" {
				c.Options[election.OptClusters] = strconv.Itoa(min(2, n))
			}
			r := explore(t, c)
			if !r.Complete || len(r.Violations) > 0 || !r.Synchronous {
				t.Fatalf("%s n=%d: complete %v, violations %+v", sync, n, r.Complete, r.Violations)
			}
			if n > 1 && (!r.HasBound || r.MostMessages != r.Bound) {
				t.Errorf("%s n=%d: %d floods, want exactly the bound %d (rounds × 2|E|)", sync, n, r.MostMessages, r.Bound)
			}
		}
		c := DefaultConfig("floodmax", 3)
		c.Options = map[string]string{election.OptSync: sync}
		c.Crashes = 1
		r := explore(t, c)
		if r.Violation() != nil || !r.Complete {
			t.Fatalf("%s with a crash: %+v", sync, r.Violations)
		}
		stalled := false
		for _, v := range r.Violations {
			stalled = stalled || (v.Limit != "" && (v.Property == PropWillEnd || v.Property == PropHighest))
		}
		if !stalled {
			t.Errorf("%s with a crash: no stall found (violations %+v)", sync, r.Violations)
		}
	}
	for sync, late := range map[string]bool{"abd": true, "alpha": false} {
		c := DefaultConfig("floodmax", 3)
		c.Options = map[string]string{election.OptSync: sync}
		c.Timers = TimersAsync
		r := explore(t, c)
		var v *Violation
		for _, w := range r.Violations {
			if w.Property == PropPulse {
				v = w
			}
		}
		switch {
		case late && (v == nil || v.Limit == ""):
			t.Errorf("abd under async timers: want a late message reported as its declared limit, got %+v", r.Violations)
		case !late && (v != nil || len(r.Violations) > 0 || !r.Complete):
			t.Errorf("alpha under async timers: %+v", r.Violations)
		}
	}
}

// A search told to stop ends where it is and says so: not complete, stopped by the interrupt, the
// properties judged only so far. (The CLI closes Stop on Ctrl-C or SIGTERM.)
func TestStopEndsTheSearchWhereItIs(t *testing.T) {
	c := DefaultConfig("bully", 6)
	stop := make(chan struct{})
	close(stop)
	c.Stop = stop
	x, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	r := x.Run()
	if r.Complete || r.StoppedBy != "interrupted" || r.Distinct >= 104_241 {
		t.Fatalf("complete %v, stopped by %q, %d states: want an interrupted, partial search", r.Complete, r.StoppedBy, r.Distinct)
	}
	var out strings.Builder
	r.Print(&out)
	if !strings.Contains(out.String(), "NOT complete: interrupted") || !strings.Contains(out.String(), "ok so far") {
		t.Errorf("the output does not say so:\n%s", out.String())
	}
}

// A depth bound explores every state within D transitions and no other: at one more than the
// search's own depth it is the whole search; at the depth of the last level, whose states still
// have transitions (back to states seen), every state but the search is not complete; lower, a
// prefix that says so. A violation within the bound is found as without it.
func TestMaxDepthBoundsTheSearch(t *testing.T) {
	run := func(c Config) *Result {
		t.Helper()
		x, err := New(c)
		if err != nil {
			t.Fatal(err)
		}
		return x.Run()
	}
	c := DefaultConfig("bully", 4)
	c.Crashes = 1
	full := run(c)
	if !full.Complete || full.Depth < 4 {
		t.Fatalf("the unbounded search: complete %v, depth %d", full.Complete, full.Depth)
	}
	c.MaxDepth = full.Depth + 1
	if r := run(c); !r.Complete || r.Distinct != full.Distinct || r.StoppedBy != "" || r.CycleCheck != full.CycleCheck {
		t.Errorf("bounded past its depth: complete %v, %d states (want %d), stopped by %q, cycle check %q", r.Complete, r.Distinct, full.Distinct, r.StoppedBy, r.CycleCheck)
	}
	c.MaxDepth = full.Depth
	if r := run(c); r.Complete || r.Distinct != full.Distinct || r.StoppedBy != "max-depth" {
		t.Errorf("bounded at its depth: complete %v, %d states (want %d), stopped by %q", r.Complete, r.Distinct, full.Distinct, r.StoppedBy)
	}
	c.MaxDepth = 3
	r := run(c)
	if r.Complete || r.Distinct >= full.Distinct || r.StoppedBy != "max-depth" || r.Depth != 3 || r.Deepest == nil || len(r.Deepest.Trace) != 3 {
		t.Errorf("bounded at 3: complete %v, %d states, stopped by %q, depth %d", r.Complete, r.Distinct, r.StoppedBy, r.Depth)
	}
	var out strings.Builder
	r.Print(&out)
	if !strings.Contains(out.String(), "bounded at --max-depth 3") || !strings.Contains(out.String(), "ok so far") {
		t.Errorf("the output does not say so:\n%s", out.String())
	}
	a := DefaultConfig("bully", 3)
	a.Timers, a.MaxDepth = TimersAsync, 1
	if r := run(a); !r.has(PropUnique) {
		t.Errorf("bully async within one transition: no UniqueLeader violation found")
	}
	a.MaxDepth = -1
	if _, err := New(a); err == nil || !strings.Contains(err.Error(), "MaxDepth -1") {
		t.Errorf("MaxDepth -1: err %v", err)
	}
}
