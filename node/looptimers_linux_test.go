package node

import (
	"slices"
	"testing"
	"time"
)

// The loop timers run what is due on the loop, in due order (then in arming order), never what
// was stopped, and each once; Stop tells whether it stopped a timer that had not fired. The test
// waits for the timers' own runs, never for a time to pass.
func TestLoopTimers(t *testing.T) {
	loop := make(chan func(), 64)
	lt := newLoopTimers(func(f func()) { loop <- f })
	if lt == nil {
		t.Skip("no timerfd")
	}
	defer lt.close()
	var ran []string
	arm := func(name string, d time.Duration) Timer {
		return lt.after(d, func() { ran = append(ran, name) })
	}
	arm("c", 30*time.Millisecond)
	a := arm("a", 10*time.Millisecond)
	arm("b1", 20*time.Millisecond)
	stopped := arm("x", 15*time.Millisecond)
	if !stopped.Stop() {
		t.Fatal("Stop of an armed timer: false")
	}
	if stopped.Stop() {
		t.Fatal("a second Stop: true")
	}
	want := []string{"a", "b1", "c"}
	guard := time.After(10 * time.Second) // a guard against a hang, not a bet on timing
	for len(ran) < len(want) {
		select {
		case f := <-loop:
			f()
		case <-guard:
			t.Fatalf("ran %v, want %v", ran, want)
		}
	}
	if !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}
	if a.Stop() {
		t.Fatal("Stop of a timer that fired: true")
	}
	// A timer stopped by one that ran before it in the same fire does not run.
	ran = nil
	var second Timer
	lt.after(0, func() { ran = append(ran, "first"); second.Stop() })
	second = lt.after(0, func() { ran = append(ran, "second") })
	lt.after(time.Millisecond, func() { ran = append(ran, "third") })
	for len(ran) < 2 {
		select {
		case f := <-loop:
			f()
		case <-guard:
			t.Fatalf("ran %v, want [first third]", ran)
		}
	}
	if !slices.Equal(ran, []string{"first", "third"}) {
		t.Fatalf("ran %v, want [first third]", ran)
	}
	// Timers armed for the same instant run in the order they were armed; one armed by a timer
	// that runs runs too.
	ran = nil
	lt.after(0, func() {
		ran = append(ran, "p")
		lt.after(0, func() { ran = append(ran, "r") })
	})
	lt.after(0, func() { ran = append(ran, "q") })
	for len(ran) < 3 {
		select {
		case f := <-loop:
			f()
		case <-guard:
			t.Fatalf("ran %v, want [p q r]", ran)
		}
	}
	if !slices.Equal(ran, []string{"p", "q", "r"}) {
		t.Fatalf("ran %v, want [p q r]", ran)
	}
}
