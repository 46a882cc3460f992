package sim

import (
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/topology"
)

// The ring family's required in-memory tests (issue 3), run over every registered algorithm that
// runs on a ring or a two-way ring, so that an algorithm is covered the moment its file registers
// it: clean elections for N = 1..12 under every placement, initiator set and 200 delay seeds, held
// against the algorithm's bound and, where the count is deterministic, its exact formula. A failure
// prints the number that replays it with -ring-seed. (Crashes are the whole node's business: the
// sweeps with faults run in launcher/, over sim.Cluster.)

var ringSeed = flag.Int64("ring-seed", -1, "replay one run of TestRingElections (-run naming one algorithm) and log its events")

// ringAlgo is one ring algorithm on one of its ring topologies.
type ringAlgo struct {
	election.Algorithm
	topo string
}

// name is the subtest's name: the algorithm's, with the topology when it runs on both.
func (a ringAlgo) name() string {
	if countRingTopologies(a.Algorithm) > 1 {
		return a.Name + "@" + a.topo
	}
	return a.Name
}

func countRingTopologies(a election.Algorithm) int {
	k := 0
	for _, t := range a.Topologies {
		if t == "ring" || t == "biring" {
			k++
		}
	}
	return k
}

// ringAlgos lists the registered algorithms on each ring topology they accept. The algorithms this
// package registers for its own tests (sim-test-*) are left out: they are fixtures without crash
// handling or bounds.
func ringAlgos() []ringAlgo {
	var out []ringAlgo
	for _, name := range election.Names() {
		if strings.HasPrefix(name, "sim-test-") {
			continue
		}
		a, _ := election.Lookup(name)
		if a.Synchronous {
			continue // not fault-tolerant; sync tests of its own
		}
		for _, t := range a.Topologies {
			if t == "ring" || t == "biring" {
				out = append(out, ringAlgo{a, t})
			}
		}
	}
	return out
}

// The initiator set forms of the clean sweep: every node, the lowest ID (the launcher's "one"), each
// node with probability ½, and 1..⌈n/3⌉ nodes drawn at random (often a single node other than the
// lowest).
var ringForms = []string{"all", "one", "half", "few"}

// ringSeeds is the number of delay seeds per (N, placement, initiator form).
const ringSeeds = 200

// ringCase is one clean election: a number that names it (and replays it) and what it decodes to.
type ringCase struct {
	num       int64
	n         int
	placement string
	form      string
}

func ringCaseOf(num int64) ringCase {
	k := num / ringSeeds
	f := int(k % int64(len(ringForms)))
	k /= int64(len(ringForms))
	p := int(k % int64(len(topology.Placements)))
	n := int(k/int64(len(topology.Placements))) + 1
	return ringCase{num: num, n: n, placement: topology.Placements[p], form: ringForms[f]}
}

// ringCaseNums lists the case numbers of n: every placement, form and seed.
func ringCaseNums(n int) (lo, hi int64) {
	per := int64(len(topology.Placements) * len(ringForms) * ringSeeds)
	return int64(n-1) * per, int64(n) * per
}

// drawInitiators draws an initiator set of the given form among 1..n.
func drawInitiators(r *rand.Rand, form string, n int) []int {
	switch form {
	case "all":
		return nil
	case "one":
		return []int{1}
	case "half":
		var ids []int
		for id := 1; id <= n; id++ {
			if r.Intn(2) == 0 {
				ids = append(ids, id)
			}
		}
		if ids == nil {
			ids = []int{1 + r.Intn(n)}
		}
		return ids
	}
	k := 1 + r.Intn((n+2)/3)
	ids := r.Perm(n)[:k]
	for i := range ids {
		ids[i]++
	}
	slices.Sort(ids)
	return ids
}

// config is the case's run: its placement and initiators, and links of 0..10ms drawn from the case
// number (MinDelay = MaxDelay makes a synchronous ring), with the failure detector off: nothing
// fails, and the counts are the algorithm's alone.
func (c ringCase) config(a ringAlgo) Config {
	r := newRand(c.num)
	order, err := topology.Place(c.n, c.placement, c.num)
	if err != nil {
		panic(err)
	}
	maxDelay := time.Duration(1+r.Intn(10)) * time.Millisecond
	minDelay := time.Duration(r.Int63n(int64(maxDelay) + 1))
	if r.Intn(8) == 0 {
		minDelay = maxDelay
	}
	return Config{
		Algo: a.Name, N: c.n, Order: order, Placement: c.placement, Topology: a.topo,
		Initiators: drawInitiators(r, c.form, c.n), Seed: c.num,
		MinDelay: minDelay, MaxDelay: maxDelay,
		Duration: 3 * time.Second, NoEvents: true,
	}
}

func (c ringCase) String() string {
	return fmt.Sprintf("n=%d ids=%s initiators=%s (case %d)", c.n, c.placement, c.form, c.num)
}

