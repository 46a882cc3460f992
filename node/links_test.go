package node_test

// The link rules (netem) as the chaos schedule sets them, in the simulator: what each fault does to
// the frames and heartbeats from a peer, read from the receivers' drop and recv events and stats.

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/node"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/wire"
)

// A partition 1-2|3: every frame across it is a drop event at its receiver, with the sender, the
// message and the step as reason, and none arrives; the heartbeats across it are dropped too
// (counted in hb_drops), and every heartbeat sent to a node is received or dropped by it.
func TestPartitionDropsFramesAndHeartbeats(t *testing.T) {
	const n = 20
	const why = "at 0s partition 1-2|3"
	l := simRun(t, simCluster(3, time.Second, "chatter-count", "20"), why)
	all := l.sends()
	for id := 1; id <= 3; id++ {
		for p := 1; p <= 3; p++ {
			if p == id {
				continue
			}
			cut := (id == 3) != (p == 3)
			recv, drop := l.count(id, logs.EvRecv, p), l.count(id, logs.EvDrop, p)
			if cut && (recv != 0 || drop != n) || !cut && (recv != n || drop != 0) {
				t.Errorf("node %d from %d: %d recv, %d drop; want %d %s", id, p, recv, drop, n, map[bool]string{true: "dropped", false: "received"}[cut])
			}
		}
		for _, e := range l.events(id) {
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
	}
	// Each node heartbeats both peers alike, and all stop at the same instant: half of what a
	// node sent went to each peer, and nothing is in flight when the stats are written.
	st := map[int]logs.Stats{1: l.finalStats(1), 2: l.finalStats(2), 3: l.finalStats(3)}
	toEach := func(p int) int64 { return st[p].HeartbeatsSent / 2 }
	for id, want := range map[int]logs.Stats{
		1: {HeartbeatsRecv: toEach(2), HeartbeatDrops: toEach(3), MsgsSent: 2 * n, MsgsRecv: n, Drops: n},
		2: {HeartbeatsRecv: toEach(1), HeartbeatDrops: toEach(3), MsgsSent: 2 * n, MsgsRecv: n, Drops: n},
		3: {HeartbeatsRecv: 0, HeartbeatDrops: toEach(1) + toEach(2), MsgsSent: 2 * n, MsgsRecv: 0, Drops: 2 * n},
	} {
		got := st[id]
		want.HeartbeatsSent = got.HeartbeatsSent
		if got.HeartbeatsSent == 0 || got != want {
			t.Errorf("node %d's stats: %+v, want %+v", id, got, want)
		}
	}
}

// A one-way block 1->2 drops 1's frames and heartbeats at 2; 2's reach 1.
func TestOneWayBlock(t *testing.T) {
	const n = 20
	const why = "at 0s link 1->2 drop"
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "20"), why)
	if r, d := l.count(1, logs.EvRecv, 2), l.count(1, logs.EvDrop, 2); r != n || d != 0 {
		t.Errorf("node 1 from 2: %d recv, %d drop; want %d recv", r, d, n)
	}
	if r, d := l.count(2, logs.EvRecv, 1), l.count(2, logs.EvDrop, 1); r != 0 || d != n {
		t.Errorf("node 2 from 1: %d recv, %d drop; want %d drop", r, d, n)
	}
	for _, e := range l.events(2) {
		if e.Ev == logs.EvDrop && e.Reason != "drop: "+why {
			t.Errorf("node 2: drop reason %q, want %q", e.Reason, "drop: "+why)
		}
	}
	s1, s2 := l.finalStats(1), l.finalStats(2)
	if s1.HeartbeatsRecv != s2.HeartbeatsSent || s1.HeartbeatDrops != 0 || s1.HeartbeatsRecv == 0 {
		t.Errorf("node 1 received %d of node 2's %d heartbeats, dropped %d; want all, none dropped", s1.HeartbeatsRecv, s2.HeartbeatsSent, s1.HeartbeatDrops)
	}
	if s2.HeartbeatsRecv != 0 || s2.HeartbeatDrops != s1.HeartbeatsSent {
		t.Errorf("node 2 received %d of node 1's %d heartbeats through the block, dropped %d; want all dropped", s2.HeartbeatsRecv, s1.HeartbeatsSent, s2.HeartbeatDrops)
	}
}

