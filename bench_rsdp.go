package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
	"github.com/leaderlab/leaderlab/rundir"
)

// `leaderlab bench rsdp`: seed 002's models of RSDP (section 3.3: consensus time and failure
// probability) and of its failover topologies (section 4: detection time and message overhead of
// mutual health evaluation, one observer, M observers) held against real clusters.
//
// For every N, --rsdp-mode and detector it runs --trials clusters of N real nodes that elect with
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
// and, with --loss p, for every mode and N one longer run with every ordered link losing p of its
// messages and sessions every 200ms (no kill), where it counts which sessions every replica, or a
// quorum of replicas, completed (eq. 8, eq. 10-11 with p_f = 0).
//
// The formulas are the small pure functions rsdpEq*; the log analysis is pure functions over a
// logs.Run. Both are unit-tested in bench_rsdp_test.go.

const (
	rsdpBenchDefaultNs = "3,5,9,17,33"
	rsdpBenchMaxN      = 64
	// rsdpKillAt is when the leader is killed in the detection runs.
	rsdpKillAt = time.Second
	// rsdpProbeCost bounds the mutual detector's load: above ~3300 probes a second cluster-wide
	// (plus as many answers) two loaded cores start missing probe timeouts and the cluster churns
	// through false suspicions, so h is raised to at least N(N-1) x this (N=17: 90ms, N=33: 320ms).
	rsdpProbeCost = 300 * time.Microsecond
	// rsdpLossSessions is about how many sessions a loss run holds.
	rsdpLossSessions = 25
)

// rsdpBenchDetectors are the detectors `bench rsdp` measures: RSDP's three failover topologies.
var rsdpBenchDetectors = []string{rundir.DetectorMutual, rundir.DetectorObserver, rundir.DetectorObservers}

// rsdpBenchConfig is one `bench rsdp`.
type rsdpBenchConfig struct {
	Ns        []int
	Modes     []string
	Detectors []string
	Observers int // M of the observers detector
	Trials    int
	Health    time.Duration // h (mutual) and h_o (observers), before any scaling for load
	Loss      float64       // p_l of the loss runs; 0: none
	CSV, Out  string
}

// parseRSDPNs reads --n: a comma-separated list of cluster sizes 2..64.
func parseRSDPNs(s string) ([]int, error) {
	var out []int
	for _, f := range splitList(s) {
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("--n: %q is not a cluster size (want a comma-separated list of sizes 2..%d such as %s)", f, rsdpBenchMaxN, rsdpBenchDefaultNs)
		}
		if n < 2 || n > rsdpBenchMaxN {
			return nil, fmt.Errorf("--n: %d is out of range (want sizes 2..%d: a leader kill needs a survivor to detect it)", n, rsdpBenchMaxN)
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--n: no cluster size given (want a comma-separated list of sizes 2..%d such as %s)", rsdpBenchMaxN, rsdpBenchDefaultNs)
	}
	slices.Sort(out)
	return out, nil
}

// validate names the first bad value and what would be accepted.
func (c *rsdpBenchConfig) validate() error {
	if len(c.Ns) == 0 {
		return fmt.Errorf("--n: no cluster size given (want a comma-separated list of sizes 2..%d such as %s)", rsdpBenchMaxN, rsdpBenchDefaultNs)
	}
	for _, n := range c.Ns {
		if n < 2 || n > rsdpBenchMaxN {
			return fmt.Errorf("--n: %d is out of range (want sizes 2..%d)", n, rsdpBenchMaxN)
		}
	}
	if len(c.Modes) == 0 {
		return fmt.Errorf("--modes: none given (accepted: %s)", strings.Join(election.RSDPModes, ", "))
	}
	for _, m := range c.Modes {
		if !slices.Contains(election.RSDPModes, m) {
			return fmt.Errorf("--modes: unknown mode %q (accepted: %s)", m, strings.Join(election.RSDPModes, ", "))
		}
	}
	if len(c.Detectors) == 0 {
		return fmt.Errorf("--detectors: none given (accepted: %s)", strings.Join(rsdpBenchDetectors, ", "))
	}
	for _, d := range c.Detectors {
		if !slices.Contains(rsdpBenchDetectors, d) {
			return fmt.Errorf("--detectors: unknown detector %q (accepted: %s)", d, strings.Join(rsdpBenchDetectors, ", "))
		}
	}
	switch {
	case c.Observers < 1 || c.Observers > 64:
		return fmt.Errorf("--observers %d: want 1..64 (M, the observer processes of the observers detector)", c.Observers)
	case c.Trials < 1:
		return fmt.Errorf("--trials %d: want at least 1", c.Trials)
	case c.Health < time.Millisecond:
		return fmt.Errorf("--health-interval %v: want a duration of at least 1ms such as 50ms", c.Health)
	case math.IsNaN(c.Loss) || c.Loss < 0 || c.Loss >= 1:
		return fmt.Errorf("--loss %v: want a probability 0 <= p < 1 such as 0.05 (0: no loss runs)", c.Loss)
	}
	return nil
}

