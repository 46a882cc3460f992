package chaos

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The kinds of LinkRule.
const (
	LinkDrop      = "drop"      // drop every message
	LinkDelay     = "delay"     // hold each message Delay, varied by Jitter after Dist
	LinkLoss      = "loss"      // drop each message with probability Percent/100
	LinkDup       = "dup"       // deliver each message twice with probability Percent/100
	LinkReorder   = "reorder"   // deliver messages out of order
	LinkBurst     = "burst"     // Gilbert-Elliott: a burst of loss begins with Percent, ends with End
	LinkRate      = "rate"      // Rate bytes per second, a queue in front
	LinkCorrupt   = "corrupt"   // damage a frame with probability Percent/100: refused, the link reset
	LinkSlowClose = "slowclose" // the receiver learns that the connection closed Delay late
	LinkReset     = "reset"     // reset the connection at its first frame after Delay, again and again
)

// LinkKinds lists the link rules in the order error messages name them.
var LinkKinds = []string{LinkDrop, LinkDelay, LinkLoss, LinkDup, LinkReorder, LinkBurst, LinkRate, LinkCorrupt, LinkSlowClose, LinkReset}

// The delay distributions (LinkRule.Dist). Uniform is the default and is written "".
const (
	DistUniform      = "uniform"
	DistNormal       = "normal"
	DistPareto       = "pareto"
	DistParetoNormal = "paretonormal"
)

// Dists lists the delay distributions in the order error messages name them.
var Dists = []string{DistUniform, DistNormal, DistPareto, DistParetoNormal}

// MaxRate bounds a rate rule, in bytes per second (a terabyte a second is no fault).
const MaxRate = 1_000_000_000_000

// LinkRule is a one-way fault on the messages From sends To. heal removes it.
type LinkRule struct {
	From, To Target
	Kind     string // one of LinkKinds
	// Delay is delay's mean added delay (> 0), slowclose's hold (> 0), and reset's wait before the
	// first reset (0: at the first frame).
	Delay time.Duration
	// Jitter is how much a delay varies: the most either way for the uniform distribution, the
	// standard deviation for the others (0..Delay).
	Jitter time.Duration
	// Dist is the delay's distribution: "" (uniform), normal, pareto or paretonormal.
	Dist string
	// Percent is the probability in percent (0..100) of loss, dup and corrupt, and burst's chance
	// that a burst of loss begins (above 0).
	Percent float64
	// Corr is a delay's or a loss's correlation with the last message's, in percent (0..100).
	Corr float64
	// End is burst's chance that a burst of loss ends, in percent (above 0).
	End float64
	// Rate is rate's bandwidth in bytes per second (1..MaxRate).
	Rate int64
}

// parseStep reads "at <time> <action>"; the caller names the step in the error.
func parseStep(text string, n int) (Step, error) {
	f := strings.Fields(text)
	if f[0] != "at" {
		return Step{}, fmt.Errorf("a step is \"at <time> <action>\", this one starts with %q", f[0])
	}
	if len(f) < 2 {
		return Step{}, fmt.Errorf("missing the time after \"at\" (%s)", durationHint)
	}
	at, err := time.ParseDuration(f[1])
	if err != nil {
		return Step{}, fmt.Errorf("bad time %q (%s)", f[1], durationHint)
	}
	if at < 0 {
		return Step{}, fmt.Errorf("time %s is before the cluster's begin (want 0s or later)", f[1])
	}
	if len(f) < 3 {
		return Step{}, fmt.Errorf("missing the action after \"at %s\" (accepted: %s)", f[1], strings.Join(Ops, ", "))
	}
	st := Step{At: at, Op: f[2]}
	args := f[3:]
	switch st.Op {
	case OpKill, OpStop, OpRestart, OpResume:
		st.Target, err = oneTarget(st.Op, args, n)
	case OpPause:
		err = parsePause(&st, args, n)
	case OpPartition:
		err = parsePartition(&st, args, n)
	case OpHeal:
		if len(args) > 0 {
			err = fmt.Errorf("unexpected %q after heal (heal takes nothing: it removes every partition and link rule)", strings.Join(args, " "))
		}
	case OpLink:
		st.Link, err = parseLink(strings.Join(args, " "), n)
	case OpClock:
		err = parseClock(&st, args, n)
	default:
		err = fmt.Errorf("unknown action %q (accepted: %s)", st.Op, strings.Join(Ops, ", "))
	}
	return st, err
}

