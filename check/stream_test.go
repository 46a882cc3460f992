package check

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
)

// sameStreamed: a run directory is judged by CheckStream (its logs streamed) as by Check of what
// ReadRun reads (held in memory), or refused by both with the same error.
func sameStreamed(t testing.TB, dir string) {
	t.Helper()
	var mem, streamed string
	run, err := logs.ReadRun(dir)
	if err != nil {
		mem = "error: " + err.Error()
	} else {
		mem = verdictJSON(t, Check(run, Options{}))
	}
	s, err := logs.OpenStream(dir)
	if err == nil {
		var v *Verdict
		if v, err = CheckStream(s, Options{}); err == nil {
			streamed = verdictJSON(t, v)
		}
	}
	if err != nil {
		streamed = "error: " + err.Error()
	}
	if mem != streamed {
		t.Errorf("%s: streamed\n%s\nin memory\n%s", dir, streamed, mem)
	}
}

func verdictJSON(t testing.TB, v *Verdict) string {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fuzzStory makes a run out of fuzz bytes: a few nodes that elect, lead, send and receive (a recv
// perhaps before its send, a msg.id reused, an unknown event, a clock that steps back), under
// kills, restarts, pauses, partitions and link rules, and torn lines where a kill may leave one.
func fuzzStory(data []byte) (*story, map[int]map[int]string) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	n := 2 + next()%4
	s := newStory(algoTest, n)
	torn := map[int]map[int]string{}
	killedTorn := map[int]bool{}
	at := 2.0
	pending := []struct {
		to, from int
		m        electionMsg
	}{}
	for len(data) > 0 && at < 900 {
		at += float64(next()%40) / 4
		id := 1 + next()%n
		other := 1 + next()%n
		if !s.live[id] {
			// A dead node is restarted, or (a log the launcher does not explain) logs on, unless
			// its kill left a torn line, which must end its incarnation.
			switch {
			case next()%2 == 0:
				s.restart(id, at)
				delete(killedTorn, id)
				continue
			case killedTorn[id] || next()%2 == 0:
				continue
			}
		}
		switch next() % 16 {
		case 0, 1:
			s.elect(id, at)
		case 2, 3:
			s.leader(id, at, other)
		case 4, 5, 6:
			kinds := []string{"election", "ok", "coordinator", "probe"}
			m := s.send(id, other, at, kinds[next()%len(kinds)])
			pending = append(pending, struct {
				to, from int
				m        electionMsg
			}{other, id, m})
		case 7, 8:
			if len(pending) > 0 {
				p := pending[0]
				pending = pending[1:]
				skew := float64(next()%9) - 4 // a recv up to 4ms before its send
				from := p.from
				if next()%8 == 0 {
					from = other // a wrong sender
				}
				s.recv(p.to, from, at+skew, p.m)
			}
		case 9:
			if s.live[id] {
				if next()%2 == 0 {
					if torn[id] == nil {
						torn[id] = map[int]string{}
					}
					if k := len(s.run.Nodes[id].Events) - 1; k >= 0 {
						torn[id][k] = fmt.Sprintf(`{"ts":%d,"node":%d,"inc":%d,"lc":9`, ms(at), id, s.inc[id])
						killedTorn[id] = true
					}
				}
				s.kill(id, at)
			}
		case 10:
			s.chaos("pause", at, id)
			s.chaos("resume", at+float64(next()%300), id)
		case 11:
			s.partition(at, []int{1}, []int{2, 3, 4, 5}[:n-1])
		case 12:
			s.heal(at)
		case 13:
			rules := []string{"drop", "loss 10%", "delay 150ms", "dup 5%"}
			if id != other {
				s.link(at, id, other, rules[next()%len(rules)])
			}
		case 14:
			s.event(id, at, logs.Event{Ev: []string{"suspect", "trust", "hmm"}[next()%3], Peer: other})
		case 15:
			e := logs.Event{Ev: logs.EvElect}
			s.event(id, at-float64(next()%5), e) // a clock that steps back
		}
	}
	s.stop(max(at+10, 1000))
	return s, torn
}

// FuzzCheckStream: a made-up run directory is judged streamed as in memory.
func FuzzCheckStream(f *testing.F) {
	for _, seed := range []string{"", "\x03\x01\x02\x00\x01\x04", "\x05abcdefghijklmnopqrstuvwxyz0123456789", "\x02\x10\x01\x02\x09\x00\x00\x20\x02\x01\x07\x07\x03"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, torn := fuzzStory(data)
		dir := writeRun(t, s.run, torn)
		sameStreamed(t, dir)
		if run, err := logs.ReadRun(dir); err == nil {
			Check(run, Options{}).Print(io.Discard)
		}
	})
}