func benchRSDPCommand() *cli.Command {
	return &cli.Command{
		Name:  "rsdp",
		Usage: "RSDP against seed 002's models: detection time, consensus time and messages, health overhead, loss",
		Description: "Holds seed 002's formulas against real clusters. For every --n, --modes and --detectors it runs --trials\n" +
			"clusters of N RSDP nodes with `at 1s kill leader` and measures: detect_ms (verdict.json's first\n" +
			"suspicion after the kill) against h/2N (eq. 12, mutual), h_o/2 (eq. 19, observer), h_o/2M (eq. 25,\n" +
			"observers); consensus_ms, session 1's first hello sent to last share received, against 3(d + t_p(N-1))\n" +
			"(eq. 3) with d (median message delay) and t_p (median hello -> status turnaround) measured in the same\n" +
			"run; consensus_msgs, session 1's hello+status+share sends, against 3N(N-1) (eq. 16); health_per_h,\n" +
			"probes per health interval over the run against N(N-1), N, M*N (eq. 17, 22, 28); agree_msgs, the\n" +
			"observers' agreement messages against 3M(M-1) (eq. 29).\n\n" +
			"With --loss p (> 0) it runs, for every mode and N, one longer cluster whose every ordered link loses p\n" +
			"of its messages, with a session every 200ms, and counts the sessions some replica did not complete\n" +
			"(p_fail_all, eq. 8) and those fewer than ceil(N/2) replicas completed (p_fail_vote, eq. 10-11).\n\n" +
			"Each row: measured, formula, ratio, trials and a note that says what was measured and where the\n" +
			"real protocol departs from the model. A run that fails is counted in its row's note. The runs stay in\n" +
			"--out. Exit 1 when some run could not be measured, 2 for bad flags.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "n", Value: rsdpBenchDefaultNs, Usage: "comma-separated cluster sizes (2..64)"},
			&cli.StringFlag{Name: "modes", Value: strings.Join(election.RSDPModes, ","), Usage: "comma-separated --rsdp-mode values: " + strings.Join(election.RSDPModes, ", ")},
			&cli.StringFlag{Name: "detectors", Value: strings.Join(rsdpBenchDetectors, ","), Usage: "comma-separated detectors: " + strings.Join(rsdpBenchDetectors, ", ")},
			&cli.IntFlag{Name: "observers", Value: 3, Usage: "M, the observer processes of the observers detector"},
			&cli.IntFlag{Name: "trials", Value: 3, Usage: "runs per (N, mode, detector)"},
			&cli.DurationFlag{Name: "health-interval", Value: 50 * time.Millisecond, Usage: "h and h_o (the mutual detector's h is raised for large N: at least N(N-1) x 300µs)"},
			&cli.Float64Flag{Name: "loss", Value: 0.05, Usage: "p_l of the loss runs, 0 <= p < 1 (0: no loss runs)"},
			&cli.BoolFlag{Name: "quick", Usage: "a smoke run: --n 3,5,9 --trials 1 --loss 0 unless given"},
			&cli.StringFlag{Name: "csv", Usage: "also write the rows to this CSV file"},
			&cli.StringFlag{Name: "out", Usage: "directory for the runs", DefaultText: "runs/bench-rsdp-<time>"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("bench rsdp takes no arguments, got %q", c.Args().Slice()), launcher.ExitUnusable)
			}
			ns, trials, loss := c.String("n"), c.Int("trials"), c.Float64("loss")
			if c.Bool("quick") {
				if !c.IsSet("n") {
					ns = "3,5,9"
				}
				if !c.IsSet("trials") {
					trials = 1
				}
				if !c.IsSet("loss") {
					loss = 0
				}
			}
			cfg := rsdpBenchConfig{
				Modes:     splitList(c.String("modes")),
				Detectors: splitList(c.String("detectors")),
				Observers: c.Int("observers"),
				Trials:    trials,
				Health:    c.Duration("health-interval"),
				Loss:      loss,
				CSV:       c.String("csv"),
			}
			var err error
			if cfg.Ns, err = parseRSDPNs(ns); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if err := cfg.validate(); err != nil {
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			}
			if cfg.Out, err = benchDir(c, "rsdp"); err != nil {
				return err
			}
			ctx, stop := signalContext()
			defer stop()
			failed, err := runRSDPBench(ctx, cfg, os.Stdout, os.Stderr)
			switch {
			case err != nil:
				return cli.Exit(err.Error(), launcher.ExitUnusable)
			case failed > 0:
				return cli.Exit(fmt.Sprintf("%d run(s) could not be measured (see the notes; the runs are in %s)", failed, cfg.Out), launcher.ExitViolation)
			}
			return nil
		},
	}
}

// ---------------------------------------------------------------------------------------------
// The formulas of seed 002 (pure).

