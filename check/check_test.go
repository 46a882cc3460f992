package check

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files in testdata/")

// summary renders the parts of a verdict the tests pin down, one fact a line.
func summary(v *Verdict) string {
	var b strings.Builder
	leader := "null"
	if v.Leader != nil {
		leader = fmt.Sprint(*v.Leader)
	}
	fmt.Fprintf(&b, "ok=%v leader=%s\n", v.OK, leader)
	for _, p := range v.Properties {
		mark := "PASS"
		if !p.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s: %s\n", mark, p.Name, p.Detail)
	}
	for _, f := range v.Metrics.Failovers {
		if f.MS == nil {
			fmt.Fprintf(&b, "failover %s: never\n", f.Fault)
		} else {
			fmt.Fprintf(&b, "failover %s: %gms to %d\n", f.Fault, *f.MS, *f.Leader)
		}
	}
	for _, e := range v.Metrics.Elections {
		end, l, bound := "open", "null", "null"
		if e.EndNS != nil {
			end = fmtDur(*e.EndNS - base)
		}
		if e.Leader != nil {
			l = fmt.Sprint(*e.Leader)
		}
		if e.Bound != nil {
			bound = fmt.Sprint(*e.Bound)
		}
		fmt.Fprintf(&b, "election %s..%s %d+%d/%s initiators=%d faults=%d leader=%s %v\n",
			fmtDur(e.StartNS-base), end, e.Messages, e.Announce, bound, e.Initiators, e.Faults, l, e.ByKind)
	}
	for _, o := range v.Metrics.Overlaps {
		fmt.Fprintf(&b, "overlap at %gms for %gms nodes %v beyond=%v\n", o.AtMS, o.MS, o.Nodes, o.BeyondGrace)
	}
	for _, w := range v.Metrics.SplitBrain {
		fmt.Fprintf(&b, "split-brain window at %gms for %gms leaders %v\n", w.AtMS, w.MS, w.Leaders)
	}
	for _, h := range v.Metrics.Heals {
		if h.ConvergedMS == nil {
			fmt.Fprintf(&b, "heal at %gms: never converged\n", h.AtMS)
		} else {
			fmt.Fprintf(&b, "heal at %gms: converged after %gms on %d\n", h.AtMS, *h.ConvergedMS, *h.Leader)
		}
	}
	if v.Metrics.PartitionedMS > 0 {
		fmt.Fprintf(&b, "partitioned=%gms\n", v.Metrics.PartitionedMS)
	}
	fmt.Fprintf(&b, "split=%gms messages=%d drops=%d\n", v.Metrics.SplitBrainMS, v.Metrics.MessagesTotal, v.Metrics.DropsTotal)
	for _, w := range v.Warnings {
		fmt.Fprintf(&b, "warning: %s\n", w)
	}
	return b.String()
}

func expect(t *testing.T, v *Verdict, want string) {
	t.Helper()
	got := summary(v)
	want = strings.TrimLeft(want, "\n")
	if got != want {
		t.Errorf("verdict:\n%s\nwant:\n%s", got, want)
	}
}

// golden compares got with testdata/name, or rewrites it with -rewrite.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *rewrite {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -rewrite to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -rewrite to accept):\n%s", path, got)
	}
}

// cleanElection: three nodes elect 3 at 2..23ms; the run stops at 1000ms.
func cleanElection(algo string) *story {
	s := newStory(algo, 3)
	s.bully(2, []int{1, 2, 3})
	return s
}

const cleanProps = `
PASS agreement: at the end (1000ms) all 3 live nodes follow 3, the highest live ID
PASS uniqueness: no two live nodes believed in themselves at the same time
PASS termination: 3 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 8 recvs matched a send; 3 processes spawned, all exited
`

func TestCheckCleanElection(t *testing.T) {
	s := cleanElection(algoTest)
	s.stop(1000)
	v := Check(s.run, Options{})
	expect(t, v, `ok=true leader=3`+cleanProps+`PASS complexity: 1 election within the bound (8/9)
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
split=0ms messages=8 drops=0
`)
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "check/clean.json", append(b, '\n'))
	var out bytes.Buffer
	v.Print(&out)
	golden(t, "check/clean.txt", out.Bytes())
}

func TestCheckKillLeaderFailover(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(3, 300)
	s.bully(500, []int{1, 2}, 3)
	s.stop(1000)
	expect(t, Check(s.run, Options{}), `
ok=true leader=2
PASS agreement: at the end (1000ms) all 2 live nodes follow 2, the highest live ID
PASS uniqueness: no two live nodes believed in themselves at the same time
PASS termination: 5 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 11 recvs matched a send; 3 processes spawned, all exited
PASS complexity: 2 elections within the bound (8/9, 5/9)
failover kill 3 at 300ms: 221ms to 2
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 500ms..521ms 4+1/9 initiators=2 faults=1 leader=2 map[coordinator:1 election:3 ok:1]
split=0ms messages=13 drops=0
`)
}

