package node

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// The link rules over real TCP: nodes run in this process with their real transport, rules go
// through the real control endpoint, and every check reads the nodes' event logs.

func opts(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// A partition 1-2|3: every frame across it is a drop event at its receiver, with the sender, the
// message and the step as reason, and none arrives; heartbeats across it are not received either.
func TestPartitionDropsFramesAndHeartbeats(t *testing.T) {
	const n = 20
	tn := newTestNet(t, 3, opts("chatter-count", "20"))
	why := "at 1s partition 1-2|3"
	tn.rules(1, wire.LinkRule{From: 3, Drop: true, Why: why})
	tn.rules(2, wire.LinkRule{From: 3, Drop: true, Why: why})
	tn.rules(3, wire.LinkRule{From: 1, Drop: true, Why: why}, wire.LinkRule{From: 2, Drop: true, Why: why})
	if r := tn.call(3, wire.CtlRequest{Op: wire.CtlStatus}); r.Rules != 2 {
		t.Errorf("node 3's status says %d rules, want 2", r.Rules)
	}
	tn.begin()
	for id := 1; id <= 3; id++ {
		for p := 1; p <= 3; p++ {
			if p != id {
				tn.settled(id, p, n)
			}
		}
	}
	time.Sleep(50 * time.Millisecond) // a few heartbeat rounds
	tn.stop()

	all := map[string]logs.Event{}
	for id := 1; id <= 3; id++ {
		for k, e := range sends(tn.events(id)) {
			all[k] = e
		}
	}
	for id := 1; id <= 3; id++ {
		evs := tn.events(id)
		for p := 1; p <= 3; p++ {
			if p == id {
				continue
			}
			cut := (id == 3) != (p == 3)
			recv, drop := count(evs, logs.EvRecv, p), count(evs, logs.EvDrop, p)
			if cut && (recv != 0 || drop != n) || !cut && (recv != n || drop != 0) {
				t.Errorf("node %d from %d: %d recv, %d drop; want %d %s", id, p, recv, drop, n, map[bool]string{true: "dropped", false: "received"}[cut])
			}
		}
		for _, e := range evs {
			if e.Ev != logs.EvDrop {
				continue
			}
			if e.Msg == nil {
				t.Errorf("node %d: a drop without its message: %+v", id, e)
				continue
			}
			s, ok := all[e.Msg.ID]
			if !ok || s.Node != e.From || s.To != id {
				t.Errorf("node %d: drop of %s from %d matches no send to it (%+v)", id, e.Msg.ID, e.From, s)
			}
			if e.Reason != "drop: "+why {
				t.Errorf("node %d: drop reason %q, want %q", id, e.Reason, "drop: "+why)
			}
		}
		st := finalStats(t, evs)
		if id == 3 && st.HeartbeatsRecv != 0 {
			t.Errorf("node 3 received %d heartbeats through the partition", st.HeartbeatsRecv)
		}
		if id != 3 && st.HeartbeatsRecv == 0 {
			t.Errorf("node %d received no heartbeat from its side", id)
		}
		if want := int64(n); id != 3 && st.Drops != want || id == 3 && st.Drops != 2*want {
			t.Errorf("node %d: stats drops %d", id, st.Drops)
		}
	}
}

// A one-way block 1->2 holds 1's frames and heartbeats at 2; 2's reach 1.
func TestOneWayBlock(t *testing.T) {
	const n = 20
	tn := newTestNet(t, 2, opts("chatter-count", "20"))
	tn.rules(2, wire.LinkRule{From: 1, Drop: true, Why: "at 1s link 1->2 drop"})
	tn.begin()
	tn.settled(1, 2, n)
	tn.settled(2, 1, n)
	time.Sleep(50 * time.Millisecond)
	tn.stop()
	e1, e2 := tn.events(1), tn.events(2)
	if r, d := count(e1, logs.EvRecv, 2), count(e1, logs.EvDrop, 2); r != n || d != 0 {
		t.Errorf("node 1 from 2: %d recv, %d drop; want %d recv", r, d, n)
	}
	if r, d := count(e2, logs.EvRecv, 1), count(e2, logs.EvDrop, 1); r != 0 || d != n {
		t.Errorf("node 2 from 1: %d recv, %d drop; want %d drop", r, d, n)
	}
	if s := finalStats(t, e1); s.HeartbeatsRecv == 0 {
		t.Error("node 1 received no heartbeat from 2")
	}
	if s := finalStats(t, e2); s.HeartbeatsRecv != 0 {
		t.Errorf("node 2 received %d heartbeats through the block", s.HeartbeatsRecv)
	}
}

// latencies returns, for every recv at node to from node from, recv ts - send ts, in log order, and
// the rounds (the link's sequence numbers) in delivery order.
func latencies(t *testing.T, tn *testNet, from, to int) ([]time.Duration, []int) {
	t.Helper()
	s := sends(tn.events(from))
	var lat []time.Duration
	var rounds []int
	for _, e := range tn.events(to) {
		if e.Ev != logs.EvRecv || e.From != from {
			continue
		}
		se, ok := s[e.Msg.ID]
		if !ok {
			t.Fatalf("recv %s has no send", e.Msg.ID)
		}
		lat = append(lat, time.Duration(e.TS-se.TS))
		rounds = append(rounds, e.Msg.Round)
	}
	return lat, rounds
}

func inversions(rounds []int) int {
	k := 0
	for i := 1; i < len(rounds); i++ {
		if rounds[i] < rounds[i-1] {
			k++
		}
	}
	return k
}

func bounds(lat []time.Duration) (lo, mean, hi time.Duration) {
	lo = lat[0]
	var sum time.Duration
	for _, d := range lat {
		lo, hi = min(lo, d), max(hi, d)
		sum += d
	}
	return lo, sum / time.Duration(len(lat)), hi
}

// slack is what the transport and two event loops may add to a delay under -race on a busy machine.
const slack = 75 * time.Millisecond

// Delay 30ms ± 10ms on a burst: every message is delivered within its bounds, in the link's order.
// Order costs spread: a message waits for the slowest before it, so a burst arrives near the top
// of the range (TestDelayJitterSpread shows the spread on spaced messages).
func TestDelayWithinBoundsInOrder(t *testing.T) {
	const n = 100
	tn := newTestNet(t, 2, opts("chatter-count", "100", "chatter-to", "2"))
	tn.rules(2, wire.LinkRule{From: 1, Delay: int64(30 * time.Millisecond), Jitter: int64(10 * time.Millisecond)})
	tn.begin()
	tn.settled(2, 1, n)
	tn.stop()
	lat, rounds := latencies(t, tn, 1, 2)
	if len(lat) != n {
		t.Fatalf("%d delivered, want %d", len(lat), n)
	}
	lo, mean, hi := bounds(lat)
	t.Logf("delay 30ms±10ms: send->recv min %v, mean %v, max %v", lo, mean, hi)
	if lo < 20*time.Millisecond || hi > 40*time.Millisecond+slack {
		t.Errorf("send->recv in [%v, %v], want within [20ms, 40ms + %v]", lo, hi, slack)
	}
	if k := inversions(rounds); k != 0 {
		t.Errorf("%d messages overtook an earlier one without reorder", k)
	}
}

// Delay 10ms ± 5ms on messages spaced wider than the jitter: each keeps its own draw, so the
// delays cover the range.
func TestDelayJitterSpread(t *testing.T) {
	const n = 40
	tn := newTestNet(t, 2, opts("chatter-count", "1", "chatter-to", "2", "chatter-batches", "40", "chatter-every", "12ms"))
	tn.rules(2, wire.LinkRule{From: 1, Delay: int64(10 * time.Millisecond), Jitter: int64(5 * time.Millisecond)})
	tn.begin()
	tn.settled(2, 1, n)
	tn.stop()
	lat, rounds := latencies(t, tn, 1, 2)
	if len(lat) != n || inversions(rounds) != 0 {
		t.Fatalf("rounds %v: want 1..%d in order", rounds, n)
	}
	lo, mean, hi := bounds(lat)
	t.Logf("delay 10ms±5ms, one message every 12ms: send->recv min %v, mean %v, max %v", lo, mean, hi)
	if lo < 5*time.Millisecond || hi > 15*time.Millisecond+slack {
		t.Errorf("send->recv in [%v, %v], want within [5ms, 15ms + %v]", lo, hi, slack)
	}
	if lo > 7*time.Millisecond || hi < 13*time.Millisecond {
		t.Errorf("send->recv in [%v, %v]: the jitter does not cover 5ms..15ms", lo, hi)
	}
}

// With reorder, each message's delay is its own: they overtake each other, within the bounds. A
// reorder rule with no delay holds each message 0..2×reorderDelay.
func TestReorder(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		name   string
		rule   wire.LinkRule
		lo, hi time.Duration
	}{
		{"delay 20ms±15ms reorder", wire.LinkRule{From: 1, Delay: int64(20 * time.Millisecond), Jitter: int64(15 * time.Millisecond), Reorder: true}, 5 * time.Millisecond, 35 * time.Millisecond},
		{"reorder alone", wire.LinkRule{From: 1, Reorder: true}, 0, 2 * reorderDelay},
	} {
		t.Run(c.name, func(t *testing.T) {
			tn := newTestNet(t, 2, opts("chatter-count", "100", "chatter-to", "2"))
			tn.rules(2, c.rule)
			tn.begin()
			tn.settled(2, 1, n)
			tn.stop()
			lat, rounds := latencies(t, tn, 1, 2)
			if len(lat) != n {
				t.Fatalf("%d delivered, want %d", len(lat), n)
			}
			lo, mean, hi := bounds(lat)
			k := inversions(rounds)
			t.Logf("%s: send->recv min %v, mean %v, max %v; %d of %d delivered after a later one", c.name, lo, mean, hi, k, n)
			if lo < c.lo || hi > c.hi+slack {
				t.Errorf("send->recv in [%v, %v], want within [%v, %v + %v]", lo, hi, c.lo, c.hi, slack)
			}
			if k < n/10 {
				t.Errorf("only %d inversions among %d messages sent back to back", k, n)
			}
		})
	}
}

