package node_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// The node's detector, link rules, links and lifecycle are tested over the simulator (package sim):
// package node's own code, N incarnations of it in virtual time over the in-memory transport, the
// faults given as a chaos schedule, every check read from the events the nodes logged. The same
// seed gives the same run, so the checks are exact: no sleeps, no slack for a busy machine. This
// file is the harness; links_test.go, lifecycle_test.go and vclock_sim_test.go are the tests, and
// realworld_test.go the one test on real sockets.

// chatter is the test-only algorithm registered by chatter_test.go (package node, same test
// binary): numbered messages to its peers, heartbeats to all of them, and with chatter-watch a
// watch on all of them.
const chatter = "test-chatter"

// simSeed is the cluster seed of every simulated test run.
const simSeed = 42

// hop is every frame's and datagram's delay in the simulated network of these tests: fixed, so
// that a message's time from send to recv is exactly hop plus what the link rules add.
const hop = time.Millisecond

// The failure detector's timings in these tests.
const (
	heartbeat = 10 * time.Millisecond
	timeout   = 250 * time.Millisecond
)

// simCluster is a cluster of n chatter nodes, as the launcher resolves one (the simulator gives
// the nodes their addresses), that runs for d after its begin.
func simCluster(n int, d time.Duration, kv ...string) *rundir.Cluster {
	var ids []int
	for i := 1; i <= n; i++ {
		ids = append(ids, i)
	}
	c := &rundir.Cluster{
		Version: 1, ClusterID: "simtest", Algo: chatter, Topology: "mesh", Placement: "ascending",
		Ring: ids, InitiatorsSpec: "all", Initiators: ids,
		Heartbeat: rundir.Duration(heartbeat), Timeout: rundir.Duration(timeout),
		ElectionTimeout: rundir.Duration(100 * time.Millisecond), CoordinatorTimeout: rundir.Duration(300 * time.Millisecond),
		Duration: rundir.Duration(d), Seed: simSeed, Options: map[string]string{},
	}
	for _, id := range ids {
		c.Nodes = append(c.Nodes, rundir.Node{ID: id})
	}
	for i := 0; i+1 < len(kv); i += 2 {
		c.Options[kv[i]] = kv[i+1]
	}
	return c
}

// simRun runs c in the simulator under the chaos schedule sched and returns its logs. It makes the
// run twice and fails the test unless both are the same: every check is on a run that its seed
// decides.
func simRun(t *testing.T, c *rundir.Cluster, sched string) *simLogs {
	t.Helper()
	s, err := chaos.Parse(sched, len(c.Nodes))
	if err != nil {
		t.Fatal(err)
	}
	c.Chaos = sched
	var runs [2]*logs.Run
	for i := range runs {
		sc, err := sim.NewCluster(c, s, sim.Options{MinDelay: hop, MaxDelay: hop, StatsEvery: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if runs[i], err = sc.Run(); err != nil {
			t.Fatal(err)
		}
	}
	if !reflect.DeepEqual(runs[0], runs[1]) {
		t.Fatalf("seed %d, %q: two runs differ", c.Seed, sched)
	}
	for _, r := range runs[0].Chaos {
		if r.Error != "" {
			t.Fatalf("chaos step %q: %s", r.Step, r.Error)
		}
	}
	return &simLogs{t: t, Run: runs[0]}
}

// simLogs is a simulated run's logs, with the questions the tests ask of them.
type simLogs struct {
	t *testing.T
	*logs.Run
}

// events is node id's event log, every incarnation.
func (l *simLogs) events(id int) []logs.Event { return l.Nodes[id].Events }

// begin is the run's time origin (the launcher's begin record), in Unix ns.
func (l *simLogs) begin() int64 { return l.launched(logs.LaunchBegin) }

// launched is the time of the launcher's first record of kind ev, in Unix ns.
func (l *simLogs) launched(ev string) int64 {
	for _, r := range l.Launcher {
		if r.Ev == ev {
			return r.TS
		}
	}
	l.t.Fatalf("no launcher record %q", ev)
	return 0
}

// step is when the chaos step with this text was applied, in Unix ns.
func (l *simLogs) step(text string) int64 {
	for _, r := range l.Chaos {
		if r.Step == text {
			return r.TS
		}
	}
	l.t.Fatalf("no chaos record of %q (records: %+v)", text, l.Chaos)
	return 0
}

// sends maps the msg.id of every send of every node to its event.
func (l *simLogs) sends() map[string]logs.Event {
	out := map[string]logs.Event{}
	for _, nl := range l.Nodes {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && e.Msg != nil {
				out[e.Msg.ID] = e
			}
		}
	}
	return out
}

// count counts the events of kind ev at node id from (or, for suspect/trust, about) peer.
func (l *simLogs) count(id int, ev string, peer int) int {
	k := 0
	for _, e := range l.events(id) {
		if e.Ev == ev && (e.From == peer || e.Peer == peer) {
			k++
		}
	}
	return k
}

// finalStats returns the counters of node id's last stats event (written at its stop).
func (l *simLogs) finalStats(id int) logs.Stats {
	l.t.Helper()
	evs := l.events(id)
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Ev == logs.EvStats && evs[i].Stats != nil {
			return *evs[i].Stats
		}
	}
	l.t.Fatalf("node %d: no stats event", id)
	return logs.Stats{}
}

