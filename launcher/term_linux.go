package launcher

import (
	"syscall"
	"unsafe"
)

// isTerminal tells whether fd is a terminal: whether it answers TCGETS, as isatty(3) asks. (A
// character device is not enough: /dev/null is one.)
func isTerminal(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TCGETS, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}

// termWidth is the terminal's width in columns, 0 when unknown.
func termWidth(fd uintptr) int {
	var ws struct{ row, col, x, y uint16 }
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
	if errno != 0 {
		return 0
	}
	return int(ws.col)
}