// Delay 30ms ± 10ms on a burst: every message is delivered within its bounds, in the link's order.
// Order costs spread: a message waits for the slowest before it, so a burst arrives near the top
// of the range (TestDelayJitterSpread shows the spread on spaced messages).
func TestDelayWithinBoundsInOrder(t *testing.T) {
	const n = 100
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "100", "chatter-to", "2"), "at 0s link 1->2 delay 30ms±10ms")
	lat, rounds := l.latencies(1, 2)
	if len(lat) != n {
		t.Fatalf("%d delivered, want %d", len(lat), n)
	}
	lo, hi := bounds(lat)
	t.Logf("delay 30ms±10ms: send->recv %v..%v (the network's %v included)", lo, hi, hop)
	if lo < hop+20*time.Millisecond || hi > hop+40*time.Millisecond {
		t.Errorf("send->recv in [%v, %v], want within [20ms, 40ms] + %v", lo, hi, hop)
	}
	if k := inversions(rounds); k != 0 {
		t.Errorf("%d messages overtook an earlier one without reorder", k)
	}
}

// Delay 10ms ± 5ms on messages spaced wider than the jitter: each keeps its own draw, so the
// delays cover the range.
func TestDelayJitterSpread(t *testing.T) {
	const n = 40
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "1", "chatter-to", "2", "chatter-batches", "40", "chatter-every", "12ms"),
		"at 0s link 1->2 delay 10ms±5ms")
	lat, rounds := l.latencies(1, 2)
	if len(lat) != n || inversions(rounds) != 0 {
		t.Fatalf("rounds %v: want 1..%d in order", rounds, n)
	}
	lo, hi := bounds(lat)
	t.Logf("delay 10ms±5ms, one message every 12ms: send->recv %v..%v (the network's %v included)", lo, hi, hop)
	if lo < hop+5*time.Millisecond || hi > hop+15*time.Millisecond {
		t.Errorf("send->recv in [%v, %v], want within [5ms, 15ms] + %v", lo, hi, hop)
	}
	if lo > hop+7*time.Millisecond || hi < hop+13*time.Millisecond {
		t.Errorf("send->recv in [%v, %v]: the jitter does not cover 5ms..15ms", lo, hi)
	}
	distinct := map[time.Duration]bool{}
	for _, d := range lat {
		distinct[d] = true
	}
	if len(distinct) < n/2 {
		t.Errorf("%d distinct delays among %d messages: each should draw its own", len(distinct), n)
	}
}

// With reorder, each message's delay is its own: they overtake each other, within the bounds. A
// reorder rule with no delay holds each message 0..2×10ms (node.reorderDelay).
func TestReorder(t *testing.T) {
	const n = 100
	for _, c := range []struct {
		step   string
		lo, hi time.Duration
	}{
		{"at 0s link 1->2 delay 20ms±15ms; at 0s link 1->2 reorder", 5 * time.Millisecond, 35 * time.Millisecond},
		{"at 0s link 1->2 reorder", 0, 20 * time.Millisecond},
	} {
		t.Run(c.step, func(t *testing.T) {
			l := simRun(t, simCluster(2, time.Second, "chatter-count", "100", "chatter-to", "2"), c.step)
			lat, rounds := l.latencies(1, 2)
			if len(lat) != n {
				t.Fatalf("%d delivered, want %d", len(lat), n)
			}
			lo, hi := bounds(lat)
			k := inversions(rounds)
			t.Logf("send->recv %v..%v, %d inversions among %d", lo, hi, k, n)
			if lo < hop+c.lo || hi > hop+c.hi {
				t.Errorf("send->recv in [%v, %v], want within [%v, %v] + %v", lo, hi, c.lo, c.hi, hop)
			}
			if k < n/10 {
				t.Errorf("only %d inversions among %d messages sent back to back", k, n)
			}
		})
	}
}

