package check

import (
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// algoPartial is a fake algorithm that does not promise uniqueness under a partial partition (as
// Bully declares: it hears of a higher node only from that node).
const algoPartial = "logstest-partial"

func init() {
	election.Register(election.Algorithm{Name: algoPartial, Topologies: []string{"mesh"},
		Kinds: []string{"election", "ok"}, Announce: []string{"coordinator"},
		Bound: func(n, _ int) (int, bool) { return n * n, true },
		Limits: func(map[string]string) []election.Limit {
			return []election.Limit{{Property: PropUniqueness, Faults: []string{PartialPartition}, Why: "test: nobody relays"}}
		}})
}

// uniquenessOf returns the verdict's uniqueness property.
func uniquenessOf(t *testing.T, v *Verdict) Property {
	t.Helper()
	for _, p := range v.Properties {
		if p.Name == PropUniqueness {
			return p
		}
	}
	t.Fatal("no uniqueness property")
	return Property{}
}

// A majorities-ring is one component in which 2 and 5 cannot hear each other: 2 crowning itself
// beside 5 is an overlap in one network, and a partial partition, which the algorithm declares. The
// same overlap under a clean partition (2 and 5 on one side) is a violation: a partial partition is
// not any partition. And one that outlasts the partial partition's heal by more than the grace is a
// violation too (seed 5135's Bully limit, bench chaos --sim --nemesis kill,pause,restart,partition).
func TestCheckPartialPartitionLimit(t *testing.T) {
	ring := logs.ChaosRecord{Op: logs.OpPartition, Step: "at 300ms partition majorities-ring",
		Reach: map[int][]int{1: {2, 5}, 2: {1, 3}, 3: {2, 4}, 4: {3, 5}, 5: {1, 4}}}
	halves := logs.ChaosRecord{Op: logs.OpPartition, Step: "at 300ms partition 1,2,5|3,4", Groups: [][]int{{1, 2, 5}, {3, 4}}}
	for _, c := range []struct {
		name      string
		part      logs.ChaosRecord
		followsAt float64 // when 2 follows 5 again
		limit     bool
	}{
		{"majorities-ring", ring, 810, true},
		{"clean partition", halves, 810, false},
		{"majorities-ring, overlap outlasts the heal", ring, 1100, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStory(algoPartial, 5)
			s.bully(2, []int{1, 2, 3, 4, 5})
			s.netRecord(300, c.part)
			s.leader(2, 500, 2)
			s.heal(800)
			s.leader(2, c.followsAt, 5)
			s.stop(1500)
			p := uniquenessOf(t, Check(s.run, Options{}))
			if p.OK {
				t.Fatalf("uniqueness passed: %s", p.Detail)
			}
			if got := p.Limit != ""; got != c.limit {
				t.Errorf("judged the algorithm's limit: %v, want %v: %s (limit %q)", got, c.limit, p.Detail, p.Limit)
			}
			if c.limit && !strings.Contains(p.Limit, "test: nobody relays") {
				t.Errorf("limit %q does not give the algorithm's reason", p.Limit)
			}
		})
	}
}

// A fault counts for an election that starts within the detector's timeout after it, even when an
// earlier election's agreement came in between (seeds 828, 846, 1076, bench chaos --sim -a lelann:
// after a heal the ring elected again when the first pair of neighbours trusted each other, and
// once more 30-50ms later when the second pair did; the second election was judged as if no fault
// had touched it). One that starts later than that is judged.
func TestCheckComplexityFaultNoticedLate(t *testing.T) {
	for _, c := range []struct {
		at     float64 // the start of the third election; the heal is at 500ms
		judged bool
	}{{530, false}, {750, true}} {
		s := cleanElection(algoTest) // bound 9
		s.run.Cluster.Timeout = rundir.Duration(200 * time.Millisecond)
		s.partition(300, []int{1, 2}, []int{3})
		s.bully(490, []int{1, 2, 3}) // agreed at 511, after the heal
		s.heal(500)
		s.send(1, 2, c.at, "election") // two messages over a clean election's 8
		s.send(1, 2, c.at, "election")
		s.bully(c.at, []int{1, 2, 3})
		s.stop(1500)
		v := Check(s.run, Options{})
		var p Property
		for _, q := range v.Properties {
			if q.Name == PropComplexity {
				p = q
			}
		}
		if p.OK == c.judged {
			t.Errorf("third election at %gms: complexity ok=%v, want %v: %s", c.at, p.OK, !c.judged, p.Detail)
		}
	}
}

