package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// The rows of `bench rsdp`: what a (N, mode, detector)'s trials, or a loss run, come to against the
// formulas.

// RSDPRow is one line of the table: a metric of one (N, mode, detector) against its formula.
type RSDPRow struct {
	Metric   string
	N        int
	Mode     string
	Detector string
	Measured float64 // NaN: nothing measured
	Formula  float64
	Trials   string // measured of run
	Note     string
}

// Cells are the row's columns, in RSDPHeader's order: the ratio measured/formula, "-" for
// nothing measured, and the note on one line.
func (r RSDPRow) Cells() []string {
	ratio := "-"
	if !math.IsNaN(r.Measured) && r.Formula != 0 && !math.IsNaN(r.Formula) {
		ratio = strconv.FormatFloat(r.Measured/r.Formula, 'f', 3, 64)
	}
	return []string{r.Metric, strconv.Itoa(r.N), r.Mode, r.Detector, rsdpNum(r.Measured), rsdpNum(r.Formula), ratio, r.Trials, rsdpOneLine(r.Note)}
}

// rsdpOneLine keeps a note on its row: a launcher error quotes a node's stderr, lines and all.
func rsdpOneLine(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }), " / ")
}

// rsdpNum prints a measured or formula value: 3 decimals below 100, 1 above; "-" for none.
func rsdpNum(x float64) string {
	switch {
	case math.IsNaN(x):
		return "-"
	case math.Abs(x) >= 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 3, 64)
}

// RSDPHeader names the columns of RSDPRow.Cells, as the table and the CSV file of `bench rsdp` write them.
var RSDPHeader = []string{"metric", "n", "mode", "detector", "measured", "formula", "ratio", "trials", "note"}

func rsdpMean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func rsdpMS(d time.Duration) float64 { return float64(d) / 1e6 }

func rsdpJoin(xs []float64) string {
	var s []string
	for _, x := range xs {
		s = append(s, strconv.FormatFloat(x, 'f', 1, 64))
	}
	return strings.Join(s, ", ")
}

