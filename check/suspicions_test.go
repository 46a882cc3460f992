package check

import (
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// A suspicion is false only of a node that ran, had begun and was reachable for the whole timeout
// before it: not of a killed node, a paused one, one a partition or a link rule hid, nor one just
// begun (counted apart).
func TestCheckFalseSuspicions(t *testing.T) {
	s := newStory(algoTest, 5)
	s.run.Cluster.Timeout = rundir.Duration(100 * time.Millisecond)
	s.bully(2, []int{1, 2, 3, 4, 5})
	suspect := func(by, peer int, at float64) {
		s.event(by, at, logs.Event{Ev: logs.EvSuspect, Peer: peer, Reason: "no heartbeat"})
	}
	suspect(1, 2, 300) // 2 runs: false
	s.kill(3, 400)
	suspect(1, 3, 420) // killed: true
	s.chaos(logs.OpPause, 500, 4)
	suspect(1, 4, 600) // paused: true
	s.chaos(logs.OpResume, 700, 4)
	suspect(2, 4, 750) // resumed 50ms before, paused within the timeout: true
	s.partition(800, []int{1, 2}, []int{4, 5})
	suspect(1, 5, 850) // cut off by the partition: true
	s.heal(900)
	suspect(2, 5, 950) // the partition was in force within the timeout: true
	suspect(5, 1, 1050)
	s.stop(1100)
	sp := Check(s.run, Options{}).Metrics.Suspicions
	if sp.Total != 7 || sp.False != 2 || sp.Early != 0 {
		t.Errorf("suspicions %+v: want 7 in all, 2 false (1 of 2 at 300ms, 5 of 1 at 1050ms)", sp)
	}
	if len(sp.Examples) != 2 || sp.Examples[0].By != 1 || sp.Examples[0].Peer != 2 || sp.Examples[1].AtMS != 1050 {
		t.Errorf("examples %+v: want 1→2 at 300ms, then 5→1 at 1050ms", sp.Examples)
	}

	// a node begun late: the suspicion is early, not false
	s = newStory(algoTest, 3)
	s.run.Cluster.Timeout = rundir.Duration(100 * time.Millisecond)
	s.run.Nodes[3].Events[0].TS = ms(250) // its begin reached it late
	s.bully(260, []int{1, 2, 3})
	suspect(1, 3, 300)
	s.stop(1000)
	if sp := Check(s.run, Options{}).Metrics.Suspicions; sp.Total != 1 || sp.Early != 1 || sp.False != 0 {
		t.Errorf("a node begun 50ms before its suspicion: %+v, want 1 early, 0 false", sp)
	}
}
