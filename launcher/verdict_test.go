package launcher

import (
	"testing"

	"github.com/leaderlab/leaderlab/check"
)

// TestExitCode: a verdict's outcome is the run's exit code; a verdict.json written before outcomes
// existed reads by its ok.
func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		v    check.Verdict
		want int
	}{
		{check.Verdict{OK: true, Outcome: check.OutcomePass}, ExitOK},
		{check.Verdict{Outcome: check.OutcomeFail}, ExitViolation},
		{check.Verdict{Outcome: check.OutcomeInconclusive}, ExitInconclusive},
		{check.Verdict{OK: true}, ExitOK},
		{check.Verdict{}, ExitViolation},
	} {
		if got := ExitCode(&c.v); got != c.want {
			t.Errorf("ok %v outcome %q: exit %d, want %d", c.v.OK, c.v.Outcome, got, c.want)
		}
	}
}
