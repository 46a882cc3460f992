package cli

// Exit codes of every command (DESIGN.md). A run's own outcome comes back from the launcher as
// launcher.Result.Code, in the same values (TestExitCodesAreTheLaunchers), and is passed on as is.
const (
	ExitOK        = 0 // the checker passed, or the command did its job
	ExitViolation = 1 // the checker found a violation
	ExitUnusable  = 2 // the run could not be made or read, or the command line was wrong
	// ExitInconclusive: the run ended (or its extension ran out) while its election was still
	// progressing, no property violated so far (the machine fell behind): neither pass nor fail.
	ExitInconclusive = 3
)
