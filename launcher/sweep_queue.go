package launcher

import "slices"

// sweepQueue is the one queue of a sweep over hosts: it hands out job indices 0, 1, … (below
// count; without end when count is 0), the lowest first, to whichever host has room (so a host
// that finishes early takes more), takes back the jobs of a lost host to hand them out again, and
// stops handing out past a cut (run --until-fail: nothing after the first failing run is needed).
// It holds no lock of its own: the sweep's mutex guards it.
type sweepQueue struct {
	count int   // jobs in all; 0: no end
	next  int   // the next fresh index
	redo  []int // indices taken back from lost hosts, ascending
	cut   int   // no index >= cut is handed out; -1: no cut
	out   int   // handed out and not finished (nor taken back)
	done  int   // finished
}

func newSweepQueue(count int) *sweepQueue { return &sweepQueue{count: count, cut: -1} }

// beyond tells whether index i is past the end or the cut.
func (q *sweepQueue) beyond(i int) bool {
	return (q.count > 0 && i >= q.count) || (q.cut >= 0 && i >= q.cut)
}

// available tells whether take would hand out an index now.
func (q *sweepQueue) available() bool { return len(q.redo) > 0 || !q.beyond(q.next) }

// take hands out the lowest index waiting: a lost host's job before a fresh one.
func (q *sweepQueue) take() (int, bool) {
	if len(q.redo) > 0 {
		i := q.redo[0]
		q.redo = q.redo[1:]
		q.out++
		return i, true
	}
	if q.beyond(q.next) {
		return 0, false
	}
	q.next++
	q.out++
	return q.next - 1, true
}

// giveBack returns the unfinished jobs of a lost host to the queue.
func (q *sweepQueue) giveBack(is []int) {
	for _, i := range is {
		q.out--
		if !q.beyond(i) {
			q.redo = append(q.redo, i)
		}
	}
	slices.Sort(q.redo)
}

// finish records job i's result.
func (q *sweepQueue) finish(int) {
	q.out--
	q.done++
}

// cutAfter says that no job after i is needed (the caller found what it looked for at i).
func (q *sweepQueue) cutAfter(i int) {
	if q.cut >= 0 && q.cut <= i+1 {
		return
	}
	q.cut = i + 1
	q.redo = slices.DeleteFunc(q.redo, q.beyond)
}

// exhausted tells whether the sweep is over: nothing waits and nothing is out.
func (q *sweepQueue) exhausted() bool { return q.out == 0 && !q.available() }
