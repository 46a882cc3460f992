package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Bad SSH hosts, on the namespace lab: each is exit 2 with a message that names the host and the
// cure, before any node runs, and nothing is left running on any host.

// labConfig writes a copy of the lab's ssh-config with old replaced by new on every line.
func labConfig(t *testing.T, lab string, pairs ...string) string {
	t.Helper()
	b := string(mustRead(t, filepath.Join(lab, "ssh-config")))
	for i := 0; i+1 < len(pairs); i += 2 {
		b = strings.ReplaceAll(b, pairs[i], pairs[i+1])
	}
	p := filepath.Join(t.TempDir(), "ssh-config")
	if err := os.WriteFile(p, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNetnsBadSSHHosts(t *testing.T) {
	lab := netnsLab(t)
	kh := filepath.Join(lab, "known_hosts")
	tmp := t.TempDir()
	// A known_hosts without the lab's hosts, and one whose keys are another host's.
	empty := filepath.Join(tmp, "empty_known_hosts")
	os.WriteFile(empty, nil, 0o600)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(tmp, "other")).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v %s", err, out)
	}
	other := strings.Join(strings.Fields(string(mustRead(t, filepath.Join(tmp, "other.pub"))))[:2], " ")
	var changed strings.Builder
	for _, l := range strings.Split(strings.TrimSpace(string(mustRead(t, kh))), "\n") {
		changed.WriteString(strings.Fields(l)[0] + " " + other + "\n")
	}
	changedKH := filepath.Join(tmp, "changed_known_hosts")
	os.WriteFile(changedKH, []byte(changed.String()), 0o600)
	// A binary for another machine (a program of one line: the check reads its ELF header).
	src := filepath.Join(tmp, "arm", "main.go")
	os.MkdirAll(filepath.Dir(src), 0o755)
	os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644)
	arm := filepath.Join(tmp, "leaderlab-arm64")
	build := exec.Command("go", "build", "-o", arm, src)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build for arm64: %v\n%s", err, out)
	}

	for _, tc := range []struct {
		name string
		cfg  string
		env  []string
		want []string
	}{
		{"unknown host key", labConfig(t, lab, kh, empty), nil, []string{"host h1", "host key is not known", "ssh-keyscan", "--insecure-ignore-host-key"}},
		{"changed host key", labConfig(t, lab, kh, changedKH), nil, []string{"host h1", "host key CHANGED", "ssh-keygen -R", "nothing was run on the host"}},
		{"refused key", labConfig(t, lab, filepath.Join(lab, "id_ed25519"), filepath.Join(tmp, "other")), nil, []string{"host h1", "refused every key offered", filepath.Join(tmp, "other"), "authorized_keys"}},
		{"no answer", labConfig(t, lab, "HostName 10.77.0.12", "HostName 10.77.0.99\n  ConnectTimeout 2"), nil, []string{"host h2", "10.77.0.99:22", "is the host up and sshd running"}},
		{"another architecture", filepath.Join(lab, "ssh-config"), []string{"LEADERLAB_REMOTE_BINARY=" + arm}, []string{"host h1", "runs Linux x86_64", "linux", "GOARCH=amd64", "LEADERLAB_REMOTE_BINARY"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "r")
			cmd := exec.Command(binary, "run", "--ssh-config", tc.cfg, "-n", "6", "--duration", "2s", "--out", dir)
			cmd.Env = append(os.Environ(), tc.env...)
			out, err := cmd.CombinedOutput()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			}
			if code != 2 {
				t.Fatalf("exit %d (%v), want 2:\n%s", code, err, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "verdict.json")); err == nil {
				t.Errorf("a run that could not be made has a verdict.json")
			}
			if left := nodesLeft(lab); len(left) > 0 {
				t.Errorf("node processes left on the hosts: %q", left)
			}
		})
	}
}

// sshdSessions lists the pids of namespace ns's sshd processes other than the listener (pid in
// pidFile): the per-connection sshd that carries the launcher's agent session.
func sshdSessions(t *testing.T, ns, pidFile string) []int {
	t.Helper()
	listener, _ := strconv.Atoi(strings.TrimSpace(string(mustRead(t, pidFile))))
	out, _ := exec.Command("ip", "netns", "pids", ns).Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		pid, _ := strconv.Atoi(f)
		comm, _ := os.ReadFile("/proc/" + f + "/comm")
		if pid != listener && strings.TrimSpace(string(comm)) == "sshd" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// An sshd that dies in the middle of a run ends the agent's session: the agent kills the host's
// nodes, which count as crashed from then; at the end the launcher connects again, fetches the logs
// the host kept, and the run gets a verdict.
func TestNetnsSSHDKilledMidRun(t *testing.T) {
	lab := netnsLab(t)
	dir := filepath.Join(t.TempDir(), "run")
	go func() {
		// Once every node is ready, and the run half a second in; never before (on a loaded machine
		// the binary's upload and the agents' start took over 30 s, and a kill during the upload is
		// another story: TestNetnsBadSSHHosts).
		deadline := time.Now().Add(3 * time.Minute)
		for {
			b, _ := os.ReadFile(filepath.Join(dir, "launcher.jsonl"))
			if strings.Count(string(b), `"ev":"ready"`) >= 6 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("the 6 nodes were not ready 3 minutes after the start: h2's sshd was not killed")
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(500 * time.Millisecond)
		for _, pid := range sshdSessions(t, "ll-h2", filepath.Join(lab, "h2.pid")) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}()
	code, out := leaderlab(t, "run", "--ssh-config", filepath.Join(lab, "ssh-config"), "-n", "6", "--chaos", "", "--duration", "4s", "--out", dir)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d, want a verdict (0 or 1):\n%s", code, out)
	}
	for _, want := range []string{"host h2 lost", "count as crashed from now", "verdict:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(dir, "launcher.jsonl"))), `"detail":"agent lost: h2`) {
		t.Errorf("launcher.jsonl has no exited record saying host h2 was lost")
	}
	for _, id := range []int{2, 5} {
		if _, err := os.Stat(filepath.Join(dir, "nodes", strconv.Itoa(id)+".jsonl")); err != nil {
			t.Errorf("node %d's log was not fetched after its host came back: %v", id, err)
		}
	}
	if left := nodesLeft(lab); len(left) > 0 {
		t.Errorf("node processes left on the hosts: %q", left)
	}
}
