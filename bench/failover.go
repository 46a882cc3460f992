package bench

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// FailoverFaults are the faults `bench failover` puts on the leader: SIGKILL, SIGSTOP (a pause of
// four timeouts, long enough to be suspected) and SIGTERM.
var FailoverFaults = []string{"kill", "pause", "stop"}

// FailoverConfig is `leaderlab bench failover`: per fault, Trials runs whose leader takes it, and
// the checker's failover time of each (verdict.json's metrics.failovers[0].ms).
type FailoverConfig struct {
	Algo   string
	Nodes  int
	Trials int      // runs per fault
	Faults []string // of FailoverFaults, measured in this order
	// Heartbeat and Timeout are the failure detector's. With Pace, real runs multiply them by the
	// nodes on the busiest host, as run paces its defaults: a bench left at the defaults measures
	// the clusters run would make.
	Heartbeat, Timeout time.Duration
	Pace               bool
	// Detector, Observers and HealthInterval choose the failure detector (launcher.Config's);
	// RSDPMode, when set, is RSDP's mode.
	Detector       string
	Observers      int
	HealthInterval time.Duration
	RSDPMode       string
	// Hosts and SSHConfig run the nodes on SSH hosts (launcher.Config's), InsecureIgnoreHostKey
	// skips their host-key check.
	Hosts, SSHConfig      string
	InsecureIgnoreHostKey bool
	Sim                   bool   // in the simulator (virtual time) instead of real processes
	Out                   string // an existing directory: the runs go under it, and the page into it
	// Command is the command line, and Given the options given beyond the usual ones, as the page
	// shows them.
	Command string
	Given   []KV
}

// DefaultFailoverConfig is the bench's configuration when nothing is chosen: five Bully nodes,
// 20 kills and 20 pauses of the leader, run's detector.
func DefaultFailoverConfig() FailoverConfig {
	d := launcher.DefaultConfig()
	return FailoverConfig{Algo: "bully", Nodes: 5, Trials: 20, Faults: []string{"kill", "pause"}, Heartbeat: d.Heartbeat,
		Timeout: d.Timeout, Pace: true, Detector: rundir.DetectorHeartbeat}
}

// Validate names the first bad field of the configuration and what would be accepted. The rest
// (the nodes, the detector's timings, the hosts) is the launcher's to judge, at the first run.
func (c *FailoverConfig) Validate() error {
	if c.Trials < 1 {
		return &field.Error{Field: "FailoverConfig.Trials", Want: "want at least 1"}
	}
	if _, err := election.Lookup(c.Algo); err != nil {
		return &field.Error{Field: "FailoverConfig.Algo", Want: err.Error(), Err: err}
	}
	for _, f := range c.Faults {
		if !slices.Contains(FailoverFaults, f) {
			return &field.Error{Field: "FailoverConfig.Faults", Want: fmt.Sprintf("unknown fault %q (accepted: %s)", f, strings.Join(FailoverFaults, ", "))}
		}
	}
	if _, err := c.options(); err != nil {
		return &field.Error{Field: "FailoverConfig.RSDPMode", Value: fmt.Sprintf("%q", c.RSDPMode), Want: fmt.Sprintf("(accepted: %s)", strings.Join(election.RSDPModes, ", "))}
	}
	return nil
}

// options are the algorithm's options of every run: RSDP's mode, when one is chosen.
func (c *FailoverConfig) options() (map[string]string, error) {
	if c.RSDPMode == "" {
		return nil, nil
	}
	return election.RSDPOptions(c.RSDPMode, election.DefaultRSDPShareWindow, election.DefaultRSDPResync)
}

// FailoverResult is what a failover bench measured: every trial, in the order made, how many of
// them failed (the run did not pass, or measured no failover), and the page written.
type FailoverResult struct {
	Trials []FailoverTrial
	Failed int
	Page   string
}