// rsdpEq3ConsensusTime is eq. 3: T = 3(d + t_p(n-1)), in the unit of d and t_p.
func rsdpEq3ConsensusTime(d, tp float64, n int) float64 { return 3 * (d + tp*float64(n-1)) }

// rsdpEq6ReplicaSuccess is eq. 6: P_replica = (1-p_f)(1-p_l)^(3n-3).
func rsdpEq6ReplicaSuccess(pl, pf float64, n int) float64 {
	return (1 - pf) * math.Pow(1-pl, float64(3*n-3))
}

// rsdpEq8LastStateFailure is eq. 8: 1 - [(1-p_f)(1-p_l)^(3n-3)]^n.
func rsdpEq8LastStateFailure(pl, pf float64, n int) float64 {
	return 1 - math.Pow(rsdpEq6ReplicaSuccess(pl, pf, n), float64(n))
}

// rsdpEq9Quorum is eq. 9: q = ceil(n/2).
func rsdpEq9Quorum(n int) int { return (n + 1) / 2 }

// rsdpEq11VoteFailure is eq. 10-11: 1 - sum_{k=q}^{n} C(n,k) P^k (1-P)^(n-k), P = P_replica.
func rsdpEq11VoteFailure(pReplica float64, n int) float64 {
	ok := 0.0
	for k := rsdpEq9Quorum(n); k <= n; k++ {
		ok += rsdpBinomial(n, k) * math.Pow(pReplica, float64(k)) * math.Pow(1-pReplica, float64(n-k))
	}
	return math.Max(0, 1-ok)
}

// rsdpBinomial is C(n, k) as a float (n <= 64 here: exact enough).
func rsdpBinomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// rsdpEq12MutualDetection is eq. 12: E[T_d1] = h/2N.
func rsdpEq12MutualDetection(h time.Duration, n int) time.Duration {
	return h / time.Duration(2*n)
}

// rsdpStaggeredDetection is the exact E[T_d] of our mutual detector's staggering when the node that
// dies is a prober too: the N probers start at position·h/N, the dead one's slot is gone, so the
// N-1 survivors leave N-2 gaps of h/N and one of 2h/N; a death uniform over h waits half its gap:
// E = sum(gap²)/2h = h(N+2)/(2N²).
func rsdpStaggeredDetection(h time.Duration, n int) time.Duration {
	return time.Duration(float64(h) * float64(n+2) / float64(2*n*n))
}

// rsdpEq16ConsensusMessages is eq. 16 (and eq. 29 with M for N): 3N(N-1).
func rsdpEq16ConsensusMessages(n int) int { return 3 * n * (n - 1) }

// rsdpEq17MutualHealth is eq. 17's M_health for mutual evaluation: each of N probes N-1 others.
func rsdpEq17MutualHealth(n int) int { return n * (n - 1) }

// rsdpEq17TotalMessages is eq. 17 (and 23, 30): T_obs/h x M_health + M_consensus.
func rsdpEq17TotalMessages(tObs, h time.Duration, mHealth, mConsensus int) float64 {
	return float64(tObs)/float64(h)*float64(mHealth) + float64(mConsensus)
}

// rsdpEq19ObserverDetection is eq. 19: E[T_d2] = h_o/2.
func rsdpEq19ObserverDetection(ho time.Duration) time.Duration { return ho / 2 }

// rsdpEq22ObserverHealth is eq. 22: one observer probes N nodes per h_o.
func rsdpEq22ObserverHealth(n int) int { return n }

// rsdpEq25ObserversDetection is eq. 25: E[T_d3] = h_o/2M.
func rsdpEq25ObserversDetection(ho time.Duration, m int) time.Duration {
	return ho / time.Duration(2*m)
}

// rsdpEq28ObserversHealth is eq. 28: M observers probe N nodes each per h_o.
func rsdpEq28ObserversHealth(m, n int) int { return m * n }

// rsdpEq29ObserverConsensus is eq. 29: M(M-1) x 3.
func rsdpEq29ObserverConsensus(m int) int { return rsdpEq16ConsensusMessages(m) }

// rsdpProtocolLoss is what eq. 8-11's question comes to for this protocol, by Monte Carlo: one
// session among n replicas where each of its messages is lost with probability p, independently,
// and a status is sent only for a hello that arrived. Replica i completes the session iff, from
// every other j, j's hello, j's status (which needs i's hello to j and the status back) and j's
// share arrive: 4(n-1) deliveries, shared with other replicas (i's hello to j counts for j as
// well). It returns the probability that some replica does not complete the session, that fewer
// than ceil(n/2) do, and that a given replica does.
func rsdpProtocolLoss(n int, p float64, samples int, rng *rand.Rand) (failAll, failVote, replica float64) {
	q := rsdpEq9Quorum(n)
	hello := make([]bool, n*n) // hello[i*n+j]: i's hello reached j
	status := make([]bool, n*n)
	share := make([]bool, n*n)
	var all, vote, ok int
	for range samples {
		for k := range hello {
			hello[k] = rng.Float64() >= p
			status[k] = rng.Float64() >= p
			share[k] = rng.Float64() >= p
		}
		done := 0
		for i := 0; i < n; i++ {
			good := true
			for j := 0; j < n && good; j++ {
				if j != i {
					good = hello[j*n+i] && hello[i*n+j] && status[j*n+i] && share[j*n+i]
				}
			}
			if good {
				done++
			}
		}
		ok += done
		if done < n {
			all++
		}
		if done < q {
			vote++
		}
	}
	f := float64(samples)
	return float64(all) / f, float64(vote) / f, float64(ok) / (f * float64(n))
}

