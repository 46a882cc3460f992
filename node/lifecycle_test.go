package node_test

// The failure detector, the links and the lifecycle (kill, pause, orderly stop, restart as a new
// incarnation) in the simulator, the faults given as chaos steps.

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// lifecycle is the cluster of the lifecycle tests: three nodes that watch each other and send each
// peer one message every 100ms for the whole run.
func lifecycle(t *testing.T, sched string) *simLogs {
	return simRun(t, simCluster(3, 3*time.Second, "chatter-count", "1", "chatter-batches", "1000", "chatter-every", "100ms", "chatter-watch", "true"), sched)
}

// lastOf is the last of evs, or no event.
func lastOf(evs []logs.Event) logs.Event {
	if len(evs) == 0 {
		return logs.Event{}
	}
	return evs[len(evs)-1]
}

// A killed peer's connections reset one hop after it dies: its peers suspect it then, for its link,
// long before its heartbeats are missed, and trust it no more while it is dead.
func TestKilledPeerSuspectedAtLinkReset(t *testing.T) {
	const kill = "at 1s kill 3"
	l := lifecycle(t, kill)
	killed := l.step(kill)
	for _, id := range []int{1, 2} {
		seq := l.opinions(id, 3)
		if len(seq) == 0 || seq[0].Ev != logs.EvSuspect || seq[0].TS != killed+int64(hop) || !strings.HasPrefix(seq[0].Reason, "link down: ") {
			t.Errorf("node %d about node 3: %s; want a suspect for its link %v after the kill", id, l.show(seq), hop)
			continue
		}
		for _, e := range seq[1:] {
			// a send to the dead peer fails and reminds the machine (detector.remind)
			if e.Ev != logs.EvSuspect || !strings.HasPrefix(e.Reason, "send failed: ") {
				t.Errorf("node %d about node 3: %s after its suspicion for its link", id, l.show([]logs.Event{e}))
			}
		}
		if s := l.opinions(id, 3-id); len(s) != 0 {
			t.Errorf("node %d about node %d: %s", id, 3-id, l.show(s))
		}
	}
	for _, e := range l.events(3) {
		if e.TS > killed {
			t.Errorf("node 3 wrote after its kill: %s", l.show([]logs.Event{e}))
		}
	}
}

// A paused peer keeps its sockets: it is suspected a timeout after its last heartbeat, and trusted
// as soon as it resumes and its held heartbeat arrives: one suspect, one trust, nothing in between.
func TestPausedPeerSuspectedAfterTimeoutTrustedOnResume(t *testing.T) {
	const pause = "at 1s pause 3 for 1s"
	l := lifecycle(t, pause)
	paused := l.step(pause)
	resumed := paused + int64(time.Second)
	for _, id := range []int{1, 2} {
		seq := l.opinions(id, 3)
		if len(seq) != 2 || seq[0].Ev != logs.EvSuspect || seq[1].Ev != logs.EvTrust ||
			seq[0].Reason != "no heartbeat for "+timeout.String() ||
			seq[0].TS <= paused+int64(timeout-heartbeat) || seq[0].TS > paused+int64(timeout+hop) ||
			seq[1].TS < resumed || seq[1].TS > resumed+int64(heartbeat+hop) {
			t.Errorf("node %d about node 3: %s; want a suspect (no heartbeat) %v..%v after the pause and a trust within %v of the resume",
				id, l.show(seq), timeout-heartbeat, timeout+hop, heartbeat+hop)
		}
	}
	// A paused process writes nothing; the frames sent to it wait in its sockets and are read when
	// it resumes.
	for _, e := range l.events(3) {
		if e.TS > paused && e.TS < resumed {
			t.Errorf("node 3 wrote while paused: %s", l.show([]logs.Event{e}))
		}
	}
	l.flows(1, 1, 3, 1, paused)
	l.flows(2, 1, 3, 1, paused)
}

// A killed node restarted is a new incarnation: its peers dial it again, trust it once it speaks,
// and what they send it from then on reaches it, as what it sends reaches them.
func TestRestartedPeerRedialled(t *testing.T) {
	l := lifecycle(t, "at 1s kill 3; at 1500ms restart 3")
	start := l.first(3, 2, logs.EvStart, 0)
	l.rejoined(1, 1, start)
	l.rejoined(2, 1, start)
}

// rejoined checks that incarnation inc of node id, which suspected the node that restarted as
// start.Inc, trusts it last, within a heartbeat (and a hop) of its start, and that the messages
// each sends the other from then on arrive: the new incarnation's at once, id's once it has heard
// of the new incarnation and dialled it.
func (l *simLogs) rejoined(id, inc int, start logs.Event) {
	l.t.Helper()
	seq := l.opinions(id, start.Node)
	if last := lastOf(seq); len(seq) < 2 || last.Ev != logs.EvTrust || last.TS < start.TS || last.TS > start.TS+int64(heartbeat+hop) {
		l.t.Errorf("node %d.%d about node %d: %s; want it trusted within %v of %d.%d's start", id, inc, start.Node, l.show(seq), heartbeat+hop, start.Node, start.Inc)
	}
	l.flows(id, inc, start.Node, start.Inc, start.TS+int64(heartbeat+2*hop))
	l.flows(start.Node, start.Inc, id, inc, start.TS)
}

