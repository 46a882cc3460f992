package node

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/wire"
)

// The clock rules, one step at a time: node 2, incarnation 1.
func TestVClockRules(t *testing.T) {
	var v vclock
	v.init(true, 2, 1)
	vc := func(ticks ...logs.Tick) logs.VClock { return ticks }
	steps := []struct {
		what string
		do   func()
		want logs.VClock
	}{
		{"start", v.tick, vc(logs.Tick{Node: 2, Inc: 1, N: 1})},
		{"recv from n1.1", func() { v.merge(wire.Clock{{Node: 1, Inc: 1, N: 3}}); v.tick() },
			vc(logs.Tick{Node: 1, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 1, N: 2})},
		{"recv from n3.2, who heard of n1.1 earlier and n5.1", func() {
			v.merge(wire.Clock{{Node: 1, Inc: 1, N: 2}, {Node: 3, Inc: 2, N: 4}, {Node: 5, Inc: 1, N: 1}})
			v.tick()
		}, vc(logs.Tick{Node: 1, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 1, N: 3}, logs.Tick{Node: 3, Inc: 2, N: 4}, logs.Tick{Node: 5, Inc: 1, N: 1})},
		{"a peer's word about this incarnation is ignored; about the last one it is not", func() {
			v.merge(wire.Clock{{Node: 2, Inc: 1, N: 99}, {Node: 2, Inc: 9, N: 1}})
		}, vc(logs.Tick{Node: 1, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 9, N: 1}, logs.Tick{Node: 3, Inc: 2, N: 4}, logs.Tick{Node: 5, Inc: 1, N: 1})},
		{"an empty clock changes nothing", func() { v.merge(nil) },
			vc(logs.Tick{Node: 1, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 1, N: 3}, logs.Tick{Node: 2, Inc: 9, N: 1}, logs.Tick{Node: 3, Inc: 2, N: 4}, logs.Tick{Node: 5, Inc: 1, N: 1})},
	}
	for _, s := range steps {
		s.do()
		if !reflect.DeepEqual(v.cur, s.want) {
			t.Fatalf("%s: %v, want %v", s.what, v.cur, s.want)
		}
	}
	w := v.wire()
	if len(w) != len(v.cur) || w[1] != (wire.Tick{Node: 2, Inc: 1, N: 3}) {
		t.Errorf("wire form %v", w)
	}

	// A node that starts with a peer's clock (its own entry comes after the peer's) and a peer
	// that claims to know this incarnation before it counted anything.
	v.init(true, 1, 2)
	v.merge(wire.Clock{{Node: 1, Inc: 2, N: 5}, {Node: 4, Inc: 1, N: 2}})
	v.tick()
	if want := vc(logs.Tick{Node: 1, Inc: 2, N: 1}, logs.Tick{Node: 4, Inc: 1, N: 2}); !reflect.DeepEqual(v.cur, want) {
		t.Errorf("got %v, want %v", v.cur, want)
	}

	var off vclock
	off.init(false, 1, 1)
	off.merge(wire.Clock{{Node: 2, Inc: 1, N: 1}})
	if off.wire() != nil || off.cur != nil {
		t.Error("a clock that is off keeps something")
	}
}

func TestClockOn(t *testing.T) {
	nodes := func(n int) []rundir.Node { return make([]rundir.Node, n) }
	for _, c := range []struct {
		opt   string
		n     int
		on    bool
		fails bool
	}{
		{"", 5, true, false}, {"", wire.AutoClockNodes, true, false}, {"", wire.AutoClockNodes + 1, false, false},
		{"on", 256, true, false}, {"off", 3, false, false}, {"yes", 3, false, true},
	} {
		cl := &rundir.Cluster{Nodes: nodes(c.n), Options: map[string]string{}}
		if c.opt != "" {
			cl.Options[wire.ClockOption] = c.opt
		}
		on, err := clockOn(cl)
		if on != c.on || (err != nil) != c.fails {
			t.Errorf("vclock %q, %d nodes: %v, %v", c.opt, c.n, on, err)
		}
	}
}

var electionMsg = election.Message{ID: "16.1.144", Kind: "election", Cand: 16, Round: 3}

