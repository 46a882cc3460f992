package node

import (
	"syscall"
	"unsafe"
)

// parentWatched reports whether the kernel already ends this process when its parent goes: the
// launcher and the host agent start nodes with a parent-death signal. Then the node needs no clock
// of its own to notice it, and at a thousand nodes on a host such a clock is thousands of wakeups a
// second that the elections pay for.
func parentWatched() bool {
	var sig int32
	const prGetPdeathsig = 2 // PR_GET_PDEATHSIG
	_, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetPdeathsig, uintptr(unsafe.Pointer(&sig)), 0)
	return errno == 0 && sig != 0
}
