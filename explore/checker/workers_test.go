package checker

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

// toy is a model small enough to reason about and big enough to need many batches: a state is a
// number below n, and from v the transitions 1..3 lead to (3v + t) mod n; a number divisible by 50
// has only faults, 4 and 5, to v + 1 and v + 2 (it is settled). The judgments fall on scattered numbers, most of them
// not promised (the search goes on past them), and the reduction keeps only the first transition
// once "P" is found (and at a settled state once "Z" is), and "Q" falls on many more states, so that the set found changes what the
// search explores and judges: the workers must judge each batch with the set found before it, and
// each transition with the set found before it, as one goroutine would.
type toy struct {
	n      uint32
	stopAt uint32 // a number whose state breaks a promised invariant (0: none)
	broken uint32 // a number whose reaching breaks the model's assumption (0: none)
	dag    bool   // no wrapping round: every transition leads to a larger number, so no cycle
	last   uint32
}

func (m *toy) Init() uint32 { m.last = 0; return 0 }
func (m *toy) Enabled(v uint32, out []uint32) []uint32 {
	out = out[:0]
	if v%50 == 0 && v != 0 {
		out = append(out, 4, 5)
	} else {
		out = append(out, 1, 2, 3)
	}
	if m.dag {
		out = slices.DeleteFunc(out, func(t uint32) bool { return m.to(v, t) >= m.n })
	}
	return out
}
func (m *toy) Reduce(v uint32, trs []uint32, found Found) []uint32 {
	if found != nil && (found.Has("P") && v%7 != 0 || found.Has("Z") && v%50 == 0) && len(trs) > 1 {
		return trs[:1]
	}
	return trs
}
func (m *toy) Next(v, t uint32) uint32 {
	m.last = m.to(v, t) % m.n
	return m.last
}
func (m *toy) to(v, t uint32) uint32 {
	if t >= 4 {
		return v + t - 3
	}
	return 3*v + t
}
func (m *toy) Keep(v uint32) uint32 { return v }
func (m *toy) Fingerprint(v uint32) Fingerprint {
	z := uint64(v)*0x9e3779b97f4a7c15 + 1
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	return Fingerprint{z ^ z>>31, uint64(v)}
}
func (m *toy) Class(t uint32) Class {
	if t >= 4 {
		return Fault
	}
	return Instant
}
func (m *toy) Broken() string {
	if m.broken != 0 && m.last == m.broken {
		return "boom"
	}
	return ""
}
func (m *toy) Visit(uint32) {}
func (m *toy) Invariant(v uint32, found Found) *Violation {
	switch {
	case m.stopAt != 0 && v == m.stopAt:
		return &Violation{Property: "Stop", Detail: fmt.Sprint(v)}
	case v > 25_000 && v%97 == 5 && !found.Has("P"):
		return &Violation{Property: "P", Detail: fmt.Sprint(v), Limit: "not promised"}
	case found.Has("P") && v%2 == 0 && !found.Has("Q"):
		return &Violation{Property: "Q", Detail: fmt.Sprint(v), Limit: "not promised"}
	}
	return nil
}
func (m *toy) Edge(v uint32, found Found) *Violation {
	if v%83 == 11 && !found.Has("E") {
		return &Violation{Property: "E", Detail: fmt.Sprint(v), Limit: "not promised"}
	}
	return nil
}
func (m *toy) Quiescent(v uint32) *Violation {
	if v%150 == 0 {
		return &Violation{Property: "Z", Detail: fmt.Sprint(v), Limit: "not promised"}
	}
	return nil
}
func (m *toy) Endless(n int) *Violation {
	return &Violation{Property: "Endless", Detail: fmt.Sprint(n)}
}
func (m *toy) Restless(uint32) bool   { return false }
func (m *toy) Pack(t uint32) uint32   { return t }
func (m *toy) Unpack(p uint32) uint32 { return p }
func (m *toy) Stower() Stower[uint32] { return toyStower{} }
func (m *toy) Fork() Model[uint32, uint32] {
	c := *m
	return &c
}

type toyStower struct{}

func (toyStower) Stow(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }
func (toyStower) Unstow(b []byte) (uint32, []byte) {
	v, k := binary.Uvarint(b)
	return uint32(v), b[k:]
}

var _ Parallel[uint32, uint32] = (*toy)(nil)

