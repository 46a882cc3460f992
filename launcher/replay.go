package launcher

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/topology"
	"github.com/leaderlab/leaderlab/wire"
)

// ReplayConfig returns the configuration that runs the cluster of the run in dir again: the same
// algorithm, N, topology, ring order, initiators, timings, options, seed, network backend and chaos
// text (a nemesis's drawn schedule included: it is not drawn again). Everything else (the run
// directory, the binary, the output writers) comes from base. notes say what had to be pinned
// because the spec as given no longer resolves to what the run had (e.g. --ids random under a
// changed placement rule: the ring is then given as a list).
func ReplayConfig(dir string, base Config) (Config, []string, error) {
	c, err := rundir.Load(dir)
	if err != nil {
		return Config{}, nil, fmt.Errorf("--replay: %w", err)
	}
	cfg := base
	cfg.Algo, cfg.Nodes, cfg.Topology = c.Algo, len(c.Nodes), c.Topology
	cfg.Seed, cfg.SeedSet = c.Seed, true
	cfg.Chaos = c.Chaos
	cfg.Nemesis, cfg.NemesisOverlap, cfg.NemesisRestart, cfg.NemesisShapes = "", false, false, ""
	cfg.Heartbeat, cfg.Timeout = c.Heartbeat.D(), c.Timeout.D()
	cfg.ElectionTimeout, cfg.CoordinatorTimeout = c.ElectionTimeout.D(), c.CoordinatorTimeout.D()
	cfg.Grace, cfg.TerminationBound = c.Grace.D(), c.TerminationBound.D()
	cfg.Settle, cfg.Duration = c.Settle.D(), c.Duration.D()
	cfg.Options = c.Options
	cfg.VClock = VClockAuto
	if v := c.Options[wire.ClockOption]; v == VClockOn || v == VClockOff {
		cfg.VClock = v
	}
	var notes []string
	cfg.IDs = c.Placement
	if ring, err := topology.Place(cfg.Nodes, c.Placement, c.Seed); err != nil || !slices.Equal(ring, c.Ring) {
		cfg.IDs = joinInts(c.Ring)
		notes = append(notes, fmt.Sprintf("--ids %s no longer places the IDs as the run did: the ring %s is given as a list", c.Placement, cfg.IDs))
	}
	order, err := topology.Place(cfg.Nodes, cfg.IDs, c.Seed)
	if err != nil {
		return Config{}, nil, fmt.Errorf("--replay %s: the ring %v: %w", dir, c.Ring, err)
	}
	cfg.Initiators = c.InitiatorsSpec
	if inits, err := topology.ParseInitiators(c.InitiatorsSpec, order, c.Seed); err != nil || !slices.Equal(inits, c.Initiators) {
		cfg.Initiators = joinInts(c.Initiators)
		notes = append(notes, fmt.Sprintf("--initiators %s no longer picks what the run did: given as the list %s", c.InitiatorsSpec, cfg.Initiators))
	}
	// cluster.json records the backend by the nodes' addresses: only the iptables backend gives
	// each node its own bind address, and on one host only the netem backend a firewall mark.
	cfg.NetBackend = BackendTransport
	if c.Nodes[0].Bind != "" {
		cfg.NetBackend = BackendIPTables
	} else if c.Nodes[0].Mark != 0 && c.Nodes[0].Host == "" {
		cfg.NetBackend = BackendNetem
	} else if host, _, err := net.SplitHostPort(c.Nodes[0].Addr); err == nil {
		cfg.Host = host
	}
	return cfg, notes, nil
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = strconv.Itoa(id)
	}
	return strings.Join(s, ",")
}

// Replay runs the cluster of the run in from again into a new run directory (base.Out, or a new
// name) and then prints on base.Stdout where the two runs differ in outcome. The exit code is the
// new run's own (0 passed, 1 violation, 2 not made): a difference alone does not fail it.
func Replay(ctx context.Context, from string, base Config) (int, error) {
	_, code, err := ReplayDir(ctx, from, base)
	return code, err
}

// ReplayDir is Replay that also returns the new run directory ("" when none was made).
func ReplayDir(ctx context.Context, from string, base Config) (string, int, error) {
	cfg, notes, err := ReplayConfig(from, base)
	if err != nil {
		return "", ExitUnusable, err
	}
	progress := cfg.Progress
	if progress == nil {
		progress = io.Discard
	}
	fmt.Fprintf(progress, "leaderlab: replaying %s (seed %d, the same schedule)\n", from, cfg.Seed)
	for _, n := range notes {
		fmt.Fprintf(progress, "leaderlab: replay: %s\n", n)
	}
	dir, code, _, err := run(ctx, cfg)
	if err != nil || dir == "" {
		return dir, code, err
	}
	old, oerr := readOutcome(from)
	now, nerr := readOutcome(dir)
	out := cfg.Stdout
	if out == nil {
		out = io.Discard
	}
	switch {
	case nerr != nil:
		fmt.Fprintf(out, "replay: cannot compare: %v\n", nerr)
	case oerr != nil:
		fmt.Fprintf(out, "replay: cannot compare with %s: %v\n", from, oerr)
	default:
		printDiff(out, from, dir, old, now)
	}
	return dir, code, nil
}