// A message already held by a delay is delivered after a heal, and a later message does not
// overtake it: it waits for the held one.
func TestDelayedMessagesSurviveHeal(t *testing.T) {
	const n = 10
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "10", "chatter-to", "2", "chatter-batches", "2", "chatter-every", "100ms"),
		"at 0s link 1->2 delay 200ms; at 30ms heal")
	lat, rounds := l.latencies(1, 2)
	if k := inversions(rounds); k != 0 || len(rounds) != 2*n {
		t.Fatalf("rounds %v: want 1..%d in order", rounds, 2*n)
	}
	for i, d := range lat {
		// the first batch keeps its 200ms; the second, sent 100ms later with no rule, is
		// delivered with the first.
		want := hop + 200*time.Millisecond
		if i >= n {
			want = hop + 100*time.Millisecond
		}
		if d != want {
			t.Errorf("message %d: send->recv %v, want %v", i+1, d, want)
		}
	}
}

// Loss 30% of 1000 messages: the count is within 25..35%, every one is a drop event naming the
// rule, and the rest are delivered once (simRun checks that the same seed loses the same ones).
func TestLossRate(t *testing.T) {
	const n = 1000
	const step = "at 0s link 1->2 loss 30%"
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "1000", "chatter-to", "2"), step)
	lost := map[int]bool{}
	for _, e := range l.events(2) {
		if e.Ev == logs.EvDrop {
			if e.Reason != "loss 30%: "+step || e.Msg == nil || e.From != 1 {
				t.Fatalf("drop %+v, want one of node 1's messages, for %q", e, "loss 30%: "+step)
			}
			lost[e.Msg.Round] = true
		}
	}
	t.Logf("loss 30%%: %d of %d lost", len(lost), n)
	if len(lost) < 250 || len(lost) > 350 {
		t.Errorf("%d of %d lost, want 250..350", len(lost), n)
	}
	if r := l.count(2, logs.EvRecv, 1); r+len(lost) != n {
		t.Errorf("%d delivered and %d lost of %d", r, len(lost), n)
	}
	if s := l.finalStats(2); s.Drops != int64(len(lost)) || s.MsgsRecv != int64(n-len(lost)) {
		t.Errorf("stats drops %d, msgs_recv %d; want %d, %d", s.Drops, s.MsgsRecv, len(lost), n-len(lost))
	}
}

// Dup 20% of 1000 messages: each is delivered once or twice, a copy as a second recv with the same
// msg.id, and 15..25% are copied.
func TestDupRate(t *testing.T) {
	const n = 1000
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "1000", "chatter-to", "2"), "at 0s link 1->2 dup 20%")
	per := map[string]int{}
	for _, e := range l.events(2) {
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
	if s := l.finalStats(2); s.MsgsRecv != int64(n+dups) || s.Drops != 0 {
		t.Errorf("stats msgs_recv %d, drops %d; want %d, 0", s.MsgsRecv, s.Drops, n+dups)
	}
}

// A blocked peer is suspected once its heartbeats stop, and heal restores delivery and trust: every
// frame that reaches node 2 before the heal is dropped, every one after it delivered, and node 1
// is suspected once, a timeout after node 2 began watching it, and trusted once, as soon as word
// from it gets through (a heartbeat may arrive at the heal's very instant, after it).
func TestHealRestoresDelivery(t *testing.T) {
	const block, heal = "at 0s link 1->2 drop", "at 1s heal"
	const every = 5 * time.Millisecond
	l := simRun(t, simCluster(2, 2*time.Second, "chatter-count", "2", "chatter-batches", "1000", "chatter-every", every.String(), "chatter-watch", "true"),
		block+"; "+heal)
	healed := l.step(heal)
	sent := l.sends()
	var drops, recvs int
	for _, e := range l.events(2) {
		if e.From != 1 || e.Msg == nil {
			continue
		}
		arrived := sent[e.Msg.ID].TS + int64(hop)
		switch {
		case e.Ev == logs.EvDrop && arrived < healed && e.Reason == "drop: "+block:
			drops++
		case e.Ev == logs.EvRecv && arrived > healed:
			recvs++
		case e.Ev == logs.EvDrop || e.Ev == logs.EvRecv:
			t.Errorf("%s of %s (%q), which arrived %v after the heal", e.Ev, e.Msg.ID, e.Reason, time.Duration(arrived-healed))
		}
	}
	if drops == 0 || recvs == 0 {
		t.Errorf("%d drops before the heal, %d recvs after it", drops, recvs)
	}
	seq := l.opinions(2, 1)
	// node 2 began one hop after the begin record, and watched node 1 from then
	if len(seq) != 2 || seq[0].Ev != logs.EvSuspect || seq[1].Ev != logs.EvTrust ||
		seq[0].Reason != "no heartbeat for "+timeout.String() || seq[0].TS != l.begin()+int64(hop+timeout) ||
		seq[1].TS < healed || seq[1].TS > healed+int64(every+hop) {
		t.Errorf("node 2 about node 1: %s; want a suspect for no heartbeat %v after the begin, and a trust within %v of the heal", l.show(seq), hop+timeout, every+hop)
	}
	if seq := l.opinions(1, 2); len(seq) != 0 {
		t.Errorf("node 1 about node 2: %s", l.show(seq))
	}
}

