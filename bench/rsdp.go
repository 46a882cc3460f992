package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// `leaderlab bench rsdp`: Toliupa et al.'s models of RSDP (section 3.3: consensus time and failure
// probability) and of its failover topologies (section 4: detection time and message overhead of
// mutual health evaluation, one observer, M observers) held against real clusters.
//
// For every N, RSDP mode and detector it runs Trials clusters of N real nodes that elect with
// RSDP, kills the leader (N) at 1s, and reads from each run:
//
//	detect_ms       verdict.json's metrics.detections[0].first_ms: kill -> first suspicion (eq. 12, 19, 25)
//	consensus_ms    session 1 (every node opens it at begin): the first hello sent -> the last share
//	                received, against eq. 3 with d and t_p measured in the same run
//	consensus_msgs  hello+status+share sends of session 1, against 3N(N-1) (eq. 16)
//	health_per_h    probes per health interval over the run (begin -> stopping in launcher.jsonl),
//	                against N(N-1) (eq. 17), N (eq. 22), M*N (eq. 28)
//	agree_msgs      observers only: the observers' agreement messages, against 3M(M-1) (eq. 29)
//
// and, with a Loss p, for every mode and N one longer run with every ordered link losing p of its
// messages and sessions every 200ms (no kill), where it counts which sessions every replica, or a
// quorum of replicas, completed (eq. 8, eq. 10-11 with p_f = 0).
//
// The formulas are the small pure functions rsdpEq* (rsdp_formulas.go); the log analysis is pure
// functions over a logs.Run (rsdp_logs.go); the rows are made in rsdp_rows.go.

const (
	// RSDPDefaultNs are the cluster sizes `bench rsdp` measures unless told, as its --n writes them.
	RSDPDefaultNs = "3,5,9,17,33"
	// RSDPMaxN is the largest cluster RSDPPlan accepts.
	RSDPMaxN = 64
	// RSDPKillAt is when the leader is killed in the detection runs (plus a phase within h).
	RSDPKillAt = time.Second
	// rsdpProbeCost bounds the mutual detector's load: above ~3300 probes a second cluster-wide
	// (plus as many answers) two loaded cores start missing probe timeouts and the cluster churns
	// through false suspicions, so h is raised to at least N(N-1) x this (N=17: 90ms, N=33: 320ms).
	rsdpProbeCost = 300 * time.Microsecond
	// rsdpLossSessions is about how many sessions a loss run holds.
	rsdpLossSessions = 25
)

// RSDPDetectors are the detectors `bench rsdp` measures: RSDP's three failover topologies.
var RSDPDetectors = []string{rundir.DetectorMutual, rundir.DetectorObserver, rundir.DetectorObservers}

// RSDPPlan is one `bench rsdp`: for every N, mode and detector, Trials detection runs; and with
// Loss > 0, for every N and mode, one loss run.
type RSDPPlan struct {
	Ns        []int    // cluster sizes, 2..RSDPMaxN
	Modes     []string // election.RSDPModes
	Detectors []string // RSDPDetectors
	Observers int      // M of the observers detector
	Trials    int
	// HealthInterval is h (mutual) and h_o (observers), before any scaling for load.
	HealthInterval time.Duration
	Loss           float64 // p_l of the loss runs; 0: none
	Dir            string  // the runs go under it
	// Progress is told of each run as it ends.
	Progress func(RSDPRun)
	// Rows is given the rows of each (N, mode, detector), and of each loss run, as they are
	// measured; an error it returns ends the benchmark with that error.
	Rows func([]RSDPRow) error
}

// RSDPRun is a run of the plan as it ended.
type RSDPRun struct {
	N        int
	Mode     string
	Detector string // "": the loss run of (N, mode)
	Trial    int    // 1..Trials of a detection run
	Elapsed  time.Duration
	Dir      string
	Failed   string // why it could not be measured; "": it was
}

