package rundir

import "time"

// Timings are the timeouts of a run that follow from the failure detector's timeout unless given.
// The launcher and the simulator derive them with the same rules, so a simulated run is judged
// like a real one.
type Timings struct {
	// ElectionTimeout is Bully's T (default: the detector timeout).
	ElectionTimeout time.Duration
	// CoordinatorTimeout is Bully's T1 (default: 3 × the detector timeout, long enough for a higher
	// node's own election to finish after it answered).
	CoordinatorTimeout time.Duration
	// Grace is how long two live nodes may both believe in themselves (default: the detector timeout).
	Grace time.Duration
	// TerminationBound is how long an elect may stay open (default: max(2s, 5 × (T + T1))).
	TerminationBound time.Duration
}

// Derive fills the zero fields of t from the detector timeout.
func (t *Timings) Derive(timeout time.Duration) {
	if t.ElectionTimeout == 0 {
		t.ElectionTimeout = timeout
	}
	if t.CoordinatorTimeout == 0 {
		t.CoordinatorTimeout = 3 * timeout
	}
	if t.Grace == 0 {
		t.Grace = timeout
	}
	if t.TerminationBound == 0 {
		t.TerminationBound = max(2*time.Second, 5*(t.ElectionTimeout+t.CoordinatorTimeout))
	}
}