// oneTarget reads the single target of kill, restart and resume.
func oneTarget(op string, args []string, n int) (Target, error) {
	if len(args) == 0 {
		return Target{}, fmt.Errorf("%s needs a target (accepted: %s)", op, targetHint(n))
	}
	if len(args) > 1 {
		return Target{}, fmt.Errorf("unexpected %q after the target (%s takes one target)", strings.Join(args[1:], " "), op)
	}
	return parseTarget(args[0], n)
}

// parsePause reads "pause <t> [for <d>]".
func parsePause(st *Step, args []string, n int) error {
	if len(args) == 0 {
		return fmt.Errorf("pause needs a target (accepted: %s)", targetHint(n))
	}
	t, err := parseTarget(args[0], n)
	if err != nil {
		return err
	}
	st.Target = t
	rest := args[1:]
	if len(rest) == 0 {
		return nil
	}
	if rest[0] != "for" {
		return fmt.Errorf("unexpected %q after the target (accepted: pause <target> [for <duration>])", strings.Join(rest, " "))
	}
	if len(rest) == 1 {
		return fmt.Errorf("missing the duration after \"for\" (%s)", durationHint)
	}
	if len(rest) > 2 {
		return fmt.Errorf("unexpected %q after the duration", strings.Join(rest[2:], " "))
	}
	st.For, err = positiveDuration("pause", rest[1])
	return err
}

// parseTarget reads an ID in 1..n or a symbolic target.
func parseTarget(s string, n int) (Target, error) {
	switch s {
	case TargetLeader, TargetHighest, TargetLowest, TargetRandom:
		return Target{Kind: s}, nil
	}
	id, err := strconv.Atoi(s)
	if err != nil && !isDigits(s) {
		return Target{}, fmt.Errorf("unknown target %q (accepted: %s)", s, targetHint(n))
	}
	if err != nil || id < 1 || id > n {
		return Target{}, fmt.Errorf("node %s is out of range (the IDs are 1..%d)", s, n)
	}
	return Target{Kind: TargetID, ID: id}, nil
}

func targetHint(n int) string {
	return fmt.Sprintf("an ID 1..%d, leader, highest, lowest, random", n)
}

// positiveDuration reads the duration of what; it must be above zero.
func positiveDuration(what, s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad %s duration %q (%s)", what, s, durationHint)
	}
	if d <= 0 {
		return 0, fmt.Errorf("the %s duration must be positive, got %s", what, s)
	}
	return d, nil
}

// parsePartition reads a shape ("halves", "isolate <t>", ...) or explicit groups ("1-3|4-5").
func parsePartition(st *Step, args []string, n int) error {
	if len(args) == 0 {
		return fmt.Errorf("partition needs groups or a shape (accepted: %s)", partitionHint)
	}
	if need, ok := shapeMin[args[0]]; ok {
		st.Shape = args[0]
		want := 0
		if st.Shape == ShapeIsolate {
			want = 1
			if len(args) < 2 {
				return fmt.Errorf("partition isolate needs a target (accepted: %s)", targetHint(n))
			}
			t, err := parseTarget(args[1], n)
			if err != nil {
				return err
			}
			st.Target = t
		}
		if len(args) > 1+want {
			return fmt.Errorf("unexpected %q after partition %s", strings.Join(args[1+want:], " "), strings.Join(args[:1+want], " "))
		}
		if n < need {
			return fmt.Errorf("partition %s needs at least %d nodes, the cluster has %d", st.Shape, need, n)
		}
		return nil
	}
	g := strings.Join(args, " ")
	if !isDigits(g[:1]) {
		return fmt.Errorf("unknown partition %q (accepted: %s)", strings.Join(args, " "), partitionHint)
	}
	if n < 2 {
		return fmt.Errorf("partition needs at least 2 nodes, the cluster has %d", n)
	}
	groups, err := parseGroups(g, n)
	st.Groups = groups
	return err
}

const partitionHint = "groups of IDs such as 1-3|4-5 or 1,3|2,4-5, or a shape: halves, random-halves, isolate <target>, bridge, majorities-ring, minority-third, primaries"

