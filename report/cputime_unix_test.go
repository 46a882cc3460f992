//go:build unix

package report

import (
	"syscall"
	"time"
)

// cpuTime is the process's user and system CPU time so far: on a shared machine, the part of a
// benchmark's wall time that was its own.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