// Validate names the first bad field of the plan and what would be accepted.
func (p *RSDPPlan) Validate() error {
	if len(p.Ns) == 0 {
		return &field.Error{Field: "RSDPPlan.Ns", Want: fmt.Sprintf("no cluster size given (want a comma-separated list of sizes 2..%d such as %s)", RSDPMaxN, RSDPDefaultNs)}
	}
	for _, n := range p.Ns {
		if n < 2 || n > RSDPMaxN {
			return &field.Error{Field: "RSDPPlan.Ns", Want: fmt.Sprintf("%d is out of range (want sizes 2..%d)", n, RSDPMaxN)}
		}
	}
	if len(p.Modes) == 0 {
		return &field.Error{Field: "RSDPPlan.Modes", Want: fmt.Sprintf("none given (accepted: %s)", strings.Join(election.RSDPModes, ", "))}
	}
	for _, m := range p.Modes {
		if !slices.Contains(election.RSDPModes, m) {
			return &field.Error{Field: "RSDPPlan.Modes", Want: fmt.Sprintf("unknown mode %q (accepted: %s)", m, strings.Join(election.RSDPModes, ", "))}
		}
	}
	if len(p.Detectors) == 0 {
		return &field.Error{Field: "RSDPPlan.Detectors", Want: fmt.Sprintf("none given (accepted: %s)", strings.Join(RSDPDetectors, ", "))}
	}
	for _, d := range p.Detectors {
		if !slices.Contains(RSDPDetectors, d) {
			return &field.Error{Field: "RSDPPlan.Detectors", Want: fmt.Sprintf("unknown detector %q (accepted: %s)", d, strings.Join(RSDPDetectors, ", "))}
		}
	}
	switch {
	case p.Observers < 1 || p.Observers > 64:
		return &field.Error{Field: "RSDPPlan.Observers", Value: p.Observers, Want: "want 1..64 (M, the observer processes of the observers detector)"}
	case p.Trials < 1:
		return &field.Error{Field: "RSDPPlan.Trials", Value: p.Trials, Want: "want at least 1"}
	case p.HealthInterval < time.Millisecond:
		return &field.Error{Field: "RSDPPlan.HealthInterval", Value: p.HealthInterval, Want: "want a duration of at least 1ms such as 50ms"}
	case math.IsNaN(p.Loss) || p.Loss < 0 || p.Loss >= 1:
		return &field.Error{Field: "RSDPPlan.Loss", Value: p.Loss, Want: "want a probability 0 <= p < 1 such as 0.05 (0: no loss runs)"}
	}
	return nil
}

// Runs is how many runs the plan makes: the detection trials of every (N, mode, detector), and a
// loss run per (N, mode) when Loss is set.
func (p *RSDPPlan) Runs() int {
	loss := 0
	if p.Loss > 0 {
		loss = 1
	}
	return len(p.Ns) * len(p.Modes) * (len(p.Detectors)*p.Trials + loss)
}

// RSDP makes the plan's runs, one at a time, and returns their rows. A run that cannot be
// measured is counted in its rows' notes (and its RSDPRun's Failed); an error is returned when the
// plan is bad, when the context ends ("interrupted") or when Rows returns one.
func RSDP(ctx context.Context, p RSDPPlan) ([]RSDPRow, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var all []RSDPRow
	emit := func(rows []RSDPRow) error {
		all = append(all, rows...)
		if p.Rows != nil {
			return p.Rows(rows)
		}
		return nil
	}
	done := func(r RSDPRun) {
		if p.Progress != nil {
			p.Progress(r)
		}
	}
	for _, n := range p.Ns {
		for _, mode := range p.Modes {
			for _, det := range p.Detectors {
				var trials []rsdpTrial
				for i := 0; i < p.Trials; i++ {
					if ctx.Err() != nil {
						return all, errors.New("interrupted")
					}
					start := time.Now()
					t, err := measureRSDPTrial(ctx, p, n, mode, det, i)
					if err != nil {
						return all, err
					}
					done(RSDPRun{N: n, Mode: mode, Detector: det, Trial: i + 1, Elapsed: time.Since(start), Dir: t.Dir, Failed: t.Failed})
					trials = append(trials, t)
				}
				if err := emit(rsdpCellRows(p, n, mode, det, trials)); err != nil {
					return all, err
				}
			}
			if p.Loss > 0 {
				if ctx.Err() != nil {
					return all, errors.New("interrupted")
				}
				start := time.Now()
				t, s, err := measureRSDPLoss(ctx, p, n, mode)
				if err != nil {
					return all, err
				}
				done(RSDPRun{N: n, Mode: mode, Elapsed: time.Since(start), Dir: t.Dir, Failed: t.Failed})
				if err := emit(rsdpLossRows(p, n, mode, t, s)); err != nil {
					return all, err
				}
			}
		}
	}
	return all, nil
}

