package bench

// The pages of `bench failover` and `bench chaos`: what each shows, built from the trials and runs
// that Failover and Chaos collect (they print the same figures as text).

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/internal/svgchart"
)

// FailoverTrial is one trial of `bench failover`.
type FailoverTrial struct {
	Fault string // kill, pause, stop
	Trial int    // the number in its directory's name (kill-03: 3)
	// OK: the run passed and the checker measured the failover, MS. A trial that is not OK is a
	// failed one, left out of the distribution; Why says why, and MS is kept when measured.
	OK  bool
	MS  float64
	Has bool // MS was measured
	Why string
	Dir string
	// NoticeMS is the time from the fault to the first suspicion of its target by another node
	// (its own log's time), HasNotice when one was logged: the failover's part that is the death's
	// notice (an EOF, a timeout); the rest, MS minus NoticeMS, is the election.
	NoticeMS  float64
	HasNotice bool
}

// FailoverStats are the figures of one fault, as Failover prints them.
type FailoverStats struct {
	Fault          string
	Trials, Failed int
	P50, P90, Max  float64
	// Noticed counts the measured trials with a notice; NoticeP50 and ElectP50 are the medians of
	// their notice and of the rest of their failover.
	Noticed             int
	NoticeP50, ElectP50 float64
}

// FailoverSummary sums the trials up per fault, in the order of faults.
func FailoverSummary(faults []string, trials []FailoverTrial) []FailoverStats {
	var out []FailoverStats
	for _, f := range faults {
		s := FailoverStats{Fault: f}
		var ms, notice, elect []float64
		for _, t := range trials {
			if t.Fault != f {
				continue
			}
			if !t.OK {
				s.Failed++
				continue
			}
			ms = append(ms, t.MS)
			if t.HasNotice {
				notice, elect = append(notice, t.NoticeMS), append(elect, t.MS-t.NoticeMS)
			}
		}
		s.Trials, s.Noticed = len(ms), len(notice)
		s.P50, s.P90, s.Max = svgchart.Quantiles(ms)
		s.NoticeP50, _, _ = svgchart.Quantiles(notice)
		s.ElectP50, _, _ = svgchart.Quantiles(elect)
		out = append(out, s)
	}
	return out
}

