package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/cli"
)

// TestRunsIndexesNestedRuns: `runs` lists real and simulated runs at any depth, with their verdicts,
// and --html writes an index linking each; runs/latest is not listed twice.
func TestRunsIndexesNestedRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run with real processes; skipped with -short")
	}
	root := t.TempDir()
	if code, out := leaderlab(t, "run", "-n", "3", "--duration", "2s", "--out", filepath.Join(root, "real")); code != 0 {
		t.Fatalf("real run exited %d:\n%s", code, out)
	}
	if code, out := leaderlab(t, "run", "--sim", "-n", "4", "--seed", "3", "--count", "2", "--out", filepath.Join(root, "bench", "deep")); code != 0 {
		t.Fatalf("sim runs exited %d:\n%s", code, out)
	}
	// a failing simulated run, nested two levels down
	leaderlab(t, "run", "--sim", "-n", "5", "--seed", "10", "--chaos", "at 1s link 5->4 drop", "--out", filepath.Join(root, "bench", "bad", "x"))
	code, out := leaderlab(t, "runs", root, "--json")
	if code != 1 {
		t.Fatalf("runs exited %d with a failed run among them, want 1:\n%s", code, out)
	}
	var rows []cli.RunRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("runs --json: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, r := range rows {
		got[filepath.ToSlash(r.Dir)] = r.World + " " + r.Verdict
	}
	want := map[string]string{"real": "real PASS", "bench/deep/run-001": "sim PASS", "bench/deep/run-002": "sim PASS", "bench/bad/x": "sim FAIL"}
	if len(got) != len(want) {
		t.Errorf("listed %v, want %v (bench/deep/latest is a link, not a run)", got, want)
	}
	for d, w := range want {
		if got[d] != w {
			t.Errorf("%s: %q, want %q", d, got[d], w)
		}
	}
	code, out = leaderlab(t, "runs", "--html", root)
	page, err := os.ReadFile(filepath.Join(root, "runs.html"))
	if err != nil || code != 1 || !strings.Contains(out, "4 runs: 3 passed, 1 failed") {
		t.Fatalf("runs --html: exit %d, %v:\n%s", code, err, out)
	}
	for _, link := range []string{`href="real/verdict.json"`, `href="bench/bad/x/verdict.json"`, "uniqueness (limit)"} {
		if !strings.Contains(string(page), link) {
			t.Errorf("index.html lacks %s", link)
		}
	}
	if code, out := leaderlab(t, "runs", filepath.Join(root, "nothing-here")); code != 2 || !strings.Contains(out, "want a directory of runs") {
		t.Errorf("runs of a missing directory: exit %d:\n%s", code, out)
	}
}

