package sim

import (
	"time"

	"github.com/leaderlab/leaderlab/election"
)

// kind says what an item does when its time comes.
type kind uint8

const (
	kStart   kind = iota + 1 // InStart of node's first incarnation
	kDeliver                 // a message from `from` arrives at node
	kTimer                   // the machine's timer slot aux (generation gen) fires at node
	kStats                   // the periodic stats events of every node
)

// item is one scheduled happening. Items are values in a heap, not pointers, and hold no pointers
// either: a run makes millions, moving them needs no GC write barrier, the GC never scans the heap,
// and 40 bytes keep a node's four children in one or two cache lines.
type item struct {
	at   time.Duration
	sk   uint64 // seq<<8 | kind: ties at the same time keep the order of scheduling (so a link's FIFO)
	env  uint32 // kDeliver: the message's envelope (Sim.env)
	inc  int32  // the incarnation of node it is meant for
	aux  int32
	gen  uint32 // kTimer: the timer's generation; kHeartbeat: the sender's incarnation
	node int16  // where it happens
	from int16  // the peer it concerns
}

func (it *item) kind() kind { return kind(it.sk & 0xff) }

// envelope is a message in flight, and the log's copy of it: events point at m.
type envelope struct {
	m    election.Message
	lc   uint64 // the sender's Lamport clock after its send event
	finc int32  // the sender's incarnation
	kc   int32  // the index of its kind's counter
	refs int32  // deliveries still to come (a duplicate adds one); freed at 0
}

func (a *item) less(b *item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.sk < b.sk
}

// queue is a 4-ary min-heap of items by (at, seq).
type queue struct {
	h []item
}

func newQueue(capacity int) queue { return queue{h: make([]item, 0, capacity)} }

func (q *queue) len() int { return len(q.h) }

func (q *queue) next() time.Duration { return q.h[0].at }

func (q *queue) push(it item) {
	q.h = append(q.h, it)
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !it.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = it
}

func (q *queue) pop() item {
	h := q.h
	top := h[0]
	last := len(h) - 1
	it := h[last]
	h = h[:last]
	q.h = h
	n := len(h)
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		end := min(c+4, n)
		for j := c + 1; j < end; j++ {
			if h[j].less(&h[m]) {
				m = j
			}
		}
		if !h[m].less(&it) {
			break
		}
		h[i] = h[m]
		i = m
	}
	h[i] = it
	return top
}
