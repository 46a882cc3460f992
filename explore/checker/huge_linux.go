package checker

import (
	"syscall"
	"unsafe"
)

// hugeMin is the least array asked to come in huge pages: below it the kernel's 4 KB pages cost
// little, and a VMA split for it would be wasted.
const hugeMin = 4 << 20

// adviseHuge asks the kernel to back the array at p (n bytes, not touched yet) with 2 MB pages
// where it can (madvise MADV_HUGEPAGE; the kernel's default, "madvise", gives them only so). The
// seen table doubles as it grows, each time into fresh memory the search then writes all over:
// with 4 KB pages that is a page fault per 4 KB, and on a paravirtualised machine a fault costs
// microseconds (Franklin N = 5 with a crash: 28,869 faults, a quarter of its time on one worker).
// Only advice: where the kernel gives none (THP off), nothing changes.
func adviseHuge(p unsafe.Pointer, n int) {
	if n < hugeMin {
		return
	}
	const huge = 2 << 20
	b := unsafe.Slice((*byte)(p), n)
	skip := int((huge - uintptr(p)%huge) % huge) // to the first 2 MB boundary in it
	if skip >= n {
		return
	}
	b = b[skip:]
	b = b[:len(b)-len(b)%huge]
	if len(b) == 0 {
		return
	}
	_ = syscall.Madvise(b, syscall.MADV_HUGEPAGE)
}
