package node

import (
	"syscall"
	"unsafe"
)

// pdeathsig is the process's parent-death signal, read at package initialisation, while the main
// goroutine still runs on the main thread: the setting is the main thread's (the threads the Go
// runtime adds later do not have it), so read from any other thread it says none.
var pdeathsig = func() int32 {
	var sig int32
	const prGetPdeathsig = 2 // PR_GET_PDEATHSIG
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prGetPdeathsig, uintptr(unsafe.Pointer(&sig)), 0); errno != 0 {
		return 0
	}
	return sig
}()

// parentWatched reports whether the kernel already ends this process when its parent goes: the
// launcher and the host agent start nodes with a parent-death signal. Then the node needs no clock
// of its own to notice it, and at a thousand nodes on a host such a clock is thousands of wakeups a
// second that the elections pay for.
func parentWatched() bool { return pdeathsig != 0 }
