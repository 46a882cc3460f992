package sim

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node/election"
)

// The link rules in the simulator, one at a time, over a test algorithm that sends a ping to every
// peer each millisecond: what a rule does to each message is read off the log, message by message,
// against the time it reached its receiver.

// pinger is a test-only algorithm: every node pings every other node each millisecond, from its
// start for ever, and sends heartbeats to (and watches) every other node. It elects nothing.
type pinger struct {
	self   int
	others []int
}

func init() {
	election.Register(election.Algorithm{
		Name:       "sim-test-pinger",
		Topologies: []string{"mesh"},
		Kinds:      []string{"ping"},
		New: func(c election.Config) (election.Machine, error) {
			p := &pinger{self: c.Self}
			for _, id := range c.IDs {
				if id != c.Self {
					p.others = append(p.others, id)
				}
			}
			return p, nil
		},
	})
}

func (p *pinger) Leader() int       { return 0 }
func (p *pinger) Participant() bool { return false }

func (p *pinger) Step(in election.Input) []election.Effect {
	var out []election.Effect
	switch {
	case in.Kind == election.InStart:
		out = append(out, election.Effect{Kind: election.EffHeartbeat, HeartbeatTo: p.others, Watch: p.others})
	case in.Kind == election.InTimer:
		for _, o := range p.others {
			out = append(out, election.Effect{Kind: election.EffSend, To: o, Msg: election.Message{Kind: "ping"}})
		}
	default:
		return nil
	}
	return append(out, election.Effect{Kind: election.EffSetTimer, Timer: "tick", After: time.Millisecond})
}

// pingRun runs n pingers for d with links of exactly 1ms and the given faults.
func pingRun(t *testing.T, n int, d time.Duration, detector bool, faults ...Fault) (*Sim, *logs.Run) {
	t.Helper()
	cfg := Config{Algo: "sim-test-pinger", N: n, Seed: 7, MinDelay: time.Millisecond, MaxDelay: time.Millisecond,
		Duration: d, Detector: detector, Faults: faults}
	s := mustNew(t, cfg)
	return s, s.Run()
}

// fate is what became of one message, as its receiver logged it.
type msgFate struct {
	send  logs.Event
	recvs []logs.Event
	drops []logs.Event // at the receiver (from set)
}

// fates gathers every message's send, recvs and receiver-side drops, in send order per link.
func fates(run *logs.Run) (byLink map[[2]int][]*msgFate) {
	byID := map[string]*msgFate{}
	byLink = map[[2]int][]*msgFate{}
	for id := 1; id <= len(run.Nodes); id++ {
		for _, e := range run.Nodes[id].Events {
			if e.Ev == logs.EvSend {
				f := &msgFate{send: e}
				byID[e.Msg.ID] = f
				k := [2]int{e.Node, e.To}
				byLink[k] = append(byLink[k], f)
			}
		}
	}
	for id := 1; id <= len(run.Nodes); id++ {
		for _, e := range run.Nodes[id].Events {
			switch {
			case e.Ev == logs.EvRecv:
				byID[e.Msg.ID].recvs = append(byID[e.Msg.ID].recvs, e)
			case e.Ev == logs.EvDrop && e.From != 0:
				byID[e.Msg.ID].drops = append(byID[e.Msg.ID].drops, e)
			}
		}
	}
	return byLink
}

// arrival is when a message of pingRun reached its receiver: 1ms after its send.
func arrival(f *msgFate) time.Duration {
	return time.Duration(f.send.TS-DefaultBase) + time.Millisecond
}