// Running the clusters.

// rsdpDetectSetup is how the runs of one (N, detector) are set up.
type rsdpDetectSetup struct {
	H, PT    time.Duration // health interval and probe timeout
	HScaled  bool          // H was raised above RSDPPlan.HealthInterval for load
	Timeout  time.Duration // launcher.Config.Timeout: RSDP's status timeout and the checker's grace
	Duration time.Duration
	VClock   string
}

// newRSDPDetectSetup: a 2.5s run (longer for large N) with the leader killed at 1s. The mutual
// detector's h is raised with N (rsdpProbeCost); above 16 nodes a probe waits longer for its answer
// than h/2 (3h/4 for mutual, whose timeout must stay below h; h_o for the observers), the status
// timeout is 500ms, and the logs carry Lamport clocks only. A kill is detected by the closed port
// or the broken link, not by the probe timeout, so the longer timeouts only spare a loaded cluster
// false suspicions, each of which costs it a session of 3N(N-1) messages and more load.
func newRSDPDetectSetup(n int, det string, h time.Duration) rsdpDetectSetup {
	p := rsdpDetectSetup{H: h, Timeout: 200 * time.Millisecond, Duration: 2500 * time.Millisecond, VClock: launcher.VClockAuto}
	if det == rundir.DetectorMutual {
		if need := time.Duration(n*(n-1)) * rsdpProbeCost; need > h {
			p.H = (need + 10*time.Millisecond - 1).Truncate(10 * time.Millisecond)
			p.HScaled = true
		}
	}
	p.PT = p.H / 2
	if n > 16 {
		p.PT = 3 * p.H / 4
		if det != rundir.DetectorMutual {
			// an observer's probe of a dead node is refused at once; the timeout decides when a slow
			// answer from a live node is a false suspicion. It stays h_o: an observer does not probe
			// a node while its last probe is in flight, so a probe that was on its way when the node
			// died blinds that observer to it for the whole timeout.
			p.PT = p.H
		}
		p.Timeout = 500 * time.Millisecond
		p.VClock = launcher.VClockOff
	}
	if n > 9 {
		p.Duration += time.Duration(n-9) * 25 * time.Millisecond
	}
	// the kill lands up to h after 1s (rsdpKillTime), and the checker needs its settle after it
	p.Duration = max(p.Duration, RSDPKillAt+p.H+1500*time.Millisecond)
	return p
}

// rsdpKillTime is when trial i of k kills the leader: 1s plus a phase u·h with u uniform in
// [i/k, (i+1)/k) (stratified over the trials). The models take the failure to fall uniformly within
// the probe period; a kill at a fixed multiple of h after begin would instead land at the same
// phase of every prober's schedule in every trial (the schedules start at begin).
func rsdpKillTime(h time.Duration, i, k int, u float64) time.Duration {
	return RSDPKillAt + time.Duration((float64(i)+u)/float64(k)*float64(h)).Round(100*time.Microsecond)
}