// rsdpCellRows turns the trials of one (N, mode, detector) into rows.
func rsdpCellRows(cfg RSDPPlan, n int, mode, det string, trials []rsdpTrial) []RSDPRow {
	p := newRSDPDetectSetup(n, det, cfg.HealthInterval)
	m := cfg.Observers
	var (
		failures                        []string
		checkerFails                    int
		det1, cons, consF, d, tp, sends []float64
		tail, skew, d1, cons1F, consMax []float64
		health, expect, agree, windows  []float64
		agreeAll                        int
		noDetect, falseSusp             int
		late                            time.Duration
	)
	for _, t := range trials {
		if t.Failed != "" {
			failures = append(failures, t.Failed)
			continue
		}
		if !t.Checker {
			checkerFails++
		}
		falseSusp += t.False
		late = max(late, t.Late)
		if t.Detect != nil {
			det1 = append(det1, *t.Detect)
		} else {
			noDetect++
		}
		if t.Cons.OK && !math.IsNaN(t.Cons.D) && !math.IsNaN(t.Cons.TP) {
			cons = append(cons, float64(t.Cons.TimeNS)/1e6)
			consF = append(consF, rsdpEq3ConsensusTime(t.Cons.D, t.Cons.TP, n)/1e6)
			d = append(d, t.Cons.D/1e3)
			tp = append(tp, t.Cons.TP/1e3)
			tail = append(tail, float64(t.Cons.TailNS)/1e6)
			skew = append(skew, float64(t.Cons.SkewNS)/1e6)
			d1 = append(d1, t.Cons.D1/1e3)
			cons1F = append(cons1F, rsdpEq3ConsensusTime(t.Cons.D1, t.Cons.TP, n)/1e6)
			consMax = append(consMax, rsdpEq3ConsensusTime(t.Cons.D1Max, t.Cons.TP1Max, n)/1e6)
		}
		sends = append(sends, float64(t.Cons.Sends))
		health = append(health, t.Health)
		expect = append(expect, t.Expect)
		agree = append(agree, float64(t.Agree))
		agreeAll += t.AgreeAll
		windows = append(windows, t.Window.Seconds())
	}
	common := ""
	if len(failures) > 0 {
		common += fmt.Sprintf("; %d of %d runs FAILED: %s", len(failures), len(trials), strings.Join(failures, " | "))
	}
	if checkerFails > 0 {
		common += fmt.Sprintf("; the checker failed %d run(s) (measured anyway)", checkerFails)
	}
	hNote := fmt.Sprintf("h=%v", p.H)
	if p.HScaled {
		hNote += fmt.Sprintf(" (raised from %v: N(N-1) probes per h on 2 cores)", cfg.HealthInterval)
	}
	row := func(metric string, xs []float64, formula float64, note string) RSDPRow {
		return RSDPRow{Metric: metric, N: n, Mode: mode, Detector: det, Measured: rsdpMean(xs), Formula: formula,
			Trials: fmt.Sprintf("%d/%d", len(xs), len(trials)), Note: note + common}
	}
	var rows []RSDPRow

	// detection
	var formula time.Duration
	var note string
	switch det {
	case rundir.DetectorMutual:
		formula = rsdpEq12MutualDetection(p.H, n)
		st := rsdpStaggeredDetection(p.H, n)
		note = fmt.Sprintf("eq.12 h/2N, %s; our staggering (probers at pos*h/N, the dead leader's slot gone: N-2 gaps h/N, one 2h/N) gives h(N+2)/2N^2 = %.3fms", hNote, rsdpMS(st))
		if mm := rsdpMean(det1); !math.IsNaN(mm) {
			note += fmt.Sprintf(" (ratio %.3f)", mm/rsdpMS(st))
		}
		note += fmt.Sprintf("; if the probe rounds drift to independent phases E = h/N = %.3fms; a probe sent before its node's transport has seen the dead leader's link break waits the probe timeout instead", rsdpMS(p.H/time.Duration(n)))
	case rundir.DetectorObserver:
		formula = rsdpEq19ObserverDetection(p.H)
		note = fmt.Sprintf("eq.19 h_o/2, h_o=%v; a dead node's closed port fails the next probe at once", p.H)
	case rundir.DetectorObservers:
		formula = rsdpEq25ObserversDetection(p.H, m)
		note = fmt.Sprintf("eq.25 h_o/2M, h_o=%v, M=%d (first probes staggered j*h_o/M, then tickers)", p.H, m)
	}
	note += "; the kill at 1s + a phase uniform over h (stratified over the trials); kill -> first suspicion (verdict.json first_ms), per trial " + rsdpJoin(det1) + " ms"
	if noDetect > 0 {
		note += fmt.Sprintf("; %d run(s) never suspected the dead leader", noDetect)
	}
	note += fmt.Sprintf("; probe timeout %v; %d false suspicion(s) of live nodes over the trials; the kills landed up to %.1fms after their scheduled times", p.PT, falseSusp, rsdpMS(late))
	rows = append(rows, row("detect_ms", det1, rsdpMS(formula), note))

	// consensus time
	note = fmt.Sprintf("session 1: first hello sent -> last share received; eq.3 3(d+t_p(N-1)) with d=%.1fus (median delay, all messages of the run), t_p=%.1fus (median hello->status turnaround); the nodes entered the session over %.3fms (the launcher's begin reaches them one by one), which eq.3 does not count",
		rsdpMean(d), rsdpMean(tp), rsdpMean(skew))
	rows = append(rows, row("consensus_ms", cons, rsdpMean(consF), note))
	note = fmt.Sprintf("session 1 from the last node's first hello (every replica started) to the last share received; eq.3 as above; with session 1's own median delay d1=%.1fus (startup load) eq.3 gives %.3fms; with session 1's largest delay and turnaround (the paper's d and t_p are maxima) %.3fms",
		rsdpMean(d1), rsdpMean(cons1F), rsdpMean(consMax))
	rows = append(rows, row("consensus_last", tail, rsdpMean(consF), note))

	// consensus messages
	note = "hello+status+share sends of session 1; eq.16 3N(N-1)"
	if slices.ContainsFunc(sends, func(x float64) bool { return x != float64(rsdpEq16ConsensusMessages(n)) }) {
		note += fmt.Sprintf("; per trial %s (a node that suspects a peer sends it nothing; a hello from a node not counted as a member opens another session)", rsdpJoin(sends))
	}
	rows = append(rows, row("consensus_msgs", sends, float64(rsdpEq16ConsensusMessages(n)), note))

	// health messages
	win := rsdpMean(windows)
	switch det {
	case rundir.DetectorMutual:
		e := rsdpMean(expect)
		note = fmt.Sprintf("eq.17 M_health N(N-1); sum of the nodes' last stats hb_sent / (window/h), window begin->stopping %.2fs = %.0f h, %s; the leader killed at 1s stops probing and survivors stop probing it (N-1)(N-2): expected %.1f (ratio %.3f)",
			win, win/p.H.Seconds(), hNote, e, rsdpMean(health)/e)
		rows = append(rows, row("health_per_h", health, float64(rsdpEq17MutualHealth(n)), note))
	case rundir.DetectorObserver:
		note = fmt.Sprintf("eq.22 N; the observer's last stats hb_sent / (window/h_o), window begin->stopping %.2fs = %.0f h_o; it keeps probing the dead node, and skips a node whose last probe is still unanswered (a loaded node answers late; a late ticker drops ticks)", win, win/p.H.Seconds())
		rows = append(rows, row("health_per_h", health, float64(rsdpEq22ObserverHealth(n)), note))
	case rundir.DetectorObservers:
		note = fmt.Sprintf("eq.28 M*N; summed over the M=%d observers' last stats hb_sent / (window/h_o), window begin->stopping %.2fs = %.0f h_o; includes the extra probes each vote makes; an observer skips a node whose last probe is still unanswered (a loaded node answers late; a late ticker drops ticks)", m, win, win/p.H.Seconds())
		rows = append(rows, row("health_per_h", health, float64(rsdpEq28ObserversHealth(m, n)), note))
		note = fmt.Sprintf("the observers' suspect+vote+decide sends about the killed leader; eq.29 3M(M-1) has every observer broadcast 3 times, one agreement here is the asker's M-1 suspects, M-1 votes back, M-1 decides = 3(M-1) = %d (more when several observers suspect it at once); about any node, false suspicions included: %d over the trials", 3*(m-1), agreeAll)
		rows = append(rows, row("agree_msgs", agree, float64(rsdpEq29ObserverConsensus(m)), note))
	}
	return rows
}

