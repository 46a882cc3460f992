package sim

import (
	"cmp"
	"flag"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

var seedFlag = flag.Int64("seed", -1, "replay one seed of TestBullyCleanBound and log its events")

// replay runs one configuration, logs its merged events and judges it.
func replay(t *testing.T, cfg Config) {
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	run := s.Run()
	t.Logf("n=%d initiators=%v seed=%d\nfaults:\n%s", cfg.N, run.Cluster.Initiators, cfg.Seed, run.Cluster.Chaos)
	for _, c := range run.Chaos {
		t.Logf("chaos %9.3fms %s %v %s", ms(c.TS-s.Config().Base), c.Op, c.Targets, c.Error)
	}
	for _, e := range merged(run) {
		if line := fmtEvent(&e); line != "" {
			t.Log(line)
		}
	}
	if problems := judge(s, run); len(problems) > 0 {
		t.Errorf("%s", strings.Join(problems, "\n"))
	}
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// judge checks a bare run: agreement at the end, every elect ended in a leader unless its node
// died, every recv has its send, every link kept its order.
func judge(s *Sim, run *logs.Run) []string {
	var bad []string
	if top, ok := s.Converged(); !ok {
		var beliefs []string
		for id := 1; id <= s.cfg.N; id++ {
			if s.Alive(id) {
				beliefs = append(beliefs, fmt.Sprintf("%d->%d", id, s.Leader(id)))
			}
		}
		bad = append(bad, fmt.Sprintf("no agreement on %d at the end: %s", top, strings.Join(beliefs, " ")))
	}
	sends := map[string]*logs.Event{}
	for id, nl := range run.Nodes {
		open := false // an elect without its leader yet, in the current incarnation
		inc := 0
		for i := range nl.Events {
			e := &nl.Events[i]
			if e.Inc != inc {
				inc, open = e.Inc, false // the previous incarnation was killed: excused
			}
			switch e.Ev {
			case logs.EvElect:
				open = true
			case logs.EvLeader:
				open = false
			case logs.EvStop:
				if open {
					bad = append(bad, fmt.Sprintf("node %d inc %d: an elect never ended in a leader", id, inc))
				}
			case logs.EvSend:
				if sends[e.Msg.ID] != nil {
					bad = append(bad, "duplicate message id "+e.Msg.ID)
				}
				sends[e.Msg.ID] = e
			}
		}
	}
	last := map[[2]int]uint64{} // per link: the sequence number (from the id) of the last recv
	for id, nl := range run.Nodes {
		for i := range nl.Events {
			e := &nl.Events[i]
			if e.Ev != logs.EvRecv {
				continue
			}
			snd := sends[e.Msg.ID]
			switch {
			case snd == nil:
				bad = append(bad, fmt.Sprintf("node %d: recv of %s without its send", id, e.Msg.ID))
				continue
			case snd.To != id || snd.Node != e.From || snd.Msg.Kind != e.Msg.Kind:
				bad = append(bad, fmt.Sprintf("node %d: recv of %s does not match its send", id, e.Msg.ID))
			case e.LC <= snd.LC:
				bad = append(bad, fmt.Sprintf("node %d: recv of %s at lc %d, sent at lc %d", id, e.Msg.ID, e.LC, snd.LC))
			}
			// Within one incarnation pair, a link delivers in send order (the id's last part).
			k := [2]int{e.From*1000 + snd.Inc, id*1000 + e.Inc}
			seq := msgSeq(e.Msg.ID)
			if seq <= last[k] {
				bad = append(bad, fmt.Sprintf("link %d->%d reordered: %s after seq %d", e.From, id, e.Msg.ID, last[k]))
			}
			last[k] = seq
		}
	}
	if len(bad) > 8 {
		bad = append(bad[:8], fmt.Sprintf("and %d more", len(bad)-8))
	}
	return bad
}

func msgSeq(id string) uint64 {
	var n, inc int
	var seq uint64
	fmt.Sscanf(id, "%d.%d.%d", &n, &inc, &seq)
	return seq
}

// TestBullyCleanBound: without faults, an election costs what bullyBound says, whoever initiates:
// exactly n²-1 when every node initiates, at most n²-1 otherwise (with the lowest alone, a node that
// hears the winner before any election stays out of it).
func TestBullyCleanBound(t *testing.T) {
	alg, _ := election.Lookup("bully")
	runs := 2000
	if testing.Short() {
		runs = 200
	}
	one := func(seed int64) (Config, int, string) {
		r := rand.New(rand.NewSource(seed))
		n := 2 + r.Intn(15)
		cfg := DefaultConfig("bully", n)
		cfg.Seed = seed
		cfg.MaxDelay = time.Duration(1+r.Intn(20)) * time.Millisecond // up to 20ms: still well within T
		exact := ""
		switch r.Intn(4) {
		case 0: // every node
			exact = "all"
		case 1:
			cfg.Initiators = []int{1}
		default:
			for id := 1; id <= n; id++ {
				if r.Intn(2) == 0 {
					cfg.Initiators = append(cfg.Initiators, id)
				}
			}
			if cfg.Initiators == nil {
				cfg.Initiators = []int{n}
			}
		}
		inits := n
		if cfg.Initiators != nil {
			inits = len(cfg.Initiators)
		}
		bound, _ := alg.Bound(n, inits)
		return cfg, bound, exact
	}
	check := func(seed int64, verbose bool) {
		cfg, bound, exact := one(seed)
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		s.RunFor(time.Second)
		if verbose {
			replay(t, cfg)
		}
		got := s.Messages()
		_, conv := s.Converged()
		switch {
		case !conv:
			t.Errorf("seed %d: n=%d initiators %v: no agreement after 1s", seed, cfg.N, cfg.Initiators)
		case got > bound || (exact != "" && got != bound):
			t.Errorf("seed %d: n=%d initiators %v: %d messages (%v), bound %d (exactly, with %s initiating: %v)\n\treplay: go test ./sim -run 'TestBullyCleanBound$' -seed %d -v",
				seed, cfg.N, cfg.Initiators, got, s.Counts(), bound, exact, exact != "", seed)
		}
	}
	if *seedFlag >= 0 {
		check(*seedFlag, true)
		return
	}
	for seed := range int64(runs) {
		check(seed, false)
	}
}

func merged(run *logs.Run) []logs.Event {
	var all []logs.Event
	for id := 1; id <= len(run.Nodes); id++ {
		all = append(all, run.Nodes[id].Events...)
	}
	slices.SortStableFunc(all, func(a, b logs.Event) int { return cmp.Compare(a.TS, b.TS) })
	return all
}

func fmtEvent(e *logs.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%9.3fms n%d.%d lc%-4d %-7s", ms(e.TS-DefaultBase), e.Node, e.Inc, e.LC, e.Ev)
	switch e.Ev {
	case logs.EvSend:
		fmt.Fprintf(&b, " to %d %s r%d (%s)", e.To, e.Msg.Kind, e.Msg.Round, e.Msg.ID)
	case logs.EvRecv:
		fmt.Fprintf(&b, " from %d %s r%d (%s)", e.From, e.Msg.Kind, e.Msg.Round, e.Msg.ID)
	case logs.EvDrop:
		dir := fmt.Sprintf("to %d", e.To)
		if e.From != 0 {
			dir = fmt.Sprintf("from %d", e.From) // refused by this node's link rules
		}
		fmt.Fprintf(&b, " %s %s (%s): %s", dir, e.Msg.Kind, e.Msg.ID, e.Reason)
	case logs.EvSuspect, logs.EvTrust:
		fmt.Fprintf(&b, " %d %s", e.Peer, e.Reason)
	case logs.EvElect:
		fmt.Fprintf(&b, " round %d", e.Round)
	case logs.EvLeader:
		fmt.Fprintf(&b, " %d", e.Leader)
	case logs.EvStats, logs.EvStart, logs.EvStop:
		return ""
	}
	return b.String()
}