// opinions are node id's suspect and trust events about peer, in order.
func (l *simLogs) opinions(id, peer int) []logs.Event {
	var out []logs.Event
	for _, e := range l.events(id) {
		if e.Peer == peer && (e.Ev == logs.EvSuspect || e.Ev == logs.EvTrust) {
			out = append(out, e)
		}
	}
	return out
}

// show renders events for a failure message: kind, incarnation, reason and time since the begin.
func (l *simLogs) show(evs []logs.Event) string {
	var b []string
	for _, e := range evs {
		s := fmt.Sprintf("%s by %d.%d at %v", e.Ev, e.Node, e.Inc, time.Duration(e.TS-l.begin()))
		if e.Reason != "" {
			s += fmt.Sprintf(" (%s)", e.Reason)
		}
		b = append(b, s)
	}
	return "[" + strings.Join(b, "; ") + "]"
}

// first is the first event of node id's incarnation inc of kind ev (and, for suspect/trust,
// about peer), or fails the test.
func (l *simLogs) first(id, inc int, ev string, peer int) logs.Event {
	l.t.Helper()
	for _, e := range l.events(id) {
		if e.Inc == inc && e.Ev == ev && (peer == 0 || e.Peer == peer) {
			return e
		}
	}
	l.t.Fatalf("node %d.%d: no %s event (about %d)", id, inc, ev, peer)
	return logs.Event{}
}

// flows checks that every message incarnation finc of node from sent to node to from since (Unix
// ns) until the launcher began the stop was received by incarnation tinc of node to, and that
// there was at least one.
func (l *simLogs) flows(from, finc, to, tinc int, since int64) {
	l.t.Helper()
	got := map[string]bool{}
	for _, e := range l.events(to) {
		if e.Ev == logs.EvRecv && e.Inc == tinc && e.From == from {
			got[e.Msg.ID] = true
		}
	}
	k := 0
	for _, e := range l.events(from) {
		if e.Ev == logs.EvSend && e.Inc == finc && e.To == to && e.TS >= since && e.TS < l.launched(logs.LaunchStopping) {
			k++
			if !got[e.Msg.ID] {
				l.t.Errorf("%s, sent by %d.%d at %v, was not received by %d.%d", e.Msg.ID, from, finc, time.Duration(e.TS-l.begin()), to, tinc)
			}
		}
	}
	if k == 0 {
		l.t.Errorf("%d.%d sent nothing to %d after %v", from, finc, to, time.Duration(since-l.begin()))
	}
}