// rsdpLossRows turns one loss run into rows.
func rsdpLossRows(cfg RSDPPlan, n int, mode string, t rsdpTrial, p rsdpLossSetup) []RSDPRow {
	pl := cfg.Loss
	st := t.Loss
	trials := "1/1"
	fail := ""
	measured := func(k, of int) float64 {
		if t.Failed != "" || of == 0 {
			return math.NaN()
		}
		return float64(k) / float64(of)
	}
	if t.Failed != "" {
		trials, fail = "0/1", "; the run FAILED: "+t.Failed
	} else if !t.Checker {
		fail = "; the checker failed the run (measured anyway)"
	}
	lossRate := math.NaN()
	if st.Lost+st.Delivered > 0 {
		lossRate = float64(st.Lost) / float64(st.Lost+st.Delivered)
	}
	common := fmt.Sprintf("%d sessions counted: first hello from %.2fs (all %d link rules in force) to 1s before the end (resync %v, status timeout %v, heartbeat detector 100ms/1s, run %v); frames lost %.2f%% (%d of %d); %d session(s) had fewer sends than 3N(N-1) (a lost hello is a status never sent)",
		st.Sessions, t.LossAt.Seconds(), n*(n-1), p.Resync, p.StatusTimeout, p.Duration, 100*lossRate, st.Lost, st.Lost+st.Delivered, st.Short)
	pReal := math.Pow(1-pl, float64(4*n-4))
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	mcAll, mcVote, mcRep := rsdpProtocolLoss(n, pl, rsdpProtocolSamples, rng)
	mc := fmt.Sprintf("this protocol (a status only for a hello that arrived; Monte Carlo of %d sessions at p_l=%g): p_fail_all %.3f, p_fail_vote %.3f, p_replica %.3f",
		rsdpProtocolSamples, pl, mcAll, mcVote, mcRep)
	if !math.IsNaN(lossRate) {
		mc += fmt.Sprintf("; at the measured frame loss %.4f, (1-p)^(4N-4) = %.3f", lossRate, math.Pow(1-lossRate, float64(4*n-4)))
	}
	base := RSDPRow{N: n, Mode: mode, Detector: rundir.DetectorHeartbeat, Trials: trials}
	all := base
	all.Metric, all.Measured, all.Formula = "p_fail_all", measured(st.FailAll, st.Sessions), rsdpEq8LastStateFailure(pl, 0, n)
	all.Note = fmt.Sprintf("eq.8, p_l=%g, p_f=0: some replica missed a hello, status or share of the session; every replica completes iff all 3N(N-1) messages arrive, so eq.8 holds for this protocol too; %s; %s%s", pl, mc, common, fail)
	vote := base
	vote.Metric, vote.Measured, vote.Formula = "p_fail_vote", measured(st.FailVote, st.Sessions), rsdpEq11VoteFailure(rsdpEq6ReplicaSuccess(pl, 0, n), n)
	vote.Note = fmt.Sprintf("eq.10-11, q=%d, P_replica=(1-p_l)^(3N-3), replicas independent; here a replica needs 4(N-1) deliveries ((1-p_l)^(4N-4)=%.3f) and one lost hello fails two replicas; %s; %s%s",
		rsdpEq9Quorum(n), pReal, mc, common, fail)
	rep := base
	rep.Metric, rep.Measured, rep.Formula = "p_replica", measured(st.ReplicaOK, st.Replicas), rsdpEq6ReplicaSuccess(pl, 0, n)
	rep.Note = fmt.Sprintf("eq.6, p_f=0: share of (session, replica) completed; with the hello->status dependency (1-p_l)^(4N-4) = %.3f; %s; %s%s", pReal, mc, common, fail)
	return []RSDPRow{all, vote, rep}
}

// runRSDPBench measures the grid, printing each row as it is measured; it returns how many runs
// could not be measured.