// exactCount is the message count (election + announcement) an algorithm sends whatever the delays,
// where the theory fixes it: Chang-Roberts at --ids worst with every node initiating (ID i travels i
// hops: n(n+1)/2, then n elected), and LeLann with every node initiating (every ID goes all the way
// round: n²).
func exactCount(algo, placement string, initiators []int, n int) (int, bool) {
	all := initiators == nil || len(initiators) == n
	switch {
	case algo == "chang-roberts" && placement == topology.Worst && all:
		return n*(n+1)/2 + n, true
	case algo == "lelann" && all:
		return n * n, true
	}
	return 0, false
}

// ringCounts sums the sends of the algorithm's election and announcement kinds.
func ringCounts(s *Sim, a election.Algorithm) (msgs, announce int) {
	for _, k := range a.Kinds {
		msgs += s.Sent(k)
	}
	for _, k := range a.Announce {
		announce += s.Sent(k)
	}
	return msgs, announce
}

// cleanRing runs one case and returns what is wrong with it (nothing: nil).
func cleanRing(a ringAlgo, c ringCase, cfg Config) (problems []string, s *Sim) {
	s, err := New(cfg)
	if err != nil {
		return []string{err.Error()}, nil
	}
	inits := c.n
	if cfg.Initiators != nil {
		inits = len(cfg.Initiators)
	}
	// Every election here ends well before 1.5s (at most a few n hops of 10ms), and before the ring
	// core's stall timer (1.8s) could start another; after it, the ring must stay quiet.
	if !advance(s, 1500*time.Millisecond) {
		return []string{livelock(s)}, s
	}
	msgs, ann := ringCounts(s, a.Algorithm)
	if l, ok := s.Converged(); !ok || l != c.n {
		var beliefs []string
		for id := 1; id <= c.n; id++ {
			p := ""
			if s.Participant(id) {
				p = "(participant)"
			}
			beliefs = append(beliefs, fmt.Sprintf("%d->%d%s", id, s.Leader(id), p))
		}
		problems = append(problems, fmt.Sprintf("no agreement on %d after 1.5s: %s", c.n, strings.Join(beliefs, " ")))
	}
	if total := s.Messages(); total != msgs+ann {
		problems = append(problems, fmt.Sprintf("%d messages of kinds the algorithm does not declare (%v)", total-msgs-ann, s.Counts()))
	}
	for _, k := range s.Counts() {
		if k.Dropped > 0 || k.Delivered != k.Sent {
			problems = append(problems, fmt.Sprintf("%s: %d sent, %d delivered, %d dropped on a ring without faults", k.Kind, k.Sent, k.Delivered, k.Dropped))
		}
	}
	if a.Bound == nil {
		problems = append(problems, "the algorithm states no bound")
	} else if b, ok := a.Bound(c.n, inits); !ok {
		problems = append(problems, fmt.Sprintf("the algorithm states no bound for n=%d with %d initiators", c.n, inits))
	} else if msgs+ann > b {
		problems = append(problems, fmt.Sprintf("%d+%d = %d messages, over the bound %d (%v)", msgs, ann, msgs+ann, b, s.Counts()))
	}
	if want, ok := exactCount(a.Name, c.placement, cfg.Initiators, c.n); ok && msgs+ann != want {
		problems = append(problems, fmt.Sprintf("%d+%d = %d messages, the theory says exactly %d (%v)", msgs, ann, msgs+ann, want, s.Counts()))
	}
	if !advance(s, 3*time.Second) { // past every stall timer
		return append(problems, livelock(s)), s
	}
	if m2, a2 := ringCounts(s, a.Algorithm); m2 != msgs || a2 != ann {
		problems = append(problems, fmt.Sprintf("not quiet after the election: %d+%d messages at 1.5s, %d+%d at 3s", msgs, ann, m2, a2))
	} else if _, ok := s.Converged(); !ok {
		problems = append(problems, "the agreement did not last until 3s")
	}
	return problems, s
}

// checkedRing runs the case again with the event log and has the checker judge it: it must pass,
// and see one election that cost what the counters say.
func checkedRing(a ringAlgo, c ringCase, cfg Config) []string {
	cfg.NoEvents = false
	s, err := New(cfg)
	if err != nil {
		return []string{err.Error()}
	}
	if !advance(s, cfg.Duration) {
		return []string{livelock(s)}
	}
	run := s.Run()
	v := check.Check(run, check.Options{})
	var problems []string
	for _, p := range v.Properties {
		if !p.OK {
			problems = append(problems, fmt.Sprintf("checker: %s: %s", p.Name, p.Detail))
		}
	}
	msgs, ann := ringCounts(s, a.Algorithm)
	switch els := v.Metrics.Elections; {
	case len(els) != 1:
		problems = append(problems, fmt.Sprintf("checker: %d elections, want 1", len(els)))
	case els[0].Messages != msgs || els[0].Announce != ann:
		problems = append(problems, fmt.Sprintf("checker: election of %d+%d messages, the simulator counted %d+%d", els[0].Messages, els[0].Announce, msgs, ann))
	case els[0].Leader == nil && c.n == 1:
		// A ring of one elects in an instant: every event at t=0. The checker opens the election
		// after it has looked at that instant's agreement, so it never sees it end (check/elections.go;
		// the report of issue 3 proposes the fix). Its properties are judged above all the same.
	case els[0].Leader == nil || *els[0].Leader != c.n:
		problems = append(problems, fmt.Sprintf("checker: the election's leader is %v, want %d", els[0].Leader, c.n))
	}
	return problems
}

