package node_test

// The third stage's link rules in the simulator, read from the receivers' and senders' events:
// corrupt (refused by the decoder, the link reset), rate, slowclose and reset.

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// corrupt 30% on 1->2: each damaged frame is a drop at 2 naming the checksum and the link reset,
// never a recv; node 1 sees its link to 2 break (drops of what was in flight, a suspicion of 2)
// and dials again; every frame 2 does receive is one that 1 sent, unchanged.
func TestCorruptRefusedAndLinkReset(t *testing.T) {
	const step = "at 0s link 1->2 corrupt 30%"
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "1", "chatter-batches", "40", "chatter-every", "20ms", "chatter-to", "2"), step)
	sent := l.sends()
	var damaged, recv int
	for _, e := range l.events(2) {
		switch {
		case e.Ev == logs.EvDrop && e.From == 1 && strings.HasPrefix(e.Reason, "bad frame from node 1: corrupt 30%: "+step):
			damaged++
			if !strings.Contains(e.Reason, "checksum mismatch") || !strings.HasSuffix(e.Reason, "; link reset") {
				t.Errorf("drop reason %q: want the checksum and the link reset named", e.Reason)
			}
		case e.Ev == logs.EvRecv && e.From == 1:
			recv++
			s, ok := sent[e.Msg.ID]
			if !ok || s.Msg.Round != e.Msg.Round || s.Msg.Cand != e.Msg.Cand || s.Msg.Kind != e.Msg.Kind {
				t.Errorf("recv %+v matches no send unchanged (%+v)", e.Msg, s.Msg)
			}
		}
	}
	broke := 0
	for _, e := range l.events(1) {
		if e.Ev == logs.EvDrop && e.To == 2 && strings.HasPrefix(e.Reason, "link broke") {
			broke++
		}
	}
	t.Logf("%d damaged and refused, %d received, %d lost at node 1 with the link", damaged, recv, broke)
	if damaged == 0 || recv == 0 {
		t.Fatalf("%d damaged frames refused, %d received: want both", damaged, recv)
	}
	if seq := l.opinions(1, 2); len(seq) == 0 || seq[0].Ev != logs.EvSuspect || !strings.Contains(seq[0].Reason, "link down") {
		t.Errorf("node 1 about node 2: %s; want a link-down suspicion after the reset", l.show(seq))
	}
	if st := l.finalStats(2); st.HeartbeatDrops == 0 {
		t.Errorf("node 2 dropped no heartbeat of node 1 under corrupt 30%%: %+v", st)
	}
}

// rate 2000 bytes/s on a burst of 20 frames: each waits for the ones before it, so frame k arrives
// about k × its size / 2000 s after the burst, in order.
func TestRateQueuesFrames(t *testing.T) {
	const n = 20
	l := simRun(t, simCluster(2, 2*time.Second, "chatter-count", "20", "chatter-to", "2"), "at 0s link 1->2 rate 2000")
	lat, rounds := l.latencies(1, 2)
	if len(lat) != n {
		t.Fatalf("%d delivered, want %d", len(lat), n)
	}
	if k := inversions(rounds); k != 0 {
		t.Errorf("%d frames overtook an earlier one", k)
	}
	// A chatter frame is some 50 bytes: 25 ms each at 2000 bytes/s.
	per := (lat[n-1] - lat[0]) / (n - 1)
	t.Logf("rate 2000: first %v, last %v, %v a frame", lat[0], lat[n-1], per)
	if per < 15*time.Millisecond || per > 40*time.Millisecond {
		t.Errorf("%v between frames, want about 25ms (a ~50-byte frame at 2000 bytes/s)", per)
	}
	for i := 1; i < n; i++ {
		if lat[i] <= lat[i-1] {
			t.Errorf("frame %d waited %v, no longer than frame %d's %v", i+1, lat[i], i, lat[i-1])
		}
	}
}

// slowclose 500ms on 2->1: node 2 dies, and node 1 learns that its connection to 2 closed 500ms
// late — its link-down suspicion comes then, not one hop after the kill (the heartbeat timeout,
// 250ms, is made longer here so that it does not come first).
func TestSlowCloseHoldsTheNews(t *testing.T) {
	c := simCluster(2, 2*time.Second, "chatter-count", "1", "chatter-batches", "100", "chatter-every", "10ms")
	c.Timeout = c.Timeout * 8
	l := simRun(t, c, "at 0s link 2->1 slowclose 500ms; at 300ms kill 2")
	killed := l.step("at 300ms kill 2")
	seq := l.opinions(1, 2)
	if len(seq) == 0 || seq[0].Ev != logs.EvSuspect || !strings.Contains(seq[0].Reason, "link down") {
		t.Fatalf("node 1 about node 2: %s; want a link-down suspicion", l.show(seq))
	}
	after := time.Duration(seq[0].TS - killed)
	if after < 500*time.Millisecond || after > 500*time.Millisecond+5*hop {
		t.Errorf("node 1 suspected node 2 %v after the kill, want 500ms (the slow close) + a hop or two", after)
	}
	var failed int
	for _, e := range l.events(1) {
		if e.Ev == logs.EvDrop && e.To == 2 && e.TS > killed && e.TS < seq[0].TS {
			failed++
		}
	}
	if failed == 0 {
		t.Errorf("node 1 sent nothing into the closed connection before it knew")
	}
}

// reset after 200ms on 1->2: node 2 resets node 1's connection at the first frame 200ms after the
// rule, and again 200ms after each reset; the frame is lost, node 1 sees its link break and dials
// again, and the frames between resets arrive.
func TestResetPeer(t *testing.T) {
	const step = "at 0s link 1->2 reset after 200ms"
	l := simRun(t, simCluster(2, time.Second, "chatter-count", "1", "chatter-batches", "90", "chatter-every", "10ms", "chatter-to", "2"), step)
	var resets []int64
	recv := 0
	for _, e := range l.events(2) {
		switch {
		case e.Ev == logs.EvDrop && e.From == 1 && e.Reason == "reset: "+step+"; link reset":
			resets = append(resets, e.TS)
		case e.Ev == logs.EvRecv && e.From == 1:
			recv++
		}
	}
	t.Logf("%d resets, %d frames received", len(resets), recv)
	if len(resets) < 3 || recv < 40 {
		t.Fatalf("%d resets and %d frames received: want a reset every 200ms and the frames between", len(resets), recv)
	}
	for i := 1; i < len(resets); i++ {
		if gap := time.Duration(resets[i] - resets[i-1]); gap < 200*time.Millisecond {
			t.Errorf("resets %d and %d %v apart, want 200ms or more", i, i+1, gap)
		}
	}
}
