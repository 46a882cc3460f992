package explore

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Print writes the result for people: what was explored, the figures, each property's outcome.
func (r *Result) Print(w io.Writer) {
	c := r.Config
	crash := fmt.Sprintf("%d", c.Crashes)
	if c.Crashes > 0 && c.CrashTargets == CrashLeader {
		crash += " (leaders only)"
	}
	fmt.Fprintf(w, "explore: %s, %d nodes, ids %s, initiators %s, crashes %s, restarts %d, timers %s\n",
		c.Algo, c.N, orDefault(c.Placement, "ascending"), initiatorsText(c), crash, c.Restarts, c.Timers)
	fmt.Fprintf(w, "explore: %s distinct states, %s transitions, depth %d, %s quiescent, at most %d messages in flight\n",
		commas(r.Distinct), commas(int(r.Transitions)), r.Depth, commas(r.Quiescent), r.MaxInFlight)
	rate := float64(r.Distinct) / max(r.Elapsed.Seconds(), 1e-9)
	fmt.Fprintf(w, "explore: %v, %s states/s, %s, %.0f MB of heap (%.0f B/state)\n",
		r.Elapsed.Round(time.Millisecond), commas(int(rate)), plural(r.Workers, "worker"), float64(r.HeapBytes)/(1<<20), float64(r.HeapBytes)/float64(max(r.Distinct, 1)))
	if r.SpillPeak > 0 {
		fmt.Fprintf(w, "explore: spilled to disk past --max-memory %d MB: at most %.0f MB on disk at once\n", c.MaxMemory>>20, float64(r.SpillPeak)/(1<<20))
	}
	switch {
	case r.Complete:
		how := "every transition led deeper, so no cycle"
		switch {
		case r.has(PropWillEnd):
			how = "a depth-first search found a cycle that fair delivery keeps"
		case r.CycleCheck == "reduced":
			how = "the reduced graph has no cycle, so every interleaving has none"
		case r.CycleCheck == "searched":
			how = "a depth-first search found no cycle that fair delivery keeps"
		}
		fmt.Fprintf(w, "explore: complete: every reachable state explored (%s)\n", how)
	case r.Violation() != nil:
		fmt.Fprintf(w, "explore: stopped at the first violation of a promised property\n")
	case r.StoppedBy == "interrupted" && r.CycleCheck == "interrupted":
		fmt.Fprintf(w, "explore: NOT complete: every reachable state explored, but interrupted while looking for a cycle that fair delivery keeps (ElectionWillEnd unjudged)\n")
	case r.StoppedBy == "interrupted":
		fmt.Fprintf(w, "explore: NOT complete: interrupted at %s states; what was explored is all that is claimed\n", commas(r.Distinct))
	case r.StoppedBy == "broken":
		fmt.Fprintf(w, "explore: STOPPED: %s; nothing about the properties is claimed\n", r.Broken)
	case r.StoppedBy == "memory" && r.CycleCheck == "memory":
		fmt.Fprintf(w, "explore: NOT complete: every reachable state explored and judged, but the graph walked has cycles, and the search for one that fair delivery keeps holds every state in memory (about %.0f MB, past --max-memory %d MB): ElectionWillEnd's cycles unjudged\n", float64(r.Distinct)*64/(1<<20), c.MaxMemory>>20)
	case r.StoppedBy == "memory":
		fmt.Fprintf(w, "explore: NOT complete: stopped at %s states when what does not spill to disk (the machines' distinct states, the messages, the step caches) passed --max-memory %d MB; what was explored is all that is claimed\n", commas(r.Distinct), c.MaxMemory>>20)
	case r.StoppedBy == "disk":
		fmt.Fprintf(w, "explore: NOT complete: stopped at %s states: %s; what was explored is all that is claimed\n", commas(r.Distinct), r.SpillError)
	case r.StoppedBy == "bitstate":
		fmt.Fprintf(w, "explore: PARTIAL search (bitstate hashing, --bitstate %d MB, 3 bits a state): %s\n", c.Bitstate>>20, r.bitstateText())
	case r.StoppedBy == "max-depth":
		fmt.Fprintf(w, "explore: NOT complete: bounded at --max-depth %d: every state within %d transitions of the start explored and judged, none beyond\n", c.MaxDepth, c.MaxDepth)
	default:
		fmt.Fprintf(w, "explore: NOT complete: stopped at --max-states %s; what was explored is all that is claimed\n", commas(c.MaxStates))
	}
	if c.Bitstate > 0 && r.StoppedBy != "bitstate" {
		fmt.Fprintf(w, "explore: and PARTIAL besides (bitstate hashing, --bitstate %d MB, 3 bits a state): %s\n", c.Bitstate>>20, r.bitstateText())
	}
	for _, p := range Properties {
		if p == PropPulse && !r.Synchronous {
			continue
		}
		status := "ok"
		if !r.Complete && r.Violation() == nil {
			status = "ok so far"
		}
		if p == PropBound {
			if !r.HasBound {
				status = "no bound stated"
			} else if r.MostMessages == 0 && !r.Complete {
				status += fmt.Sprintf(" (no fault-free election ended yet; bound %d)", r.Bound)
			} else {
				status += fmt.Sprintf(" (at most %d messages in a fault-free election; bound %d)", r.MostMessages, r.Bound)
			}
		}
		for _, v := range r.Violations {
			if v.Property == p {
				status = "VIOLATED: " + v.Detail
				if v.Limit != "" {
					status += " — not promised here: " + v.Limit
				}
			}
		}
		if why, ok := r.NotPromised[p]; ok && !r.has(p) {
			status += " (not promised here: " + why + ")"
		}
		fmt.Fprintf(w, "  %-38s %s\n", p, status)
	}
}