// rsdpProtocolSamples is how many sessions rsdpProtocolLoss draws for a table row.
const rsdpProtocolSamples = 20000

// ---------------------------------------------------------------------------------------------
// The log analysis (pure functions over a logs.Run).

// rsdpSession is what the node logs say about one synchronization session (one msg.round).
type rsdpSession struct {
	Round int
	// Start is the earliest send of a hello of the round; LastShare the latest recv of a share of
	// the round (Unix ns; 0: none).
	Start, LastShare int64
	// Sends counts the sends of hello, status and share of the round.
	Sends int
	// FirstHello is each node's first hello send of the round (when it entered the session).
	FirstHello map[int]int64
	// got[receiver][kind] is the set of peers the receiver got a message of that kind from.
	got map[int]map[string]map[int]bool
}

// received tells how many distinct peers id received kind from in the session.
func (s *rsdpSession) received(id int, kind string) int { return len(s.got[id][kind]) }

// succeeded tells whether replica id received a hello, a status and a share of the session from
// every other node of ids (the paper's M_total = 3n-3 receipts, eq. 5).
func (s *rsdpSession) succeeded(id int, ids []int) bool {
	for _, kind := range []string{election.RSDPHello, election.RSDPStatus, election.RSDPShare} {
		for _, p := range ids {
			if p != id && !s.got[id][kind][p] {
				return false
			}
		}
	}
	return true
}

func isRSDPSessionKind(k string) bool {
	return k == election.RSDPHello || k == election.RSDPStatus || k == election.RSDPShare
}

// rsdpSessions gathers every session of the node logs by round.
func rsdpSessions(run *logs.Run) map[int]*rsdpSession {
	out := map[int]*rsdpSession{}
	for id, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Msg == nil || !isRSDPSessionKind(e.Msg.Kind) || (e.Ev != logs.EvSend && e.Ev != logs.EvRecv) {
				continue
			}
			s := out[e.Msg.Round]
			if s == nil {
				s = &rsdpSession{Round: e.Msg.Round, FirstHello: map[int]int64{}, got: map[int]map[string]map[int]bool{}}
				out[e.Msg.Round] = s
			}
			switch e.Ev {
			case logs.EvSend:
				s.Sends++
				if e.Msg.Kind == election.RSDPHello {
					if s.Start == 0 || e.TS < s.Start {
						s.Start = e.TS
					}
					if t, ok := s.FirstHello[id]; !ok || e.TS < t {
						s.FirstHello[id] = e.TS
					}
				}
			case logs.EvRecv:
				if e.Msg.Kind == election.RSDPShare && e.TS > s.LastShare {
					s.LastShare = e.TS
				}
				byKind := s.got[id]
				if byKind == nil {
					byKind = map[string]map[int]bool{}
					s.got[id] = byKind
				}
				if byKind[e.Msg.Kind] == nil {
					byKind[e.Msg.Kind] = map[int]bool{}
				}
				byKind[e.Msg.Kind][e.From] = true
			}
		}
	}
	return out
}

// rsdpMessageDelays are recv.ts - send.ts of every message of the node logs that keep accepts (nil:
// all), matched by msg.id (every node runs on one machine: one clock).
func rsdpMessageDelays(run *logs.Run, keep func(*election.Message) bool) []int64 {
	sent := map[string]int64{}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && e.Msg != nil && e.Msg.ID != "" {
				if _, dup := sent[e.Msg.ID]; !dup {
					sent[e.Msg.ID] = e.TS
				}
			}
		}
	}
	var out []int64
	for _, id := range slices.Sorted(maps.Keys(run.Nodes)) {
		for _, e := range run.Nodes[id].Events {
			if e.Ev != logs.EvRecv || e.Msg == nil || (keep != nil && !keep(e.Msg)) {
				continue
			}
			if t, ok := sent[e.Msg.ID]; ok {
				out = append(out, e.TS-t)
			}
		}
	}
	return out
}

