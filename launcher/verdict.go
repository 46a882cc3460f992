package launcher

// A run judged: the directory read back, checked, verdict.json written and the table printed.

import (
	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
)

// Check reads a run directory, judges it, writes verdict.json and prints the verdict table.
func Check(dir string, stdout interface{ Write([]byte) (int, error) }) (int, error) {
	_, code, err := CheckVerdict(dir, stdout)
	return code, err
}

// CheckVerdict is Check that also returns the verdict (nil when the run could not be read). The
// logs are streamed, never held: a run of any length is judged in memory bounded by its nodes.
func CheckVerdict(dir string, stdout interface{ Write([]byte) (int, error) }) (*check.Verdict, int, error) {
	s, err := logs.OpenStream(dir)
	if err != nil {
		return nil, ExitUnusable, err
	}
	v, err := check.CheckStream(s, check.Options{})
	if err != nil {
		return nil, ExitUnusable, err
	}
	if err := v.WriteFile(dir); err != nil {
		return v, ExitUnusable, err
	}
	v.Print(stdout)
	return v, ExitCode(v), nil
}

// ExitCode is the exit code of a judged run: ExitOK, ExitViolation, or ExitInconclusive for a run
// that ended while its election was still progressing.
func ExitCode(v *check.Verdict) int {
	switch v.Result() {
	case check.OutcomePass:
		return ExitOK
	case check.OutcomeInconclusive:
		return ExitInconclusive
	}
	return ExitViolation
}