// rsdpLossSetup is how the loss run of one N is set up.
type rsdpLossSetup struct {
	Resync, StatusTimeout, Duration time.Duration
}

// newRSDPLossSetup: the launcher applies the N(N-1) link rules one by one (about 8ms each on two
// idle cores: N=33 takes 8.5s; 12s to over 25s on a busy machine), so the run allows 30ms a rule
// before its sessions (every session after the last rule counts, so a quick start only adds
// sessions); then sessions every max(200ms, N x 10ms), about 25 of them, and a second; the
// heartbeat detector with a timeout of 1s (ten lost heartbeats in a row: p^10); the status timeout
// a quarter of the resync, so that a lost hello costs its sender a status, not its share (with the
// default, Config.Timeout, a sender would still be waiting when the next session begins and abandon
// this one without its share, failing every replica at once).
func newRSDPLossSetup(n int) rsdpLossSetup {
	r := max(200*time.Millisecond, time.Duration(n)*10*time.Millisecond)
	rules := time.Duration(n*(n-1)) * 30 * time.Millisecond
	return rsdpLossSetup{Resync: r, StatusTimeout: r / 4, Duration: rules + rsdpLossSessions*r + time.Second}
}

// rsdpLossChaos is `at 0s link a->b loss P%` for every ordered pair of 1..n.
func rsdpLossChaos(n int, p float64) string {
	pct := strconv.FormatFloat(math.Round(p*100*1e6)/1e6, 'f', -1, 64)
	var steps []string
	for a := 1; a <= n; a++ {
		for b := 1; b <= n; b++ {
			if a != b {
				steps = append(steps, fmt.Sprintf("at 0s link %d->%d loss %s%%", a, b, pct))
			}
		}
	}
	return strings.Join(steps, "; ")
}

// rsdpTrial is what one run gave.
type rsdpTrial struct {
	Dir      string
	Failed   string // why it gave nothing; empty when it was measured
	Checker  bool   // the checker passed
	Detect   *float64
	By       int
	Cons     rsdpConsensus
	Health   float64 // probes per h
	Expect   float64 // mutual: what the kill leaves of N(N-1) per h
	Window   time.Duration
	Agree    int           // the observers' agreement messages about the killed node
	AgreeAll int           // about any node (false suspicions too)
	False    int           // suspicions of live nodes
	Late     time.Duration // how late the kill landed
	Loss     rsdpLossStats
	// LossAt is when every link rule was in force, from the begin.
	LossAt time.Duration
}

// launchRSDP runs one cluster and reads it; a run that cannot be made or read is a failed trial,
// not an error (only an interrupt is).
func launchRSDP(ctx context.Context, lc launcher.Config) (rsdpTrial, *logs.Run, error) {
	t := rsdpTrial{Dir: lc.Out}
	res, err := launcher.Launch(ctx, lc)
	if ctx.Err() != nil {
		return t, nil, errors.New("interrupted")
	}
	if err != nil {
		t.Failed = fmt.Sprintf("%s: %v", lc.Out, err)
		return t, nil, nil
	}
	v := res.Verdict
	if v == nil {
		t.Failed = fmt.Sprintf("%s: no verdict (exit %d)", lc.Out, res.Code)
		return t, nil, nil
	}
	t.Checker = v.OK && res.Code == launcher.ExitOK
	if len(v.Metrics.Detections) > 0 {
		t.Detect, t.By = v.Metrics.Detections[0].FirstMS, v.Metrics.Detections[0].By
	}
	run, err := logs.ReadRun(res.Dir)
	if err != nil {
		t.Failed = fmt.Sprintf("%s: %v", lc.Out, err)
		return t, nil, nil
	}
	return t, run, nil
}