// rsdpHelloTurnarounds are, for every hello of the round (0: of every round) a node received, the
// time until that node sent the status answering it: its next send of a status to the hello's
// sender with the same round.
func rsdpHelloTurnarounds(run *logs.Run, round int) []int64 {
	var out []int64
	for _, id := range slices.Sorted(maps.Keys(run.Nodes)) {
		ev := run.Nodes[id].Events
		for i, e := range ev {
			if e.Ev != logs.EvRecv || e.Msg == nil || e.Msg.Kind != election.RSDPHello || (round != 0 && e.Msg.Round != round) {
				continue
			}
			for _, f := range ev[i+1:] {
				if f.Ev == logs.EvSend && f.Msg != nil && f.Msg.Kind == election.RSDPStatus && f.To == e.From && f.Msg.Round == e.Msg.Round {
					out = append(out, f.TS-e.TS)
					break
				}
			}
		}
	}
	return out
}

// rsdpMedian of xs (the mean of the middle two for an even count); NaN for none.
func rsdpMedian(xs []int64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return (float64(s[m-1]) + float64(s[m])) / 2
}

// rsdpMax of xs; NaN for none.
func rsdpMax(xs []int64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return float64(slices.Max(xs))
}

// rsdpConsensus is the first session of a run against eq. 3 and eq. 16.
type rsdpConsensus struct {
	OK bool // the session's start and last share are in the logs
	// TimeNS is the first hello sent -> the last share received of session 1.
	TimeNS int64
	// SkewNS is how long after the first hello the last node sent its first (the launcher's begin
	// reaches the nodes one by one); TailNS is the last node's first hello -> the last share
	// received, the part of the session when every replica had started.
	SkewNS, TailNS int64
	// D1 is the median delay of session 1's own messages; D1Max and TP1Max the largest delay and
	// hello turnaround of session 1 (ns): the paper's d and t_p are maxima.
	D1, D1Max, TP1Max float64
	// Sends are session 1's hello+status+share sends.
	Sends int
	// D and TP are the medians of the message delays and the hello turnarounds of the whole run
	// (ns); ND and NTP how many of each.
	D, TP   float64
	ND, NTP int
}

// analyzeRSDPConsensus measures session 1 (every node opens it when the cluster begins).
func analyzeRSDPConsensus(run *logs.Run) rsdpConsensus {
	var c rsdpConsensus
	d, tp := rsdpMessageDelays(run, nil), rsdpHelloTurnarounds(run, 0)
	c.D, c.ND, c.TP, c.NTP = rsdpMedian(d), len(d), rsdpMedian(tp), len(tp)
	d1 := rsdpMessageDelays(run, func(m *election.Message) bool { return m.Round == 1 && isRSDPSessionKind(m.Kind) })
	c.D1, c.D1Max = rsdpMedian(d1), rsdpMax(d1)
	c.TP1Max = rsdpMax(rsdpHelloTurnarounds(run, 1))
	s := rsdpSessions(run)[1]
	if s == nil {
		return c
	}
	c.Sends = s.Sends
	if s.Start > 0 && s.LastShare >= s.Start {
		c.OK, c.TimeNS = true, s.LastShare-s.Start
		last := s.Start
		for _, t := range s.FirstHello {
			last = max(last, t)
		}
		c.SkewNS, c.TailNS = last-s.Start, max(0, s.LastShare-last)
	}
	return c
}

// rsdpRunWindow is the observed run: the launcher's begin to its stopping record (Unix ns).
func rsdpRunWindow(run *logs.Run) (begin, stop int64, ok bool) {
	for _, r := range run.Launcher {
		switch {
		case r.Ev == logs.LaunchBegin && begin == 0:
			begin = r.TS
		case r.Ev == logs.LaunchStopping && stop == 0:
			stop = r.TS
		}
	}
	return begin, stop, begin > 0 && stop > begin
}

// rsdpLastStats is the log's last stats event: its hb_sent and its time.
func rsdpLastStats(nl *logs.NodeLog) (hbSent, ts int64, ok bool) {
	for i := len(nl.Events) - 1; i >= 0; i-- {
		if e := nl.Events[i]; e.Ev == logs.EvStats && e.Stats != nil {
			return e.Stats.HeartbeatsSent, e.TS, true
		}
	}
	return 0, 0, false
}

// rsdpProbesPerInterval sums the last stats hb_sent of the logs and divides by the intervals h in
// begin..stop.
func rsdpProbesPerInterval(byID map[int]*logs.NodeLog, begin, stop int64, h time.Duration) (perH float64, total int64) {
	for _, nl := range byID {
		if n, _, ok := rsdpLastStats(nl); ok {
			total += n
		}
	}
	return float64(total) / (float64(stop-begin) / float64(h)), total
}

// rsdpFirstKill is the first kill record: when and whom.
func rsdpFirstKill(run *logs.Run) (ts int64, node int, ok bool) {
	for _, r := range run.Chaos {
		if r.Op == logs.OpKill && r.Error == "" && len(r.Targets) > 0 {
			return r.TS, r.Targets[0], true
		}
	}
	return 0, 0, false
}