// FailoverPage is `bench failover`'s page: per fault the failover time's CDF, a scatter of the
// trials (failed ones as red crosses) and p50/p90/max; then each trial's run. timeoutMS, when
// positive, is drawn as a reference (no failover can beat the detector's timeout by much).
func FailoverPage(dir string, head Page, faults []string, trials []FailoverTrial, timeoutMS float64) Page {
	p := head
	stats := FailoverSummary(faults, trials)
	tab := &Table{Header: []string{"fault", "trials", "measured", "failed", "p50 ms", "p90 ms", "max ms", "notice p50 ms", "elect p50 ms"}}
	var cdf []svgchart.Series
	var sc []svgchart.ScatterSeries
	bars := svgchart.Bars{Title: "Failover time by fault", XLabel: "ms", Groups: []svgchart.BarGroup{{Name: "p50"}, {Name: "p90"}, {Name: "max"}}}
	lo, hi := math.Inf(1), 0.0
	for _, s := range stats {
		row := Row{Cells: []string{s.Fault, strconv.Itoa(s.Trials + s.Failed), strconv.Itoa(s.Trials), strconv.Itoa(s.Failed),
			fmtMS(s.P50, s.Trials), fmtMS(s.P90, s.Trials), fmtMS(s.Max, s.Trials), fmtMS(s.NoticeP50, s.Noticed), fmtMS(s.ElectP50, s.Noticed)}}
		if s.Failed > 0 {
			row.Class = "fail"
		}
		tab.Rows = append(tab.Rows, row)
		var ms []float64
		ss := svgchart.ScatterSeries{Name: s.Fault}
		for _, t := range trials {
			if t.Fault != s.Fault {
				continue
			}
			if t.OK {
				ms = append(ms, t.MS)
				lo, hi = min(lo, t.MS), max(hi, t.MS)
			}
			label := fmt.Sprintf("%s trial %d: %s ms", t.Fault, t.Trial, svgchart.FormatValue(t.MS))
			if !t.OK {
				label = fmt.Sprintf("%s trial %d failed: %s", t.Fault, t.Trial, t.Why)
				if t.Has {
					label += fmt.Sprintf(" (failover measured: %s ms)", svgchart.FormatValue(t.MS))
				}
			}
			ss.Points = append(ss.Points, svgchart.Point{X: float64(t.Trial), Y: t.MS, Failed: !t.OK, Label: label, Href: string(RunHref(dir, t.Dir))})
		}
		cdf = append(cdf, svgchart.Series{Name: fmt.Sprintf("%s (%d of %d)", s.Fault, s.Trials, s.Trials+s.Failed), Values: ms})
		sc = append(sc, ss)
		bars.Categories = append(bars.Categories, s.Fault)
		for i, v := range []float64{s.P50, s.P90, s.Max} {
			if s.Trials == 0 {
				v = math.NaN()
			}
			bars.Groups[i].Values = append(bars.Groups[i].Values, v)
		}
	}
	var refs []svgchart.Ref
	if timeoutMS > 0 {
		refs = []svgchart.Ref{{Value: timeoutMS, Label: "timeout " + svgchart.FormatValue(timeoutMS) + " ms"}}
	}
	c := svgchart.CDF{Title: "Failover time, CDF per fault", XLabel: "failover ms (fault to agreement on a new leader)",
		YLabel: "fraction of measured trials", Series: cdf, Refs: refs, Log: hi > 20*lo && lo > 0}
	s := svgchart.Scatter{Title: "Failover time per trial", XLabel: "trial (its directory's number)", YLabel: "failover ms", Series: sc, Refs: refs}
	p.Sections = append(p.Sections, Section{
		Title: "Failover time",
		Text: []string{"From the fault on the leader, as chaos.jsonl recorded it, to the moment every live node's log shows the same new leader (verdict.json's metrics.failovers[0].ms). " +
			"A trial failed when the run did not pass or no failover was measured: it is left out of the distribution and drawn as a red cross above the scatter. Quantiles are nearest-rank."},
		Table:  tab,
		Charts: []string{c.SVG(), s.SVG(), bars.SVG()},
	})
	for _, f := range faults {
		sec := Section{Title: "Trials: " + f}
		for _, t := range trials {
			if t.Fault != f {
				continue
			}
			l := RunLink{Name: fmt.Sprintf("%s-%02d · %s ms", f, t.Trial, svgchart.FormatValue(t.MS)), Dir: t.Dir, Status: "pass"}
			if !t.OK {
				l.Status, l.Note = "fail", t.Why
				l.Name = fmt.Sprintf("%s-%02d · failed", f, t.Trial)
			}
			sec.Runs = append(sec.Runs, l)
		}
		if len(sec.Runs) > 0 {
			p.Sections = append(p.Sections, sec)
		}
	}
	return p
}