// A message already held by a delay is delivered after a heal, and a later message does not
// overtake it.
func TestDelayedMessagesSurviveHeal(t *testing.T) {
	const n = 10
	tn := newTestNet(t, 2, opts("chatter-count", "10", "chatter-to", "2", "chatter-batches", "2", "chatter-every", "100ms"))
	tn.rules(2, wire.LinkRule{From: 1, Delay: int64(200 * time.Millisecond)})
	tn.begin()
	time.Sleep(30 * time.Millisecond)
	tn.rules(2) // heal while the first batch is held
	tn.settled(2, 1, 2*n)
	tn.stop()
	lat, rounds := latencies(t, tn, 1, 2)
	if k := inversions(rounds); k != 0 || len(rounds) != 2*n {
		t.Fatalf("rounds %v: want 1..%d in order", rounds, 2*n)
	}
	for i, d := range lat {
		switch {
		case i < n && d < 200*time.Millisecond:
			t.Errorf("message %d of the held batch arrived after %v, before its 200ms", i+1, d)
		case i >= n && d >= 200*time.Millisecond:
			t.Errorf("message %d, sent after the heal, took %v: the rule still held it", i+1, d)
		}
	}
	t.Logf("held batch: %v..%v; batch after heal: %v..%v (it waited for the held one)", lat[0], lat[n-1], lat[n], lat[2*n-1])
}