// rsdpKillLate is how long after its scheduled time (begin + at_ns) the first kill was carried out.
func rsdpKillLate(run *logs.Run) (time.Duration, bool) {
	begin, _, ok := rsdpRunWindow(run)
	if !ok {
		return 0, false
	}
	for _, r := range run.Chaos {
		if r.Op == logs.OpKill && r.Error == "" {
			return time.Duration(r.TS - begin - r.At), true
		}
	}
	return 0, false
}

// rsdpMutualExpectation is what the mutual detector should log per h in this run, the kill
// included: every node probes its N-1 peers each h until the kill, the survivors N-2 after it (the
// dead node is suspected at once and not probed again), and each node's count is what its last
// stats event says (the killed node's last one comes before its death).
func rsdpMutualExpectation(run *logs.Run, h time.Duration) (float64, bool) {
	begin, stop, ok := rsdpRunWindow(run)
	if !ok {
		return 0, false
	}
	n := len(run.Cluster.Nodes)
	kill, _, killed := rsdpFirstKill(run)
	if !killed {
		kill = math.MaxInt64
	}
	var probes float64
	for _, nl := range run.Nodes {
		_, last, ok := rsdpLastStats(nl)
		if !ok || last <= begin {
			continue
		}
		before := min(last, kill) - begin
		after := max(0, last-kill)
		probes += (float64(n-1)*float64(before) + float64(n-2)*float64(after)) / float64(h)
	}
	return probes / (float64(stop-begin) / float64(h)), true
}

// rsdpFalseSuspicions counts the suspect events of nodes and observers about a node that was alive:
// any node but the one killed, or the killed one before its kill (killed 0: none was killed).
func rsdpFalseSuspicions(run *logs.Run, killed int, killTS int64) int {
	k := 0
	count := func(byID map[int]*logs.NodeLog) {
		for _, nl := range byID {
			for _, e := range nl.Events {
				if e.Ev == logs.EvSuspect && (e.Peer != killed || e.TS < killTS) {
					k++
				}
			}
		}
	}
	count(run.Nodes)
	count(run.Observers)
	return k
}

// rsdpObserverMessages counts the agreement messages the observers sent about node cand (0: about
// any node).
func rsdpObserverMessages(run *logs.Run, cand int) int {
	k := 0
	for _, nl := range run.Observers {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && (cand == 0 || (e.Msg != nil && e.Msg.Cand == cand)) {
				k++
			}
		}
	}
	return k
}

// rsdpLossFrom is when every link rule of the run was in force: the latest link record's time or
// acknowledgement; 0 without link records.
func rsdpLossFrom(run *logs.Run) int64 {
	var t int64
	for _, r := range run.Chaos {
		if r.Op != logs.OpLink || r.Error != "" {
			continue
		}
		t = max(t, r.TS)
		for _, a := range r.Acks {
			t = max(t, a)
		}
	}
	return t
}

// rsdpLinkRules counts the link rules the chaos agent applied.
func rsdpLinkRules(run *logs.Run) int {
	k := 0
	for _, r := range run.Chaos {
		if r.Op == logs.OpLink && r.Error == "" {
			k++
		}
	}
	return k
}

// rsdpLossStats counts the sessions of a loss run.
type rsdpLossStats struct {
	// Sessions is how many sessions started in the window; FailAll how many some replica did not
	// complete; FailVote how many fewer than ceil(n/2) replicas completed; Short how many had fewer
	// sends than 3n(n-1) (a hello lost is a status never sent; a node that abandoned the session
	// for a newer one sent no share).
	Sessions, FailAll, FailVote, Short int
	// ReplicaOK of Replicas (sessions x n) completed.
	ReplicaOK, Replicas int
	// Lost and Delivered count the frames the nodes dropped by a loss rule and received, from the
	// window's start to the end of the logs.
	Lost, Delivered int
	// Rounds are the rounds counted.
	Rounds []int
}

// analyzeRSDPLoss judges every session whose first hello was sent in from..to: replica i completed
// it iff it received n-1 hellos, n-1 statuses (the answers to its own hello) and n-1 shares of the
// round.
func analyzeRSDPLoss(run *logs.Run, from, to int64) rsdpLossStats {
	var st rsdpLossStats
	ids := run.Cluster.IDs()
	n := len(ids)
	q := rsdpEq9Quorum(n)
	sessions := rsdpSessions(run)
	for _, r := range slices.Sorted(maps.Keys(sessions)) {
		s := sessions[r]
		if s.Start == 0 || s.Start < from || s.Start > to {
			continue
		}
		st.Sessions++
		st.Rounds = append(st.Rounds, r)
		ok := 0
		for _, id := range ids {
			if s.succeeded(id, ids) {
				ok++
			}
		}
		st.ReplicaOK += ok
		st.Replicas += n
		if ok < n {
			st.FailAll++
		}
		if ok < q {
			st.FailVote++
		}
		if s.Sends < rsdpEq16ConsensusMessages(n) {
			st.Short++
		}
	}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.TS < from || e.Msg == nil {
				continue
			}
			switch {
			case e.Ev == logs.EvRecv:
				st.Delivered++
			case e.Ev == logs.EvDrop && e.From != 0 && strings.HasPrefix(e.Reason, "loss"):
				st.Lost++
			}
		}
	}
	return st
}