// A link rule already in force when an election starts counts for it, though its record falls in
// an earlier election's window (seed 914, bench chaos --sim -a chang-roberts: a link loss from
// 272ms to 1193ms, and the election at 1048ms judged as one with no fault in its window).
func TestCheckComplexityFaultInForce(t *testing.T) {
	for _, c := range []struct {
		heal   float64
		judged bool
	}{{700, false}, {360, true}} {
		s := cleanElection(algoTest) // bound 9
		s.link(300, 3, 1, "loss 50%")
		s.bully(350, []int{1, 2, 3}) // agreed at 371
		if c.heal < 400 {
			s.heal(c.heal)
		}
		s.send(1, 2, 600, "election") // two messages over a clean election's 8
		s.send(1, 2, 600, "election")
		s.bully(600, []int{1, 2, 3})
		if c.heal >= 400 {
			s.heal(c.heal)
		}
		s.stop(1500)
		var p Property
		for _, q := range Check(s.run, Options{}).Properties {
			if q.Name == PropComplexity {
				p = q
			}
		}
		if p.OK == c.judged {
			t.Errorf("loss healed at %gms: complexity ok=%v, want %v: %s", c.heal, p.OK, !c.judged, p.Detail)
		}
	}
}

// A link delay that stretches a heartbeat gap to the timeout (heartbeat 50ms, timeout 200ms: 150ms
// or more) is the detector's declared limit (DetectorLimits), and it acts until the messages it
// held have arrived: an overlap that ends within the grace after the heal plus the delay is the
// limit (RSDP 864, bench chaos --sim). A short delay excuses nothing, and an overlap that outlasts
// the drain by more than the grace is a violation.
func TestCheckLinkDelayLimit(t *testing.T) {
	for _, c := range []struct {
		name      string
		rule      string
		followsAt float64 // when 2 follows 5 again (the heal is at 800ms)
		limit     bool
	}{
		{"delay near the timeout", "delay 150ms±38ms", 800 + 188 + 50, true},
		{"short delay", "delay 20ms±5ms", 810, false},
		{"overlap outlasts the drain", "delay 150ms±38ms", 800 + 188 + float64(testGrace/time.Millisecond) + 50, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStory("bully", 5)
			s.run.Cluster.Heartbeat, s.run.Cluster.Timeout = rundir.Duration(50*time.Millisecond), rundir.Duration(200*time.Millisecond)
			s.bully(2, []int{1, 2, 3, 4, 5})
			s.link(300, 5, 2, c.rule)
			s.leader(2, 500, 2)
			s.heal(800)
			s.leader(2, c.followsAt, 5)
			s.stop(1800)
			p := uniquenessOf(t, Check(s.run, Options{}))
			if p.OK {
				t.Fatalf("uniqueness passed: %s", p.Detail)
			}
			if got := p.Limit != ""; got != c.limit {
				t.Errorf("judged the algorithm's limit: %v, want %v: %s (limit %q)", got, c.limit, p.Detail, p.Limit)
			}
		})
	}
}