// Loss 30% of 1000 messages: the count is within 25..35%, every one is a drop event naming the
// rule, and the same seed loses the same messages again.
func TestLossRate(t *testing.T) {
	const n = 1000
	lost := func() map[int]bool {
		tn := newTestNet(t, 2, opts("chatter-count", "1000", "chatter-to", "2"))
		tn.rules(2, wire.LinkRule{From: 1, Loss: 0.3, Why: "at 2s link 1->2 loss 30%"})
		tn.begin()
		tn.settled(2, 1, n)
		tn.stop()
		out := map[int]bool{}
		for _, e := range tn.events(2) {
			if e.Ev == logs.EvDrop && e.Msg != nil {
				if e.Reason != "loss 30%: at 2s link 1->2 loss 30%" {
					t.Fatalf("drop reason %q", e.Reason)
				}
				out[e.Msg.Round] = true
			}
		}
		return out
	}
	a := lost()
	t.Logf("loss 30%%: %d of %d lost", len(a), n)
	if len(a) < 250 || len(a) > 350 {
		t.Errorf("%d of %d lost, want 250..350", len(a), n)
	}
	b := lost()
	if len(a) != len(b) {
		t.Fatalf("seed %d lost %d, then %d messages", testSeed, len(a), len(b))
	}
	for r := range a {
		if !b[r] {
			t.Fatalf("seed %d: message %d lost in the first run only", testSeed, r)
		}
	}
}