// ---------------------------------------------------------------------------------------------
// Running the clusters.

// rsdpPlan is how the runs of one (N, detector) are set up.
type rsdpPlan struct {
	H, PT    time.Duration // health interval and probe timeout
	HScaled  bool          // H was raised above --health-interval for load
	Timeout  time.Duration // --timeout: RSDP's status timeout and the checker's grace
	Duration time.Duration
	VClock   string
}

// rsdpGridPlan: a 2.5s run (longer for large N) with the leader killed at 1s. The mutual detector's
// h is raised with N (rsdpProbeCost); above 16 nodes a probe waits longer for its answer than h/2
// (3h/4 for mutual, whose timeout must stay below h; h_o for the observers), the status timeout
// is 500ms, and the logs carry Lamport clocks only. A kill is detected by the closed port or the
// broken link, not by the probe timeout, so the longer timeouts only spare a loaded cluster false
// suspicions, each of which costs it a session of 3N(N-1) messages and more load.
func rsdpGridPlan(n int, det string, h time.Duration) rsdpPlan {
	p := rsdpPlan{H: h, Timeout: 200 * time.Millisecond, Duration: 2500 * time.Millisecond, VClock: launcher.VClockAuto}
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
	p.Duration = max(p.Duration, rsdpKillAt+p.H+1500*time.Millisecond)
	return p
}

// rsdpKillTime is when trial i of k kills the leader: 1s plus a phase u·h with u uniform in
// [i/k, (i+1)/k) (stratified over the trials). The models take the failure to fall uniformly within
// the probe period; a kill at a fixed multiple of h after begin would instead land at the same
// phase of every prober's schedule in every trial (the schedules start at begin).
func rsdpKillTime(h time.Duration, i, k int, u float64) time.Duration {
	return rsdpKillAt + time.Duration((float64(i)+u)/float64(k)*float64(h)).Round(100*time.Microsecond)
}

// rsdpLossSetup is how the loss run of one N is set up.
type rsdpLossSetup struct {
	Resync, StatusTimeout, Duration time.Duration
}

// rsdpLossPlan: the launcher applies the N(N-1) link rules one by one (about 8ms each on two idle
// cores: N=33 takes 8.5s; 12s to over 25s on a busy machine), so the run allows 30ms a rule before
// its sessions (every session after the last rule counts, so a quick start only adds sessions); then
// sessions every max(200ms, N x 10ms), about 25 of them, and a second; the heartbeat detector with
// a timeout of 1s (ten lost heartbeats in a row: p^10); the status timeout a quarter of the resync,
// so that a lost hello costs its sender a status, not its share (with the default, --timeout, a
// sender would still be waiting when the next session begins and abandon this one without its
// share, failing every replica at once).
func rsdpLossPlan(n int) rsdpLossSetup {
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
	code, err := launcher.Run(ctx, lc)
	if ctx.Err() != nil {
		return t, nil, errors.New("interrupted")
	}
	if err != nil {
		t.Failed = fmt.Sprintf("%s: %v", lc.Out, err)
		return t, nil, nil
	}
	v, err := logs.ReadVerdict(lc.Out)
	if err != nil {
		t.Failed = fmt.Sprintf("%s: no verdict (exit %d): %v", lc.Out, code, err)
		return t, nil, nil
	}
	t.Checker = v.OK && code == launcher.ExitOK
	if len(v.Metrics.Detections) > 0 {
		t.Detect, t.By = v.Metrics.Detections[0].FirstMS, v.Metrics.Detections[0].By
	}
	run, err := logs.ReadRun(lc.Out)
	if err != nil {
		t.Failed = fmt.Sprintf("%s: %v", lc.Out, err)
		return t, nil, nil
	}
	return t, run, nil
}