// Whatever the number of workers, and whether the tables spill to disk or not, a search finds what
// the one-goroutine search of old (reference) finds, and the same as one worker does: the same states, transitions, levels and quiescent states, the same violations in the same order with
// the same paths, the same deepest path and broken assumption, and ends the same way. The toy's
// graph has cycles, so the cycle search runs too (except where it would not fit after a spill: then
// the outcome says so).
func TestWorkersAndSpillFindWhatOneFinds(t *testing.T) {
	for _, c := range []struct {
		name string
		m    toy
		o    Options
	}{
		{"goes on past violations", toy{n: 40_000}, Options{Reduce: true}},
		{"stops at a promised one", toy{n: 40_000, stopAt: 31_337}, Options{Reduce: true}},
		{"stops at a broken assumption", toy{n: 40_000, broken: 29_000}, Options{Reduce: true}},
		{"max-states", toy{n: 40_000}, Options{Reduce: true, MaxStates: 12_345}},
		{"max-depth", toy{n: 40_000}, Options{MaxDepth: 8}},
		{"no reduction", toy{n: 20_000}, Options{}},
		{"no cycle", toy{n: 40_000, dag: true}, Options{Reduce: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			redone.Store(0)
			rm := c.m
			ref := reference[uint32, uint32](&rm, c.o)
			base := Run[uint32, uint32](&c.m, c.o)
			sameAsReference(t, "one worker", ref, base)
			if base.Distinct < 1000 || len(base.Violations) < 2 {
				t.Fatalf("the toy is too small to tell: %d states, %d violations", base.Distinct, len(base.Violations))
			}
			for _, v := range []struct {
				workers int
				memory  uint64
			}{{2, 0}, {3, 0}, {4, 0}, {3, 48 << 10}, {1, 48 << 10}} {
				o := c.o
				o.Workers, o.MaxMemory, o.SpillDir = v.workers, v.memory, t.TempDir()
				m := c.m
				r := Run[uint32, uint32](&m, o)
				what := fmt.Sprintf("%d workers, memory %d", v.workers, v.memory)
				if v.memory > 0 && r.SpillPeak == 0 {
					t.Errorf("%s: nothing spilled", what)
				}
				if left, _ := os.ReadDir(o.SpillDir); len(left) > 0 {
					t.Errorf("%s: the spill directory was left behind: %v", what, left)
				}
				sameOutcome(t, what, base, r, v.memory > 0)
				sameAsReference(t, what, ref, r)
			}
			if c.m.dag && base.Sorted != "acyclic" {
				t.Errorf("the graph without cycles was not sorted: %q", base.Sorted)
			}
			if c.o.Reduce && redone.Load() == 0 {
				t.Errorf("no batch was made again for a violation found: the test does not test that")
			}
		})
	}
}

// sameOutcome fails the test unless r is what base is; spilled: r's cycle search may have been left
// out for want of memory, as it says.
func sameOutcome(t *testing.T, what string, base, r *Outcome[uint32], spilled bool) {
	t.Helper()
	bv, rv := base.Violations, r.Violations
	if spilled && r.CycleCheck == "memory" {
		if base.CycleCheck == "acyclic" || base.CycleCheck == "reduced" && base.Sorted == "acyclic" {
			t.Errorf("%s: the cycle search was left out, where the sort alone decided", what)
		}
		if len(bv) > 0 && bv[len(bv)-1].CycleAt >= 0 {
			bv = bv[:len(bv)-1]
		}
		if r.Complete || r.StoppedBy != "memory" {
			t.Errorf("%s: cycles unjudged, but complete %v, stopped by %q", what, r.Complete, r.StoppedBy)
		}
	} else if r.Complete != base.Complete || r.StoppedBy != base.StoppedBy || r.CycleCheck != base.CycleCheck || r.Sorted != base.Sorted {
		t.Errorf("%s: complete %v stopped by %q cycles %q sorted %q; one worker: %v %q %q %q", what,
			r.Complete, r.StoppedBy, r.CycleCheck, r.Sorted, base.Complete, base.StoppedBy, base.CycleCheck, base.Sorted)
	}
	if r.Distinct != base.Distinct || r.Transitions != base.Transitions || r.Depth != base.Depth || r.Quiescent != base.Quiescent {
		t.Errorf("%s: %d states, %d transitions, depth %d, %d quiescent; one worker: %d, %d, %d, %d", what,
			r.Distinct, r.Transitions, r.Depth, r.Quiescent, base.Distinct, base.Transitions, base.Depth, base.Quiescent)
	}
	if len(rv) != len(bv) {
		t.Fatalf("%s: %d violations, one worker %d", what, len(rv), len(bv))
	}
	for i := range bv {
		if !reflect.DeepEqual(rv[i], bv[i]) {
			t.Errorf("%s: violation %d: %s %v at %d; one worker: %s %v at %d", what, i, rv[i].Property, rv[i].Path, rv[i].CycleAt, bv[i].Property, bv[i].Path, bv[i].CycleAt)
		}
	}
	if !reflect.DeepEqual(r.Deepest, base.Deepest) || !reflect.DeepEqual(r.BrokenAt, base.BrokenAt) || r.Broken != base.Broken {
		t.Errorf("%s: deepest %v broken %q at %v; one worker: %v, %q at %v", what, r.Deepest, r.Broken, r.BrokenAt, base.Deepest, base.Broken, base.BrokenAt)
	}
}

