package node

import (
	"container/heap"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// loopTimers are a node process's timers (wallWorld.After): a heap by due time and one timerfd
// set to the earliest, which the runtime's poller watches like a socket. On expiry a goroutine
// reading the timerfd posts fire to the event loop, which runs what is due. time.AfterFunc would
// do the same with the runtime's timers, but every runtime timer wakes the runtime's monitor thread
// (sysmon) from its deep sleep when it falls due, and sysmon then sleeps 20 µs to 10 ms more before
// it goes back: two more context switches of a thread that does nothing, for every heartbeat tick
// and detector check of every node. With no runtime timer armed, sysmon sleeps on (up to a
// minute). The timerfd is read and set with raw system calls, which do not wake it either
// (wire/rawio_linux.go).
type loopTimers struct {
	post func(func())
	f    *os.File // the timerfd
	rc   syscall.RawConn

	mu    sync.Mutex
	h     timerHeap
	seq   uint64
	armed time.Time // the due time the timerfd is set to; zero when disarmed
}

// newLoopTimers makes the timers of a loop that runs functions posted with post; nil when the
// system has no timerfd (the caller then uses the runtime's timers).
func newLoopTimers(post func(func())) *loopTimers {
	fd, _, e := syscall.RawSyscall(syscall.SYS_TIMERFD_CREATE, 1 /* CLOCK_MONOTONIC */, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if e != 0 {
		return nil
	}
	f := os.NewFile(fd, "timerfd") // non-blocking: the poller watches it
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil
	}
	lt := &loopTimers{post: post, f: f, rc: rc}
	go lt.wait()
	return lt
}

// wait posts fire whenever the timerfd expires, until it is closed.
func (lt *loopTimers) wait() {
	var n uint64
	for {
		err := lt.rc.Read(func(fd uintptr) bool {
			_, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&n)), 8)
			return e != syscall.EAGAIN
		})
		if err != nil {
			return // closed
		}
		lt.post(lt.fire)
	}
}

// close disarms every timer and releases the timerfd.
func (lt *loopTimers) close() {
	lt.mu.Lock()
	for _, t := range lt.h {
		t.idx = -1
	}
	lt.h = nil
	lt.mu.Unlock()
	lt.f.Close()
}

// loopTimer is one timer of loopTimers.
type loopTimer struct {
	lt  *loopTimers
	due time.Time
	seq uint64 // timers due at the same time run in the order they were armed
	f   func()
	idx int // in the heap; -1 once fired or stopped
}

func (lt *loopTimers) after(d time.Duration, f func()) Timer {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.seq++
	t := &loopTimer{lt: lt, due: time.Now().Add(d), seq: lt.seq, f: f}
	heap.Push(&lt.h, t)
	lt.rearm()
	return t
}

// Stop removes the timer; true when it had not fired yet.
func (t *loopTimer) Stop() bool {
	lt := t.lt
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if t.idx < 0 {
		return false
	}
	heap.Remove(&lt.h, t.idx)
	lt.rearm()
	return true
}

// fire runs, on the loop, every timer due now, in due order, one at a time: one that an earlier one
// stops does not run. Those armed meanwhile run at the next fire, even when due at once.
func (lt *loopTimers) fire() {
	now := time.Now()
	lt.mu.Lock()
	last := lt.seq
	for len(lt.h) > 0 && !lt.h[0].due.After(now) && lt.h[0].seq <= last {
		t := heap.Pop(&lt.h).(*loopTimer)
		lt.mu.Unlock()
		t.f()
		lt.mu.Lock()
	}
	lt.armed = time.Time{} // it expired
	lt.rearm()
	lt.mu.Unlock()
}

// rearm sets the timerfd to the earliest due time, when it is not set to it already (mu held).
func (lt *loopTimers) rearm() {
	var first time.Time
	if len(lt.h) > 0 {
		first = lt.h[0].due
	}
	if first.Equal(lt.armed) {
		return
	}
	lt.armed = first
	var spec [4]int64 // struct itimerspec: it_interval (0: once), it_value
	if !first.IsZero() {
		d := max(time.Until(first), 1) // 0 would disarm it
		spec[2], spec[3] = int64(d/time.Second), int64(d%time.Second)
	}
	_ = lt.rc.Control(func(fd uintptr) {
		syscall.RawSyscall6(syscall.SYS_TIMERFD_SETTIME, fd, 0, uintptr(unsafe.Pointer(&spec)), 0, 0, 0)
	})
}

// timerHeap orders timers by due time, then by arming.
type timerHeap []*loopTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].due.Equal(h[j].due) {
		return h[i].seq < h[j].seq
	}
	return h[i].due.Before(h[j].due)
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].idx, h[j].idx = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*loopTimer)
	t.idx = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.idx = -1
	return t
}