// BenchmarkEventLine: what vector clocks add to the event log, per line: a recv logged at N = 16,
// 64 and 256 with the Lamport clock alone and with a full vector. line-bytes is the line's size.
func BenchmarkEventLine(b *testing.B) {
	for _, n := range []int{16, 64, 256} {
		var vc logs.VClock
		for id := 1; id <= n; id++ {
			vc = append(vc, logs.Tick{Node: id, Inc: 1, N: uint64(50 + id*2950/n)})
		}
		e := logs.Event{TS: 1763760000123456789, Node: 3, Inc: 1, LC: uint64(40 * n), Ev: logs.EvRecv, From: n,
			Msg: &electionMsg}
		for _, c := range []struct {
			name string
			vc   logs.VClock
		}{{"lamport", nil}, {"vclock", vc}} {
			e.VC = c.vc
			b.Run(fmt.Sprintf("N=%d/%s", n, c.name), func(b *testing.B) {
				var line []byte
				b.ReportAllocs()
				for b.Loop() {
					var err error
					if line, err = logs.AppendEvent(line[:0], &e); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(line)), "line-bytes")
			})
		}
	}
}

// The vc field as the node writes it and the readers read it (logs.VClock, tested here, where the
// lines are written).
func TestVClockJSON(t *testing.T) {
	vc := logs.VClock{{Node: 2, Inc: 1, N: 5}, {Node: 10, Inc: 1, N: 1}, {Node: 10, Inc: 2, N: 1<<53 - 1}}
	b, err := json.Marshal(logs.Event{TS: 1, Node: 2, Inc: 1, LC: 7, Ev: logs.EvLeader, Leader: 10, VC: vc})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":1,"node":2,"inc":1,"lc":7,"ev":"leader","leader":10,"vc":{"n2.1":5,"n10.1":1,"n10.2":9007199254740991}}`
	if string(b) != want {
		t.Fatalf("%s\nwant %s", b, want)
	}
	var e logs.Event
	if err := json.Unmarshal([]byte(`{"ev":"x","vc":{"n10.2":1,"n2.1":5,"n10.1":3}}`), &e); err != nil {
		t.Fatal(err)
	}
	if want := (logs.VClock{{Node: 2, Inc: 1, N: 5}, {Node: 10, Inc: 1, N: 3}, {Node: 10, Inc: 2, N: 1}}); !reflect.DeepEqual(e.VC, want) || e.VC.Get(10, 1) != 3 || e.VC.Get(3, 1) != 0 {
		t.Errorf("read %v, want it in host order", e.VC)
	}
	for _, bad := range []string{`{"n0.1":1}`, `{"n1":1}`, `{"1.1":1}`, `{"n01.1":1}`, `{"n+1.1":1}`, `{"n1.1.1":1}`,
		`{"n1.1":0}`, `{"n1.1":-1}`, `{"n1.1":1.5}`, `{"n1.1":9007199254740992}`, `{"n2147483648.1":1}`, `[1,1,1]`, `"n1.1"`} {
		var c logs.VClock
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s read as %v", bad, c)
		}
	}
	var none logs.Event
	if err := json.Unmarshal([]byte(`{"ev":"x","vc":null}`), &none); err != nil || none.VC != nil {
		t.Errorf("null: %v, %v", none.VC, err)
	}
}

// FuzzVClockJSON: whatever the reader accepts, it writes back as the same clock, in host order.
func FuzzVClockJSON(f *testing.F) {
	f.Add([]byte(`{"n1.1":3,"n2.1":5,"n10.2":1}`))
	f.Add([]byte(`{"n1.1":3,"n1.1":4}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c logs.VClock
		if json.Unmarshal(data, &c) != nil {
			return
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("%v does not encode: %v", c, err)
		}
		var again logs.VClock
		if err := json.Unmarshal(b, &again); err != nil || !reflect.DeepEqual(again, c) {
			t.Fatalf("%s -> %v -> %s -> %v, %v", data, c, b, again, err)
		}
		for i := 1; i < len(c); i++ {
			if c[i-1].Node > c[i].Node || c[i-1].Node == c[i].Node && c[i-1].Inc >= c[i].Inc {
				t.Fatalf("out of host order: %v", c)
			}
		}
	})
}
