//go:build !linux

package wire

import (
	"errors"
	"syscall"
)

// markControl refuses a mark: SO_MARK is Linux's.
func markControl(mark int) func(network, address string, c syscall.RawConn) error {
	if mark <= 0 {
		return nil
	}
	return func(string, string, syscall.RawConn) error {
		return errors.New("wire: a firewall mark (SO_MARK) needs Linux")
	}
}
