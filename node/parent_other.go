//go:build !linux

package node

// parentWatched reports whether the kernel ends this process when its parent goes: only Linux has
// a parent-death signal, so elsewhere the node watches its parent itself.
func parentWatched() bool { return false }
