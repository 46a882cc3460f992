package logs

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

// AppendEvent writes exactly json.Marshal's bytes: for every event kind and field, zero and not,
// extreme numbers, and strings JSON writes as they are and strings it escapes. A failure prints
// the seed's event.
func TestAppendEventAsMarshal(t *testing.T) {
	strs := []string{"", "send", "recv", "election", "3.1.17", "link down: wire: link to node 5 broke: EOF",
		`a "quoted" word`, `back\slash`, "<html> & co", "tab\there", "é", "\u2028", "\xff", "nl\n", "~"}
	ints := []int{0, 1, -1, 7, 1000, math.MaxInt64, math.MinInt64}
	for seed := uint64(0); seed < 20000; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		pickS := func() string { return strs[rng.IntN(len(strs))] }
		pickI := func() int {
			if rng.IntN(2) == 0 {
				return 0
			}
			return ints[rng.IntN(len(ints))]
		}
		pickIs := func() []int {
			switch rng.IntN(3) {
			case 0:
				return nil
			case 1:
				return []int{}
			}
			out := make([]int, 1+rng.IntN(4))
			for i := range out {
				out[i] = ints[rng.IntN(len(ints))]
			}
			return out
		}
		e := &Event{TS: int64(pickI()), PT: int64(pickI()), Node: pickI(), Inc: pickI(), LC: rng.Uint64() >> rng.IntN(64),
			Ev: pickS(), Algo: pickS(), Peers: pickIs(), Pid: pickI(), To: pickI(), From: pickI(), Reason: pickS(),
			Peer: pickI(), Round: pickI(), Leader: pickI(), Pulse: pickI()}
		if rng.IntN(2) == 0 {
			e.Msg = &election.Message{ID: pickS(), Kind: pickS(), Cand: pickI(), Round: pickI(), Hops: pickI(), Dir: pickI(),
				Origin: pickI(), IDs: pickIs(), Phase: pickI()}
		}
		if rng.IntN(4) == 0 {
			e.Stats = &Stats{HeartbeatsSent: int64(pickI()), HeartbeatsRecv: int64(pickI()), MsgsSent: int64(pickI()),
				MsgsRecv: int64(pickI()), Drops: int64(pickI()), HeartbeatDrops: int64(pickI())}
		}
		switch rng.IntN(3) {
		case 0:
			e.VC = VClock{}
		case 1:
			e.VC = VClock{{Node: 1, Inc: 1, N: 3}, {Node: 10, Inc: 2, N: 1<<53 - 1}}
		}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendEvent([]byte("keep"), e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "keep"+string(want)+"\n" {
			t.Fatalf("seed %d: AppendEvent wrote\n%s\njson.Marshal writes\n%s", seed, got[4:], want)
		}
	}
}

// FuzzAppendEvent: any strings in a send's line, written as json.Marshal writes them.
func FuzzAppendEvent(f *testing.F) {
	f.Add("send", "3.1.17", "election", "")
	f.Add("drop", "1.1.1", "ok", "loss 10%: at 1s link 1->2 loss 10%")
	f.Add("x", "<", "\u2028", "\xff")
	f.Fuzz(func(t *testing.T, ev, id, kind, reason string) {
		e := &Event{TS: 1, Node: 1, Inc: 1, LC: 2, Ev: ev, To: 2, Reason: reason, Msg: &election.Message{ID: id, Kind: kind, Cand: 3}}
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendEvent(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want)+"\n" {
			t.Fatalf("AppendEvent wrote\n%s\njson.Marshal writes\n%s", got, want)
		}
	})
}