// checkBlocked holds every message of a run against blocked(from, to, arrival), which names the
// reason a message must be dropped with ("" for delivered): a blocked message is a drop at its
// receiver with from, its msg and the reason, and never a recv; any other is received once.
func checkBlocked(t *testing.T, run *logs.Run, end time.Duration, blocked func(from, to int, at time.Duration) string) {
	t.Helper()
	bad := 0
	for link, fs := range fates(run) {
		for _, f := range fs {
			at := arrival(f)
			if at >= end {
				continue // still in flight at the end
			}
			why := blocked(link[0], link[1], at)
			var got string
			switch {
			case why != "" && (len(f.recvs) != 0 || len(f.drops) != 1):
				got = fmt.Sprintf("%d recvs and %d drops, want a drop (%s)", len(f.recvs), len(f.drops), why)
			case why != "" && (f.drops[0].Node != link[1] || f.drops[0].From != link[0] || f.drops[0].Reason != why || f.drops[0].Msg.Kind != "ping"):
				got = fmt.Sprintf("dropped as %+v, want at node %d from %d for %q", f.drops[0], link[1], link[0], why)
			case why == "" && (len(f.recvs) != 1 || len(f.drops) != 0):
				got = fmt.Sprintf("%d recvs and %d drops, want one recv", len(f.recvs), len(f.drops))
			}
			if got != "" {
				if bad++; bad <= 5 {
					t.Errorf("%d->%d %s arriving at %v: %s", link[0], link[1], f.send.Msg.ID, at, got)
				}
			}
		}
	}
}

func TestLinkDropIsOneWayAndLoggedAtTheReceiver(t *testing.T) {
	_, run := pingRun(t, 3, 400*time.Millisecond, false,
		Fault{At: 100 * time.Millisecond, Op: Link, From: 1, To: 2, Rule: DropRule()},
		Fault{At: 300 * time.Millisecond, Op: Heal})
	checkBlocked(t, run, 400*time.Millisecond, func(from, to int, at time.Duration) string {
		if from == 1 && to == 2 && at >= 100*time.Millisecond && at < 300*time.Millisecond {
			return "drop: at 100ms link 1->2 drop"
		}
		return ""
	})
	last := run.Nodes[2].Events[len(run.Nodes[2].Events)-2] // the stats before the stop
	if last.Stats == nil || last.Stats.Drops != 200 {
		t.Errorf("node 2's last stats %+v, want 200 drops", last.Stats)
	}
}

func TestPartitionsReplaceEachOtherAndLinkRulesAdd(t *testing.T) {
	ms := time.Millisecond
	_, run := pingRun(t, 4, 500*ms, false,
		Fault{At: 100 * ms, Op: Partition, Groups: [][]int{{1, 2}, {3, 4}}},
		Fault{At: 200 * ms, Op: Partition, Shape: "isolate", Node: 4},
		Fault{At: 300 * ms, Op: Link, From: 2, To: 1, Rule: DropRule()},
		Fault{At: 400 * ms, Op: Heal})
	side := func(id int) int { return (id + 1) / 2 }
	checkBlocked(t, run, 500*ms, func(from, to int, at time.Duration) string {
		switch {
		case at < 100*ms || at >= 400*ms:
		case at < 200*ms && side(from) != side(to):
			return "drop: at 100ms partition 1-2|3-4"
		case at < 200*ms:
		case from == 4 || to == 4:
			return "drop: at 200ms partition isolate 4"
		case at >= 300*ms && from == 2 && to == 1:
			return "drop: at 300ms link 2->1 drop"
		}
		return ""
	})
}

func TestLinkDelayKeepsBoundsAndOrder(t *testing.T) {
	ms := time.Millisecond
	_, run := pingRun(t, 2, 400*ms, false,
		Fault{At: 100 * ms, Op: Link, From: 1, To: 2, Rule: DelayRule(20*ms, 5*ms)},
		Fault{At: 300 * ms, Op: Heal})
	lo, hi := time.Hour, time.Duration(0)
	var prev logs.Event
	for _, f := range fates(run)[[2]int{1, 2}] {
		at := arrival(f)
		if len(f.recvs) != 1 {
			if at < 390*ms {
				t.Errorf("%s arriving at %v: %d recvs", f.send.Msg.ID, at, len(f.recvs))
			}
			continue
		}
		r := f.recvs[0]
		if r.TS < prev.TS || (prev.Msg != nil && msgSeq(r.Msg.ID) < msgSeq(prev.Msg.ID)) {
			t.Errorf("%s received at %v after %s at %v: the link reordered", r.Msg.ID, r.TS-DefaultBase, prev.Msg.ID, prev.TS-DefaultBase)
		}
		prev = r
		held := time.Duration(r.TS-DefaultBase) - at
		if at >= 100*ms && at < 300*ms {
			lo, hi = min(lo, held), max(hi, held)
			if held < 15*ms || held > 25*ms {
				t.Errorf("%s arriving at %v held %v, want 20ms±5ms", r.Msg.ID, at, held)
			}
		}
	}
	// The link's order lifts a short draw to the delivery before it, so the shortest seen is a
	// little over 15ms.
	if lo > 18*ms || hi < 24*ms {
		t.Errorf("delays spread over %v..%v only, want most of 15ms..25ms", lo, hi)
	}
}