// Failover makes the trials, fault by fault, one run at a time, and writes the page into cfg.Out.
// It prints to w the configuration, a row per fault (p50, p90 and max of the failover time) as its
// trials end, and the page's path; progress is told of every run, with the time left. An error is
// a configuration Validate refuses, a run that could not be made, or a page that could not be
// written; the trials made before it are returned.
func Failover(ctx context.Context, cfg FailoverConfig, w, progress io.Writer) (FailoverResult, error) {
	var res FailoverResult
	if err := cfg.Validate(); err != nil {
		return res, err
	}
	opts, _ := cfg.options() // Validate read them
	heartbeat, timeout, err := cfg.detector()
	if err != nil {
		return res, err
	}
	fmt.Fprintf(w, "failover: %s, %d nodes, heartbeat %v, timeout %v, %d trials per fault, %s (runs in %s)\n",
		cfg.Algo, cfg.Nodes, heartbeat, timeout, cfg.Trials, cfg.world(), cfg.Out)
	fmt.Fprintf(w, "%-6s %6s %9s %9s %9s %8s %12s %11s\n", "fault", "trials", "p50 ms", "p90 ms", "max ms", "failed", "notice p50", "elect p50")
	prog := NewProgress(progress, "bench failover", cfg.Trials*len(cfg.Faults))
	for _, fault := range cfg.Faults {
		first := len(res.Trials)
		for i := range cfg.Trials {
			lc := cfg.trialConfig(fault, i, heartbeat, timeout)
			lc.Options = opts
			r, err := launcher.Launch(ctx, lc)
			if err != nil {
				return res, fmt.Errorf("trial %s %d: %w", fault, i, err)
			}
			prog.Done(fmt.Sprintf("%s trial %d", fault, i+1))
			t := failoverTrial(fault, i, r)
			if t.Has && cfg.Hosts == "" && cfg.SSHConfig == "" { // one clock: the nodes' times compare
				t.NoticeMS, t.HasNotice = noticeMS(r.Dir, fault)
			}
			res.Trials = append(res.Trials, t)
		}
		s := FailoverSummary([]string{fault}, res.Trials[first:])[0]
		notice, elect := "-", "-"
		if s.Noticed > 0 {
			notice, elect = fmt.Sprintf("%.2f", s.NoticeP50), fmt.Sprintf("%.2f", s.ElectP50)
		}
		fmt.Fprintf(w, "%-6s %6d %9.2f %9.2f %9.2f %8d %12s %11s\n", fault, s.Trials, s.P50, s.P90, s.Max, s.Failed, notice, elect)
		res.Failed += s.Failed
	}
	if res.Page, err = WritePage(cfg.Out, cfg.page(heartbeat, timeout, res.Trials)); err != nil {
		return res, fmt.Errorf("page: %w", err)
	}
	fmt.Fprintf(w, "page: %s\n", res.Page)
	return res, nil
}

// detector is the runs' heartbeat and timeout: cfg's, paced for the cluster when Pace is set and
// the processes are real (the simulator's are never descheduled, so they need no pacing).
func (c *FailoverConfig) detector() (heartbeat, timeout time.Duration, err error) {
	if !c.Pace || c.Sim {
		return c.Heartbeat, c.Timeout, nil
	}
	alg, err := election.Lookup(c.Algo)
	if err != nil {
		return 0, 0, &field.Error{Field: "FailoverConfig.Algo", Want: err.Error(), Err: err}
	}
	lc := launcher.Config{Nodes: c.Nodes, Hosts: c.Hosts, SSHConfig: c.SSHConfig, InsecureIgnoreHostKey: c.InsecureIgnoreHostKey, Heartbeat: c.Heartbeat, Timeout: c.Timeout}
	heartbeat, timeout, _, _, err = launcher.PacedDetector(lc, alg)
	return heartbeat, timeout, err
}

// world says where the runs are made, for the header and the page.
func (c *FailoverConfig) world() string {
	if c.Sim {
		return "simulated"
	}
	return "real processes"
}

// trialConfig is the run of trial i of fault. The fault falls at 500 ms plus a spread fraction of
// the detector's period, so that it meets the heartbeats' or probes' schedule at every phase, as a
// failure at a random moment would (the schedules start at the begin, as the fault's time does).
// A pause lasts four timeouts, and the run goes on long enough after it for the failover.
func (c *FailoverConfig) trialConfig(fault string, i int, heartbeat, timeout time.Duration) launcher.Config {
	period := heartbeat
	if c.HealthInterval > 0 {
		period = c.HealthInterval
	}
	at := 500*time.Millisecond + time.Duration((float64(i)+0.5)/float64(c.Trials)*float64(period)).Round(10*time.Microsecond)
	sched := fmt.Sprintf("at %v %s leader", at, fault)
	if fault == "pause" {
		sched = fmt.Sprintf("at %v pause leader for %v", at, 4*timeout)
	}
	lc := launcher.DefaultConfig()
	lc.Algo, lc.Nodes = c.Algo, c.Nodes
	lc.Heartbeat, lc.Timeout = heartbeat, timeout
	lc.Chaos = sched
	lc.Settle = 500 * time.Millisecond
	lc.Duration = 1500*time.Millisecond + 4*timeout
	lc.Out = filepath.Join(c.Out, fmt.Sprintf("%s-%02d", fault, i))
	lc.Stdout, lc.Progress = io.Discard, io.Discard
	lc.Detector, lc.Observers, lc.HealthInterval = c.Detector, c.Observers, c.HealthInterval
	lc.Hosts, lc.SSHConfig, lc.InsecureIgnoreHostKey = c.Hosts, c.SSHConfig, c.InsecureIgnoreHostKey
	lc.Sim = c.Sim
	return lc
}

