package wire

import (
	"fmt"
	"syscall"
)

// markControl sets SO_MARK to mark on a socket before it binds or connects (nil when mark is 0).
func markControl(mark int) func(network, address string, c syscall.RawConn) error {
	if mark <= 0 {
		return nil
	}
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_MARK, mark)
		}); err != nil {
			return err
		}
		if serr != nil {
			return fmt.Errorf("wire: SO_MARK %d: %w (it needs CAP_NET_ADMIN: run as root)", mark, serr)
		}
		return nil
	}
}