// reference is the breadth-first search as one goroutine made it before there were workers, kept
// as the yardstick of the tests: a map from fingerprints to how each state was first reached, the
// levels as lists of states, each state judged as it comes. No cycle search: its outcome is the
// breadth-first part of Run's.
func reference[S any, T comparable](m Model[S, T], o Options) *Outcome[T] {
	type rec struct {
		parent Fingerprint
		ev     T
		idx    int
	}
	r := &Outcome[T]{}
	seen := map[Fingerprint]rec{}
	path := func(fp Fingerprint) []T {
		var evs []T
		for seen[fp].idx != 0 {
			evs = append([]T{seen[fp].ev}, evs...)
			fp = seen[fp].parent
		}
		return evs
	}
	stop := false
	report := func(v *Violation, fp Fingerprint) bool {
		if !r.Has(v.Property) {
			r.Violations = append(r.Violations, &Finding[T]{Violation: v, Path: path(fp), CycleAt: -1})
			return v.Limit == ""
		}
		return false
	}
	init := m.Init()
	last := m.Fingerprint(init)
	seen[last] = rec{}
	if b := m.Broken(); b != "" {
		r.Broken, r.StoppedBy, r.BrokenAt, stop = b, "broken", &Finding[T]{CycleAt: -1}, true
	}
	frontier := []S{init}
	for depth := 0; len(frontier) > 0 && !stop; depth++ {
		r.Depth = depth
		var next []S
	level:
		for _, s := range frontier {
			sfp := m.Fingerprint(s)
			evs := m.Enabled(s, nil)
			settled := true
			for _, e := range evs {
				settled = settled && m.Class(e) == Fault
			}
			if settled {
				r.Quiescent++
				if v := m.Quiescent(s); v != nil && report(v, sfp) {
					stop = true
					break
				}
			}
			if o.MaxDepth > 0 && depth >= o.MaxDepth {
				if len(evs) > 0 {
					r.StoppedBy, stop = "max-depth", true
				}
				continue
			}
			if o.Reduce {
				evs = m.Reduce(s, evs, r)
			}
			for _, ev := range evs {
				t := m.Next(s, ev)
				tfp := m.Fingerprint(t)
				r.Transitions++
				_, ok := seen[tfp]
				put := func() {
					if _, had := seen[tfp]; !had {
						seen[tfp] = rec{sfp, ev, len(seen)}
					}
				}
				var broken *Violation
				if !ok {
					broken = m.Invariant(t, r)
				}
				if b := m.Broken(); b != "" {
					put()
					r.Broken, r.StoppedBy, stop = b, "broken", true
					r.BrokenAt = &Finding[T]{Path: append(path(sfp), ev), CycleAt: -1}
					break level
				}
				if broken != nil {
					put()
					if report(broken, tfp) {
						stop = true
						break level
					}
					next = append(next, m.Keep(t))
					continue
				}
				if v := m.Edge(t, r); v != nil {
					put()
					if report(v, tfp) {
						stop = true
						break level
					}
				}
				if ok {
					continue
				}
				put()
				next = append(next, m.Keep(t))
				last = tfp
				if o.MaxStates > 0 && len(seen) >= o.MaxStates {
					r.StoppedBy, stop = "max-states", true
					break level
				}
			}
		}
		frontier = next
	}
	r.Distinct, r.Complete = len(seen), !stop
	if stop && !r.promised() && r.Broken == "" {
		r.Deepest = &Finding[T]{Path: path(last), CycleAt: -1}
	}
	return r
}

