package launcher

import (
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/agent"
	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/wire"
)

// Each composed rule becomes netem's options with the language's meaning.
func TestNetemOfRules(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name string
		r    wire.LinkRule
		want agent.NetemRule
	}{
		{"drop", wire.LinkRule{Drop: true, Delay: 5 * ms}, agent.NetemRule{Loss: 1}},
		{"delay uniform", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms}, agent.NetemRule{Delay: 50 * ms, Jitter: 10 * ms}},
		{"delay normal", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "normal"}, agent.NetemRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "normal"}},
		{"loss", wire.LinkRule{Loss: 0.1}, agent.NetemRule{Loss: 0.1}},
		// with chance c the last fate, else p: begins (1-c)p, ends (1-c)(1-p)
		{"loss corr", wire.LinkRule{Loss: 0.1, LossCorr: 0.5}, agent.NetemRule{BurstBegin: 0.05, BurstEnd: 0.45}},
		{"loss corr 100%", wire.LinkRule{Loss: 0.1, LossCorr: 1}, agent.NetemRule{}},
		{"burst", wire.LinkRule{BurstBegin: 0.01, BurstEnd: 0.25}, agent.NetemRule{BurstBegin: 0.01, BurstEnd: 0.25}},
		// reorder spreads the delay uniformly in 0..2d as the nodes' netem does (10ms without one)
		{"reorder", wire.LinkRule{Reorder: true}, agent.NetemRule{Delay: 10 * ms, Jitter: 10 * ms}},
		{"reorder with a delay", wire.LinkRule{Reorder: true, Delay: 30 * ms}, agent.NetemRule{Delay: 30 * ms, Jitter: 30 * ms}},
		{"dup corrupt rate", wire.LinkRule{Dup: 0.05, Corrupt: 0.01, Rate: 2000}, agent.NetemRule{Dup: 0.05, Corrupt: 0.01, Rate: 2000}},
	} {
		got, err := netemOf(tc.r)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if math.Abs(got.BurstBegin-tc.want.BurstBegin) < 1e-12 && math.Abs(got.BurstEnd-tc.want.BurstEnd) < 1e-12 {
			got.BurstBegin, got.BurstEnd = tc.want.BurstBegin, tc.want.BurstEnd
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	for _, r := range []wire.LinkRule{{SlowClose: ms, Why: "w"}, {Reset: true}, {Delay: ms, Jitter: ms, DelayCorr: 0.2}, {Loss: 0.1, BurstBegin: 0.1, BurstEnd: 0.1}} {
		if _, err := netemOf(r); err == nil {
			t.Errorf("%+v: netem took it", r)
		}
	}
}

// Rules are keyed by the receiver; netem's go to the sender, by its mark and the receiver's address.
func TestNetemBySender(t *testing.T) {
	addr := map[int]*net.UDPAddr{2: {IP: net.IPv4(10, 77, 0, 12), Port: 4002}, 3: {IP: net.IPv4(10, 77, 0, 13), Port: 4003}}
	by, err := netemBySender(map[int][]wire.LinkRule{2: {{From: 1, Loss: 0.2}}, 3: {{From: 1, Drop: true}, {From: 2, SlowClose: 1, Why: "at 1s link 2->3 slowclose 1ns"}}}, addr)
	if err == nil || !strings.Contains(err.Error(), "2->3: at 1s link 2->3 slowclose 1ns: netem has no slowclose") {
		t.Errorf("err = %v", err)
	}
	want := []agent.NetemRule{
		{Mark: 0x4c4c0001, Dst: "10.77.0.12", Port: 4002, Loss: 0.2, Note: "1->2"},
		{Mark: 0x4c4c0001, Dst: "10.77.0.13", Port: 4003, Loss: 1, Note: "1->3"},
	}
	if len(by) != 1 || len(by[1]) != 2 || by[1][0] != want[0] || by[1][1] != want[1] {
		t.Errorf("by sender: %+v, want {1: %+v}", by, want)
	}
}

// A step netem cannot carry out is refused before the run, naming the step and what netem takes.
func TestNetemScheduleRefusals(t *testing.T) {
	for _, tc := range []struct{ chaos, want string }{
		{"at 1s link 1->2 slowclose 1s", `step 1 "at 1s link 1->2 slowclose 1s": netem has no slowclose`},
		{"at 1s link 1->2 reset", `netem has no reset`},
		{"at 1s kill 3; at 1s link 1->2 delay 50ms jitter 10ms normal corr 25%", `step 2 "at 1s link 1->2 delay 50ms jitter 10ms normal corr 25%": netem's delay correlation`},
		{"at 1s link 1->2 loss 10%; at 2s link 1->2 burst 1% 25%", `step 2 "at 2s link 1->2 burst 1% 25%": netem has one loss model per link`},
	} {
		s, err := chaos.Parse(tc.chaos, 3)
		if err != nil {
			t.Fatal(err)
		}
		err = checkNetemSchedule(s)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "the netem backend carries out drop, delay") {
			t.Errorf("%q: %v, want %q", tc.chaos, err, tc.want)
		}
	}
	for _, ok := range []string{
		"at 1s link 1->2 loss 10%; at 2s heal; at 3s link 1->2 burst 1% 25%",
		"at 1s link 1->2 loss 10%; at 2s link 1->2 loss 20% corr 30%; at 1s link 2->1 burst 1% 25%",
		"at 1s link 1->2 delay 50ms jitter 10ms pareto; at 1s link 1->2 rate 20kB/s; at 1s link 1->2 reorder; at 1s link 1->2 dup 1%; at 1s link 1->2 corrupt 1%; at 1s partition halves",
	} {
		s, err := chaos.Parse(ok, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkNetemSchedule(s); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
}
