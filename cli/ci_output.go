package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
)

// ciFlags are run's and check's output switches for programs and CI servers.
func ciFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "json", Usage: "print the verdict as JSON on stdout (verdict.json's content; with run --count, every run and a summary), and everything for people on stderr", Category: "output"},
		&cli.StringFlag{Name: "junit", Usage: "also write the verdict as JUnit XML to `FILE` (a test suite per run, a test case per property)", Category: "output"},
	}
}

// ciOut collects the verdicts of a command for --json and --junit.
type ciOut struct {
	json  bool
	junit string
	runs  []ciRun
}

// ciRun is one run as --json prints it with run --count.
type ciRun struct {
	Dir     string         `json:"dir"`
	Seed    int64          `json:"seed"`
	Exit    int            `json:"exit"`
	Error   string         `json:"error,omitempty"`
	Verdict *check.Verdict `json:"verdict"`
}

func newCIOut(c *cli.Context) *ciOut { return &ciOut{json: c.Bool("json"), junit: c.String("junit")} }

// text is where output for people goes: stderr under --json, so that stdout is the JSON alone.
func (o *ciOut) text() io.Writer {
	if o.json {
		return os.Stderr
	}
	return os.Stdout
}

// add records a run's outcome: its verdict as the launcher or the checker returned it, or, when
// it has none at hand (a replay), the run directory's verdict.json.
func (o *ciOut) add(res launcher.Result, err error) {
	r := ciRun{Dir: res.Dir, Exit: res.Code, Verdict: res.Verdict}
	if err != nil {
		r.Error = err.Error()
	}
	if r.Verdict == nil && res.Dir != "" && res.Code != ExitUnusable {
		if v, verr := check.ReadVerdict(res.Dir); verr == nil {
			r.Verdict = v
		} else if r.Error == "" {
			r.Error = verr.Error()
		}
	}
	if r.Verdict != nil {
		r.Seed = r.Verdict.Seed
	}
	o.runs = append(o.runs, r)
}

// finish prints the JSON (the one verdict, or with many the runs and a summary) and writes the
// JUnit file. The JUnit file is written whole or not at all (a temporary file renamed into place).
func (o *ciOut) finish(many bool, summary *countSummary) error {
	if o.json {
		var doc any
		switch {
		case many:
			doc = struct {
				Runs []ciRun `json:"runs"`
				*countSummary
			}{o.runs, summary}
		case len(o.runs) == 1 && o.runs[0].Verdict != nil:
			doc = o.runs[0].Verdict
		case len(o.runs) == 1:
			doc = o.runs[0] // no verdict: the run could not be made; its error says why
		}
		b, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
		fmt.Println(string(b))
	}
	if o.junit == "" {
		return nil
	}
	var runs []check.JUnitRun
	for _, r := range o.runs {
		jr := check.JUnitRun{Dir: r.Dir, Verdict: r.Verdict}
		if r.Verdict == nil {
			jr.Err = fmt.Errorf("%s", r.Error)
		}
		runs = append(runs, jr)
	}
	if err := writeAtomic(o.junit, func(w io.Writer) error { return check.WriteJUnit(w, runs) }); err != nil {
		return fmt.Errorf("--junit %s: %w", o.junit, err)
	}
	return nil
}