// sameAsReference fails the test unless r's breadth-first part is ref's.
func sameAsReference(t *testing.T, what string, ref, r *Outcome[uint32]) {
	t.Helper()
	if r.Distinct != ref.Distinct || r.Transitions != ref.Transitions || r.Depth != ref.Depth || r.Quiescent != ref.Quiescent {
		t.Errorf("%s: %d states, %d transitions, depth %d, %d quiescent; the reference: %d, %d, %d, %d", what,
			r.Distinct, r.Transitions, r.Depth, r.Quiescent, ref.Distinct, ref.Transitions, ref.Depth, ref.Quiescent)
	}
	var vs []*Finding[uint32]
	for _, v := range r.Violations {
		if v.CycleAt < 0 {
			vs = append(vs, v)
		}
	}
	if !reflect.DeepEqual(vs, ref.Violations) {
		t.Errorf("%s: violations %v; the reference %v", what, vs, ref.Violations)
	}
	stopped := r.StoppedBy
	if ref.Complete && (stopped == "memory" || stopped == "interrupted") && r.CycleCheck == stopped {
		stopped = "" // the cycle search's, which the reference does not make
	}
	if stopped != ref.StoppedBy || !reflect.DeepEqual(r.Deepest, ref.Deepest) || !reflect.DeepEqual(r.BrokenAt, ref.BrokenAt) {
		t.Errorf("%s: stopped by %q, deepest %v, broken at %v; the reference %q, %v, %v", what, r.StoppedBy, r.Deepest, r.BrokenAt, ref.StoppedBy, ref.Deepest, ref.BrokenAt)
	}
}

// A bitstate search with room to spare finds what the exact one finds, and says it is partial all
// the same; squeezed, it misses states, and its estimate of how many is not far off.
func TestBitstate(t *testing.T) {
	exact := Run[uint32, uint32](&toy{n: 40_000, dag: true}, Options{})
	roomy := Run[uint32, uint32](&toy{n: 40_000, dag: true}, Options{Bitstate: 1 << 20, Workers: 2})
	if roomy.Distinct != exact.Distinct || roomy.Complete || roomy.StoppedBy != "bitstate" || roomy.Omission > 1e-4 || roomy.CycleCheck != "" {
		t.Errorf("a roomy bit array: %d states (exact %d), complete %v, stopped by %q, omission %g, cycles %q",
			roomy.Distinct, exact.Distinct, roomy.Complete, roomy.StoppedBy, roomy.Omission, roomy.CycleCheck)
	}
	tight := Run[uint32, uint32](&toy{n: 40_000, dag: true}, Options{Bitstate: 4 << 10, Workers: 2})
	missed := float64(exact.Distinct - tight.Distinct)
	if tight.Distinct >= exact.Distinct || tight.Lost < missed/4 || tight.Lost > 2*missed || tight.BitsSet <= 0.3 || tight.StoppedBy != "bitstate" {
		t.Errorf("a tight bit array: %d states of %d, %.0f estimated lost, %.0f%% of the bits set, stopped by %q",
			tight.Distinct, exact.Distinct, tight.Lost, 100*tight.BitsSet, tight.StoppedBy)
	}
	t.Logf("tight: %d of %d states, %.0f missed, %.0f estimated (what only they lead to is lost with them)", tight.Distinct, exact.Distinct, missed, tight.Lost)
}

// A spill directory that cannot be made stops the search, saying why; one that can is gone after
// a search stopped early.
func TestSpillErrorsAndCleanUp(t *testing.T) {
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := Run[uint32, uint32](&toy{n: 40_000}, Options{MaxMemory: 48 << 10, SpillDir: file, Workers: 2})
	if r.Complete || r.StoppedBy != "disk" || r.SpillError == "" {
		t.Errorf("spilling under a file: complete %v, stopped by %q, error %q", r.Complete, r.StoppedBy, r.SpillError)
	}
	dir := t.TempDir()
	r = Run[uint32, uint32](&toy{n: 40_000}, Options{MaxMemory: 48 << 10, SpillDir: dir, Workers: 2, MaxStates: 5000})
	if left, _ := os.ReadDir(dir); r.SpillPeak == 0 || len(left) > 0 {
		t.Errorf("a search stopped early: spilled %d bytes, left %v", r.SpillPeak, left)
	}
}
