package logs

import (
	"io"
	"os"
	"syscall"
	"unsafe"
)

// writeLine writes b to f (its descriptor fd) with raw write(2) calls: one, unless the kernel
// takes less (then the rest, as os.File.Write does). A node writes a line per event, and an
// ordinary system call (entersyscall) wakes the runtime's monitor thread whenever it sleeps, which
// it does whenever the node waits between two messages (wire/rawio_linux.go says what that cost).
// The price is that the call keeps its P: a write to a regular file goes to the page cache, and
// waits for the disk only when the kernel throttles a writer of too many dirty pages.
func writeLine(f *os.File, fd uintptr, b []byte) error {
	for len(b) > 0 {
		n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch {
		case e == syscall.EINTR:
			continue
		case e != 0:
			return &os.PathError{Op: "write", Path: f.Name(), Err: e}
		case n == 0:
			return &os.PathError{Op: "write", Path: f.Name(), Err: io.ErrShortWrite}
		}
		b = b[n:]
	}
	return nil
}
