//go:build !linux

package launcher

// Elsewhere the progress is plain lines: the launcher's processes need Linux anyway (parent-death
// signals).
func isTerminal(uintptr) bool { return false }

func termWidth(uintptr) int { return 0 }
