//go:build !linux

package checker

import "unsafe"

// adviseHuge is Linux's madvise(MADV_HUGEPAGE) (huge_linux.go); elsewhere nothing.
func adviseHuge(p unsafe.Pointer, n int) {}