// parseGroups reads sides separated by "|", each a list of IDs and ranges ("1,3-5"). The sides must
// be disjoint and in 1..n; nodes left out form one more side, and there must be at least two.
func parseGroups(s string, n int) ([][]int, error) {
	owner := map[int]int{} // ID -> group number, from 1
	var groups [][]int
	for gi, part := range strings.Split(s, "|") {
		if strings.TrimSpace(part) == "" {
			return nil, fmt.Errorf("group %d of %q is empty (groups are separated by |, e.g. 1-3|4-5)", gi+1, s)
		}
		var g []int
		for _, item := range strings.Split(part, ",") {
			lo, hi, err := parseRange(item, n)
			if err != nil {
				return nil, fmt.Errorf("group %d of %q: %w", gi+1, s, err)
			}
			for id := lo; id <= hi; id++ {
				if o, dup := owner[id]; dup {
					if o == gi+1 {
						return nil, fmt.Errorf("node %d appears twice in group %d of %q", id, o, s)
					}
					return nil, fmt.Errorf("node %d is in groups %d and %d of %q (groups must be disjoint)", id, o, gi+1, s)
				}
				owner[id] = gi + 1
				g = append(g, id)
			}
		}
		sort.Ints(g)
		groups = append(groups, g)
	}
	var rest []int
	for id := 1; id <= n; id++ {
		if _, ok := owner[id]; !ok {
			rest = append(rest, id)
		}
	}
	if rest != nil {
		groups = append(groups, rest)
	}
	if len(groups) < 2 {
		most := make([]int, n-1)
		for i := range most {
			most[i] = i + 1
		}
		return nil, fmt.Errorf("partition %q leaves every node on one side (want at least two sides, e.g. %s)", s, FormatGroups([][]int{most, {n}}))
	}
	return groups, nil
}

// parseRange reads "3" or "2-4" with IDs in 1..n.
func parseRange(item string, n int) (lo, hi int, err error) {
	item = strings.TrimSpace(item)
	if item == "" {
		return 0, 0, fmt.Errorf("an empty item (IDs and ranges are separated by commas, e.g. 1,3-5)")
	}
	a, b, isRange := strings.Cut(item, "-")
	a, b = strings.TrimSpace(a), strings.TrimSpace(b)
	if !isDigits(a) || (isRange && !isDigits(b)) {
		return 0, 0, fmt.Errorf("%q is not an ID or a range of IDs such as 2-4", item)
	}
	if lo, err = strconv.Atoi(a); err != nil {
		return 0, 0, fmt.Errorf("node %s is out of range (the IDs are 1..%d)", a, n)
	}
	hi = lo
	if isRange {
		if hi, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("node %s is out of range (the IDs are 1..%d)", b, n)
		}
	}
	for _, id := range []int{lo, hi} {
		if id < 1 || id > n {
			return 0, 0, fmt.Errorf("node %d is out of range (the IDs are 1..%d)", id, n)
		}
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("range %q runs backwards (write %d-%d)", item, hi, lo)
	}
	return lo, hi, nil
}

// isDigits tells whether s is a non-empty run of ASCII digits.
func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// linkForm is the link step's grammar, for error messages.
const linkForm = "link <a>-><b> drop | delay <d>[±<j>] | delay <d> [jitter <j>] [uniform|normal|pareto|paretonormal] [corr <c>%] | " +
	"loss <p>% [corr <c>%] | burst <p>% <r>% | rate <bytes/s> | corrupt <p>% | dup <p>% | reorder | slowclose <d> | reset [after <d>]"

// parseLink reads "<a>-><b> <rule>".
func parseLink(s string, n int) (*LinkRule, error) {
	const form = linkForm
	a, rest, ok := strings.Cut(s, "->")
	a = strings.TrimSpace(a)
	f := strings.Fields(rest)
	if !ok || a == "" || len(f) == 0 {
		return nil, fmt.Errorf("link needs two nodes and a rule (accepted: %s, e.g. link 1->2 drop)", form)
	}
	from, err := parseTarget(a, n)
	if err != nil {
		return nil, fmt.Errorf("link source: %w", err)
	}
	to, err := parseTarget(f[0], n)
	if err != nil {
		return nil, fmt.Errorf("link destination: %w", err)
	}
	if from.Kind == TargetID && to.Kind == TargetID && from.ID == to.ID {
		return nil, fmt.Errorf("link %d->%d joins a node to itself (want two different nodes)", from.ID, to.ID)
	}
	r := &LinkRule{From: from, To: to}
	if len(f) < 2 {
		return nil, fmt.Errorf("link %s->%s needs a rule (accepted: %s)", a, f[0], strings.Join(LinkKinds, ", "))
	}
	r.Kind = f[1]
	if err := parseLinkArgs(r, f[2:]); err != nil {
		return nil, err
	}
	return r, nil
}

// parsePercent reads "20%" or "0.5%" in 0..100.
func parsePercent(kind, s string) (float64, error) {
	num, ok := strings.CutSuffix(s, "%")
	p, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || math.IsNaN(p) || strings.ContainsAny(num, "xXpP_") {
		return 0, fmt.Errorf("%s needs a percentage such as %s 20%% or %s 0.5%%, got %q", kind, kind, kind, s)
	}
	if p < 0 || p > 100 {
		return 0, fmt.Errorf("%s %s is out of range (want 0%%..100%%)", kind, s)
	}
	return p, nil
}
