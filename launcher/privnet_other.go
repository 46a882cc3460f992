//go:build !linux

package launcher

import (
	"errors"
	"fmt"
)

// RunInPrivateNet: network namespaces are Linux's.
func RunInPrivateNet() (int, error) {
	return ExitUnusable, fmt.Errorf("--net-backend netem on one host runs in a network namespace of its own, which only Linux has (give --hosts or --ssh-config for Linux hosts)")
}

var errSaid = errors.New("")

// ErrSaid tells whether RunInPrivateNet's error was already printed by the run it started.
func ErrSaid(err error) bool { return errors.Is(err, errSaid) }

func loopbackUp() error { return fmt.Errorf("network namespaces are Linux's") }
