package launcher

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/topology"
)

// fanOut never runs more than its limit at once, calls fn for every item, and names every failure.
func TestFanOutBoundsAndCollects(t *testing.T) {
	var now, peak, calls atomic.Int32
	items := make([]int, 200)
	for i := range items {
		items[i] = i + 1
	}
	err := fanOut(items, 7, func(id int) error {
		calls.Add(1)
		c := now.Add(1)
		for {
			p := peak.Load()
			if c <= p || peak.CompareAndSwap(p, c) {
				break
			}
		}
		time.Sleep(time.Millisecond)
		now.Add(-1)
		if id%50 == 0 {
			return fmt.Errorf("node %d failed", id)
		}
		return nil
	})
	if calls.Load() != 200 || peak.Load() > 7 {
		t.Errorf("%d calls, at most %d at once: want 200 and at most 7", calls.Load(), peak.Load())
	}
	for _, id := range []int{50, 100, 150, 200} {
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("node %d failed", id)) {
			t.Errorf("the errors do not name node %d: %v", id, err)
		}
	}
}

// retry tries a transient failure again, gives up at once on a node's refusal or a dead process.
func TestRetry(t *testing.T) {
	saved := retryBackoff
	retryBackoff = []time.Duration{time.Microsecond, time.Microsecond, time.Microsecond}
	defer func() { retryBackoff = saved }()
	alive := func() bool { return true }

	n := 0
	if err := retry(alive, func() error {
		if n++; n < 3 {
			return errors.New("dial control: i/o timeout")
		}
		return nil
	}); err != nil || n != 3 {
		t.Errorf("transient failures: %d tries, err %v; want 3 tries and success", n, err)
	}
	n = 0
	err := retry(alive, func() error { n++; return &refusal{"unknown control op"} })
	if n != 1 || err == nil {
		t.Errorf("a refusal was tried %d times (want 1), err %v", n, err)
	}
	n = 0
	err = retry(func() bool { return false }, func() error { n++; return errors.New("connection refused") })
	if n != 1 || err == nil {
		t.Errorf("a dead process was tried %d times (want 1), err %v", n, err)
	}
	n = 0
	err = retry(alive, func() error { n++; return errors.New("broken pipe") })
	if n != 4 || err == nil || !strings.Contains(err.Error(), "after 4 tries") {
		t.Errorf("a failure that lasts: %d tries, err %v; want 4 tries and an error that says so", n, err)
	}
}

// The descriptors a node needs grow with its links: a mesh's with N, a ring's not.
func TestFdsPerNode(t *testing.T) {
	if r, m := fdsPerNode(topology.Ring, 1000), fdsPerNode(topology.Mesh, 1000); r >= 100 || m < 2*999 {
		t.Errorf("fds per node at N=1000: ring %d, mesh %d; want a ring's small and a mesh's at least 2(N-1)", r, m)
	}
}
