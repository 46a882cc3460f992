package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Multi-host runs go over SSH (internal/sshhost, launcher/remote.go). These need no sshd: the
// errors a user meets before any host answers. The runs themselves, and every bad host, are in
// e2e_netns_test.go, on namespace hosts with real sshd.

func writeHosts(t *testing.T, lines ...string) string {
	t.Helper()
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return hosts
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHostsBadInputIsAnError(t *testing.T) {
	out := func(name string) string { return filepath.Join(t.TempDir(), name) }
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"nobody listens", []string{"--hosts", writeHosts(t, "root@127.0.0.1:1")}, []string{"--hosts line 1 (root@127.0.0.1:1)", "is the host up and sshd running on port 1"}},
		{"a bad target", []string{"--hosts", writeHosts(t, "root@lab1:ssh")}, []string{"--hosts", "line 1", `port "ssh" is not a number in 1..65535`, "[user@]host[:port]"}},
		{"--host with --hosts", []string{"--hosts", writeHosts(t, "127.0.0.1:1"), "--host", "127.0.0.2"}, []string{"--host cannot be given"}},
		{"an unchecked key without hosts", []string{"--insecure-ignore-host-key"}, []string{"--insecure-ignore-host-key: it goes with --hosts or --ssh-config"}},
		{"a missing ssh config", []string{"--ssh-config", out("none")}, []string{"--ssh-config", "no such file"}},
		{"an ssh config without a host", []string{"--ssh-config", writeHosts(t, "Host *", "  User root")}, []string{"names no host", "Host NAME"}},
		{"--sim with hosts", []string{"--sim", "--hosts", writeHosts(t, "127.0.0.1:1")}, []string{"--sim", "--hosts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := out("r")
			code, got := leaderlab(t, append([]string{"run", "--out", dir}, tc.args...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2:\n%s", code, got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output lacks %q:\n%s", w, got)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "verdict.json")); err == nil {
				t.Errorf("a run that could not be made has a verdict.json")
			}
		})
	}
}