// TestRingElections: for every ring algorithm, N = 1..12, every placement, every initiator form
// and 200 delay seeds: exactly one leader, the maximum ID, every node agrees and stays so, nothing
// but the algorithm's kinds is sent, messages + announce ≤ Bound(N, initiators), and exactly the
// theory's count where it is deterministic. Two seeds of every combination also go through the
// checker (check.Check), which must pass and count the same election.
func TestRingElections(t *testing.T) {
	algos := ringAlgos()
	if len(algos) == 0 {
		t.Fatal("no ring algorithm is registered")
	}
	step := int64(1)
	if testing.Short() {
		step = 5 // 40 of the 200 seeds
	}
	for _, a := range algos {
		t.Run(a.name(), func(t *testing.T) {
			if *ringSeed >= 0 {
				c := ringCaseOf(*ringSeed)
				cfg := c.config(a)
				problems, _ := cleanRing(a, c, cfg)
				problems = append(problems, checkedRing(a, c, cfg)...)
				cfg.NoEvents = false
				t.Logf("%s %s: order %v, initiators %v, links %v..%v", a.name(), c, cfg.Order, cfg.Initiators, cfg.MinDelay, cfg.MaxDelay)
				replayRing(t, cfg)
				if len(problems) > 0 {
					t.Errorf("%s", strings.Join(problems, "\n"))
				}
				return
			}
			t.Parallel()
			var failed atomic.Int64
			for n := 1; n <= 12; n++ {
				t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
					t.Parallel()
					lo, hi := ringCaseNums(n)
					for num := lo; num < hi; num++ {
						seed := num % ringSeeds
						if seed%step != 0 || failed.Load() >= 5 {
							continue
						}
						c := ringCaseOf(num)
						cfg := c.config(a)
						problems, _ := cleanRing(a, c, cfg)
						if seed%100 == 0 {
							problems = append(problems, checkedRing(a, c, cfg)...)
						}
						if len(problems) > 0 {
							failed.Add(1)
							t.Errorf("%s %s: %s\n\treplay: go test ./sim -run 'TestRingElections/^%s$' -ring-seed %d -v",
								a.name(), c, strings.Join(problems, "; "), a.name(), num)
						}
					}
				})
			}
		})
	}
}

// advanceBudget is how many happenings a run of these tests may take: a hundred times what the
// longest of them needs (the crash runs take at most about 5,000).
const advanceBudget = 500_000

// advance runs s until virtual time t, as RunUntil does, but gives up after advanceBudget
// happenings: a machine that sends to itself for ever (a ring of one live node relaying its own
// message) never lets virtual time move on, and would hang the test. It tells whether it got to t.
func advance(s *Sim, t time.Duration) bool {
	for budget := advanceBudget; s.q.len() > 0 && s.q.next() <= t; budget-- {
		if budget == 0 {
			return false
		}
		s.Step()
	}
	s.RunUntil(t)
	return true
}

// livelock describes a run that advance gave up on.
func livelock(s *Sim) string {
	return fmt.Sprintf("livelock: %d happenings without reaching the end, stuck at %v (messages so far: %v)", advanceBudget, s.Now(), s.Counts())
}

// fmtRingEvent is fmtEvent with the fields ring messages carry: the candidate, the algorithm's
// phase, hops and direction.
func fmtRingEvent(e *logs.Event) string {
	line := fmtEvent(e)
	if line == "" || e.Msg == nil || (e.Ev != logs.EvSend && e.Ev != logs.EvRecv) {
		return line
	}
	m := e.Msg
	extra := fmt.Sprintf(" cand=%d", m.Cand)
	if m.Phase != 0 {
		extra += fmt.Sprintf(" phase=%d", m.Phase)
	}
	if m.Hops != 0 {
		extra += fmt.Sprintf(" hops=%d", m.Hops)
	}
	if m.Dir != 0 {
		extra += fmt.Sprintf(" dir=%+d", m.Dir)
	}
	if m.Origin != 0 {
		extra += fmt.Sprintf(" origin=%d", m.Origin)
	}
	if len(m.IDs) > 0 {
		extra += fmt.Sprintf(" ids=%v", m.IDs)
	}
	return line + extra
}

// replayRing runs cfg with its event log and logs the merged events and the checker's verdict.
func replayRing(t *testing.T, cfg Config) {
	t.Helper()
	cfg.NoEvents = false
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stuck := !advance(s, cfg.Duration)
	run := s.Finish() // where advance stopped: the end of the run, or where it got stuck
	for _, e := range merged(run) {
		if line := fmtRingEvent(&e); line != "" {
			t.Log(line)
		}
	}
	if stuck {
		t.Fatalf("%s (the events above end where it began)", livelock(s))
	}
	var b strings.Builder
	check.Check(run, check.Options{}).Print(&b)
	t.Logf("verdict:\n%s", b.String())
}