func TestLinkReorderDeliversEverythingOutOfOrder(t *testing.T) {
	ms := time.Millisecond
	_, run := pingRun(t, 2, 300*ms, false, Fault{At: 0, Op: Link, From: 1, To: 2, Rule: ReorderRule()})
	inversions, received := 0, 0
	var last uint64
	for _, e := range run.Nodes[2].Events {
		if e.Ev != logs.EvRecv || e.From != 1 {
			continue
		}
		received++
		if seq := msgSeq(e.Msg.ID); seq < last {
			inversions++
		} else {
			last = seq
		}
	}
	for _, f := range fates(run)[[2]int{1, 2}] {
		if len(f.drops) > 0 || len(f.recvs) > 1 {
			t.Fatalf("%s: %d drops, %d recvs under a reorder rule", f.send.Msg.ID, len(f.drops), len(f.recvs))
		}
		if len(f.recvs) == 1 {
			if held := time.Duration(f.recvs[0].TS-f.send.TS) - ms; held < 0 || held > 20*ms {
				t.Errorf("%s held %v, want 0..20ms", f.send.Msg.ID, held)
			}
		}
	}
	if received < 250 || inversions < received/10 {
		t.Errorf("%d messages received, %d overtaken: want most of 300 received, many overtaken", received, inversions)
	}
}

func TestLinkLossAndDuplicationRates(t *testing.T) {
	const n = 2000
	s, run := pingRun(t, 3, n*time.Millisecond, false,
		Fault{At: 0, Op: Link, From: 1, To: 2, Rule: LossRule(10)},
		Fault{At: 0, Op: Link, From: 1, To: 3, Rule: DupRule(5)})
	byLink := fates(run)
	lost, dups, sent := 0, 0, 0
	for _, f := range byLink[[2]int{1, 2}] {
		if arrival(f) >= n*time.Millisecond {
			continue
		}
		sent++
		if len(f.drops) == 1 {
			lost++
			if f.drops[0].Reason != "loss 10%: at 0s link 1->2 loss 10%" {
				t.Fatalf("reason %q", f.drops[0].Reason)
			}
		}
	}
	for _, f := range byLink[[2]int{1, 3}] {
		if len(f.recvs) == 2 {
			dups++
			if f.recvs[0].Msg.ID != f.recvs[1].Msg.ID || f.recvs[1].From != 1 {
				t.Fatalf("duplicate %+v", f.recvs)
			}
		}
	}
	// Three standard deviations either way for n = 2000: ±2% for 10%, ±1.5% for 5%.
	if r := float64(lost) / float64(sent); r < 0.08 || r > 0.12 {
		t.Errorf("lost %d of %d (%.3f), want 10%% ± 2%%", lost, sent, r)
	}
	if r := float64(dups) / float64(sent); r < 0.035 || r > 0.065 {
		t.Errorf("duplicated %d of %d (%.3f), want 5%% ± 1.5%%", dups, sent, r)
	}
	if got := s.Dropped("ping"); got != lost {
		t.Errorf("Dropped(ping) = %d, the log has %d", got, lost)
	}
	if v := logs.Check(run, logs.Options{}); !v.Properties[3].OK {
		t.Errorf("integrity with duplicates: %s", v.Properties[3].Detail)
	}
}

