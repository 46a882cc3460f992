package cli

import (
	"testing"

	"github.com/leaderlab/leaderlab/launcher"
)

// TestExitCodesAreTheLaunchers: a command passes a run's launcher.Result.Code on as its exit code,
// so the two sets of codes must say the same.
func TestExitCodesAreTheLaunchers(t *testing.T) {
	for _, c := range []struct{ cli, launcher int }{
		{ExitOK, launcher.ExitOK}, {ExitViolation, launcher.ExitViolation}, {ExitUnusable, launcher.ExitUnusable},
		{ExitInconclusive, launcher.ExitInconclusive},
	} {
		if c.cli != c.launcher {
			t.Errorf("cli exit code %d, launcher's %d", c.cli, c.launcher)
		}
	}
}
