//go:build !linux

package node

import "time"

// loopTimers exist on Linux only (looptimers_linux.go); elsewhere wallWorld uses the runtime's.
type loopTimers struct{}

func newLoopTimers(func(func())) *loopTimers { return nil }

func (*loopTimers) after(time.Duration, func()) Timer { panic("no loop timers") }

func (*loopTimers) close() {}
