package launcher

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
)

// The launcher talks to every node over its control endpoint: to begin, to ask who it follows, to
// give it link rules. At a thousand nodes on two cores, a call per node all at once is a thousand
// dials that the nodes, busy starting, cannot accept in time (run -n 1000 lost 889 begins to
// "dial … i/o timeout" and "broken pipe"). So calls go out a bounded number at a time, and the
// idempotent ones are retried.

// controlParallel is how many control calls the launcher makes at once: enough to keep every core
// busy answering, few enough that no node waits long in an accept queue.
func controlParallel() int { return max(16, 8*runtime.GOMAXPROCS(0)) }

// fanOut calls fn for every item, at most limit at once, and returns the errors of the calls that
// failed, collected (nil when none did).
func fanOut[T any](items []T, limit int, fn func(T) error) error {
	var mu sync.Mutex
	var errs *multierror.Error
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for _, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				errs = multierror.Append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errs.ErrorOrNil()
}

// refusal is a node's own answer that it will not do what it was asked: retrying cannot help.
type refusal struct{ msg string }

func (e *refusal) Error() string { return e.msg }

// retryBackoff are the waits before the retries of an idempotent control call: about 3 s in all,
// which outlasts a node that the scheduler did not run for a while on a loaded machine.
var retryBackoff = []time.Duration{25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond,
	200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, 1600 * time.Millisecond}

// retry calls fn until it succeeds, it returns a refusal, or the backoff is spent; alive tells
// whether trying again still makes sense (the process has not exited). The error of the last try
// says how many there were.
func retry(alive func() bool, fn func() error) error {
	err := fn()
	for i, d := range retryBackoff {
		var ref *refusal
		if err == nil || errors.As(err, &ref) || !alive() {
			return err
		}
		time.Sleep(d)
		if err = fn(); err != nil && i == len(retryBackoff)-1 {
			return fmt.Errorf("%w (after %d tries)", err, len(retryBackoff)+1)
		}
	}
	return err
}
