package chaos

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

// The actions of the language, in the order the grammar lists them (and error messages name them).
const (
	OpKill      = "kill"      // SIGKILL
	OpStop      = "stop"      // SIGTERM: an orderly shutdown (the node may say goodbye: RSDP's close)
	OpRestart   = "restart"   // start a killed node again, as a new incarnation
	OpPause     = "pause"     // SIGSTOP, and SIGCONT after For when it is set
	OpResume    = "resume"    // SIGCONT
	OpPartition = "partition" // split the network into sides
	OpHeal      = "heal"      // remove every partition and link rule
	OpLink      = "link"      // a one-way fault on the link from one node to another
	OpClock     = "clock"     // a fault of a node's clock: rate, bump, strobe, reset (clock.go)
)

// Ops lists the actions in grammar order.
var Ops = []string{OpKill, OpStop, OpRestart, OpPause, OpResume, OpPartition, OpHeal, OpLink, OpClock}

// The kinds of Target.
const (
	TargetID      = "id"      // the node Target.ID
	TargetLeader  = "leader"  // the node the live nodes currently follow
	TargetHighest = "highest" // the highest candidate ID
	TargetLowest  = "lowest"  // the lowest candidate ID
	TargetRandom  = "random"  // a candidate drawn from the seeded source
)

// Target names the node a step acts on. Every kind but TargetID is resolved when the step fires.
type Target struct {
	Kind string // TargetID, TargetLeader, TargetHighest, TargetLowest or TargetRandom
	ID   int    // the node, for TargetID
}

// Step is one line (or ;-separated piece) of a schedule.
type Step struct {
	// At is when the step fires, counted from the cluster's begin.
	At time.Duration
	// Op is one of Ops.
	Op string
	// Target is the node of kill, restart, pause, resume and partition isolate.
	Target Target
	// For is how long a pause lasts before the node is resumed; 0 when the step says no "for".
	For time.Duration
	// Groups are the sides of an explicit partition, each ascending. Nodes the text leaves out are
	// gathered into one more group at the end, so the groups always cover 1..N.
	Groups [][]int
	// Shape is a partition drawn when the step fires (one of Shapes); "" for explicit groups.
	Shape string
	// Link is the rule of a link step.
	Link *LinkRule
	// Clock is the fault of a clock step (its Target may be TargetAll).
	Clock *ClockFault
	// Text is the step as written, trimmed, without its comment.
	Text string
	// Line is the line of the text the step is on, from 1.
	Line int
	// Pos is the step's position in the text, from 1. Steps are sorted by At, so errors about a
	// step name it by Pos.
	Pos int
}

// Schedule is a parsed fault schedule: its steps sorted by At, steps at the same time in the order
// they were written.
type Schedule struct {
	Steps []Step
}

// ErrUnsupported is wrapped by Unsupported's error, for callers that tell it apart.
var ErrUnsupported = errors.New("not supported yet")

// durationHint says what a duration looks like, for errors.
const durationHint = "a Go duration such as 1s, 250ms, 1.5s"

// LoadSpec returns the schedule text of a --chaos value: the contents of FILE for "@FILE", else
// the value itself.
func LoadSpec(spec string) (string, error) {
	if !strings.HasPrefix(spec, "@") {
		return spec, nil
	}
	name := strings.TrimSpace(spec[1:])
	if name == "" {
		return "", errors.New("a file name must follow @ (e.g. @faults.txt)")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("reading the chaos schedule file %q: %w", name, err)
	}
	return string(b), nil
}

// Parse reads a schedule for a cluster of nodes 1..n. Steps are separated by ";" or new lines, "#"
// starts a comment to the end of the line, and each step is "at <time> <action>". Every error names
// the step (its position, its line when the text has several, and its text) and what is accepted.
func Parse(text string, n int) (*Schedule, error) {
	if n < 1 {
		return nil, fmt.Errorf("a schedule needs a cluster of at least 1 node, got %d", n)
	}
	multiline := strings.Contains(strings.TrimSpace(text), "\n")
	s := &Schedule{}
	pos := 0
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		for _, piece := range strings.Split(line, ";") {
			piece = strings.TrimSpace(piece)
			if piece == "" {
				continue
			}
			pos++
			st, err := parseStep(piece, n)
			if err != nil {
				where := fmt.Sprintf("step %d", pos)
				if multiline {
					where += fmt.Sprintf(" (line %d)", i+1)
				}
				return nil, fmt.Errorf("%s %q: %w", where, piece, err)
			}
			st.Text, st.Line, st.Pos = piece, i+1, pos
			s.Steps = append(s.Steps, st)
		}
	}
	sort.SliceStable(s.Steps, func(a, b int) bool { return s.Steps[a].At < s.Steps[b].At })
	return s, nil
}

// Unsupported returns an error naming the first step (in time order) whose action is not in
// supported, and which actions are; nil when the executor can carry out every step.
func (s *Schedule) Unsupported(supported map[string]bool) error {
	for _, st := range s.Steps {
		if supported[st.Op] {
			continue
		}
		return fmt.Errorf("step %d %q: %q is %w (supported now: %s)", st.Pos, st.Text, st.Op, ErrUnsupported, listSupported(supported))
	}
	return nil
}

// listSupported names the supported actions in grammar order, then any others sorted.
func listSupported(supported map[string]bool) string {
	var out []string
	known := map[string]bool{}
	for _, op := range Ops {
		known[op] = true
		if supported[op] {
			out = append(out, op)
		}
	}
	var extra []string
	for op, ok := range supported {
		if ok && !known[op] {
			extra = append(extra, op)
		}
	}
	sort.Strings(extra)
	out = append(out, extra...)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// LastFault is when the schedule's last step takes effect, counting a "pause for d" as lasting until
// At+d (when the node is resumed) and a clock strobe until it ends; 0 for an empty schedule. The launcher compares it with the run's
// duration and --settle.
func (s *Schedule) LastFault() time.Duration {
	var last time.Duration
	for _, st := range s.Steps {
		end := st.At
		if st.Op == OpPause && st.For > 0 {
			end += st.For
		}
		if st.Op == OpClock && st.Clock.Kind == ClockStrobe {
			end += st.Clock.For
		}
		last = max(last, end)
	}
	return last
}
