package agent

import (
	"strings"
	"testing"
)

func TestRenderNetRules(t *testing.T) {
	got, err := renderNetRules("LEADERLAB-Ax", []DropRule{
		{Mark: 0x4c4c0001, Dst: "10.77.0.13", Port: 4003, Note: "1->3"},
		{Mark: 0x4c4c0002, Dst: "10.77.0.13", Port: 4003, Loss: 0.25},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `*filter
:LEADERLAB-Ax - [0:0]
-A LEADERLAB-Ax -m mark --mark 0x4c4c0001 -d 10.77.0.13/32 -p tcp --dport 4003 -m comment --comment "1->3" -j DROP
-A LEADERLAB-Ax -m mark --mark 0x4c4c0001 -d 10.77.0.13/32 -p udp --dport 4003 -m comment --comment "1->3" -j DROP
-A LEADERLAB-Ax -m mark --mark 0x4c4c0002 -d 10.77.0.13/32 -p tcp --dport 4003 -m statistic --mode random --probability 0.2500 -m comment --comment "" -j DROP
-A LEADERLAB-Ax -m mark --mark 0x4c4c0002 -d 10.77.0.13/32 -p udp --dport 4003 -m statistic --mode random --probability 0.2500 -m comment --comment "" -j DROP
COMMIT
`
	if got != want {
		t.Errorf("rendered:\n%s\nwant:\n%s", got, want)
	}
}

// Nothing of a request reaches iptables but checked addresses, ports and a probability.
func TestRenderNetRulesRefusesWhatIsNotARule(t *testing.T) {
	for _, tc := range []struct {
		r    DropRule
		want string
	}{
		{DropRule{Mark: 1, Dst: "10.0.0.2 -j ACCEPT", Port: 1}, "want an IPv4 address"},
		{DropRule{Mark: 1, Dst: "::1", Port: 1}, "want an IPv4 address"},
		{DropRule{Mark: 0, Dst: "10.0.0.2", Port: 1}, "mark 0"},
		{DropRule{Mark: 1, Dst: "10.0.0.2"}, "port 0: want 1..65535"},
		{DropRule{Mark: 1, Dst: "10.0.0.2", Port: 70000}, "port 70000: want 1..65535"},
		{DropRule{Mark: 1, Dst: "10.0.0.2", Port: 1, Loss: 1}, "loss 1: want 0"},
		{DropRule{Mark: 1, Dst: "10.0.0.2", Port: 1, Note: `x" -j ACCEPT`}, "want digits, '-' and '>' only"},
	} {
		_, err := renderNetRules("C", []DropRule{tc.r})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want %q", tc.r, err, tc.want)
		}
	}
	if c := netChain(strings.Repeat("r", 64)); len(c) > 28 {
		t.Errorf("chain name %q is longer than iptables allows (28)", c)
	}
}