// failoverTrial is what the page shows of a trial, from the run the launcher returned: failed as
// the table counts it (a run that did not pass, or no failover measured), and why.
func failoverTrial(fault string, i int, r launcher.Result) FailoverTrial {
	t := FailoverTrial{Fault: fault, Trial: i, Dir: r.Dir}
	v := r.Verdict
	if v == nil {
		t.Why = "no verdict (the run was not judged)"
		return t
	}
	if len(v.Metrics.Failovers) > 0 && v.Metrics.Failovers[0].MS != nil {
		t.MS, t.Has = *v.Metrics.Failovers[0].MS, true
	}
	switch {
	case len(v.Metrics.Failovers) == 0:
		t.Why = "no failover measured (the fault took no leader away)"
	case !t.Has:
		t.Why = "the live nodes never agreed again: " + v.Metrics.Failovers[0].Fault
	case r.Code != launcher.ExitOK:
		t.Why = fmt.Sprintf("exit %d", r.Code)
		for _, p := range v.Properties {
			if !p.OK {
				t.Why = p.Name + ": " + p.Detail
				break
			}
		}
	default:
		t.OK = true
	}
	return t
}

// noticeMS is the time from the run's first fault record of kind fault to the first suspect event,
// in another node's log, of one of the fault's targets: how long the death (or the silence) took to
// be noticed, by each node's own clock (all one clock on one host; run's logs are true time).
func noticeMS(dir, fault string) (float64, bool) {
	run, err := logs.ReadRun(dir)
	if err != nil {
		return 0, false
	}
	i := slices.IndexFunc(run.Chaos, func(r logs.ChaosRecord) bool { return r.Op == fault && r.Error == "" })
	if i < 0 {
		return 0, false
	}
	rec, first := run.Chaos[i], int64(-1)
	for id, l := range run.Nodes {
		if slices.Contains(rec.Targets, id) {
			continue
		}
		for _, e := range l.Events {
			if e.Ev == logs.EvSuspect && e.TS >= rec.TS && slices.Contains(rec.Targets, e.Peer) && (first < 0 || e.TS < first) {
				first = e.TS
			}
		}
	}
	if first < 0 {
		return 0, false
	}
	return float64(first-rec.TS) / 1e6, true
}

// page is OUT/index.html: the command, the configuration, and per fault the failover time's CDF,
// the trials' scatter and p50/p90/max, and a link to each trial's run.
func (c *FailoverConfig) page(heartbeat, timeout time.Duration, trials []FailoverTrial) Page {
	head := Page{
		Title:   fmt.Sprintf("bench failover: %s, %d nodes", c.Algo, c.Nodes),
		Command: c.Command,
		Config: append([]KV{
			{Key: "algorithm", Value: c.Algo},
			{Key: "nodes", Value: fmt.Sprint(c.Nodes)},
			{Key: "faults", Value: strings.Join(c.Faults, ", ")},
			{Key: "trials per fault", Value: fmt.Sprint(c.Trials)},
			{Key: "detector", Value: fmt.Sprintf("%s, heartbeat %v, timeout %v", c.Detector, heartbeat, timeout)},
			{Key: "world", Value: c.world()},
			{Key: "runs in", Value: c.Out},
		}, c.Given...),
	}
	if !c.Sim {
		head.Notes = append(head.Notes, "Real processes: the figures include the machine's scheduling and sockets.")
	} else {
		head.Notes = append(head.Notes, "Simulated: links take 0.1-2 ms and processes are never descheduled, so the figures are the algorithm's and the detector's alone.")
	}
	return FailoverPage(c.Out, head, c.Faults, trials, float64(timeout)/float64(time.Millisecond))
}
