package agent

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNetemArgs(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		r    NetemRule
		want string
	}{
		{NetemRule{}, "limit 1000"},
		{NetemRule{Loss: 1}, "limit 1000 loss random 100%"},
		{NetemRule{Delay: 50 * ms, Jitter: 10 * ms}, "limit 1000 delay 50000us 10000us"},
		{NetemRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "paretonormal"}, "limit 1000 delay 50000us 10000us distribution paretonormal"},
		{NetemRule{Delay: 20 * ms}, "limit 1000 delay 20000us"},
		{NetemRule{Loss: 0.1}, "limit 1000 loss random 10%"},
		{NetemRule{BurstBegin: 0.01, BurstEnd: 0.25}, "limit 1000 loss gemodel 1% 25%"},
		{NetemRule{Dup: 0.05, Corrupt: 0.005, Rate: 20000}, "limit 1000 duplicate 5% corrupt 0.5% rate 160000bit"},
	} {
		if got := NetemArgs(tc.r); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

// A shaper in a test: tc and the routing table are recorded and answered, not run.
func testShaper(t *testing.T, fail string) (*Shaper, *[]string) {
	var scripts []string
	s := NewShaper()
	s.tc = func(script string) error {
		scripts = append(scripts, script)
		if fail != "" && strings.Contains(script, fail) {
			return errors.New("RTNETLINK answers: no")
		}
		return nil
	}
	s.stats = func(string) (map[int]NetemCount, error) {
		return map[int]NetemCount{1: {Packets: 10, Drops: 3}, 2: {Packets: 5}}, nil
	}
	s.route = func(dst string, _ uint32) (string, error) {
		if strings.HasPrefix(dst, "10.77.0.11") {
			return "lo", nil // the host's own address
		}
		return "eth0", nil
	}
	return s, &scripts
}

// A rule set is installed link by link and replaced by the difference: a changed link gets a new
// netem qdisc, a link gone loses its filter and class, and an interface with none left loses the
// root qdisc, so that a heal leaves nothing.
func TestNetemShaperChangesLinkByLink(t *testing.T) {
	s, scripts := testShaper(t, "")
	ms := int64(time.Millisecond)
	a := NetemRule{Mark: 0x4c4c0001, Dst: "10.77.0.12", Port: 4002, Delay: 50 * ms, Jitter: 10 * ms, Note: "1->2"}
	b := NetemRule{Mark: 0x4c4c0001, Dst: "10.77.0.11", Port: 4004, Loss: 0.3, Note: "1->4"}
	if err := s.Set([]NetemRule{a, b}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`qdisc add dev eth0 root handle 4c4c: htb direct_qlen 10000
class add dev eth0 parent 4c4c: classid 4c4c:1 htb rate 10gbit quantum 200000
qdisc add dev eth0 parent 4c4c:1 handle 1: netem limit 1000 delay 50000us 10000us
filter add dev eth0 parent 4c4c: protocol ip prio 1 u32 match mark 0x4c4c0001 0xffffffff match ip dst 10.77.0.12/32 match ip dport 4002 0xffff flowid 4c4c:1
`,
		`qdisc add dev lo root handle 4c4c: htb direct_qlen 10000
class add dev lo parent 4c4c: classid 4c4c:1 htb rate 10gbit quantum 200000
qdisc add dev lo parent 4c4c:1 handle 1: netem limit 1000 loss random 30%
filter add dev lo parent 4c4c: protocol ip prio 1 u32 match mark 0x4c4c0001 0xffffffff match ip dst 10.77.0.11/32 match ip dport 4004 0xffff flowid 4c4c:1
`}
	if !slices.Equal(*scripts, want) {
		t.Fatalf("first set:\n%s\nwant:\n%s", strings.Join(*scripts, "--\n"), strings.Join(want, "--\n"))
	}
	*scripts = nil
	c := a
	c.Port, c.Note = 4003, "1->3"
	a.Delay = 80 * ms
	if err := s.Set([]NetemRule{a, c}); err != nil { // a changed, b gone, c new
		t.Fatal(err)
	}
	want = []string{
		`qdisc del dev eth0 parent 4c4c:1 handle 1:
qdisc add dev eth0 parent 4c4c:1 handle 1: netem limit 1000 delay 80000us 10000us
class add dev eth0 parent 4c4c: classid 4c4c:2 htb rate 10gbit quantum 200000
qdisc add dev eth0 parent 4c4c:2 handle 2: netem limit 1000 delay 50000us 10000us
filter add dev eth0 parent 4c4c: protocol ip prio 2 u32 match mark 0x4c4c0001 0xffffffff match ip dst 10.77.0.12/32 match ip dport 4003 0xffff flowid 4c4c:2
`,
		"qdisc del dev lo root\n"}
	if !slices.Equal(*scripts, want) {
		t.Fatalf("second set:\n%s\nwant:\n%s", strings.Join(*scripts, "--\n"), strings.Join(want, "--\n"))
	}
	// b is gone: its counters come back; a's carry over to its new qdisc
	if got := s.TakeCounts(); !slices.Equal(got, []NetemCount{{Note: "1->4", Packets: 10, Drops: 3}}) {
		t.Errorf("counts after the second set: %+v", got)
	}
	*scripts = nil
	if err := s.Set([]NetemRule{c}); err != nil {
		t.Fatal(err)
	}
	if want := "filter del dev eth0 parent 4c4c: protocol ip prio 1\nclass del dev eth0 classid 4c4c:1\n"; !slices.Equal(*scripts, []string{want}) {
		t.Fatalf("third set: %q, want %q", *scripts, want)
	}
	*scripts = nil
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(*scripts, []string{"qdisc del dev eth0 root\n"}) || s.Links() != 0 || len(s.Devices()) != 0 {
		t.Fatalf("heal: %q, %d links left on %v", *scripts, s.Links(), s.Devices())
	}
	if got := s.TakeCounts(); !slices.Equal(got, []NetemCount{{Note: "1->2", Packets: 20, Drops: 6}, {Note: "1->3", Packets: 5}}) {
		t.Errorf("counts after the heal: %+v", got)
	}
}

// When tc fails, the interface is cleared, and the next set starts it afresh.
func TestNetemShaperFailureClearsTheInterface(t *testing.T) {
	s, scripts := testShaper(t, "netem limit 1000 loss random 50%")
	err := s.Set([]NetemRule{{Mark: 1, Dst: "10.0.0.2", Port: 1, Loss: 0.5}})
	if err == nil || !strings.Contains(err.Error(), "eth0: RTNETLINK answers: no") {
		t.Fatalf("err = %v", err)
	}
	if last := (*scripts)[len(*scripts)-1]; last != "qdisc del dev eth0 root\n" || s.Links() != 0 {
		t.Fatalf("after a failure: %q, %d links", last, s.Links())
	}
	s.tc = func(string) error { return nil }
	if err := s.Set([]NetemRule{{Mark: 1, Dst: "10.0.0.2", Port: 1, Loss: 0.2}}); err != nil || s.Links() != 1 {
		t.Fatalf("a set after the failure: %v, %d links", err, s.Links())
	}
}

// Nothing of a request reaches tc but checked addresses, ports and numbers.
func TestNetemRuleRefusesWhatIsNotARule(t *testing.T) {
	ok := NetemRule{Mark: 1, Dst: "10.0.0.2", Port: 1}
	for _, tc := range []struct {
		edit func(*NetemRule)
		want string
	}{
		{func(r *NetemRule) { r.Dst = "10.0.0.2/0 flowid 1:1" }, "want an IPv4 address"},
		{func(r *NetemRule) { r.Mark = 0 }, "mark 0"},
		{func(r *NetemRule) { r.Port = 0 }, "port 0: want 1..65535"},
		{func(r *NetemRule) { r.Delay = -1 }, "want 0..1h each"},
		{func(r *NetemRule) { r.Jitter = int64(2 * time.Hour) }, "want 0..1h each"},
		{func(r *NetemRule) { r.Dist, r.Jitter = "gaussian", 1 }, `distribution "gaussian"`},
		{func(r *NetemRule) { r.Dist = "normal" }, "without a jitter"},
		{func(r *NetemRule) { r.Loss = 1.5 }, "loss 1.5: want a probability"},
		{func(r *NetemRule) { r.Corrupt = -0.1 }, "corrupt -0.1"},
		{func(r *NetemRule) { r.Loss, r.BurstBegin = 0.1, 0.1 }, "one loss model per link"},
		{func(r *NetemRule) { r.Rate = -1 }, "rate -1"},
		{func(r *NetemRule) { r.Note = "1->2; reboot" }, "want digits"},
	} {
		r := ok
		tc.edit(&r)
		s, scripts := testShaper(t, "")
		err := s.Set([]NetemRule{r})
		if err == nil || !strings.Contains(err.Error(), tc.want) || len(*scripts) > 0 {
			t.Errorf("%+v: err = %v, ran %q; want %q and nothing run", r, err, *scripts, tc.want)
		}
	}
}

// On a kernel with netem, the probe installs and removes its qdiscs on lo; elsewhere it says what
// is missing. Root only; it runs in a network namespace of its own, never on the machine's lo.
func TestNetemProbeInANamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("tc needs root (CI runs as root)")
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare (util-linux) makes the test's namespace")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "--net", exe, "-test.v", "-test.run", "^TestNetemProbeHelper$")
	cmd.Env = append(os.Environ(), "LEADERLAB_NETEM_PROBE_HELPER=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("probe in a namespace: %v", err)
	}
}

func TestNetemProbeHelper(t *testing.T) {
	if os.Getenv("LEADERLAB_NETEM_PROBE_HELPER") == "" {
		t.Skip("run by TestNetemProbeInANamespace in a namespace of its own")
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v: %s", err, out)
	}
	err := NetemProbe([]string{"normal", "pareto", "paretonormal"})
	if err != nil && (!errors.Is(err, ErrNetem) || !strings.Contains(err.Error(), "tc cannot install")) {
		t.Fatalf("probe: %v (want nil, or ErrNetem naming what tc cannot install)", err)
	}
	t.Logf("probe: %v", err)
	if h := rootHandle("lo"); h != "0:" {
		t.Errorf("the probe left lo's root qdisc %q", h)
	}
}