func TestLinkRulesOfAKindReplaceEachOther(t *testing.T) {
	ms := time.Millisecond
	_, run := pingRun(t, 2, 300*ms, false,
		Fault{At: 0, Op: Link, From: 1, To: 2, Rule: LossRule(100)},
		Fault{At: 0, Op: Link, From: 1, To: 2, Rule: DelayRule(10*ms, 0)},
		Fault{At: 100 * ms, Op: Link, From: 1, To: 2, Rule: LossRule(0)})
	for _, f := range fates(run)[[2]int{1, 2}] {
		at := arrival(f)
		switch {
		case at < 100*ms:
			if len(f.drops) != 1 || f.drops[0].Reason != "loss 100%: at 0s link 1->2 loss 100%; at 0s link 1->2 delay 10ms" {
				t.Fatalf("%s arriving at %v: %+v", f.send.Msg.ID, at, f.drops)
			}
		case at < 280*ms:
			if len(f.recvs) != 1 || time.Duration(f.recvs[0].TS-f.send.TS) != 11*ms {
				t.Fatalf("%s arriving at %v: recvs %+v, want one 10ms after its arrival", f.send.Msg.ID, at, f.recvs)
			}
		}
	}
}

func TestPausedNodeJudgesItsBacklogWhenItResumes(t *testing.T) {
	ms := time.Millisecond
	_, run := pingRun(t, 3, 300*ms, false,
		Fault{At: 100 * ms, Op: Pause, Node: 2, For: 100 * ms},
		Fault{At: 150 * ms, Op: Partition, Groups: [][]int{{1}, {2, 3}}})
	// What reached node 2 from 1 while it was stopped (from 100ms) is read at its resume (200ms),
	// under the partition then in force: dropped, like what arrives afterwards.
	checkBlocked(t, run, 300*ms, func(from, to int, at time.Duration) string {
		if (from == 1) != (to == 1) && (at >= 150*ms || (to == 2 && at >= 100*ms)) {
			return "drop: at 150ms partition 1|2-3"
		}
		return ""
	})
}

func TestHeldMessagesDieWithTheirReceiver(t *testing.T) {
	ms := time.Millisecond
	s, run := pingRun(t, 2, 300*ms, false,
		Fault{At: 0, Op: Link, From: 1, To: 2, Rule: DelayRule(50*ms, 0)},
		Fault{At: 100 * ms, Op: Kill, Node: 2},
		Fault{At: 120 * ms, Op: Restart, Node: 2})
	for _, e := range run.Nodes[2].Events {
		if e.Ev == logs.EvRecv && e.From == 1 && e.Inc == 1 && e.TS-DefaultBase >= int64(100*ms) {
			t.Fatalf("node 2.1 received %s after it was killed", e.Msg.ID)
		}
	}
	if s.Dropped("ping") < 49 {
		t.Errorf("%d pings dropped, want the 49 or 50 the delay held when node 2 died", s.Dropped("ping"))
	}
	if v := logs.Check(run, logs.Options{}); !v.Properties[3].OK {
		t.Errorf("integrity: %s", v.Properties[3].Detail)
	}
}

func TestHeartbeatsMeetTheRules(t *testing.T) {
	cfg := DefaultConfig("bully", 3)
	cfg.Seed = 5
	cfg.Faults = []Fault{{At: time.Second, Op: Partition, Shape: "isolate", Node: TargetLeader}, {At: 2 * time.Second, Op: Heal}}
	s := mustNew(t, cfg)
	s.RunUntil(time.Second + 150*time.Millisecond)
	if s.Suspects(1, 3) || s.Suspects(2, 3) {
		t.Fatal("the leader is suspected before the timeout")
	}
	s.RunUntil(time.Second + 300*time.Millisecond)
	if !s.Suspects(1, 3) || !s.Suspects(2, 3) {
		t.Fatal("the isolated leader's heartbeats still arrive")
	}
	run := s.Run()
	for _, id := range []int{1, 2} {
		var st *logs.Stats
		for _, e := range run.Nodes[id].Events {
			if e.Ev == logs.EvStats {
				st = e.Stats
			}
		}
		if st == nil || st.HeartbeatDrops == 0 {
			t.Errorf("node %d's stats %+v: want heartbeat drops", id, st)
		}
	}
	v := logs.Check(run, logs.Options{})
	if !v.OK || len(v.Metrics.SplitBrain) != 1 || !slices.Equal(v.Metrics.SplitBrain[0].Leaders, []int{2, 3}) ||
		len(v.Metrics.Heals) != 1 || v.Metrics.Heals[0].ConvergedMS == nil || *v.Metrics.Heals[0].Leader != 3 {
		t.Errorf("verdict ok=%v split brain %+v heals %+v: %+v", v.OK, v.Metrics.SplitBrain, v.Metrics.Heals, v.Properties)
	}
}