// latencies returns, for every recv at node to from node from, recv ts - send ts, in log order,
// and the rounds (the link's sequence numbers) in delivery order.
func (l *simLogs) latencies(from, to int) ([]time.Duration, []int) {
	l.t.Helper()
	s := l.sends()
	var lat []time.Duration
	var rounds []int
	for _, e := range l.events(to) {
		if e.Ev != logs.EvRecv || e.From != from {
			continue
		}
		se, ok := s[e.Msg.ID]
		if !ok {
			l.t.Fatalf("recv %s has no send", e.Msg.ID)
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

func bounds(lat []time.Duration) (lo, hi time.Duration) {
	lo = lat[0]
	for _, d := range lat {
		lo, hi = min(lo, d), max(hi, d)
	}
	return lo, hi
}

// A refused rule set names the bad value and leaves the rules in force as they were; an unknown
// control op is refused with the accepted ones listed. The chaos parser refuses such rules before
// they reach a node, so this asks one simulated node's control directly.
func TestRulesRefused(t *testing.T) {
	c := simCluster(2, time.Second)
	c.Secret = strings.Repeat("5a", 32)
	n, err := node.NewSimulated(c, node.SimOptions{
		ID: 2, Inc: 1, World: idleWorld{}, Sink: discard{},
		Transport: func(wire.Handler) wire.Transport { return downTransport{} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Control(wire.CtlRequest{Op: wire.CtlRules, Rules: []wire.LinkRule{{From: 1, Delay: int64(time.Millisecond)}}}); r.Error != "" || r.Rules != 1 {
		t.Fatalf("a valid rule: reply %+v", r)
	}
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
		{wire.LinkRule{From: 1, Delay: int64(2 * time.Hour)}, "at most 1h"},
	} {
		r := n.Control(wire.CtlRequest{Op: wire.CtlRules, Rules: []wire.LinkRule{{From: 1, Drop: true}, c.rule}})
		if !strings.Contains(r.Error, c.want) || !strings.Contains(r.Error, "link rule 2 of 2") || r.Rules != 1 {
			t.Errorf("%+v: reply %+v, want an error naming rule 2 and %q, and the 1 rule still in force", c.rule, r, c.want)
		}
	}
	if r := n.Control(wire.CtlRequest{Op: "shake"}); !strings.Contains(r.Error, wire.CtlRules) {
		t.Errorf("unknown op: %q, want the accepted ops listed", r.Error)
	}
}

// idleWorld is a world whose clock stands still and whose loop never runs: for a node that is only
// asked questions.
type idleWorld struct{}

func (idleWorld) Now() time.Time                         { return time.Unix(0, sim.DefaultBase) }
func (idleWorld) After(time.Duration, func()) node.Timer { return idleTimer{} }
func (idleWorld) Post(func())                            {}

type idleTimer struct{}

func (idleTimer) Stop() bool { return true }

// downTransport is a network whose links never come up.
type downTransport struct{}

func (downTransport) Send(int, *wire.Envelope) error         { return wire.ErrLinkDown }
func (downTransport) SendDatagram(int, *wire.Datagram) error { return wire.ErrLinkDown }
func (downTransport) Connect([]int)                          {}
func (downTransport) LinkUp(int) bool                        { return false }
func (downTransport) Close() error                           { return nil }

// discard is an event log that keeps nothing.
type discard struct{}

func (discard) Write(*logs.Event) error { return nil }
