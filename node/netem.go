package node

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/wire"
)

// netem applies the chaos agent's link rules to what arrives from peers, on the receiving side as
// Maelstrom does: a rule for peer From holds every frame and every heartbeat datagram from From.
// It sits between the transport's callbacks and the event loop's consumers (deliver, the detector)
// and runs on the loop, so the rules, the random streams and the delay queues have one owner and
// need no locks; the transport's reader goroutines only post, as before, and never wait on a rule.
//
// Each incoming link has two channels, frames and heartbeats, each with its own random stream and
// its own delay queue: heartbeat traffic does not shift the draws that decide the frames, so the
// k-th frame from a peer meets the same fate in every run with the same seed and rules.
type netem struct {
	n *node
	// rules are the rules in force, as the last accepted CtlRules gave them; byFrom indexes them.
	rules  []wire.LinkRule
	byFrom map[int][]wire.LinkRule

	seed  uint64
	links map[inKey]*inLink

	// loose holds the timers of reordered deliveries, which keep no queue, so that close can stop
	// them.
	loose   map[uint64]Timer
	looseID uint64

	// hbDrops counts heartbeats discarded by rules: they are not logged one by one, but reported in
	// the stats events (hb_drops).
	hbDrops int64
	closed  bool
}

// channel tells frames from heartbeats.
type channel uint8

const (
	chFrames channel = iota + 1
	chHeartbeats
)

type inKey struct {
	from int
	ch   channel
}

// inLink is one channel of the link from a peer.
type inLink struct {
	rng *rand.Rand
	// queue holds the in-order deliveries waiting for their time, with non-decreasing due times;
	// one timer, for the head, drains it. A message that arrives while the queue is not empty joins
	// it even when no rule delays it any more: a message already in flight is still delivered, and
	// a later one must not overtake it.
	queue []pending
	timer Timer
	gen   uint64
}

type pending struct {
	due time.Time
	fn  func()
}

func (e *netem) init(n *node, seed int64) {
	e.n = n
	e.seed = uint64(seed)
	e.byFrom = map[int][]wire.LinkRule{}
	e.links = map[inKey]*inLink{}
	e.loose = map[uint64]Timer{}
}

// link returns the channel ch of the link from peer from, making it on first use. Its random stream
// is seeded by the cluster seed, this node, its incarnation, the peer and the channel.
func (e *netem) link(from int, ch channel) *inLink {
	k := inKey{from, ch}
	l := e.links[k]
	if l == nil {
		s := mix(uint64(e.n.self), uint64(e.n.inc), uint64(from), uint64(ch))
		l = &inLink{rng: rand.New(rand.NewPCG(e.seed, s))}
		e.links[k] = l
	}
	return l
}

