package main

// End-to-end tests of --net-backend netem (issue 31): the same link rules carried out by the
// kernel's netem qdiscs. A delay rule shows in round trips measured on the shaped link while it is
// in force — TCP connects to the receiver's port from the sender's network namespace, with the
// sender's firewall mark, so that the SYN takes the shaped path and the SYN-ACK the plain one —
// and a loss rule shows in the kernel's drops, which the launcher prints when the link is
// unshaped. Afterwards no qdisc of ours is left. They need root, tc and a kernel with netem, htb
// and u32 (Debian's has them as modules); they skip, saying which is missing, otherwise.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/rundir"
)

// netemSkip skips a test that needs root and tc.
func netemSkip(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the netem backend needs root (CI runs as root)")
	}
	for _, b := range []string{"tc", "ip", "nsenter"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("the netem tests need %s (iproute2, util-linux)", b)
		}
	}
}

// netemHold is when the tests' link rules are healed, plus more seconds: 25 s, time for the rules
// to be installed and measured; LEADERLAB_NETEM_HOLD (seconds) gives an emulated VM, where each tc
// command takes a second, the time it needs.
func netemHold(more int) string {
	hold, err := strconv.Atoi(os.Getenv("LEADERLAB_NETEM_HOLD"))
	if err != nil || hold <= 0 {
		hold = 25
	}
	return strconv.Itoa(hold+more) + "s"
}

// skipNoNetem skips when the run said that this machine's kernel cannot shape with netem.
func skipNoNetem(t *testing.T, code int, out string) {
	t.Helper()
	if code == 2 && strings.Contains(out, "the netem backend cannot run here") {
		i := strings.Index(out, "the netem backend cannot run here")
		t.Skipf("this kernel cannot run the netem backend: %s", firstLineOf(out[i:]))
	}
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// A one-host run happens in a network namespace of its own: a delay rule on 1->2 shows in the
// round trips from node 1's namespace to node 2's port with 1's mark, a loss rule on 1->3 in the
// kernel's drops, and after the run the machine has no qdisc of ours (its lo is untouched).
func TestNetemOneHost(t *testing.T) {
	netemSkip(t)
	before, _ := exec.Command("tc", "qdisc", "show").Output()
	dir := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(binary, "run", "--out", dir, "--net-backend", "netem", "-n", "3", "--heartbeat", "100ms", "--timeout", "1s", "--duration", netemHold(2),
		"--chaos", "at 0.5s link 1->2 delay 50ms±10ms; at 0.5s link 1->3 loss 30%; at "+netemHold(0)+" heal")
	done, out := startRun(t, cmd)
	pid := waitNetemRules(t, dir, 2, done, out)
	c, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	n1, _ := c.Node(1)
	n2, _ := c.Node(2)
	n3, _ := c.Node(3)
	ns := fmt.Sprintf("--net=/proc/%d/ns/net", pid)
	shaped := dialRTTs(t, []string{ns}, n2.Addr, n1.Mark, 20)
	plain := dialRTTs(t, []string{ns}, n2.Addr, n3.Mark, 10) // no rule 3->2
	checkDelay(t, shaped, plain)
	err = <-done
	code := exitCode(err)
	t.Logf("run:\n%s", out.String())
	if code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	checkLoss(t, out.String(), "1->3")
	after, _ := exec.Command("tc", "qdisc", "show").Output()
	if bytes.Contains(after, []byte("4c4c:")) || bytes.Count(after, []byte("netem")) > bytes.Count(before, []byte("netem")) {
		t.Errorf("the machine has qdiscs of the run:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err == nil {
		t.Errorf("node 1 (pid %d) outlived the run", pid)
	}
}

// startRun starts a run in the background; done gets its end, out collects what it prints.
func startRun(t *testing.T, cmd *exec.Cmd) (chan error, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done, &out
}

// waitNetemRules waits until chaos.jsonl has k acknowledged link records and returns node 1's pid.
// A run that ends first is a failure (or a skip, when the kernel has no netem).
func waitNetemRules(t *testing.T, dir string, k int, done chan error, out *bytes.Buffer) int {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			code := exitCode(err)
			skipNoNetem(t, code, out.String())
			t.Fatalf("the run ended (exit %d) before its link rules were in force:\n%s", code, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		b, _ := os.ReadFile(filepath.Join(dir, "chaos.jsonl"))
		if strings.Count(string(b), `"op":"link"`) < k || strings.Count(string(b), `"acks"`) < k {
			continue
		}
		if strings.Contains(string(b), `"error"`) {
			t.Fatalf("a link rule was not applied:\n%s", b)
		}
		lb, _ := os.ReadFile(filepath.Join(dir, "launcher.jsonl"))
		for _, line := range strings.Split(string(lb), "\n") {
			var r struct {
				Ev        string
				Node, Pid int
			}
			if json.Unmarshal([]byte(line), &r) == nil && r.Ev == "spawned" && r.Node == 1 {
				return r.Pid
			}
		}
	}
	t.Fatalf("no link rule in force after 90s:\n%s", out.String())
	return 0
}

func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

// dialRTTs measures n TCP connects to addr with firewall mark mark, from the network namespace
// the enter arguments name (nsenter's, or ip netns exec's), by this test binary's helper.
func dialRTTs(t *testing.T, enter []string, addr string, mark, n int) []time.Duration {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	if strings.HasPrefix(enter[0], "--net") {
		args = append([]string{"nsenter"}, enter...)
	} else {
		args = append([]string{"ip", "netns", "exec"}, enter...)
	}
	args = append(args, exe, "-test.run", "^TestNetemDialHelper$", "-test.v")
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = append(os.Environ(), fmt.Sprintf("LEADERLAB_NETEM_DIAL=%s %d %d", addr, mark, n))
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, b)
	}
	var rtts []time.Duration
	for _, m := range regexp.MustCompile(`rtt_us (\d+)`).FindAllSubmatch(b, -1) {
		us, _ := strconv.Atoi(string(m[1]))
		rtts = append(rtts, time.Duration(us)*time.Microsecond)
	}
	if len(rtts) < n/2 {
		t.Fatalf("%d of %d connects to %s with mark %#x answered:\n%s", len(rtts), n, addr, mark, b)
	}
	return rtts
}

