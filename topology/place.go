package topology

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
)

// The named placements of IDs around the ring: the values of --ids besides an explicit list.
const (
	Ascending  = "ascending"
	Descending = "descending"
	Random     = "random"
	Worst      = "worst"
)

// Placements lists the named placements, in the order error messages name them.
var Placements = []string{Ascending, Descending, Random, Worst}

// Place returns the ring order of the IDs 1..n for an --ids value: index 0 is followed by index 1
// (its successor, where messages on a one-way ring go next) and the last index wraps to index 0.
//
//   - ascending: 1, 2, ..., n.
//   - descending: n, n-1, ..., 1.
//   - random: a permutation drawn from seed; the same seed gives the same ring.
//   - worst: the placement that makes Chang-Roberts send the most messages, n, n-1, ..., 1.
//   - a list such as "3,1,5,2,4": exactly the IDs 1..n, each once, in ring order.
//
// Errors name the bad value and what is accepted, but not the flag: the caller prefixes it.
//
// Why worst is n, n-1, ..., 1. With every node an initiator, Chang-Roberts sends each ID i to the
// successor, and every node forwards an ID greater than its own and swallows a smaller one; so ID i
// costs one message per hop until it reaches the first node after it with a greater ID (n goes all
// the way round, n hops, and comes back to itself: that is how n learns it won). ID i can travel at
// most i hops, because only i-1 IDs are smaller than it: it costs i messages exactly when the i-1 nodes
// after it all have smaller IDs. If the order decreases along the direction of travel that holds
// for every i at once: after i come i-1, i-2, ..., 1 and then n, which swallows it on hop i. The
// election then costs 1+2+...+n = n(n+1)/2 messages, the maximum, and the announcement n more
// (n=8: 36+8 = 44). Ascending is the best case: every i < n dies on its first hop, 2n-1 in all. A
// ring has no start, so every rotation of n..1 is as bad; we pick the one that starts at n. Worst
// and descending name the same order under this file's convention (successor = next index); worst
// names the intent, and would stay the worst case if the direction of travel were ever reversed.
func Place(n int, spec string, seed int64) ([]int, error) {
	if n < 1 {
		return nil, fmt.Errorf("cannot place IDs on %d nodes (want at least 1 node)", n)
	}
	s := strings.TrimSpace(spec)
	switch s {
	case Ascending:
		return seq(n, 1, 1), nil
	case Descending, Worst:
		return seq(n, n, -1), nil
	case Random:
		perm := rand.New(rand.NewSource(seed)).Perm(n)
		for i := range perm {
			perm[i]++
		}
		return perm, nil
	}
	if s == "" || !strings.ContainsAny(s[:1], "0123456789+-") {
		return nil, fmt.Errorf("unknown placement %q (accepted: %s, or a list of the IDs 1..%d such as %s)",
			spec, strings.Join(Placements, ", "), n, example(n))
	}
	order, err := parseIDList(s, n)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", spec, err)
	}
	if len(order) != n {
		return nil, fmt.Errorf("%q: the list has %d IDs, want all %d of 1..%d%s", spec, len(order), n, n, missing(order, n))
	}
	return order, nil
}

// ParseInitiators returns the nodes that start the first election, ascending, for an --initiators
// value: "all", "one", or a list of IDs such as "2,4". order is the ring order (it lists the IDs).
// As with Place, errors do not name the flag.
//
// "one" is the lowest ID. It is fixed rather than drawn so that a run is the same under every seed
// and every placement, and it is the lowest because that makes the election do the most work, which
// is what a lab wants to see: in Bully the lowest node challenges everyone above it and each of them
// challenges the nodes above itself, the textbook O(n²) worst case; on a ring placed ascending (the
// default) the lowest ID is the successor of the highest, so the election must go n-1 hops before it
// reaches the winner and Chang-Roberts sends its single-initiator worst case, 3n-1 messages with
// the announcement. seed is reserved for a drawn form (say, k random initiators); the accepted
// forms draw nothing.
func ParseInitiators(spec string, order []int, seed int64) ([]int, error) {
	_ = seed
	if len(order) == 0 {
		return nil, fmt.Errorf("%q: there are no nodes to start an election", spec)
	}
	ids := append([]int(nil), order...)
	sort.Ints(ids)
	s := strings.TrimSpace(spec)
	switch s {
	case "all":
		return ids, nil
	case "one":
		return ids[:1], nil
	}
	if s == "" || !strings.ContainsAny(s[:1], "0123456789+-") {
		return nil, fmt.Errorf("unknown initiators %q (accepted: all, one (the lowest ID), or a list of IDs such as %s)", spec, example(min(len(ids), 2)))
	}
	known := make(map[int]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	seen := map[int]bool{}
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		id, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a node ID (accepted: all, one, or a list of IDs such as %s)", spec, f, example(min(len(ids), 2)))
		}
		if !known[id] {
			return nil, fmt.Errorf("%q: there is no node %d (the IDs are %s)", spec, id, span(ids))
		}
		if seen[id] {
			return nil, fmt.Errorf("%q: node %d is listed twice", spec, id)
		}
		seen[id] = true
		out = append(out, id)
	}
	sort.Ints(out)
	return out, nil
}

// parseIDList reads a comma-separated list of IDs in 1..n with no repeats; the caller checks the length.
func parseIDList(s string, n int) ([]int, error) {
	var out []int
	seen := map[int]int{}
	for i, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		id, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("item %d, %q, is not a number (want the IDs 1..%d separated by commas)", i+1, f, n)
		}
		if id < 1 || id > n {
			return nil, fmt.Errorf("ID %d is out of range (want 1..%d)", id, n)
		}
		if j, dup := seen[id]; dup {
			return nil, fmt.Errorf("ID %d appears twice (items %d and %d)", id, j+1, i+1)
		}
		seen[id] = i
		out = append(out, id)
	}
	return out, nil
}

// missing names the IDs of 1..n that order lacks, as ": missing 4, 5", or "".
func missing(order []int, n int) string {
	have := make(map[int]bool, len(order))
	for _, id := range order {
		have[id] = true
	}
	var m []string
	for id := 1; id <= n; id++ {
		if !have[id] {
			m = append(m, strconv.Itoa(id))
		}
	}
	if len(m) == 0 {
		return ""
	}
	return ": missing " + strings.Join(m, ", ")
}

// seq is n integers from start by step.
func seq(n, start, step int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = start + i*step
	}
	return out
}

// example is a sample list of the IDs 1..k for error messages: 3,1,5,2,4 cut or extended to k.
func example(k int) string {
	var s []string
	for _, id := range []int{3, 1, 5, 2, 4} {
		if id <= k {
			s = append(s, strconv.Itoa(id))
		}
	}
	switch {
	case k == 6:
		s = append(s, "6")
	case k > 6:
		s = append(s, "6", "...", strconv.Itoa(k))
	}
	return strings.Join(s, ",")
}

// span names a sorted ID set: "1..5" when it is contiguous, else the list.
func span(ids []int) string {
	if ids[len(ids)-1]-ids[0] == len(ids)-1 {
		return fmt.Sprintf("%d..%d", ids[0], ids[len(ids)-1])
	}
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ", ")
}