func fmtMS(v float64, n int) string {
	if n == 0 {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// ChaosRun is one run of `bench chaos`.
type ChaosRun struct {
	Seed         int64
	Dir          string
	OK           bool
	Limit        bool     // it failed only under the algorithm's declared limits
	Inconclusive bool     // it ended while its election was still progressing: neither pass nor violation
	Failed       []string // the failed properties, or why the run has no verdict
	Why          string
	SplitBrainMS float64
	Lost         int   // recvs with no send
	Orphans      []int // pids of the run's node processes alive after the launcher returned
	Warnings     int
	// Replay is the command that makes the run again anywhere (replayCommand).
	Replay string
}

// Status is "pass", "limit" (failed only under declared limits), "inconclusive" (still electing
// when the run ended) or "fail" (a violation, or node processes that outlived the run).
func (r ChaosRun) Status() string {
	switch {
	case !r.OK && r.Limit:
		return "limit"
	case len(r.Orphans) > 0:
		return "fail"
	case !r.OK && r.Inconclusive:
		return "inconclusive"
	case !r.OK:
		return "fail"
	}
	return "pass"
}

// ChaosCell is the runs of one (algorithm, N), in seed order.
type ChaosCell struct {
	Algo string
	N    int
	Runs []ChaosRun
}

// ChaosStats sum a cell up, for the printed row and the page alike: runs that failed only under
// declared limits count as expected and nothing else (their split-brain time, lost lines, orphans
// and warnings are the limit's, not a defect's). Inconclusive runs (still electing when the run
// ended) count apart too, with their lost lines and orphans, which are defects whatever the verdict.
type ChaosStats struct {
	Runs, Violations, Expected, Passed int
	Inconclusive                       int
	ByProp                             map[string]int
	SplitSum, SplitMax                 float64
	Judged                             int // runs in the split-brain figures: all but the expected ones
	Lost, Orphans, Warnings            int
	Split                              []float64 // each judged run's split-brain ms
}

// Stats sums the cell up.
func (c ChaosCell) Stats() ChaosStats {
	s := ChaosStats{ByProp: map[string]int{}}
	for _, r := range c.Runs {
		s.add(r)
	}
	return s
}

func (s *ChaosStats) add(r ChaosRun) {
	s.Runs++
	if !r.OK && r.Limit {
		s.Expected++
		return
	}
	if !r.OK && r.Inconclusive {
		s.Inconclusive++
		s.Lost += r.Lost
		s.Orphans += len(r.Orphans)
		return
	}
	if r.OK {
		s.Passed++
	} else {
		s.Violations++
	}
	for _, p := range r.Failed {
		s.ByProp[p]++
	}
	s.Judged++
	s.Split = append(s.Split, r.SplitBrainMS)
	s.SplitSum += r.SplitBrainMS
	s.SplitMax = max(s.SplitMax, r.SplitBrainMS)
	s.Lost += r.Lost
	s.Orphans += len(r.Orphans)
	s.Warnings += r.Warnings
}

// SplitMean is the mean split-brain time of the judged runs (NaN when none).
func (s ChaosStats) SplitMean() float64 {
	if s.Judged == 0 {
		return math.NaN()
	}
	return s.SplitSum / float64(s.Judged)
}

// props is "agreement×2, uniqueness×1" (with sep ", "), or "-" when no property failed.
func (s ChaosStats) props(sep string) string {
	if len(s.ByProp) == 0 {
		return "-"
	}
	var out []string
	for _, p := range slices.Sorted(maps.Keys(s.ByProp)) {
		out = append(out, fmt.Sprintf("%s×%d", p, s.ByProp[p]))
	}
	return strings.Join(out, sep)
}

func (s ChaosStats) cells(algo, n string) []string {
	return []string{algo, n, strconv.Itoa(s.Runs), strconv.Itoa(s.Violations), strconv.Itoa(s.Expected), strconv.Itoa(s.Inconclusive), strconv.Itoa(s.Passed),
		strconv.FormatFloat(s.SplitSum, 'f', 1, 64), svgchart.FormatValue(s.SplitMean()), strconv.FormatFloat(s.SplitMax, 'f', 1, 64),
		strconv.Itoa(s.Lost), strconv.Itoa(s.Orphans), strconv.Itoa(s.Warnings), s.props(", ")}
}

// ChaosPage is `bench chaos`'s page: per (algorithm, N) the runs by outcome (violations, expected
// under declared limits, passed), the split-brain time (a CDF across runs, the mean and max per
// cell), a table of every figure the CLI prints, and each cell's runs.
func ChaosPage(dir string, head Page, cells []ChaosCell) Page {
	p := head
	ns := map[int]bool{}
	for _, c := range cells {
		ns[c.N] = true
	}
	name := func(c ChaosCell) string {
		if len(ns) == 1 {
			return c.Algo
		}
		return fmt.Sprintf("%s n=%d", c.Algo, c.N)
	}
	tab := &Table{Header: []string{"algo", "n", "runs", "violations", "expected (limit)", "inconclusive", "passed", "split-brain ms", "mean ms", "max ms", "lost", "orphans", "warnings", "failed properties"}}
	outcome := svgchart.Bars{Title: "Runs by outcome", XLabel: "runs", Stacked: true, Groups: []svgchart.BarGroup{
		{Name: "violations", Color: svgchart.FailColor}, {Name: "expected (declared limit)", Color: "#e69f00"},
		{Name: "inconclusive (still electing at the end)", Color: "#999999"}, {Name: "passed", Color: "#009e73"}}}
	split := svgchart.Bars{Title: "Split-brain time per run", XLabel: "split-brain ms", Groups: []svgchart.BarGroup{{Name: "mean"}, {Name: "max"}}}
	total := ChaosStats{ByProp: map[string]int{}}
	perCell := len(cells) <= len(svgchart.Palette)
	var cdf []svgchart.Series
	byAlgo := map[string]int{} // series index by algorithm when the CDF has one per algorithm
	for _, c := range cells {
		s := c.Stats()
		for _, r := range c.Runs {
			total.add(r)
		}
		row := Row{Cells: s.cells(c.Algo, strconv.Itoa(c.N))}
		switch {
		case s.Violations > 0 || s.Orphans > 0:
			row.Class = "fail"
		case s.Expected > 0 || s.Inconclusive > 0:
			row.Class = "limit"
		}
		tab.Rows = append(tab.Rows, row)
		outcome.Categories = append(outcome.Categories, name(c))
		for i, v := range []int{s.Violations, s.Expected, s.Inconclusive, s.Passed} {
			outcome.Groups[i].Values = append(outcome.Groups[i].Values, float64(v))
		}
		split.Categories = append(split.Categories, name(c))
		smax := s.SplitMax
		if s.Judged == 0 {
			smax = math.NaN()
		}
		split.Groups[0].Values = append(split.Groups[0].Values, s.SplitMean())
		split.Groups[1].Values = append(split.Groups[1].Values, smax)
		if perCell {
			cdf = append(cdf, svgchart.Series{Name: fmt.Sprintf("%s (%d runs)", name(c), s.Judged), Values: s.Split})
			continue
		}
		i, ok := byAlgo[c.Algo]
		if !ok {
			i = len(cdf)
			byAlgo[c.Algo] = i
			cdf = append(cdf, svgchart.Series{Name: c.Algo})
		}
		cdf[i].Values = append(cdf[i].Values, s.Split...)
	}
	if !perCell {
		for i := range cdf {
			cdf[i].Name = fmt.Sprintf("%s, every n (%d runs)", cdf[i].Name, len(cdf[i].Values))
		}
	}
	tab.Rows = append(tab.Rows, Row{Cells: total.cells("total", ""), Class: "total"})
	c := svgchart.CDF{Title: "Split-brain time, CDF across runs", XLabel: "split-brain ms per run (verdict.json metrics.split_brain_ms)",
		YLabel: "fraction of runs", Series: cdf}
	p.Sections = append(p.Sections, Section{
		Title: "Violations and split brain",
		Text: []string{"A violation is a run the checker did not pass for a reason the algorithm does not declare; expected runs failed only under a limit the algorithm declares " +
			"(such as uniqueness under a one-way link drop) and do not fail the bench; inconclusive runs ended while their election was still progressing " +
			"(the machine fell behind; verdict.json's outcome) and do not fail it either. As in the printed table, the split-brain figures, lost log lines and warnings are those of the runs other than the expected ones. " +
			"Orphans are node processes still alive once their run had ended; they fail the bench too."},
		Table:  tab,
		Charts: []string{outcome.SVG(), c.SVG(), split.SVG()},
	})
	for _, cell := range cells {
		sec := Section{Title: fmt.Sprintf("Runs: %s, n=%d", cell.Algo, cell.N)}
		for _, r := range cell.Runs {
			l := RunLink{Name: "seed " + strconv.FormatInt(r.Seed, 10), Dir: r.Dir, Status: r.Status()}
			if l.Status != "pass" {
				what := strings.Join(r.Failed, ", ")
				if len(r.Orphans) > 0 {
					what = strings.TrimPrefix(what+fmt.Sprintf(", %d orphan processes", len(r.Orphans)), ", ")
				}
				if r.Why != "" {
					what += " (" + r.Why + ")"
				}
				l.Note = what
			}
			if r.SplitBrainMS > 0 {
				l.Name += " · split " + svgchart.FormatValue(r.SplitBrainMS) + " ms"
			}
			sec.Runs = append(sec.Runs, l)
		}
		p.Sections = append(p.Sections, sec)
	}
	return p
}
