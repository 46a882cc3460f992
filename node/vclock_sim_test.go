package node_test

// Vector clocks in the event logs of a simulated exchange (the clock's rules alone: vclock_test.go).

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/wire"
)

// The logs of an exchange (three nodes, three rounds of messages, so that later sends carry what
// earlier recvs taught) have a vc on every line that follows the rules and equals the clock the
// report computes from send/recv matching.
func TestVectorClocksInTheLogs(t *testing.T) {
	l := simRun(t, simCluster(3, time.Second, "chatter-count", "4", "chatter-batches", "3", "chatter-every", "15ms"), "")
	sent := map[string]logs.VClock{}
	for id := 1; id <= 3; id++ {
		own := uint64(0)
		for _, e := range l.events(id) {
			if e.VC == nil {
				t.Fatalf("node %d: a line without vc: %+v", id, e)
			}
			if e.Ev != logs.EvStats {
				own++
			}
			if got := e.VC.Get(id, 1); got != own {
				t.Fatalf("node %d: %s has own entry %d, want %d", id, e.Ev, got, own)
			}
			if e.Ev == logs.EvSend {
				sent[e.Msg.ID] = e.VC
			}
		}
	}
	recvs := 0
	for id := 1; id <= 3; id++ {
		for _, e := range l.events(id) {
			if e.Ev != logs.EvRecv {
				continue
			}
			s := sent[e.Msg.ID]
			for _, x := range s {
				if e.VC.Get(x.Node, x.Inc) < x.N {
					t.Fatalf("recv %s at node %d does not dominate its send: %v < %v", e.Msg.ID, id, e.VC, s)
				}
			}
			recvs++
		}
	}
	if recvs != 3*2*12 {
		t.Errorf("%d recvs, want %d", recvs, 3*2*12)
	}
	var buf bytes.Buffer
	st, err := report.WriteShiViz(&buf, l.Run)
	if err != nil {
		t.Fatal(err)
	}
	if st.ClockMismatches != 0 || st.LoggedClocks != st.Events || st.Messages != recvs {
		t.Fatalf("the logged clocks and the report's disagree: %+v", st)
	}
	// And the line says so in JSON: hosts by name, in order.
	evs := l.events(1)
	b, _ := json.Marshal(evs[len(evs)-1].VC)
	if !strings.HasPrefix(string(b), `{"n1.1":`) || !strings.Contains(string(b), `"n3.1":`) {
		t.Errorf("vc JSON %s", b)
	}
}

// With vector clocks off, no line has one, and every line has its Lamport clock.
func TestVectorClocksOff(t *testing.T) {
	l := simRun(t, simCluster(2, time.Second, wire.ClockOption, "off", "chatter-count", "3"), "")
	for id := 1; id <= 2; id++ {
		if r := l.count(id, logs.EvRecv, 3-id); r != 3 {
			t.Errorf("node %d: %d recvs, want 3", id, r)
		}
		for _, e := range l.events(id) {
			if e.VC != nil || e.LC == 0 {
				t.Fatalf("node %d: %+v", id, e)
			}
		}
	}
}