// measureRSDPTrial runs one detection cluster and measures it.
func measureRSDPTrial(ctx context.Context, cfg RSDPPlan, n int, mode, det string, trial int) (rsdpTrial, error) {
	p := newRSDPDetectSetup(n, det, cfg.HealthInterval)
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = "rsdp", n
	lc.Chaos = fmt.Sprintf("at %v kill leader", rsdpKillTime(p.H, trial, cfg.Trials, rand.Float64()))
	lc.Duration, lc.Settle = p.Duration, time.Second
	lc.Timeout, lc.VClock = p.Timeout, p.VClock
	lc.Detector, lc.HealthInterval, lc.ProbeTimeout = det, p.H, p.PT
	if det == rundir.DetectorObservers {
		lc.Observers = cfg.Observers
	}
	opts, err := election.RSDPOptions(mode, election.DefaultRSDPShareWindow, election.DefaultRSDPResync)
	if err != nil {
		return rsdpTrial{}, err
	}
	lc.Options = opts
	lc.Out = filepath.Join(cfg.Dir, fmt.Sprintf("n%02d-%s-%s-t%d", n, mode, det, trial+1))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	t, run, err := launchRSDP(ctx, lc)
	if err != nil || run == nil {
		return t, err
	}
	t.Cons = analyzeRSDPConsensus(run)
	killTS, killed, _ := rsdpFirstKill(run)
	t.False = rsdpFalseSuspicions(run, killed, killTS)
	t.Late, _ = rsdpKillLate(run)
	begin, stop, ok := rsdpRunWindow(run)
	if !ok {
		t.Failed = lc.Out + ": launcher.jsonl has no begin and stopping records"
		return t, nil
	}
	t.Window = time.Duration(stop - begin)
	switch det {
	case rundir.DetectorMutual:
		t.Health, _ = rsdpProbesPerInterval(run.Nodes, begin, stop, p.H)
		t.Expect, _ = rsdpMutualExpectation(run, p.H)
	default:
		t.Health, _ = rsdpProbesPerInterval(run.Observers, begin, stop, p.H)
		t.Agree, t.AgreeAll = rsdpObserverMessages(run, killed), rsdpObserverMessages(run, 0)
	}
	return t, nil
}

// measureRSDPLoss runs one loss cluster and counts its sessions.
func measureRSDPLoss(ctx context.Context, cfg RSDPPlan, n int, mode string) (rsdpTrial, rsdpLossSetup, error) {
	p := newRSDPLossSetup(n)
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = "rsdp", n
	lc.Chaos = rsdpLossChaos(n, cfg.Loss)
	lc.Duration, lc.Settle = p.Duration, time.Second
	lc.Heartbeat, lc.Timeout, lc.ElectionTimeout = 100*time.Millisecond, time.Second, p.StatusTimeout
	lc.Detector = rundir.DetectorHeartbeat
	if n > 16 {
		lc.VClock = launcher.VClockOff
	}
	opts, err := election.RSDPOptions(mode, election.DefaultRSDPShareWindow, p.Resync)
	if err != nil {
		return rsdpTrial{}, p, err
	}
	lc.Options = opts
	lc.Out = filepath.Join(cfg.Dir, fmt.Sprintf("loss-n%02d-%s", n, mode))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	t, run, err := launchRSDP(ctx, lc)
	if err != nil || run == nil {
		return t, p, err
	}
	begin, stop, ok := rsdpRunWindow(run)
	if !ok {
		t.Failed = lc.Out + ": launcher.jsonl has no begin and stopping records"
		return t, p, nil
	}
	from := rsdpLossFrom(run)
	t.LossAt = time.Duration(from - begin)
	t.Loss = analyzeRSDPLoss(run, from, stop-int64(time.Second))
	if applied := rsdpLinkRules(run); applied < n*(n-1) {
		t.Failed = fmt.Sprintf("%s: only %d of the %d link rules were applied by the end (the launcher applies them one by one; the machine is too busy for this N: give a smaller --n)", lc.Out, applied, n*(n-1))
	} else if t.Loss.Sessions == 0 {
		t.Failed = lc.Out + ": no session started between the loss rules and 1s before the end"
	}
	return t, p, nil
}