// TestNetemDialHelper connects to an address with a firewall mark, in the namespace it was started
// in, and prints each connect's time (run by dialRTTs).
func TestNetemDialHelper(t *testing.T) {
	spec := os.Getenv("LEADERLAB_NETEM_DIAL")
	if spec == "" {
		t.Skip("run by the netem tests in a node's network namespace")
	}
	var addr string
	var mark, n int
	if _, err := fmt.Sscanf(spec, "%s %d %d", &addr, &mark, &n); err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{Timeout: 3 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, mark) })
		if err != nil {
			return err
		}
		return serr
	}}
	for i := 0; i < n; i++ {
		start := time.Now()
		conn, err := d.Dial("tcp", addr)
		rtt := time.Since(start)
		if err != nil {
			t.Logf("connect %d: %v", i, err)
			continue
		}
		conn.Close()
		fmt.Printf("rtt_us %d\n", rtt.Microseconds())
		time.Sleep(20 * time.Millisecond)
	}
}

// checkDelay: a 50ms±10ms delay holds every SYN 40..60 ms, so no shaped round trip is under 40 ms,
// and the fastest fifth of them lies within the delay's range above the plain link's fastest fifth.
// A loaded (or emulated) machine only adds time, to both links alike, and most to the slower
// round trips; so the fast ones are judged, and the median is logged.
func checkDelay(t *testing.T, shaped, plain []time.Duration) {
	t.Helper()
	slices.Sort(shaped)
	slices.Sort(plain)
	q := func(d []time.Duration, f float64) time.Duration { return d[int(f*float64(len(d)-1))] }
	t.Logf("round trips on the shaped link (ms): %v; median %v, min %v", ms(shaped), q(shaped, 0.5), shaped[0])
	t.Logf("round trips on a plain link (ms): %v; median %v", ms(plain), q(plain, 0.5))
	if shaped[0] < 39*time.Millisecond {
		t.Errorf("a round trip of %v on the link delayed 50ms±10ms: the delay was not in force", shaped[0])
	}
	if d := q(shaped, 0.2) - q(plain, 0.2); d < 38*time.Millisecond || d > 70*time.Millisecond {
		t.Errorf("the shaped link's fastest fifth of round trips is %v above the plain one's: want 40..60ms (50ms±10ms)", d)
	}
}

func ms(d []time.Duration) []string {
	out := make([]string, len(d))
	for i, x := range d {
		out[i] = strconv.FormatFloat(float64(x.Microseconds())/1000, 'f', 1, 64)
	}
	return out
}

var netemCountRE = regexp.MustCompile(`the kernel's netem on (\d+->\d+), now unshaped: (\d+) packets passed, (\d+) lost`)

// checkLoss: the launcher printed the kernel's counters of the lossy link when it was unshaped,
// and the kernel lost some of its packets (30%: the heartbeats of seconds).
func checkLoss(t *testing.T, out, link string) {
	t.Helper()
	for _, m := range netemCountRE.FindAllStringSubmatch(out, -1) {
		if m[1] != link {
			continue
		}
		passed, _ := strconv.Atoi(m[2])
		lost, _ := strconv.Atoi(m[3])
		t.Logf("the kernel's netem on %s: %d packets passed, %d lost", link, passed, lost)
		if lost == 0 || passed == 0 {
			t.Errorf("loss 30%% on %s: %d passed, %d lost: want some of each", link, passed, lost)
		}
		return
	}
	t.Errorf("no count of the kernel's netem on %s in the run's output", link)
}