// The regression of a restarted incarnation that never dials again a peer that comes back: nodes 2
// and 3 are killed, 3 is restarted while 2 is dead (its dial to 2 is refused and backs off), then
// 2 is restarted. 3.2 trusts 2.2 as soon as it speaks and dials it then, and messages flow both
// ways between the two new incarnations.
func TestRestartedIncarnationRedialsPeerThatComesBack(t *testing.T) {
	l := lifecycle(t, "at 1s kill 2; at 1s kill 3; at 1200ms restart 3; at 1800ms restart 2")
	start2, start3 := l.first(2, 2, logs.EvStart, 0), l.first(3, 2, logs.EvStart, 0)
	if start3.TS >= start2.TS {
		t.Fatalf("3.2 started at %v, after 2.2 at %v", time.Duration(start3.TS-l.begin()), time.Duration(start2.TS-l.begin()))
	}
	if seq := l.opinions(3, 2); len(seq) == 0 || seq[0].Ev != logs.EvSuspect || seq[0].TS > start3.TS {
		t.Errorf("node 3.2 about node 2: %s; want it suspected when 3.2 begins", l.show(seq))
	}
	l.rejoined(3, 2, start2)
	l.rejoined(1, 1, start2)
}

// The orderly stop (SIGTERM): the node's last events are its stats and its stop, a linger after
// the signal, the stats count exactly what the incarnation logged, and the process exits with 0
// at once; its peers then see its links reset.
func TestOrderlyStop(t *testing.T) {
	const stop = "at 1s stop 2"
	l := lifecycle(t, stop)
	told := l.step(stop)
	evs := l.events(2)
	if len(evs) < 2 {
		t.Fatalf("node 2 wrote %d events", len(evs))
	}
	st, end := evs[len(evs)-2], evs[len(evs)-1]
	if st.Ev != logs.EvStats || end.Ev != logs.EvStop || end.Reason != "terminated" || st.TS != end.TS ||
		end.TS <= told || end.TS > told+int64(100*time.Millisecond) {
		t.Fatalf("node 2 ends with %s; want stats and stop (terminated) within 100ms of the signal", l.show(evs[len(evs)-2:]))
	}
	var want logs.Stats
	for _, e := range evs {
		switch e.Ev {
		case logs.EvSend:
			want.MsgsSent++
		case logs.EvRecv:
			want.MsgsRecv++
		case logs.EvDrop:
			want.Drops++
		}
	}
	got := *st.Stats
	want.HeartbeatsSent, want.HeartbeatsRecv = got.HeartbeatsSent, got.HeartbeatsRecv
	if got != want || got.HeartbeatsSent == 0 || got.HeartbeatsRecv == 0 {
		t.Errorf("node 2's last stats %+v, want %+v", got, want)
	}
	var exited *logs.LaunchRecord
	for i, r := range l.Launcher {
		if r.Ev == logs.LaunchExited && r.Node == 2 {
			exited = &l.Launcher[i]
		}
	}
	if exited == nil || exited.Inc != 1 || exited.Code == nil || *exited.Code != 0 || exited.Signal != "" ||
		exited.TS < end.TS || exited.TS > end.TS+int64(5*time.Millisecond) {
		t.Errorf("node 2's exit: %+v; want code 0 within 5ms of its stop event", exited)
	}
	for _, id := range []int{1, 3} {
		seq := l.opinions(id, 2)
		if len(seq) == 0 || seq[0].Ev != logs.EvSuspect || !strings.HasPrefix(seq[0].Reason, "link down: ") ||
			seq[0].TS != exited.TS+int64(hop) {
			t.Errorf("node %d about node 2: %s; want a suspect for its link %v after it exited", id, l.show(seq), hop)
		}
	}
}

// A restart after an orderly stop is a new incarnation: a new process (its own pid) that begins
// again, counts its clocks and messages from zero, and is trusted and reached by its peers.
func TestRestartAfterStop(t *testing.T) {
	l := lifecycle(t, "at 1s stop 2; at 1500ms restart 2")
	stop1, start2 := l.first(2, 1, logs.EvStop, 0), l.first(2, 2, logs.EvStart, 0)
	start1 := l.first(2, 1, logs.EvStart, 0)
	if start2.TS <= stop1.TS || start2.Pid == start1.Pid || start2.LC != 1 || start2.Algo != chatter {
		t.Errorf("node 2: %+v after %+v; want a start of a new process, its clock at 1", start2, stop1)
	}
	for _, e := range l.events(2) {
		if e.Inc == 2 && e.Msg != nil && e.Ev == logs.EvSend && !strings.HasPrefix(e.Msg.ID, "2.2.") {
			t.Errorf("2.2 sent %s", e.Msg.ID)
		}
		if e.Inc == 1 && e.TS > stop1.TS {
			t.Errorf("2.1 wrote after its stop: %s", l.show([]logs.Event{e}))
		}
	}
	if s := l.first(2, 2, logs.EvSend, 0); s.Msg.ID != "2.2.1" {
		t.Errorf("2.2's first message is %s, want 2.2.1", s.Msg.ID)
	}
	l.rejoined(1, 1, start2)
	l.rejoined(3, 1, start2)
}

// TestResumedNodeKeepsTrustingLivePeers: a paused node, when it resumes, runs what it was held from
// in order: its failure detector's check timer comes before the heartbeats that queued up during
// the pause (a real process does the same whenever its timer goroutine wins the race against its
// socket readers after SIGCONT). The detector must allow for its own stall and not suspect peers
// that never failed (it used to: "no heartbeat for 250ms" and a trust at the same instant, and Bully
// was told InSuspect).
func TestResumedNodeKeepsTrustingLivePeers(t *testing.T) {
	l := lifecycle(t, "at 1s pause 3 for 1s")
	for _, p := range []int{1, 2} {
		if seq := l.opinions(3, p); len(seq) != 0 {
			t.Errorf("node 3 about node %d, which never stopped: %s", p, l.show(seq))
		}
	}
}
