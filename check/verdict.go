package check

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// Verdict is the checker's result, written as verdict.json (DESIGN.md, "What the checker checks").
// Times in ms are relative to the launcher's begin unless a field says ns (Unix nanoseconds).
type Verdict struct {
	// OK is true when every property held; an inconclusive run is not OK.
	OK bool `json:"ok"`
	// Outcome is "pass", "fail" or "inconclusive": a run that ended (or whose extension ran out)
	// while its election was still progressing, with no property violated but the ones that the
	// election's end would have decided (Jepsen's `:valid? :unknown`). "" in verdicts written
	// before it existed: Result tells from OK.
	Outcome string `json:"outcome"`
	// Reason says why an inconclusive run is one, with what the checker saw; Inconclusive holds
	// those figures.
	Reason       string        `json:"reason,omitempty"`
	Inconclusive *Inconclusive `json:"inconclusive,omitempty"`
	// Leader is the ID the live nodes agree on at the end (a live node that believes in itself), or
	// null.
	Leader     *int       `json:"leader"`
	Algo       string     `json:"algo"`
	Nodes      int        `json:"nodes"`
	Seed       int64      `json:"seed"`
	Properties []Property `json:"properties"`
	Metrics    Metrics    `json:"metrics"`
	// The limits the run was judged by.
	GraceMS            float64 `json:"grace_ms"`
	TerminationBoundMS float64 `json:"termination_bound_ms"`
	SettleMS           float64 `json:"settle_ms"`
	// BeginNS and EndNS are the observed stretch: the launcher's begin and stopping records.
	BeginNS int64 `json:"begin_ns"`
	EndNS   int64 `json:"end_ns"`
	// Warnings are things that did not fail the run but weaken or qualify its verdict.
	Warnings []string `json:"warnings"`
}

// Property is one judged property.
type Property struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	// Limit is set on a failed property when every failure falls under a limit the algorithm
	// declares (election.Limit): the run still fails, and Limit says why it is no defect.
	Limit string `json:"limit,omitempty"`
}

// Metrics are what the checker measured.
type Metrics struct {
	Failovers []Failover `json:"failovers"`
	Elections []Election `json:"elections"`
	// Overlaps are the stretches when two or more live nodes of one component believed in
	// themselves (the whole network's live nodes are one component), within the grace or not.
	Overlaps []Overlap `json:"overlaps"`
	// SplitBrain lists the split-brain windows: the stretches when two or more components each had
	// a live node that believed in itself (leaders on both sides of a partition). Not violations.
	SplitBrain []SplitBrain `json:"split_brain"`
	// SplitBrainMS is the time counted as split brain: the whole of each split-brain window, plus
	// the overlaps' time beyond the grace (a moment that is both counted once). Without partitions
	// or link drops it is the overlaps' time beyond the grace alone, as before partitions were judged.
	SplitBrainMS float64 `json:"split_brain_ms"`
	// PartitionedMS is the time the live nodes were split into two or more components.
	PartitionedMS float64 `json:"partitioned_ms"`
	// Heals measures, for each heal, how long the live nodes took to agree again.
	Heals []Heal `json:"heals"`
	// MessagesTotal and DropsTotal count send and drop events up to the end of the observed run.
	MessagesTotal int         `json:"messages_total"`
	DropsTotal    int         `json:"drops_total"`
	NodeStats     []NodeStats `json:"node_stats"`
	// Detections measure, for each kill, stop and pause, when its node was first suspected and when
	// every live node had suspected it.
	Detections []Detection `json:"detections"`
	// Observers sum up the observer processes' logs (RSDP's observer and observers detectors).
	Observers []ObserverStats `json:"observers,omitempty"`
	// Suspicions counts the failure detectors' suspect events, and the false ones among them: of
	// a node that ran, had begun and was reachable through the whole timeout before.
	Suspicions Suspicions `json:"suspicions"`
	// Sync measures a synchronous algorithm's synchronizer (pulses, control messages against the
	// formula, late messages, the stalled pulse); absent for the other algorithms.
	Sync *SyncMetrics `json:"sync,omitempty"`
}

// Failover is the time from a fault that took the agreed leader away until the live nodes agreed
// again on a live leader. A kill or pause of the leader takes it away; so does a partition that
// leaves it outside the component holding a majority of the live nodes (or leaves no such
// component). While the network is split, "the live nodes" are those of the majority component,
// and the leader must be one of them; after a heal, all of them.
type Failover struct {
	Fault string  `json:"fault"` // "kill 5 at 1000.2ms", "partition cutting 5 off at 1000.1ms"
	AtMS  float64 `json:"at_ms"`
	// MS is null when the live nodes never agreed again before the end.
	MS     *float64 `json:"ms"`
	Leader *int     `json:"leader"` // the leader they agreed on
}

