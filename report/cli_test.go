package report

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

// leaderlab builds the command once per test binary (the report command lives in package main).
func leaderlab(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the leaderlab command; not in -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build leaderlab with")
	}
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "leaderlab-report-cli-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "leaderlab")
		out, err := exec.Command(goBin, "build", "-o", binPath, "..").CombinedOutput()
		if err != nil {
			buildErr = errors.New(string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func runCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(leaderlab(t), args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// `leaderlab report RUN --shiviz F --perfetto F`, flags after RUN as people write them.
func TestCommandReport(t *testing.T) {
	dir, _ := writeFixture(t)
	out := t.TempDir()
	shiviz, trace := filepath.Join(out, "run.shiviz"), filepath.Join(out, "run.trace.json")
	stdout, stderr, code := runCLI(t, "report", dir, "--shiviz", shiviz, "--perfetto", trace)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := strings.TrimSpace(stdout); got != filepath.Join(dir, "report.html") {
		t.Errorf("printed %q, want the report's path", got)
	}
	for _, f := range []string{filepath.Join(dir, "report.html"), shiviz, trace} {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	b, _ := os.ReadFile(shiviz)
	checkShiViz(t, string(b))

	// Flags before RUN work too.
	if _, stderr, code := runCLI(t, "report", "--open-in-browser", "no", dir); code != 0 {
		t.Errorf("flags before RUN: exit %d: %s", code, stderr)
	}
}

func TestCommandReportRefuses(t *testing.T) {
	dir, _ := writeFixture(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", t.TempDir()}, "is not a run directory"},
		{[]string{"report"}, "needs the run directory"},
		{[]string{"report", dir, "--open-in-browser", "maybe"}, "want yes or no"},
		{[]string{"report", dir, "extra"}, "one run directory"},
		{[]string{"report", dir, "--shiviz", filepath.Join(t.TempDir(), "no", "such", "dir", "f")}, "--shiviz"},
	} {
		_, stderr, code := runCLI(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 saying %q", c.args, code, strings.TrimSpace(stderr), c.want)
		}
	}
	// A directory with a cluster.json but a broken log is a run that cannot be read: exit 2.
	bad := filepath.Join(dir, "nodes", "2.jsonl")
	if err := os.WriteFile(bad, []byte("{\"ts\":1,\"node\":2,\"inc\":1,\"lc\":1,\"ev\":\"send\"}\n{\"ts\":2}\n{\"ts\":3,\"node\":2,\"inc\":1,\"lc\":2,\"ev\":\"stop\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := runCLI(t, "report", dir); code != 2 || !strings.Contains(stderr, "cannot read the run") {
		t.Errorf("broken log: exit %d, %q", code, stderr)
	}
}