// outcome is what a replay compares: the verdict and the faults as applied.
type outcome struct {
	ok        bool
	leader    *int
	props     []check.Property
	failovers int
	ops       []string // one per chaos.jsonl record: op, resolved targets, sides or link
}

// readOutcome reads a run's verdict.json and chaos.jsonl.
func readOutcome(dir string) (outcome, error) {
	var o outcome
	b, err := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
	if errors.Is(err, os.ErrNotExist) {
		return o, fmt.Errorf("%s has no verdict.json (the run was not made, or not checked)", dir)
	}
	if err != nil {
		return o, err
	}
	var v check.Verdict
	if err := json.Unmarshal(b, &v); err != nil {
		return o, fmt.Errorf("%s: verdict.json: %w", dir, err)
	}
	o.ok, o.leader, o.props, o.failovers = v.OK, v.Leader, v.Properties, len(v.Metrics.Failovers)
	f, err := os.Open(filepath.Join(dir, rundir.ChaosFile))
	if err != nil {
		return o, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec logs.ChaosRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		o.ops = append(o.ops, opString(rec))
	}
	return o, sc.Err()
}

// opString renders a chaos record without its times and acks: what two runs of one schedule
// should share.
func opString(rec logs.ChaosRecord) string {
	s := strings.TrimSpace(rec.Op + " " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(rec.Targets)), ","), "[]"))
	switch {
	case rec.Reach != nil:
		s += " reach " + chaos.FormatReach(rec.Reach)
	case rec.Groups != nil:
		s += " sides " + fmt.Sprint(rec.Groups)
	case rec.Rule != "":
		s += fmt.Sprintf(" link %d->%d %s", rec.From, rec.To, rec.Rule)
	}
	if rec.Error != "" {
		s += " (not applied)"
	}
	return strings.TrimSpace(s)
}

// diffOutcomes lists where now differs from old, one line each: what, now, was.
func diffOutcomes(old, now outcome) [][3]string {
	var d [][3]string
	pass := func(ok bool) string { return map[bool]string{true: "PASS", false: "FAIL"}[ok] }
	if old.ok != now.ok {
		d = append(d, [3]string{"verdict", pass(now.ok), pass(old.ok)})
	}
	lead := func(l *int) string {
		if l == nil {
			return "none"
		}
		return strconv.Itoa(*l)
	}
	if lead(old.leader) != lead(now.leader) {
		d = append(d, [3]string{"leader", lead(now.leader), lead(old.leader)})
	}
	was := map[string]bool{}
	for _, p := range old.props {
		was[p.Name] = p.OK
	}
	seen := map[string]bool{}
	for _, p := range now.props {
		seen[p.Name] = true
		if w, ok := was[p.Name]; !ok {
			d = append(d, [3]string{p.Name, pass(p.OK), "not judged"})
		} else if w != p.OK {
			d = append(d, [3]string{p.Name, pass(p.OK), pass(w)})
		}
	}
	for _, p := range old.props {
		if !seen[p.Name] {
			d = append(d, [3]string{p.Name, "not judged", pass(p.OK)})
		}
	}
	if old.failovers != now.failovers {
		d = append(d, [3]string{"failovers", strconv.Itoa(now.failovers), strconv.Itoa(old.failovers)})
	}
	for i := 0; i < max(len(old.ops), len(now.ops)); i++ {
		a, b := "none", "none"
		if i < len(old.ops) {
			a = old.ops[i]
		}
		if i < len(now.ops) {
			b = now.ops[i]
		}
		if a != b {
			d = append(d, [3]string{fmt.Sprintf("chaos op %d", i+1), b, a})
		}
	}
	return d
}

// printDiff prints the comparison for people.
func printDiff(w io.Writer, from, dir string, old, now outcome) {
	d := diffOutcomes(old, now)
	if len(d) == 0 {
		fmt.Fprintf(w, "replay: %s matches %s: %s, leader %s, %d properties alike, %d failovers, %d chaos ops with the same targets\n",
			dir, from, map[bool]string{true: "PASS", false: "FAIL"}[now.ok], leaderString(now.leader), len(now.props), now.failovers, len(now.ops))
		return
	}
	fmt.Fprintf(w, "replay: %s differs from %s in %d ways (now, was):\n", dir, from, len(d))
	width := 0
	for _, x := range d {
		width = max(width, len(x[0]))
	}
	for _, x := range d {
		fmt.Fprintf(w, "  %-*s  %s, was %s\n", width, x[0], x[1], x[2])
	}
	if slices.ContainsFunc(d, func(x [3]string) bool { return strings.HasPrefix(x[0], "chaos op") }) {
		fmt.Fprintln(w, "  (targets such as leader resolve to what the cluster does at that moment: once the runs diverge, they may differ)")
	}
}

func leaderString(l *int) string {
	if l == nil {
		return "none"
	}
	return strconv.Itoa(*l)
}
