package report

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/leaderlab/leaderlab/check"
)

// syncView is the synchronizer section: the verdict's SyncMetrics put in words.
type syncView struct {
	Synchronizer string
	Pulses       int
	Reached      int
	Complete     bool
	PulseTime    string
	Messages     int
	Acks         int
	Init         int
	Control      int
	ControlOf    string // the pulses whose control messages Control counts
	PerPulse     string
	Expected     int
	Ratio        string
	// RatioOff marks control traffic that is not what the formula says (a fault can explain it:
	// the pulses property says whether it was judged).
	RatioOff  bool
	ByKind    string
	Stall     string
	Late      []string
	LateCount int
	// LateMore is how many late messages the verdict counted but did not name.
	LateMore int
}

// buildSync returns the synchronizer section, or nil when the run's algorithm does not act in
// pulses (the verdict has no sync metrics).
func buildSync(v *check.Verdict) *syncView {
	if v == nil || v.Metrics.Sync == nil {
		return nil
	}
	s := v.Metrics.Sync
	out := &syncView{
		Synchronizer: s.Synchronizer,
		Pulses:       s.Pulses,
		Reached:      s.Reached,
		Complete:     s.Reached >= s.Pulses,
		PulseTime:    "–",
		Messages:     s.Messages,
		Acks:         s.Acks,
		Init:         s.Init,
		Control:      s.Control,
		PerPulse:     trimFloat(math.Round(s.ControlPerPulse*100) / 100),
		Expected:     s.ExpectedPerPulse,
		Ratio:        "–",
		Stall:        s.Stall,
		Late:         s.Late,
		LateCount:    s.LateCount,
		LateMore:     max(0, s.LateCount-len(s.Late)),
	}
	// The checker counts the control of the pulses every live node finished, but the last.
	switch k := min(s.Reached, s.Pulses); {
	case k > 2:
		out.ControlOf = fmt.Sprintf("pulses 1 to %d", k-1)
	case k == 2:
		out.ControlOf = "pulse 1"
	default:
		out.ControlOf = "no pulse (the last pulse needs none)"
	}
	if out.Synchronizer == "" {
		out.Synchronizer = "not named in cluster.json"
	}
	if s.PulseMS > 0 {
		out.PulseTime = fmt.Sprintf("%s ms per pulse, %s pulses per second", trimFloat(s.PulseMS), trimFloat(math.Round(s.PulsesPerSecond*10)/10))
	}
	if s.Ratio > 0 || s.ExpectedPerPulse > 0 {
		out.Ratio = fmt.Sprintf("%.2f", s.Ratio)
		out.RatioOff = math.Abs(s.Ratio-1) > 0.005
	}
	kinds := make([]string, 0, len(s.ByKind))
	for k := range s.ByKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%s %d", k, s.ByKind[k])
	}
	out.ByKind = strings.Join(kinds, ", ")
	if out.ByKind == "" {
		out.ByKind = "none"
	}
	return out
}
