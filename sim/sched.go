package sim

import (
	"time"

	lnode "github.com/leaderlab/leaderlab/node"
)

// The whole-node simulator's scheduler: one queue of happenings in virtual time, run by one
// goroutine in (time, sequence) order, so that the same seed gives the same run. A happening aimed
// at a node process runs on that process's event loop: it is discarded when the incarnation it was
// meant for is over (lost, if it says what that means), and held while the process is paused, to
// run in order when it is resumed.

type event struct {
	at  time.Duration
	seq uint64
	p   *proc // nil: the launcher's or the network's own
	inc int
	f   func()
	// lost is called instead of f when the incarnation it was meant for is over.
	lost func()
	off  bool // stopped (a timer)
}

func (e *event) Stop() bool {
	was := !e.off
	e.off = true
	return was
}

type evq []*event

func (q evq) less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}

func (q *evq) push(e *event) {
	*q = append(*q, e)
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (q *evq) pop() *event {
	h := *q
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h[last] = nil
	h = h[:last]
	i := 0
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	*q = h
	return top
}

// at schedules f at virtual time t, for process p's incarnation inc (p nil: for nobody's loop).
func (c *Cluster) at(t time.Duration, p *proc, inc int, f func()) *event {
	c.seq++
	e := &event{at: max(t, c.now), seq: c.seq, p: p, inc: inc, f: f}
	c.q.push(e)
	return e
}

// dispatch carries out one happening.
func (c *Cluster) dispatch(e *event) {
	c.now = e.at
	if e.off {
		return
	}
	if p := e.p; p != nil {
		if p.inc != e.inc || p.state == stateDead {
			if e.lost != nil {
				e.lost()
			}
			return
		}
		if p.state == statePaused {
			p.held = append(p.held, e)
			return
		}
	}
	e.f()
}

// loopWorld is one incarnation's lnode.World: virtual time, and a loop that is the scheduler.
type loopWorld struct {
	c   *Cluster
	p   *proc
	inc int
}

var _ lnode.World = loopWorld{}

func (w loopWorld) Now() time.Time { return time.Unix(0, w.c.base+int64(w.c.now)) }

func (w loopWorld) After(d time.Duration, f func()) lnode.Timer {
	return w.c.at(w.c.now+d, w.p, w.inc, f)
}

func (w loopWorld) Post(f func()) { w.c.at(w.c.now, w.p, w.inc, f) }