// SplitBrain is a stretch when two or more components each had a leader: a live node that believed
// in itself.
type SplitBrain struct {
	AtMS float64 `json:"at_ms"`
	MS   float64 `json:"ms"`
	// Leaders are every node that was such a leader during the window, ascending.
	Leaders []int `json:"leaders"`
}

// Heal is the convergence after a heal: from the heal's record until every live node follows one
// live leader that believes in itself.
type Heal struct {
	AtMS float64 `json:"at_ms"`
	// ConvergedMS is null when the live nodes never agreed after the heal before the end.
	ConvergedMS *float64 `json:"converged_ms"`
	Leader      *int     `json:"leader"` // the leader they agreed on
}

// Election is one election's cost (see (*checker).elections for how the run is segmented).
type Election struct {
	StartNS int64 `json:"start_ns"`
	// EndNS is when the live nodes agreed on a live leader, or null.
	EndNS *int64 `json:"end_ns"`
	// Messages counts sends of the algorithm's election kinds in the election's window; Announce
	// sends of its announcement kinds.
	Messages int `json:"messages"`
	Announce int `json:"announce"`
	// Bound is the algorithm's worst case of messages + announce for the cluster's N and this
	// election's initiators, or null.
	Bound *int `json:"bound"`
	// ByKind counts every send in the window by message kind.
	ByKind     map[string]int `json:"by_kind"`
	Initiators int            `json:"initiators"`
	// Faults counts the chaos ops that can have caused or disturbed it: those after the previous
	// election's agreement and up to this one's (or the end of its window when it never agreed).
	Faults int  `json:"faults"`
	Leader *int `json:"leader"`
}

// Overlap is a stretch when two or more live nodes believed in themselves.
type Overlap struct {
	AtMS        float64 `json:"at_ms"`
	MS          float64 `json:"ms"`
	Nodes       []int   `json:"nodes"`
	BeyondGrace bool    `json:"beyond_grace"`
}

// NodeStats is a node's last stats event.
type NodeStats struct {
	Node int `json:"node"`
	Inc  int `json:"inc"`
	logs.Stats
}

// ReadVerdict reads dir/verdict.json.
func ReadVerdict(dir string) (*Verdict, error) {
	path := filepath.Join(dir, rundir.VerdictFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &v, nil
}

// WriteFile writes dir/verdict.json atomically: a temporary file renamed into place.
func (v *Verdict) WriteFile(dir string) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode verdict.json: %w", err)
	}
	f, err := os.CreateTemp(dir, ".verdict-*.json")
	if err != nil {
		return fmt.Errorf("write verdict.json: %w", err)
	}
	tmp := f.Name()
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, rundir.VerdictFile))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write verdict.json: %w", err)
	}
	return nil
}

// OnlyLimits tells whether every failed property failed under the algorithm's documented limits
// (and at least one failed): such a run fails, but shows no defect.
func (v *Verdict) OnlyLimits() bool {
	failed := 0
	for _, p := range v.Properties {
		if !p.OK {
			if p.Limit == "" {
				return false
			}
			failed++
		}
	}
	return failed > 0
}

// Result is the verdict's outcome: Outcome, or for a verdict.json written before it existed, pass
// or fail by OK.
func (v *Verdict) Result() string {
	switch {
	case v.Outcome != "":
		return v.Outcome
	case v.OK:
		return OutcomePass
	}
	return OutcomeFail
}