// A ring that lost a message to a lossy link recovers only when its stall timer fires: an agreement
// failure at the end is the ring algorithms' declared limit while the loss was in force less than
// the stall (max(3·T1, N·T/20)) plus T before the end, and a violation once the ring had that long
// (seeds 981 and 1029, bench chaos --sim, the rings).
func TestCheckRingAgreementLimit(t *testing.T) {
	for _, c := range []struct {
		name  string
		t1    time.Duration
		limit bool
	}{
		{"the stall timer had no time", 600 * time.Millisecond, true},   // recovery 1.8s + 200ms
		{"the stall timer had its time", 100 * time.Millisecond, false}, // recovery 300ms + 200ms
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStory("chang-roberts", 3)
			s.run.Cluster.ElectionTimeout, s.run.Cluster.CoordinatorTimeout = rundir.Duration(200*time.Millisecond), rundir.Duration(c.t1)
			s.leader(1, 50, 3)
			s.leader(3, 50, 3)
			s.link(300, 2, 3, "loss 70%")
			s.heal(800)
			s.stop(800 + float64(testSettle/time.Millisecond) + 100)
			var p Property
			for _, q := range Check(s.run, Options{}).Properties {
				if q.Name == PropAgreement {
					p = q
				}
			}
			if p.OK {
				t.Fatalf("agreement passed: %s", p.Detail)
			}
			if got := p.Limit != ""; got != c.limit {
				t.Errorf("judged the algorithm's limit: %v, want %v: %s (limit %q)", got, c.limit, p.Detail, p.Limit)
			}
		})
	}
}

// algoPaused declares RSDP's limit: an overlap that a peer's pause prolongs, up to a heartbeat + T
// + 25ms after the pause began.
const algoPaused = "logstest-paused"

func init() {
	election.Register(election.Algorithm{Name: algoPaused, Topologies: []string{"mesh"},
		Kinds: []string{"election", "ok"}, Announce: []string{"coordinator"},
		Bound: func(n, _ int) (int, bool) { return n * n, true },
		Limits: func(map[string]string) []election.Limit {
			return []election.Limit{{Property: PropUniqueness, Faults: []string{PausedPeer}, Why: "test: waits for the silent",
				Recovery: func(tm election.Timing) time.Duration { return tm.Heartbeat + tm.T + 25*time.Millisecond }}}
		}})
}

// A pause of a third node that prolongs a young overlap is the declared limit while the overlap
// ends within the Recovery after the pause; not when it lasts longer, nor when the overlap was
// already beyond the grace when the pause came (bench chaos --sim seeds 941389, 940252; seed
// 300017's 780ms overlap during a pause stays a violation).
func TestCheckPausedPeerLimit(t *testing.T) {
	for _, c := range []struct {
		name             string
		crown, pause     float64 // when 4 crowns itself beside 5; when 1 pauses
		followsAt, until float64 // when 4 follows 5 again; 1's resume
		limit            bool
	}{
		{"a pause as the overlap begins", 500, 500, 500 + 150, 900, true},
		{"a pause in a young overlap", 500, 550, 550 + 150, 900, true},
		{"the overlap outlasts the recovery", 500, 500, 500 + 600, 1200, false},
		{"the overlap was a violation before the pause", 500, 750, 750 + 100, 1000, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newStory(algoPaused, 5)
			s.run.Cluster.Heartbeat = rundir.Duration(50 * time.Millisecond)
			s.run.Cluster.ElectionTimeout = rundir.Duration(100 * time.Millisecond) // recovery 175ms
			s.bully(2, []int{1, 2, 3, 4, 5})
			s.leader(4, c.crown, 4)
			s.chaos(logs.OpPause, c.pause, 1)
			s.leader(4, c.followsAt, 5)
			s.chaos(logs.OpResume, c.until, 1)
			s.stop(1500)
			p := uniquenessOf(t, Check(s.run, Options{}))
			if p.OK {
				t.Fatalf("uniqueness passed: %s", p.Detail)
			}
			if got := p.Limit != ""; got != c.limit {
				t.Errorf("judged the algorithm's limit: %v, want %v: %s (limit %q)", got, c.limit, p.Detail, p.Limit)
			}
		})
	}
}