// bitstateText says what a bitstate search may have missed.
func (r *Result) bitstateText() string {
	return fmt.Sprintf("%s states explored, %.1f%% of the bits set; a state never seen was taken as seen with a chance of %.2g at the end, and the states expected to have been missed so number %.2g (%.2g%% of those explored), with what only they lead to; ElectionWillEnd's cycles unjudged",
		commas(r.Distinct), 100*r.BitsSet, r.Omission, r.Lost, 100*r.Lost/float64(max(r.Distinct, 1)))
}

// plural writes n thing, or n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}

func initiatorsText(c Config) string {
	if c.Initiators == nil {
		return "all"
	}
	return idList(c.Initiators)
}

// commas writes n with thousands separated: 2,090,268.
func commas(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Summary is explore.json: the result for programs.
type Summary struct {
	Algo        string   `json:"algo"`
	N           int      `json:"n"`
	Ring        []int    `json:"ring,omitempty"`
	Initiators  []int    `json:"initiators,omitempty"`
	Crashes     int      `json:"crashes"`
	Restarts    int      `json:"restarts"`
	CrashTarget string   `json:"crash_targets"`
	Timers      string   `json:"timers"`
	Reduction   bool     `json:"reduction"`
	Distinct    int      `json:"distinct"`
	Transitions int64    `json:"transitions"`
	Depth       int      `json:"depth"`
	Quiescent   int      `json:"quiescent"`
	MaxInFlight int      `json:"max_in_flight"`
	Complete    bool     `json:"complete"`
	StoppedBy   string   `json:"stopped_by,omitempty"`
	MaxDepth    int      `json:"max_depth,omitempty"`
	CycleCheck  string   `json:"cycle_check,omitempty"`
	ElapsedMS   float64  `json:"elapsed_ms"`
	HeapBytes   uint64   `json:"heap_bytes"`
	Workers     int      `json:"workers"`
	SpillPeak   int64    `json:"spill_peak_bytes,omitempty"`
	Bitstate    *BitSum  `json:"bitstate,omitempty"`
	Bound       *int     `json:"bound"`
	MostMsgs    int      `json:"most_messages"`
	OK          bool     `json:"ok"`
	Violations  []VSum   `json:"violations"`
	NotPromised []string `json:"not_promised,omitempty"`
}

// BitSum is a bitstate search's figures in explore.json.
type BitSum struct {
	Bytes    uint64  `json:"bytes"`
	BitsSet  float64 `json:"bits_set"`
	Omission float64 `json:"omission"`
	Lost     float64 `json:"lost"`
}

// VSum is one violation in explore.json.
type VSum struct {
	Property string `json:"property"`
	Detail   string `json:"detail"`
	Limit    string `json:"limit,omitempty"`
	Length   int    `json:"length"`
	CycleAt  int    `json:"cycle_at"`
	Dir      string `json:"dir,omitempty"`
}

// Summary is r for explore.json; dirs names each violation's run directory, by property.
func (r *Result) Summary(dirs map[string]string) Summary {
	c := r.Config
	s := Summary{Algo: c.Algo, N: c.N, Ring: c.Order, Initiators: c.Initiators, Crashes: c.Crashes, Restarts: c.Restarts,
		CrashTarget: c.CrashTargets, Timers: c.Timers, Reduction: !c.NoReduction, Distinct: r.Distinct,
		Transitions: r.Transitions, Depth: r.Depth, Quiescent: r.Quiescent, MaxInFlight: r.MaxInFlight,
		Complete: r.Complete, StoppedBy: r.StoppedBy, MaxDepth: c.MaxDepth, CycleCheck: r.CycleCheck, ElapsedMS: float64(r.Elapsed.Microseconds()) / 1000, HeapBytes: r.HeapBytes,
		MostMsgs: r.MostMessages, OK: len(r.Violations) == 0, Violations: []VSum{}, Workers: r.Workers, SpillPeak: r.SpillPeak}
	if c.Bitstate > 0 {
		s.Bitstate = &BitSum{Bytes: c.Bitstate, BitsSet: r.BitsSet, Omission: r.Omission, Lost: r.Lost}
	}
	if r.HasBound {
		b := r.Bound
		s.Bound = &b
	}
	for _, v := range r.Violations {
		s.Violations = append(s.Violations, VSum{Property: v.Property, Detail: v.Detail, Limit: v.Limit,
			Length: len(v.Trace), CycleAt: v.CycleAt, Dir: dirs[v.Property]})
	}
	for _, p := range Properties {
		if _, ok := r.NotPromised[p]; ok {
			s.NotPromised = append(s.NotPromised, p)
		}
	}
	return s
}

// WriteSummary writes explore.json into dir.
func (r *Result) WriteSummary(dir string, dirs map[string]string) error {
	b, err := json.MarshalIndent(r.Summary(dirs), "", "  ")
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "explore.json"), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	return nil
}