// measureRSDPTrial runs one detection cluster and measures it.
func measureRSDPTrial(ctx context.Context, cfg rsdpBenchConfig, n int, mode, det string, trial int) (rsdpTrial, error) {
	p := rsdpGridPlan(n, det, cfg.Health)
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
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("n%02d-%s-%s-t%d", n, mode, det, trial+1))
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
func measureRSDPLoss(ctx context.Context, cfg rsdpBenchConfig, n int, mode string) (rsdpTrial, rsdpLossSetup, error) {
	p := rsdpLossPlan(n)
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
	lc.Out = filepath.Join(cfg.Out, fmt.Sprintf("loss-n%02d-%s", n, mode))
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

// ---------------------------------------------------------------------------------------------
// Rows.

// rsdpRow is one line of the table.
type rsdpRow struct {
	Metric   string
	N        int
	Mode     string
	Detector string
	Measured float64 // NaN: nothing measured
	Formula  float64
	Trials   string // measured of run
	Note     string
}

func (r rsdpRow) fields() []string {
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

var rsdpHeader = []string{"metric", "n", "mode", "detector", "measured", "formula", "ratio", "trials", "note"}

const rsdpRowFormat = "%-14s %3s %-8s %-9s %10s %10s %7s %6s  %s\n"

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
func rsdpCellRows(cfg rsdpBenchConfig, n int, mode, det string, trials []rsdpTrial) []rsdpRow {
	p := rsdpGridPlan(n, det, cfg.Health)
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
		hNote += fmt.Sprintf(" (raised from %v: N(N-1) probes per h on 2 cores)", cfg.Health)
	}
	row := func(metric string, xs []float64, formula float64, note string) rsdpRow {
		return rsdpRow{Metric: metric, N: n, Mode: mode, Detector: det, Measured: rsdpMean(xs), Formula: formula,
			Trials: fmt.Sprintf("%d/%d", len(xs), len(trials)), Note: note + common}
	}
	var rows []rsdpRow

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
func rsdpLossRows(cfg rsdpBenchConfig, n int, mode string, t rsdpTrial, p rsdpLossSetup) []rsdpRow {
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
	base := rsdpRow{N: n, Mode: mode, Detector: rundir.DetectorHeartbeat, Trials: trials}
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
	return []rsdpRow{all, vote, rep}
}

// runRSDPBench measures the grid, printing each row as it is measured; it returns how many runs
// could not be measured.
func runRSDPBench(ctx context.Context, cfg rsdpBenchConfig, w, progress io.Writer) (failed int, err error) {
	var cw *csv.Writer
	if cfg.CSV != "" {
		f, err := os.Create(cfg.CSV)
		if err != nil {
			return 0, fmt.Errorf("--csv: %w", err)
		}
		defer f.Close()
		cw = csv.NewWriter(f)
		cw.Write(rsdpHeader)
		defer cw.Flush()
	}
	emit := func(rows []rsdpRow) error {
		for _, r := range rows {
			f := r.fields()
			fmt.Fprintf(w, rsdpRowFormat, f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8])
			if cw != nil {
				cw.Write(f)
			}
		}
		if cw != nil {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return fmt.Errorf("--csv: %w", err)
			}
		}
		return nil
	}
	loss := "no loss runs"
	if cfg.Loss > 0 {
		loss = fmt.Sprintf("loss runs with p_l=%g", cfg.Loss)
	}
	fmt.Fprintf(w, "rsdp: n %v; modes %s; detectors %s (M=%d); %d trial(s) each with the leader killed at %v + a phase uniform over h; h=h_o=%v; %s (runs in %s)\n",
		cfg.Ns, strings.Join(cfg.Modes, ","), strings.Join(cfg.Detectors, ","), cfg.Observers, cfg.Trials, rsdpKillAt, cfg.Health, loss, cfg.Out)
	fmt.Fprintf(w, rsdpRowFormat, "metric", "n", "mode", "detector", "measured", "formula", "ratio", "trials", "note")
	for _, n := range cfg.Ns {
		for _, mode := range cfg.Modes {
			for _, det := range cfg.Detectors {
				var trials []rsdpTrial
				for i := 0; i < cfg.Trials; i++ {
					if ctx.Err() != nil {
						return failed, errors.New("interrupted")
					}
					start := time.Now()
					t, err := measureRSDPTrial(ctx, cfg, n, mode, det, i)
					if err != nil {
						return failed, err
					}
					status := "measured"
					if t.Failed != "" {
						failed++
						status = "FAILED: " + t.Failed
					}
					fmt.Fprintf(progress, "bench rsdp: n=%d %s %s trial %d/%d in %.1fs: %s\n", n, mode, det, i+1, cfg.Trials, time.Since(start).Seconds(), status)
					trials = append(trials, t)
				}
				if err := emit(rsdpCellRows(cfg, n, mode, det, trials)); err != nil {
					return failed, err
				}
			}
			if cfg.Loss > 0 {
				if ctx.Err() != nil {
					return failed, errors.New("interrupted")
				}
				start := time.Now()
				t, p, err := measureRSDPLoss(ctx, cfg, n, mode)
				if err != nil {
					return failed, err
				}
				status := "measured"
				if t.Failed != "" {
					failed++
					status = "FAILED: " + t.Failed
				}
				fmt.Fprintf(progress, "bench rsdp: n=%d %s loss %g in %.1fs: %s\n", n, mode, cfg.Loss, time.Since(start).Seconds(), status)
				if err := emit(rsdpLossRows(cfg, n, mode, t, p)); err != nil {
					return failed, err
				}
			}
		}
	}
	return failed, nil
}
