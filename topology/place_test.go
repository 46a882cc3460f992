package topology

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		n    int
		spec string
		want []int
	}{
		{5, "ascending", []int{1, 2, 3, 4, 5}},
		{5, "descending", []int{5, 4, 3, 2, 1}},
		{5, "worst", []int{5, 4, 3, 2, 1}},
		{1, "worst", []int{1}},
		{1, "ascending", []int{1}},
		{5, "3,1,5,2,4", []int{3, 1, 5, 2, 4}},
		{5, " 3, 1 ,5,2, 4 ", []int{3, 1, 5, 2, 4}},
		{1, "1", []int{1}},
		{3, " worst ", []int{3, 2, 1}},
	} {
		got, err := Place(tc.n, tc.spec, 1)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Place(%d, %q) = %v, %v; want %v", tc.n, tc.spec, got, err, tc.want)
		}
	}
}

func TestPlaceErrors(t *testing.T) {
	for _, tc := range []struct {
		n    int
		spec string
		err  string
	}{
		{0, "ascending", "cannot place IDs on 0 nodes (want at least 1 node)"},
		{-3, "worst", "cannot place IDs on -3 nodes"},
		{5, "sideways", `unknown placement "sideways" (accepted: ascending, descending, random, worst, or a list of the IDs 1..5 such as 3,1,5,2,4)`},
		{3, "", `unknown placement "" (accepted: ascending, descending, random, worst, or a list of the IDs 1..3 such as 3,1,2)`},
		{8, "Worst", "such as 3,1,5,2,4,6,...,8"},
		{5, "3,1,5,2,3", `"3,1,5,2,3": ID 3 appears twice (items 1 and 5)`},
		{5, "3,1,5,2", `"3,1,5,2": the list has 4 IDs, want all 5 of 1..5: missing 4`},
		{5, "1,2,3,4,5,6", "ID 6 is out of range (want 1..5)"},
		{5, "1,2,3", "the list has 3 IDs, want all 5 of 1..5: missing 4, 5"},
		{5, "0,1,2,3,4", "ID 0 is out of range (want 1..5)"},
		{5, "-1,1,2,3,4", "ID -1 is out of range"},
		{5, "3,1,x,2,4", `item 3, "x", is not a number (want the IDs 1..5 separated by commas)`},
		{5, "3,1,,2,4", `item 3, "", is not a number`},
		{5, "3 1 5 2 4", `item 1, "3 1 5 2 4", is not a number`},
		{5, "3,1,5,2,4,", `item 6, "", is not a number`},
	} {
		_, err := Place(tc.n, tc.spec, 1)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Place(%d, %q) error = %v, want it to contain %q", tc.n, tc.spec, err, tc.err)
		}
	}
}

func TestPlaceRandom(t *testing.T) {
	a, err := Place(9, "random", 42)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Place(9, "random", 42)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("the same seed gave two rings: %v and %v", a, b)
	}
	sorted := append([]int(nil), a...)
	sort.Ints(sorted)
	if !reflect.DeepEqual(sorted, seq(9, 1, 1)) {
		t.Fatalf("random placement %v is not a permutation of 1..9", a)
	}
	differs := false
	for seed := int64(0); seed < 10 && !differs; seed++ {
		c, _ := Place(9, "random", seed)
		differs = !reflect.DeepEqual(a, c)
	}
	if !differs {
		t.Fatalf("ten seeds all gave %v", a)
	}
}

// crMessages counts the election messages of Chang-Roberts with every node an initiator on a one-way
// ring (messages go to the successor): each ID travels until a node with a greater ID swallows it,
// and the maximum travels all the way round to itself.
func crMessages(order []int) int {
	n, total := len(order), 0
	for i, id := range order {
		for k := 1; k <= n; k++ {
			total++
			if order[(i+k)%n] >= id {
				break
			}
		}
	}
	return total
}

// TestWorstIsChangRobertsWorstCase checks the derivation in Place's comment: the worst placement
// costs n(n+1)/2 election messages, no permutation costs more, and ascending costs 2n-1.
func TestWorstIsChangRobertsWorstCase(t *testing.T) {
	for n := 1; n <= 12; n++ {
		worst, _ := Place(n, Worst, 0)
		if got, want := crMessages(worst), n*(n+1)/2; got != want {
			t.Errorf("n=%d: worst placement %v costs %d messages, want n(n+1)/2 = %d", n, worst, got, want)
		}
		asc, _ := Place(n, Ascending, 0)
		if got, want := crMessages(asc), 2*n-1; got != want {
			t.Errorf("n=%d: ascending costs %d messages, want 2n-1 = %d", n, got, want)
		}
	}
	// Exhaustively for small n: nothing beats worst.
	for n := 1; n <= 7; n++ {
		most := n * (n + 1) / 2
		permute(seq(n, 1, 1), func(p []int) {
			if c := crMessages(p); c > most {
				t.Errorf("n=%d: %v costs %d > n(n+1)/2", n, p, c)
			}
		})
	}
}

func permute(a []int, visit func([]int)) {
	var rec func(k int)
	rec = func(k int) {
		if k == len(a) {
			visit(a)
			return
		}
		for i := k; i < len(a); i++ {
			a[k], a[i] = a[i], a[k]
			rec(k + 1)
			a[k], a[i] = a[i], a[k]
		}
	}
	rec(0)
}

func TestParseInitiators(t *testing.T) {
	order := []int{3, 1, 5, 2, 4}
	for _, tc := range []struct {
		spec  string
		order []int
		want  []int
	}{
		{"all", order, []int{1, 2, 3, 4, 5}},
		{"one", order, []int{1}},
		{" one ", []int{5, 4, 3, 2, 1}, []int{1}},
		{"one", []int{7, 9, 8}, []int{7}},
		{"4", order, []int{4}},
		{"5,2", order, []int{2, 5}},
		{" 5 , 2 ,3", order, []int{2, 3, 5}},
		{"all", []int{1}, []int{1}},
	} {
		got, err := ParseInitiators(tc.spec, tc.order, 1)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseInitiators(%q, %v) = %v, %v; want %v", tc.spec, tc.order, got, err, tc.want)
		}
	}
}

func TestParseInitiatorsErrors(t *testing.T) {
	order := []int{3, 1, 5, 2, 4}
	for _, tc := range []struct {
		spec  string
		order []int
		err   string
	}{
		{"some", order, `unknown initiators "some" (accepted: all, one (the lowest ID), or a list of IDs such as 1,2)`},
		{"", order, `unknown initiators ""`},
		{"ALL", order, `unknown initiators "ALL"`},
		{"6", order, `"6": there is no node 6 (the IDs are 1..5)`},
		{"0,1", order, "there is no node 0"},
		{"2,9", []int{2, 9, 4}, ""}, // valid: IDs need not be 1..n here
		{"3", []int{2, 9, 4}, "there is no node 3 (the IDs are 2, 4, 9)"},
		{"2,2", order, `"2,2": node 2 is listed twice`},
		{"2,x", order, `"2,x": "x" is not a node ID (accepted: all, one, or a list of IDs such as 1,2)`},
		{"2,", order, `"" is not a node ID`},
		{"all", nil, "there are no nodes"},
	} {
		_, err := ParseInitiators(tc.spec, tc.order, 1)
		if tc.err == "" {
			if err != nil {
				t.Errorf("ParseInitiators(%q, %v): %v", tc.spec, tc.order, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("ParseInitiators(%q, %v) error = %v, want it to contain %q", tc.spec, tc.order, err, tc.err)
		}
	}
}
