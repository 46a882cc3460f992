package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Multi-host runs with agents on loopback (no root needed): the happy path, an agent unreachable at
// the start, and an agent lost in the middle of a run. The namespace tests (e2e_netns_test.go) do
// the same across real network stacks.

// startAgent runs `leaderlab agent` on a free loopback port and returns its address and process.
func startAgent(t *testing.T, token string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binary, "agent", "--listen", "127.0.0.1:0", "--token-file", token, "--workdir", t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "agent listening on ")
	if err != nil || !ok {
		t.Fatalf("agent's first line %q (%v): want \"agent listening on ADDR\"", line, err)
	}
	return addr, cmd
}

func writeHosts(t *testing.T, lines ...string) (hosts, token string) {
	t.Helper()
	dir := t.TempDir()
	token = filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hosts = filepath.Join(dir, "hosts")
	if err := os.WriteFile(hosts, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return hosts, token
}

func TestHostsRunOnLoopbackAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	_, token := writeHosts(t)
	a1, _ := startAgent(t, token)
	a2, _ := startAgent(t, token)
	hosts, _ := writeHosts(t, "# two agents", a1, a2+" ids=5")
	dir := runCluster(t, 4, "--hosts", hosts, "--token-file", token, "--duration", "3s",
		"--chaos", "at 1s kill leader")
	b := string(mustRead(t, filepath.Join(dir, "cluster.json")))
	for _, want := range []string{`"host": "` + a2 + `"`, `"hosts": [`, `"offset_ns"`} {
		if !strings.Contains(b, want) {
			t.Errorf("cluster.json lacks %s", want)
		}
	}
	launch := string(mustRead(t, filepath.Join(dir, "launcher.jsonl")))
	if !strings.Contains(launch, `"node":5,"inc":1,"pid"`) || !strings.Contains(launch, `"detail":"on `+a2+`"`) {
		t.Errorf("launcher.jsonl does not say node 5 was spawned on %s:\n%s", a2, launch)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestHostsUnreachableAgentIsAnError(t *testing.T) {
	hosts, token := writeHosts(t, "127.0.0.1:1")
	code, out := leaderlab(t, "run", "--hosts", hosts, "--token-file", token, "--out", filepath.Join(t.TempDir(), "r"))
	if code != 2 || !strings.Contains(out, "agent 127.0.0.1:1 (--hosts line 1) is unreachable") {
		t.Errorf("exit %d, output %q: want 2 naming the agent", code, out)
	}
	code, out = leaderlab(t, "run", "--hosts", hosts, "--out", filepath.Join(t.TempDir(), "r"))
	if code != 2 || !strings.Contains(out, "--hosts needs --token-file") {
		t.Errorf("without a token: exit %d, output %q", code, out)
	}
	code, out = leaderlab(t, "run", "--hosts", hosts, "--token-file", token, "--host", "127.0.0.2")
	if code != 2 || !strings.Contains(out, "--host cannot be given") {
		t.Errorf("--host with --hosts: exit %d, output %q", code, out)
	}
}

// An agent that dies in the middle of a run takes its nodes with it: they count as crashed from that
// moment, and their logs cannot be fetched, so the run gets no verdict (exit 2), never a pass.
func TestHostsAgentLostMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	_, token := writeHosts(t)
	a1, _ := startAgent(t, token)
	a2, agent2 := startAgent(t, token)
	hosts, _ := writeHosts(t, a1, a2)
	dir := filepath.Join(t.TempDir(), "run")
	go func() {
		time.Sleep(1500 * time.Millisecond)
		_ = agent2.Process.Signal(syscall.SIGKILL)
	}()
	code, out := leaderlab(t, "run", "--hosts", hosts, "--token-file", token, "--chaos", "", "--duration", "3s", "--out", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{fmt.Sprintf("agent %s lost", a2), "count as crashed from now", "could not be fetched", "gets no verdict"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "verdict.json")); err == nil {
		t.Errorf("a run with unfetched logs has a verdict.json")
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(dir, "launcher.jsonl"))), `"detail":"agent lost: `+a2) {
		t.Errorf("launcher.jsonl has no exited record saying the agent was lost")
	}
}