// Dup 20% of 1000 messages: each is delivered once or twice, a copy as a second recv with the same
// msg.id, and 15..25% are copied.
func TestDupRate(t *testing.T) {
	const n = 1000
	tn := newTestNet(t, 2, opts("chatter-count", "1000", "chatter-to", "2"))
	tn.rules(2, wire.LinkRule{From: 1, Dup: 0.2})
	tn.begin()
	tn.settled(2, 1, n)
	time.Sleep(20 * time.Millisecond) // the last copy
	tn.stop()
	evs := tn.events(2)
	per := map[string]int{}
	for _, e := range evs {
		if e.Ev == logs.EvRecv && e.From == 1 {
			per[e.Msg.ID]++
		}
	}
	dups := 0
	for id, k := range per {
		if k > 2 {
			t.Errorf("%s delivered %d times", id, k)
		}
		dups += k - 1
	}
	t.Logf("dup 20%%: %d of %d delivered twice", dups, n)
	if len(per) != n || dups < 150 || dups > 250 {
		t.Errorf("%d distinct messages delivered (want %d), %d twice (want 150..250)", len(per), n, dups)
	}
	if s := finalStats(t, evs); s.MsgsRecv != int64(n+dups) {
		t.Errorf("stats msgs_recv %d, want %d", s.MsgsRecv, n+dups)
	}
}

// A blocked peer is suspected once its heartbeats stop, and heal (an empty rule set) restores
// delivery and trust.
func TestHealRestoresDelivery(t *testing.T) {
	tn := newTestNet(t, 2, opts("chatter-count", "2", "chatter-batches", "1000", "chatter-every", "5ms", "chatter-watch", "true"))
	tn.rules(2, wire.LinkRule{From: 1, Drop: true, Why: "at 1s partition 1|2"})
	tn.begin()
	tn.waitFor(2, 5*time.Second, "suspicion of node 1", func(evs []logs.Event) bool { return count(evs, logs.EvSuspect, 1) > 0 })
	r := tn.call(2, wire.CtlRequest{Op: wire.CtlRules})
	if r.Error != "" || r.Rules != 0 {
		t.Fatalf("heal: reply %+v", r)
	}
	tn.waitFor(2, 5*time.Second, "20 messages and trust after heal", func(evs []logs.Event) bool {
		return count(evs, logs.EvRecv, 1) >= 20 && count(evs, logs.EvTrust, 1) > 0
	})
	tn.stop()
	evs := tn.events(2)
	firstRecv := -1
	for i, e := range evs {
		switch {
		case e.Ev == logs.EvRecv && e.From == 1 && firstRecv < 0:
			firstRecv = i
		case e.Ev == logs.EvDrop && e.From == 1 && firstRecv >= 0:
			t.Fatalf("a drop from node 1 after delivery resumed: %+v", e)
		case e.Ev == logs.EvSuspect && e.Peer == 1 && !strings.Contains(e.Reason, "no heartbeat"):
			t.Errorf("node 1 suspected for %q, want its heartbeats missing", e.Reason)
		}
	}
	if d := count(evs, logs.EvDrop, 1); d == 0 {
		t.Error("no drop before the heal")
	}
	for _, e := range tn.events(1) {
		if e.Ev == logs.EvSuspect || e.Ev == logs.EvTrust {
			t.Errorf("node 1: %+v", e)
		}
	}
}

// A refused rule set names the bad value and leaves the rules in force as they were.
func TestRulesRefused(t *testing.T) {
	tn := newTestNet(t, 2, nil)
	tn.rules(2, wire.LinkRule{From: 1, Delay: int64(time.Millisecond)})
	for _, c := range []struct {
		rule wire.LinkRule
		want string
	}{
		{wire.LinkRule{From: 2}, "own ID"},
		{wire.LinkRule{From: 7}, "node 7 is not a peer"},
		{wire.LinkRule{From: 1, Loss: 1.5}, "loss 1.5"},
		{wire.LinkRule{From: 1, Dup: -0.1}, "dup -0.1"},
		{wire.LinkRule{From: 1, Delay: -1}, "delay -1ns"},
		{wire.LinkRule{From: 1, Delay: int64(5 * time.Millisecond), Jitter: int64(20 * time.Millisecond)}, "jitter 20ms"},
	} {
		r := tn.call(2, wire.CtlRequest{Op: wire.CtlRules, Rules: []wire.LinkRule{{From: 1, Drop: true}, c.rule}})
		if !strings.Contains(r.Error, c.want) || r.Rules != 1 {
			t.Errorf("%+v: reply %+v, want an error naming %q and the 1 rule still in force", c.rule, r, c.want)
		}
	}
	if r := tn.call(2, wire.CtlRequest{Op: "shake"}); !strings.Contains(r.Error, wire.CtlRules) {
		t.Errorf("unknown op: %q, want the accepted ops listed", r.Error)
	}
}