// mix hashes a few numbers into one seed (splitmix64 steps), so that nearby IDs give unrelated
// streams.
func mix(xs ...uint64) uint64 {
	var h uint64 = 0x9e3779b97f4a7c15
	for _, x := range xs {
		h ^= x
		h += 0x9e3779b97f4a7c15
		h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9
		h = (h ^ (h >> 27)) * 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// setRules replaces every rule (an empty list heals). The set is checked whole first: a refused
// request leaves the rules in force as they were. Messages already held by a delay are delivered
// as planned.
func (e *netem) setRules(rules []wire.LinkRule) error {
	for i, r := range rules {
		if err := checkRule(r, e.n.self, e.n.peers); err != nil {
			return fmt.Errorf("link rule %d of %d (from %d): %w", i+1, len(rules), r.From, err)
		}
	}
	e.rules = slices.Clone(rules)
	clear(e.byFrom)
	for _, r := range e.rules {
		e.byFrom[r.From] = append(e.byFrom[r.From], r)
	}
	return nil
}

// maxRuleDelay bounds Delay + Jitter: a longer delay is a mistake of units, not a fault to inject.
const maxRuleDelay = time.Hour

// checkRule validates one rule; the error names the bad value and the accepted range.
func checkRule(r wire.LinkRule, self int, peers []int) error {
	prob := func(name string, p float64) error {
		if math.IsNaN(p) || p < 0 || p > 1 {
			return fmt.Errorf("%s %v: want a probability in 0..1", name, p)
		}
		return nil
	}
	switch {
	case r.From == self:
		return fmt.Errorf("from is this node's own ID (want a peer: %v)", peers)
	case !slices.Contains(peers, r.From):
		return fmt.Errorf("node %d is not a peer (peers: %v)", r.From, peers)
	case r.Delay < 0:
		return fmt.Errorf("delay %v: want 0 or more", time.Duration(r.Delay))
	case r.Jitter < 0 || r.Jitter > r.Delay:
		return fmt.Errorf("jitter %v: want 0..delay (%v), so that no delay is negative", time.Duration(r.Jitter), time.Duration(r.Delay))
	case r.Delay+r.Jitter > int64(maxRuleDelay):
		return fmt.Errorf("delay %v + jitter %v: want at most %v", time.Duration(r.Delay), time.Duration(r.Jitter), maxRuleDelay)
	}
	if err := prob("loss", r.Loss); err != nil {
		return err
	}
	return prob("dup", r.Dup)
}

// fate is what the rules of a link do to one message.
type fate struct {
	// why is the reason it was discarded; empty when it is delivered.
	why string
	// delays holds one delay per copy to deliver: the message itself, then its duplicates.
	delays  []time.Duration
	reorder bool
}

// reorderDelay is the delay of a reorder rule that names none: messages must be held to overtake
// each other (Linux netem's reorder, too, does nothing without a delay).
const reorderDelay = 10 * time.Millisecond

// spread returns a rule's delay and jitter. Reorder without jitter would hold every message alike
// and reorder nothing, so it draws each delay uniformly in 0..2×Delay instead (same mean), and a
// reorder with no delay at all in 0..2×reorderDelay.
func spread(r wire.LinkRule) (delay, jitter int64) {
	delay, jitter = r.Delay, r.Jitter
	if r.Reorder && jitter == 0 {
		if delay == 0 {
			delay = int64(reorderDelay)
		}
		jitter = delay
	}
	return delay, jitter
}

// judge decides one message's fate. The rules of a link compose in order, like a chain of netem
// qdiscs: the first rule that blocks or loses the message discards it and names the reason; the
// delays of all rules add up; each rule's Dup adds at most one copy, delayed independently; Reorder
// in any rule frees the link from its order. Draws are made only for the faults a rule has, so a
// rule set without randomness leaves the stream untouched.
func judge(rng *rand.Rand, rules []wire.LinkRule) fate {
	var f fate
	for _, r := range rules {
		switch {
		case r.Drop:
			return fate{why: reason("drop", r)}
		case r.Loss > 0 && rng.Float64() < r.Loss:
			return fate{why: reason("loss "+percent(r.Loss), r)}
		}
		f.reorder = f.reorder || r.Reorder
	}
	copies := 1
	for _, r := range rules {
		if r.Dup > 0 && rng.Float64() < r.Dup {
			copies++
		}
	}
	for range copies {
		var d time.Duration
		for _, r := range rules {
			delay, jitter := spread(r)
			d += time.Duration(delay)
			if jitter > 0 {
				d += time.Duration(rng.Int64N(2*jitter+1) - jitter)
			}
		}
		f.delays = append(f.delays, d)
	}
	return f
}

// reason is a drop event's reason: what the rule did, then the chaos step that made it.
func reason(what string, r wire.LinkRule) string {
	why := r.Why
	if why == "" {
		why = "link rule from node " + strconv.Itoa(r.From)
	}
	return what + ": " + why
}

func percent(p float64) string { return strconv.FormatFloat(p*100, 'g', 4, 64) + "%" }

// frame takes a frame from peer from (incarnation inc) off the transport.
func (e *netem) frame(from, inc int, env *wire.Envelope) {
	e.pass(from, chFrames, func() { e.n.deliver(from, inc, env) }, func(why string) {
		n := e.n
		n.stats.Drops++
		m := env.Msg
		n.emit(&logs.Event{Ev: logs.EvDrop, From: from, Msg: &m, Reason: why})
	})
}

// heartbeat takes a heartbeat datagram off the transport. Discarded ones are only counted.
func (e *netem) heartbeat(d wire.Datagram, from string) {
	e.pass(d.From, chHeartbeats, func() { e.n.det.datagram(d, from) }, func(string) { e.hbDrops++ })
}

// pass delivers, holds or discards one message from peer from on channel ch.
func (e *netem) pass(from int, ch channel, deliver func(), drop func(why string)) {
	rules := e.byFrom[from]
	l := e.links[inKey{from, ch}]
	if len(rules) == 0 && (l == nil || len(l.queue) == 0) {
		deliver() // the common case: no rule, nothing in flight
		return
	}
	if l == nil {
		l = e.link(from, ch)
	}
	f := judge(l.rng, rules)
	if f.why != "" {
		drop(f.why)
		return
	}
	now := e.n.w.Now()
	for _, d := range f.delays {
		switch {
		case f.reorder && d <= 0:
			deliver()
		case f.reorder:
			e.after(d, deliver)
		case d <= 0 && len(l.queue) == 0:
			deliver()
		default:
			due := now.Add(d)
			if q := len(l.queue); q > 0 && due.Before(l.queue[q-1].due) {
				due = l.queue[q-1].due // keep the link's order
			}
			l.queue = append(l.queue, pending{due, deliver})
			if len(l.queue) == 1 {
				e.arm(l)
			}
		}
	}
}

// after delivers one reordered message d from now, through the loop.
func (e *netem) after(d time.Duration, deliver func()) {
	if e.closed {
		return
	}
	e.looseID++
	id := e.looseID
	e.loose[id] = e.n.w.After(d, func() {
		if _, ok := e.loose[id]; ok {
			delete(e.loose, id)
			deliver()
		}
	})
}

// arm sets l's timer for the head of its queue.
func (e *netem) arm(l *inLink) {
	if e.closed || len(l.queue) == 0 {
		return
	}
	l.gen++
	gen := l.gen
	l.timer = e.n.w.After(l.queue[0].due.Sub(e.n.w.Now()), func() {
		if gen == l.gen && !e.closed {
			e.drain(l)
		}
	})
}

// drain delivers, in order, every queued message whose time has come, then re-arms.
func (e *netem) drain(l *inLink) {
	now := e.n.w.Now()
	i := 0
	for ; i < len(l.queue) && !l.queue[i].due.After(now); i++ {
		l.queue[i].fn()
		l.queue[i].fn = nil
	}
	l.queue = slices.Delete(l.queue, 0, i)
	e.arm(l)
}

// close stops every timer; it runs on the loop's goroutine once the loop has ended, and the
// messages still held are lost with the process, as they would be with a real one.
func (e *netem) close() {
	e.closed = true
	for _, l := range e.links {
		if l.timer != nil {
			l.timer.Stop()
		}
		l.gen++
	}
	for id, t := range e.loose {
		t.Stop()
		delete(e.loose, id)
	}
}
