package agent

import (
	"strings"
	"testing"
)

func TestRenderNetRules(t *testing.T) {
	got, err := renderNetRules("LEADERLAB-Ax", []DropRule{
		{Src: "10.77.0.11", Dst: "10.77.0.13", Ports: []int{4001, 4003}, Note: "1->3"},
		{Src: "10.77.0.12", Dst: "10.77.0.13", Ports: []int{4002, 4003}, Loss: 0.25},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `*filter
:LEADERLAB-Ax - [0:0]
-A LEADERLAB-Ax -s 10.77.0.11/32 -d 10.77.0.13/32 -p tcp -m multiport --ports 4001,4003 -m comment --comment "1->3" -j DROP
-A LEADERLAB-Ax -s 10.77.0.11/32 -d 10.77.0.13/32 -p udp -m multiport --ports 4001,4003 -m comment --comment "1->3" -j DROP
-A LEADERLAB-Ax -s 10.77.0.12/32 -d 10.77.0.13/32 -p tcp -m multiport --ports 4002,4003 -m statistic --mode random --probability 0.2500 -m comment --comment "" -j DROP
-A LEADERLAB-Ax -s 10.77.0.12/32 -d 10.77.0.13/32 -p udp -m multiport --ports 4002,4003 -m statistic --mode random --probability 0.2500 -m comment --comment "" -j DROP
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
		{DropRule{Src: "10.0.0.1 -j ACCEPT", Dst: "10.0.0.2", Ports: []int{1}}, "want IPv4 addresses"},
		{DropRule{Src: "::1", Dst: "10.0.0.2", Ports: []int{1}}, "want IPv4 addresses"},
		{DropRule{Src: "10.0.0.1", Dst: "10.0.0.2"}, "0 ports: want 1 or 2"},
		{DropRule{Src: "10.0.0.1", Dst: "10.0.0.2", Ports: []int{70000}}, "port 70000: want 1..65535"},
		{DropRule{Src: "10.0.0.1", Dst: "10.0.0.2", Ports: []int{1}, Loss: 1}, "loss 1: want 0"},
		{DropRule{Src: "10.0.0.1", Dst: "10.0.0.2", Ports: []int{1}, Note: `x" -j ACCEPT`}, "want digits, '-' and '>' only"},
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