// A rule netem cannot carry out is refused before the run, naming the step and what netem takes —
// on SSH hosts before any is reached, and on one host in the run's namespace (root) or, without
// root, with the reason the namespace cannot be made.
func TestNetemBadRuleExits2(t *testing.T) {
	for _, tc := range []struct{ rule, want string }{
		{"slowclose 1s", "netem has no slowclose"},
		{"reset after 1s", "netem has no reset"},
		{"delay 50ms jitter 10ms normal corr 25%", "netem's delay correlation blends its uniform draws"},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		args := []string{"run", "--out", dir, "-n", "3", "--duration", "3s", "--net-backend", "netem", "--chaos", "at 1s link 1->2 " + tc.rule}
		code, out := leaderlab(t, append(args, "--hosts", writeHosts(t, "root@127.0.0.1:1"))...)
		if code != 2 || !strings.Contains(out, tc.want) || !strings.Contains(out, "the netem backend carries out drop, delay") || strings.Contains(out, "127.0.0.1:1") {
			t.Errorf("--hosts, link 1->2 %s: exit %d:\n%s\nwant 2, %q, before any host", tc.rule, code, out, tc.want)
		}
		code, out = leaderlab(t, args...)
		want := tc.want
		if os.Geteuid() != 0 {
			want = "which needs root"
		}
		if code != 2 || !strings.Contains(out, want) {
			t.Errorf("one host, link 1->2 %s: exit %d:\n%s\nwant 2 and %q", tc.rule, code, out, want)
		}
	}
}

// The same rules on SSH hosts (the namespace lab): each agent shapes its nodes' egress. Before the
// run, host 1 holds a root qdisc of ours and the owner file of an agent that is gone (a crash):
// the run's probe removes them. After it, no host has a qdisc of ours or an owner file.
func TestNetemNetnsHosts(t *testing.T) {
	netemSkip(t)
	lab := netnsLab(t)
	ino := netnsIno(t, "ll-h1")
	owner := fmt.Sprintf("/run/leaderlab/netem-netns-%d", ino)
	if out, err := exec.Command("ip", "netns", "exec", "ll-h1", "tc", "qdisc", "add", "dev", "lo", "root", "handle", "4c4c:", "htb").CombinedOutput(); err != nil {
		t.Fatalf("a stale root qdisc on ll-h1: %v: %s", err, out)
	}
	_ = os.MkdirAll("/run/leaderlab", 0o755)
	if err := os.WriteFile(owner, []byte("999999999 crashed-run lo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	// 6 nodes round-robin on 3 hosts: 1 and 4 on h1, 2 and 5 on h2, 3 and 6 on h3.
	cmd := exec.Command(binary, "run", "--out", dir, "--ssh-config", filepath.Join(lab, "ssh-config"), "--net-backend", "netem", "-n", "6",
		"--heartbeat", "100ms", "--timeout", "1s", "--duration", netemHold(2),
		"--chaos", "at 0.5s link 1->2 delay 50ms±10ms; at 0.5s link 1->4 loss 30%; at "+netemHold(0)+" heal")
	done, out := startRun(t, cmd)
	waitNetemRules(t, dir, 2, done, out)
	c, err := rundir.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	n1, _ := c.Node(1)
	n2, _ := c.Node(2)
	n4, _ := c.Node(4)
	shaped := dialRTTs(t, []string{"ll-h1"}, n2.Addr, n1.Mark, 20)
	plain := dialRTTs(t, []string{"ll-h1"}, n2.Addr, n4.Mark, 10)
	checkDelay(t, shaped, plain)
	code := exitCode(<-done)
	t.Logf("run:\n%s", out.String())
	if code != 0 {
		t.Fatalf("run exited %d, want 0", code)
	}
	checkLoss(t, out.String(), "1->4")
	logs, _ := filepath.Glob(filepath.Join(dir, "hosts", "h1-*.log"))
	if len(logs) == 0 || !strings.Contains(string(mustRead(t, logs[0])), "removed the netem qdiscs of a run whose agent is gone") {
		t.Errorf("host 1's agent did not say it removed the stale qdisc (logs %v)", logs)
	}
	for k := 1; k <= 3; k++ {
		q, _ := exec.Command("ip", "netns", "exec", "ll-h"+strconv.Itoa(k), "tc", "qdisc", "show").Output()
		if strings.Contains(string(q), "4c4c:") || strings.Contains(string(q), "netem") {
			t.Errorf("host %d keeps qdiscs of the run:\n%s", k, q)
		}
	}
	if left, _ := filepath.Glob("/run/leaderlab/netem-netns-*"); slices.Contains(left, owner) {
		t.Errorf("owner files left: %v", left)
	}
}

// netnsIno is the inode of a named network namespace.
func netnsIno(t *testing.T, ns string) uint64 {
	t.Helper()
	st, err := os.Stat("/run/netns/" + ns)
	if err != nil {
		t.Fatal(err)
	}
	return st.Sys().(*syscall.Stat_t).Ino
}