func TestChaosRecordsOfNetworkFaults(t *testing.T) {
	cfg := DefaultConfig("bully", 5)
	cfg.Seed = 2
	ms := time.Millisecond
	cfg.Faults = []Fault{
		{At: 1000 * ms, Op: Pause, Node: 3},
		{At: 1100 * ms, Op: Kill, Node: 5},
		{At: 1200 * ms, Op: Partition, Shape: "halves"},
		{At: 1300 * ms, Op: Link, From: 1, To: 2, Rule: DelayRule(20*ms, 5*ms)},
		{At: 1400 * ms, Op: Partition, Shape: "majorities-ring"},
		{At: 1500 * ms, Op: Link, From: TargetHighest, To: TargetLeader, Rule: DupRule(5)},
		{At: 1600 * ms, Op: Heal},
		{At: 1700 * ms, Op: Resume, Node: 3},
	}
	run := mustNew(t, cfg).Run()
	ts := func(at time.Duration) int64 { return DefaultBase + int64(at) }
	acks := func(at time.Duration, ids ...string) map[string]int64 {
		m := map[string]int64{}
		for _, id := range ids {
			m[id] = ts(at)
		}
		return m
	}
	want := []logs.ChaosRecord{
		{TS: ts(1200 * ms), Op: "partition", Targets: []int{1, 2, 3, 4}, Step: "at 1.2s partition halves", At: int64(1200 * ms),
			Groups: [][]int{{1, 2}, {3, 4, 5}}, Acks: acks(1200*ms, "1", "2", "4")},
		{TS: ts(1300 * ms), Op: "link", Targets: []int{2}, Step: "at 1.3s link 1->2 delay 20ms±5ms", At: int64(1300 * ms),
			From: 1, To: 2, Rule: "delay 20ms±5ms", Acks: acks(1300*ms, "2")},
		{TS: ts(1400 * ms), Op: "partition", Targets: []int{1, 2, 3, 4}, Step: "at 1.4s partition majorities-ring", At: int64(1400 * ms),
			Reach: map[int][]int{1: {2, 5}, 2: {1, 3}, 3: {2, 4}, 4: {3, 5}, 5: {1, 4}}, Acks: acks(1400*ms, "1", "2", "4")},
		{TS: ts(1500 * ms), Op: "link", Targets: []int{}, Step: "at 1.5s link highest->leader dup 5%", At: int64(1500 * ms),
			Error: "link highest->leader dup 5% resolves to 4->4, a node to itself"},
		{TS: ts(1600 * ms), Op: "heal", Targets: []int{1, 2, 3, 4}, Step: "at 1.6s heal", At: int64(1600 * ms), Acks: acks(1600*ms, "1", "2", "4")},
	}
	var got []logs.ChaosRecord
	for _, c := range run.Chaos {
		if c.Op == "partition" || c.Op == "link" || c.Op == "heal" {
			got = append(got, c)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records:\n%s\nwant:\n%s", recs(got), recs(want))
	}
	if v := logs.Check(run, logs.Options{}); !v.OK {
		t.Errorf("verdict: %+v", v.Properties)
	}
}

func recs(rs []logs.ChaosRecord) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "\t%+v\n", r)
	}
	return b.String()
}

func TestNetworkFaultsReplayTheSame(t *testing.T) {
	cfg := DefaultConfig("chang-roberts", 6)
	cfg.Seed = 11
	cfg.Faults = []Fault{
		{At: 500 * time.Millisecond, Op: Partition, Shape: "random-halves"},
		{At: 600 * time.Millisecond, Op: Link, From: TargetRandom, To: TargetRandom, Rule: LossRule(30)},
		{At: 600 * time.Millisecond, Op: Link, From: 1, To: 2, Rule: DupRule(50)},
		{At: 600 * time.Millisecond, Op: Link, From: 2, To: 3, Rule: ReorderRule()},
		{At: 2 * time.Second, Op: Heal},
	}
	a, b := mustNew(t, cfg).Run(), mustNew(t, cfg).Run()
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of one configuration with network faults differ")
	}
}
