package bench

import (
	"context"
	"slices"
	"testing"
)

func TestRingAlgorithms(t *testing.T) {
	rings := RingAlgorithms()
	for _, want := range []string{"chang-roberts", "franklin", "lelann"} {
		if !slices.Contains(rings, want) {
			t.Errorf("RingAlgorithms() = %v: no %s", rings, want)
		}
	}
	for _, not := range []string{"bully", "floodmax", "rsdp"} {
		if slices.Contains(rings, not) {
			t.Errorf("RingAlgorithms() = %v: %s is not an asynchronous ring algorithm", rings, not)
		}
	}
}

// TestComplexityPlanValidate: a bad plan is refused with the field it names and what it accepts.
func TestComplexityPlanValidate(t *testing.T) {
	good := ComplexityPlan{Algos: []string{"chang-roberts"}, Ns: []int{4, 64}, Placements: []string{"worst"}, Initiators: []string{"all", "one"}, RealMax: 0, MemMax: 64}
	if err := good.Validate(); err != nil {
		t.Fatalf("good plan refused: %v", err)
	}
	for name, c := range map[string]struct {
		mod  func(*ComplexityPlan)
		want []string
	}{
		"no algos":   {func(p *ComplexityPlan) { p.Algos = nil }, []string{"ComplexityPlan.Algos", "chang-roberts"}},
		"unknown":    {func(p *ComplexityPlan) { p.Algos = []string{"nope"} }, []string{"ComplexityPlan.Algos", `"nope"`}},
		"not a ring": {func(p *ComplexityPlan) { p.Algos = []string{"bully"} }, []string{"ComplexityPlan.Algos", "bully does not run on a ring"}},
		"real max":   {func(p *ComplexityPlan) { p.RealMax = -1 }, []string{"ComplexityPlan.RealMax -1"}},
		"mem max":    {func(p *ComplexityPlan) { p.MemMax = 1 << 20 }, []string{"ComplexityPlan.MemMax"}},
		"no n":       {func(p *ComplexityPlan) { p.Ns = nil }, []string{"ComplexityPlan.Ns", ComplexityDefaultNs}},
		"n too big":  {func(p *ComplexityPlan) { p.Ns = []int{65} }, []string{"ComplexityPlan.Ns 65: want 1..64", "ComplexityPlan.MemMax 64"}},
		"placement":  {func(p *ComplexityPlan) { p.Placements = []string{"sideways"} }, []string{"ComplexityPlan.Placements", "sideways", "ascending"}},
		"no placing": {func(p *ComplexityPlan) { p.Placements = nil }, []string{"ComplexityPlan.Placements", "none"}},
		"initiators": {func(p *ComplexityPlan) { p.Initiators = []string{"some"} }, []string{"ComplexityPlan.Initiators", "some", "all, one"}},
		"no inits":   {func(p *ComplexityPlan) { p.Initiators = nil }, []string{"ComplexityPlan.Initiators", "none"}},
	} {
		p := good
		c.mod(&p)
		wantRefused(t, name, p.Validate(), c.want...)
	}
}

// TestComplexityInMemory: Chang-Roberts' worst case in the simulator costs its bound exactly,
// n(n+1)/2 elections messages and n announcements, with every node initiating.
func TestComplexityInMemory(t *testing.T) {
	p := ComplexityPlan{Algos: []string{"chang-roberts"}, Ns: []int{4, 8}, Placements: []string{"worst"}, Initiators: []string{"all", "one"}, MemMax: 8, Seed: 1}
	var told []int
	p.Progress = func(done, total int, r ComplexityRow) error {
		if total != 4 {
			t.Errorf("total %d, want 4", total)
		}
		told = append(told, done)
		return nil
	}
	rows, err := Complexity(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(told, []int{1, 2, 3, 4}) || len(rows) != 4 {
		t.Fatalf("progress %v and %d rows, want 1..4 and 4", told, len(rows))
	}
	for _, r := range rows {
		if r.Driver != "memory" || !r.OK || r.Run != "" {
			t.Errorf("row %+v: want an election in memory that ended well", r)
		}
		if r.Initiators == "all" && (r.Messages != r.N*(r.N+1)/2 || r.Announce != r.N || r.Messages+r.Announce != r.Bound) {
			t.Errorf("n=%d all: %d messages + %d announce, bound %d; want n(n+1)/2 + n at the bound", r.N, r.Messages, r.Announce, r.Bound)
		}
		if len(r.Cells()) != len(ComplexityHeader) || len(r.CSV()) != len(ComplexityCSVHeader) {
			t.Errorf("%d cells and %d CSV fields, want %d and %d", len(r.Cells()), len(r.CSV()), len(ComplexityHeader), len(ComplexityCSVHeader))
		}
	}
	got := rows[0].Cells()
	if want := []string{"chang-roberts", "4", "worst", "all", "memory", "10", "4", "14", "1.000", got[9], "ok"}; !slices.Equal(got, want) {
		t.Errorf("cells %q, want %q", got, want)
	}
	// a Progress error ends the benchmark with it
	p.Progress = func(int, int, ComplexityRow) error { return context.Canceled }
	if rows, err := Complexity(context.Background(), p); err != context.Canceled || len(rows) != 1 {
		t.Errorf("%d rows, %v; want 1 and the Progress error", len(rows), err)
	}
}

func TestComplexityRowCells(t *testing.T) {
	r := ComplexityRow{Algo: "lelann", IDs: "random", Initiators: "one", N: 5, Driver: "real", Messages: 30, Announce: 0, Bound: 25,
		ElectMS: 2.5, Detail: "over the bound", Run: "runs/x"}
	if got, want := r.Cells(), []string{"lelann", "5", "random", "one", "real", "30", "0", "25", "1.200", "2.5", "FAIL: over the bound"}; !slices.Equal(got, want) {
		t.Errorf("cells %q, want %q", got, want)
	}
	if got, want := r.CSV(), []string{"lelann", "5", "random", "one", "real", "30", "0", "25", "1.200", "2.500", "false", "over the bound", "runs/x"}; !slices.Equal(got, want) {
		t.Errorf("CSV %q, want %q", got, want)
	}
	r.Bound = -1
	if got := r.Cells(); got[7] != "-" || got[8] != "-" {
		t.Errorf("no bound: %q", got[7:9])
	}
}