// TestCountUntilFailJSONAndJUnit: run --count 3 --until-fail stops at the first failing run and
// names its seed; --json is the runs and the summary on stdout; --junit is XML a CI server reads.
func TestCountUntilFailJSONAndJUnit(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "junit.xml")
	code, out := leaderlabSplit(t, "run", "--sim", "-n", "5", "--seed", "10", "--chaos", "at 1s link 5->4 drop",
		"--count", "3", "--until-fail", "--out", filepath.Join(dir, "series"), "--json", "--junit", junit)
	if code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out.stderr)
	}
	var doc struct {
		Runs []struct {
			Dir     string `json:"dir"`
			Seed    int64  `json:"seed"`
			Verdict *struct {
				OK bool `json:"ok"`
			} `json:"verdict"`
		} `json:"runs"`
		Made         int     `json:"made"`
		Failed       int     `json:"failed"`
		FailingSeeds []int64 `json:"failing_seeds"`
		StoppedEarly bool    `json:"stopped_early"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &doc); err != nil {
		t.Fatalf("stdout is not the JSON document: %v\n%s", err, out.stdout)
	}
	if doc.Made != 1 || doc.Failed != 1 || len(doc.FailingSeeds) != 1 || doc.FailingSeeds[0] != 10 || !doc.StoppedEarly ||
		len(doc.Runs) != 1 || doc.Runs[0].Verdict == nil || doc.Runs[0].Verdict.OK {
		t.Errorf("summary %+v", doc)
	}
	if !strings.Contains(out.stderr, "failing seeds: 10") || !strings.Contains(out.stderr, "leaderlab run --replay") {
		t.Errorf("stderr lacks the failing seed and the replay command:\n%s", out.stderr)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(b, &suites); err != nil {
		t.Fatalf("junit.xml: %v\n%s", err, b)
	}
	if len(suites.Suites) != 1 || suites.Failures < 1 || suites.Tests != len(suites.Suites[0].Cases) {
		t.Errorf("junit %+v", suites)
	}
	failed := false
	for _, c := range suites.Suites[0].Cases {
		failed = failed || (c.Name == "uniqueness" && c.Failure != nil && strings.Contains(c.Failure.Message, "documented limit"))
	}
	if !failed {
		t.Errorf("junit: no failed uniqueness case naming the documented limit:\n%s", b)
	}
	// A single run with --json: stdout is verdict.json's content, and nothing else.
	code, out = leaderlabSplit(t, "run", "--sim", "-n", "4", "--seed", "2", "--json", "--out", filepath.Join(dir, "one"))
	var v struct {
		OK     bool `json:"ok"`
		Leader *int `json:"leader"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &v); err != nil || code != 0 || !v.OK || v.Leader == nil || *v.Leader != 3 {
		t.Errorf("run --json: exit %d, %v, %+v\n%s", code, err, v, out.stdout)
	}
	// check --json the same way.
	code, out = leaderlabSplit(t, "check", "--json", filepath.Join(dir, "one"))
	if code != 0 || !strings.HasPrefix(strings.TrimSpace(out.stdout), "{") || !strings.Contains(out.stderr, "verdict: PASS") {
		t.Errorf("check --json: exit %d\nstdout %s\nstderr %s", code, out.stdout, out.stderr)
	}
}

// split is a command's standard output and standard error, apart.
type split struct{ stdout, stderr string }

// leaderlabSplit runs the binary with stdout and stderr kept apart.
func leaderlabSplit(t *testing.T, args ...string) (int, split) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("leaderlab %v: %v", args, err)
	}
	return code, split{o.String(), e.String()}
}

// TestCompletionAndMan: the bash completion script completes commands and flags by asking the
// binary; the manual page is roff with every command.
func TestCompletionAndMan(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the completion script cannot be tried")
	}
	bin := t.TempDir()
	if err := os.Symlink(binary, filepath.Join(bin, "leaderlab")); err != nil {
		t.Fatal(err)
	}
	script := `source <(leaderlab completion bash)
COMP_WORDS=(leaderlab run --sy); COMP_CWORD=2; _leaderlab_complete; echo "1:${COMPREPLY[*]}"
COMP_WORDS=(leaderlab bench s); COMP_CWORD=2; _leaderlab_complete; echo "2:${COMPREPLY[*]}"`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	got, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(got), "1:--sync") || !strings.Contains(string(got), "2:scale sync") {
		t.Errorf("bash completion: %v\n%s", err, got)
	}
	if code, out := leaderlab(t, "completion", "zsh"); code != 0 || !strings.Contains(out, "compdef _leaderlab_complete leaderlab") {
		t.Errorf("completion zsh: exit %d\n%s", code, out)
	}
	if code, out := leaderlab(t, "completion", "fish"); code != 2 || !strings.Contains(out, "want bash or zsh") {
		t.Errorf("completion fish: exit %d\n%s", code, out)
	}
	code, out := leaderlab(t, "man")
	if code != 0 || !strings.HasPrefix(out, ".nh\n.TH leaderlab") {
		t.Fatalf("man: exit %d\n%.300s", code, out)
	}
	for _, c := range []string{"run", "check", "runs", "report", "bench", "explore"} {
		if !strings.Contains(out, "\n.SH "+strings.ToUpper("commands")) || !strings.Contains(out, c) {
			t.Errorf("the manual page lacks %s", c)
		}
	}
	if code, out := leaderlab(t, "--version"); code != 0 || !strings.HasPrefix(out, "leaderlab version ") {
		t.Errorf("--version: exit %d: %s", code, out)
	}
}