// Print writes the verdict for people: a line per property, the leader, the failovers, each
// election's messages against its bound, and the limits used.
func (v *Verdict) Print(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	result := "PASS"
	if !v.OK {
		result = "FAIL"
	}
	if !v.OK && v.OnlyLimits() {
		result = "FAIL (the algorithm's documented limit, not a defect)"
	}
	inconclusive := v.Result() == OutcomeInconclusive
	if inconclusive {
		result = "INCONCLUSIVE"
	}
	fmt.Fprintf(tw, "verdict: %s (%s, %d nodes)\n", result, v.Algo, v.Nodes)
	if inconclusive {
		fmt.Fprintf(tw, "  %s\n", v.Reason)
	}
	for _, p := range v.Properties {
		mark := "PASS"
		switch {
		case !p.OK && inconclusive:
			mark = "OPEN" // undecided when the run ended: not a violation
		case !p.OK:
			mark = "FAIL"
		}
		detail := p.Detail
		if p.Limit != "" {
			detail += " — " + p.Limit
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", mark, p.Name, detail)
	}
	tw.Flush()
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	leader := "none agreed"
	if v.Leader != nil {
		leader = fmt.Sprint(*v.Leader)
	}
	fmt.Fprintf(tw, "  leader\t%s\n", leader)
	for i, f := range v.Metrics.Failovers {
		ms := "never agreed again"
		if f.MS != nil {
			ms = fmt.Sprintf("%gms", *f.MS)
		}
		fmt.Fprintf(tw, "  %s\t%s: %s\n", label(i, "failover"), f.Fault, ms)
	}
	for i, d := range v.Metrics.Detections {
		s := "never suspected"
		if d.FirstMS != nil {
			s = fmt.Sprintf("first suspected after %gms by %s", *d.FirstMS, prober(d.By))
			if d.AllMS != nil {
				s += fmt.Sprintf(", by every live node after %gms", *d.AllMS)
			}
		}
		fmt.Fprintf(tw, "  %s\t%s: %s\n", label(i, "detection"), d.Fault, s)
	}
	if sp := v.Metrics.Suspicions; sp.Total > 0 {
		s := fmt.Sprintf("%d, %d false", sp.Total, sp.False)
		if sp.Early > 0 {
			s += fmt.Sprintf(", %d of nodes begun less than a timeout before", sp.Early)
		}
		if len(sp.Examples) > 0 {
			f := sp.Examples[0]
			s += fmt.Sprintf(" (first: node %d suspected %d at %gms, which ran and was reachable)", f.By, f.Peer, f.AtMS)
		}
		fmt.Fprintf(tw, "  suspicions\t%s\n", s)
	}
	for i, o := range v.Metrics.Observers {
		fmt.Fprintf(tw, "  %s\t%d: %d probes, %d failed, %d verdicts, %d agreement messages\n", label(i, "observers"), o.ID, o.Probes, o.Suspects, o.Verdicts, o.Messages)
	}
	for i, e := range v.Metrics.Elections {
		fmt.Fprintf(tw, "  %s\t#%d at %s: %s\n", label(i, "elections"), i+1, fmtDur(e.StartNS-v.BeginNS), e.cost())
	}
	for i, h := range v.Metrics.Heals {
		ms := "never agreed again"
		if h.ConvergedMS != nil {
			ms = fmt.Sprintf("agreed on %d after %gms", *h.Leader, *h.ConvergedMS)
		}
		fmt.Fprintf(tw, "  %s\tat %gms: %s\n", label(i, "heal"), h.AtMS, ms)
	}
	for i, w := range v.Metrics.SplitBrain {
		fmt.Fprintf(tw, "  %s\tleaders %s for %gms from %gms\n", label(i, "split windows"), joinIDs(w.Leaders, ","), w.MS, w.AtMS)
	}
	if v.Metrics.SplitBrainMS > 0 {
		fmt.Fprintf(tw, "  split brain\t%gms\n", v.Metrics.SplitBrainMS)
	}
	fmt.Fprintf(tw, "  messages\t%d sent, %d dropped\n", v.Metrics.MessagesTotal, v.Metrics.DropsTotal)
	fmt.Fprintf(tw, "  judged by\tgrace %s, termination bound %s, settle %s\n",
		msDur(v.GraceMS), msDur(v.TerminationBoundMS), msDur(v.SettleMS))
	for i, s := range v.Warnings {
		fmt.Fprintf(tw, "  %s\t%s\n", label(i, "warning"), s)
	}
	tw.Flush()
}

// label names the first row of a group and leaves the others blank.
func label(i int, s string) string {
	if i == 0 {
		return s
	}
	return ""
}

// cost renders "20+4 / 24 (1.00)", "20+4 / no bound", and "still open" when it never ended.
func (e Election) cost() string {
	s := fmt.Sprintf("%d+%d", e.Messages, e.Announce)
	if e.Bound != nil && *e.Bound > 0 {
		s += fmt.Sprintf(" / %d (%.2f)", *e.Bound, float64(e.Messages+e.Announce)/float64(*e.Bound))
	} else {
		s += " / no bound"
	}
	var notes []string
	if e.Leader != nil {
		notes = append(notes, fmt.Sprintf("leader %d", *e.Leader))
	} else {
		notes = append(notes, "no agreement")
	}
	if e.Faults > 0 {
		notes = append(notes, fmt.Sprintf("%d fault(s)", e.Faults))
	}
	return s + ", " + strings.Join(notes, ", ")
}

func msDur(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// prober names who suspected a node: a node or an observer process.
func prober(id int) string {
	if rundir.IsObserver(id) {
		return fmt.Sprintf("observer %d", id)
	}
	return fmt.Sprintf("node %d", id)
}