func TestCheckPausedLeaderTakesOverAgain(t *testing.T) {
	s := cleanElection(algoTest)
	s.chaos("pause", 300, 3)
	s.bully(500, []int{1, 2}, 3) // 3 is paused: the elections sent to it are never received
	s.chaos("resume", 700, 3)
	for _, id := range []int{1, 2} { // once resumed, 3 announces itself again
		m := s.send(3, id, 720, "coordinator")
		s.recv(id, 3, 721, m)
		s.leader(id, 721, 3)
	}
	s.stop(1500)
	expect(t, Check(s.run, Options{}), `
ok=true leader=3
PASS agreement: at the end (1500ms) all 3 live nodes follow 3, the highest live ID
PASS uniqueness: 1 overlap of self-believing nodes, all within the grace of 100ms (longest: nodes 2,3 for 21ms from 700ms)
PASS termination: 5 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 13 recvs matched a send; 3 processes spawned, all exited
PASS complexity: 3 elections within the bound (8/9, 5/9, 2/9)
failover pause 3 at 300ms: 221ms to 2
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 500ms..521ms 4+1/9 initiators=2 faults=1 leader=2 map[coordinator:1 election:3 ok:1]
election 720ms..721ms 0+2/9 initiators=1 faults=1 leader=3 map[coordinator:2]
overlap at 700ms for 21ms nodes [2 3] beyond=false
split=0ms messages=15 drops=0
`)
}

func TestCheckRestartedNodeWins(t *testing.T) {
	s := cleanElection(algoTest)
	s.kill(3, 300)
	s.bully(500, []int{1, 2}, 3)
	s.restart(3, 700)
	s.bully(706, []int{3}) // 3 crowns itself at 726; 2 believes in itself until 727
	for _, id := range []int{1, 2} {
		m := s.send(3, id, 726, "coordinator")
		s.recv(id, 3, 727, m)
		s.leader(id, 727, 3)
	}
	s.stop(1500)
	expect(t, Check(s.run, Options{}), `
ok=true leader=3
PASS agreement: at the end (1500ms) all 3 live nodes follow 3, the highest live ID
PASS uniqueness: 1 overlap of self-believing nodes, all within the grace of 100ms (longest: nodes 2,3 for 1ms from 726ms)
PASS termination: 6 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 13 recvs matched a send; 4 processes spawned, all exited
PASS complexity: 3 elections within the bound (8/9, 5/9, 2/9)
failover kill 3 at 300ms: 221ms to 2
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 500ms..521ms 4+1/9 initiators=2 faults=1 leader=2 map[coordinator:1 election:3 ok:1]
election 706ms..727ms 0+2/9 initiators=1 faults=1 leader=3 map[coordinator:2]
overlap at 726ms for 1ms nodes [2 3] beyond=false
split=0ms messages=15 drops=0
`)
}

func TestCheckTwoSelfBelieversAtTheEnd(t *testing.T) {
	s := cleanElection(algoTest)
	s.leader(2, 950, 2) // doctored: 2 crowns itself shortly before the end
	s.stop(1000)
	expect(t, Check(s.run, Options{}), `
ok=false leader=null
FAIL agreement: at the end (1000ms) the live nodes do not agree on a live leader: 1→3 2→2 3→3
PASS uniqueness: 1 overlap of self-believing nodes, all within the grace of 100ms (longest: nodes 2,3 for 50ms from 950ms)
PASS termination: 3 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 8 recvs matched a send; 3 processes spawned, all exited
PASS complexity: 2 elections within the bound (8/9, 0/9)
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 950ms..open 0+0/9 initiators=1 faults=0 leader=null map[]
overlap at 950ms for 50ms nodes [2 3] beyond=false
split=0ms messages=8 drops=0
`)
}

func TestCheckOverlapLongerThanGrace(t *testing.T) {
	s := cleanElection(algoTest)
	s.leader(2, 400, 2)
	s.leader(2, 600, 3)
	s.stop(1000)
	expect(t, Check(s.run, Options{}), `
ok=false leader=3
PASS agreement: at the end (1000ms) all 3 live nodes follow 3, the highest live ID
FAIL uniqueness: 1 overlap longer than the grace of 100ms: nodes 2,3 for 200ms from 400ms
PASS termination: 3 elects ended in a leader within the bound of 1s (slowest: 21ms of running time)
PASS integrity: 8 recvs matched a send; 3 processes spawned, all exited
PASS complexity: 2 elections within the bound (8/9, 0/9)
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 400ms..600ms 0+0/9 initiators=1 faults=0 leader=3 map[]
overlap at 400ms for 200ms nodes [2 3] beyond=true
split=100ms messages=8 drops=0
`)
}

func TestCheckElectNeverAnswered(t *testing.T) {
	s := cleanElection(algoTest)
	s.elect(1, 200) // and nothing more until it is killed
	s.kill(1, 1300)
	s.stop(2000)
	expect(t, Check(s.run, Options{}), `
ok=false leader=3
PASS agreement: at the end (2000ms) all 2 live nodes follow 3, the highest live ID
PASS uniqueness: no two live nodes believed in themselves at the same time
FAIL termination: 1 elect beyond the bound of 1s: node 1: elect at 200ms (nodes/1.jsonl event 9) had no leader after 1100ms of running time before it died
PASS integrity: 8 recvs matched a send; 3 processes spawned, all exited
PASS complexity: 2 elections within the bound (8/9, 0/9)
election 2ms..23ms 6+2/9 initiators=3 faults=0 leader=3 map[coordinator:2 election:3 ok:3]
election 200ms..1300ms 0+0/9 initiators=1 faults=1 leader=3 map[]
split=0ms messages=8 drops=0
`)
}
