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
// k-th frame from a peer meets the same fate in every run with the same seed and rules. A third
// queue holds the news of the link's connection closing (slowclose). What the channels share, the
// link's bandwidth (rate) and its resets, is kept per peer.
type netem struct {
	n *node
	// rules are the rules in force, as the last accepted CtlRules gave them; byFrom indexes them.
	rules  []wire.LinkRule
	byFrom map[int][]wire.LinkRule

	seed  uint64
	links map[inKey]*inLink
	peers map[int]*inPeer
	// scratch holds a message's bytes while a rule measures or damages them.
	scratch []byte

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
	chCloses // the news that the outbound connection to the peer closed (slowclose)
)

type inKey struct {
	from int
	ch   channel
}

// inLink is one channel of the link from a peer.
type inLink struct {
	draws
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

// inPeer is what the channels of the link from one peer share.
type inPeer struct {
	// busy is when the link's bandwidth is free again; queued holds the times at which the
	// messages in its queue are through (rate), ascending.
	busy   time.Time
	queued []time.Time
	// resetAt is when a reset rule next resets the connection, at the first frame from then on.
	resetAt time.Time
}

func (e *netem) init(n *node, seed int64) {
	e.n = n
	e.seed = uint64(seed)
	e.byFrom = map[int][]wire.LinkRule{}
	e.links = map[inKey]*inLink{}
	e.peers = map[int]*inPeer{}
	e.loose = map[uint64]Timer{}
}

// peer returns the shared state of the link from peer from.
func (e *netem) peer(from int) *inPeer {
	p := e.peers[from]
	if p == nil {
		p = &inPeer{}
		e.peers[from] = p
	}
	return p
}

// link returns the channel ch of the link from peer from, making it on first use. Its random stream
// is seeded by the cluster seed, this node, its incarnation, the peer and the channel.
func (e *netem) link(from int, ch channel) *inLink {
	k := inKey{from, ch}
	l := e.links[k]
	if l == nil {
		s := mix(uint64(e.n.self), uint64(e.n.inc), uint64(from), uint64(ch))
		l = &inLink{draws: draws{rng: rand.New(rand.NewPCG(e.seed, s))}}
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
// as planned. A link whose rules changed forgets its correlations and bursts; a reset rule new to
// a link starts its wait now.
func (e *netem) setRules(rules []wire.LinkRule) error {
	for i, r := range rules {
		if err := checkRule(r, e.n.self, e.n.peers); err != nil {
			return fmt.Errorf("link rule %d of %d (from %d): %w", i+1, len(rules), r.From, err)
		}
	}
	old := e.byFrom
	e.rules = slices.Clone(rules)
	e.byFrom = map[int][]wire.LinkRule{}
	for _, r := range e.rules {
		e.byFrom[r.From] = append(e.byFrom[r.From], r)
	}
	now := e.n.w.Now()
	for k, l := range e.links {
		if !slices.Equal(old[k.from], e.byFrom[k.from]) {
			l.forget()
		}
	}
	for from, rs := range e.byFrom {
		if r, ok := resetRule(rs); ok {
			if was, had := resetRule(old[from]); !had || was.ResetAfter != r.ResetAfter {
				e.peer(from).resetAt = now.Add(time.Duration(r.ResetAfter))
			}
		}
	}
	return nil
}

// resetRule returns the first reset rule of a link.
func resetRule(rules []wire.LinkRule) (wire.LinkRule, bool) {
	for _, r := range rules {
		if r.Reset {
			return r, true
		}
	}
	return wire.LinkRule{}, false
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
	reach := r.Jitter
	if r.Dist != "" {
		reach = distCut * r.Jitter
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
	case r.Jitter > int64(maxRuleDelay) || r.Delay+reach > int64(maxRuleDelay):
		return fmt.Errorf("delay %v + jitter %v (%v at the most): want at most %v", time.Duration(r.Delay), time.Duration(r.Jitter), time.Duration(r.Delay+reach), maxRuleDelay)
	case !slices.Contains(dists, r.Dist):
		return fmt.Errorf("dist %q: want one of %q", r.Dist, dists)
	case r.Dist != "" && r.Jitter == 0:
		return fmt.Errorf("dist %s with no jitter: want a jitter to spread by", r.Dist)
	case r.Rate < 0:
		return fmt.Errorf("rate %d: want bytes per second above 0, or 0 for none", r.Rate)
	case r.SlowClose < 0 || r.SlowClose > int64(maxRuleDelay):
		return fmt.Errorf("slowclose %v: want 0..%v", time.Duration(r.SlowClose), maxRuleDelay)
	case r.ResetAfter < 0 || r.ResetAfter > int64(maxRuleDelay):
		return fmt.Errorf("reset_after %v: want 0..%v", time.Duration(r.ResetAfter), maxRuleDelay)
	case r.ResetAfter > 0 && !r.Reset:
		return fmt.Errorf("reset_after %v without reset", time.Duration(r.ResetAfter))
	case (r.BurstBegin > 0) != (r.BurstEnd > 0):
		return fmt.Errorf("burst_begin %v, burst_end %v: want both above 0 (a burst rule) or both 0", r.BurstBegin, r.BurstEnd)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", r.Loss}, {"dup", r.Dup}, {"dcorr", r.DelayCorr}, {"lcorr", r.LossCorr}, {"burst_begin", r.BurstBegin}, {"burst_end", r.BurstEnd}, {"corrupt", r.Corrupt}} {
		if err := prob(p.name, p.v); err != nil {
			return err
		}
	}
	return nil
}

// dists are the delay distributions a rule may name ("" is uniform).
var dists = []string{"", "normal", "pareto", "paretonormal"}

// fate is what the rules of a link do to one message.
type fate struct {
	// why is the reason it was discarded; empty when it is delivered.
	why string
	// delays holds one delay per copy to deliver: the message itself, then its duplicates.
	delays  []time.Duration
	reorder bool
	// corrupt, when set, is the reason of the rule that damages the message.
	corrupt string
	// rate is the narrowest bandwidth of the rules, in bytes per second (0: none).
	rate int64
}

// reorderDelay is the delay of a reorder rule that names none: messages must be held to overtake
// each other (Linux netem's reorder, too, does nothing without a delay).
const reorderDelay = 10 * time.Millisecond

// Spread returns a rule's delay and jitter. Reorder without jitter would hold every message alike
// and reorder nothing, so it draws each delay uniformly in 0..2×Delay instead (same mean), and a
// reorder with no delay at all in 0..2×reorderDelay. The kernel's netem backend (launcher) gives
// the kernel's netem the same delay and jitter: netem too reorders only by jitter.
func Spread(r wire.LinkRule) (delay, jitter int64) {
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
// qdiscs: the first rule that blocks or loses the message (drop, loss, burst) discards it and
// names the reason; the first that damages it (corrupt) names that; the delays of all rules add up;
// each rule's Dup adds at most one copy, delayed independently; Reorder in any rule frees the link
// from its order; the narrowest Rate holds the link. Draws are made only for the faults a rule
// has, so a rule set without randomness leaves the stream untouched.
func judge(l *draws, rules []wire.LinkRule) fate {
	var f fate
	for _, r := range rules {
		switch {
		case r.Drop:
			return fate{why: reason("drop", r)}
		case r.Loss > 0 && l.loss(r):
			return fate{why: reason("loss "+percent(r.Loss), r)}
		case r.BurstBegin > 0 && l.burst(r):
			return fate{why: reason("burst "+percent(r.BurstBegin)+" "+percent(r.BurstEnd), r)}
		}
		f.reorder = f.reorder || r.Reorder
		if r.Rate > 0 && (f.rate == 0 || r.Rate < f.rate) {
			f.rate = r.Rate
		}
	}
	for _, r := range rules {
		if r.Corrupt > 0 && l.rng.Float64() < r.Corrupt && f.corrupt == "" {
			f.corrupt = reason("corrupt "+percent(r.Corrupt), r)
		}
	}
	copies := 1
	for _, r := range rules {
		if r.Dup > 0 && l.rng.Float64() < r.Dup {
			copies++
		}
	}
	for range copies {
		var d time.Duration
		for _, r := range rules {
			delay, jitter := Spread(r)
			d += l.delay(r, delay, jitter)
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

// inMsg is one message on its way in, as pass needs it.
type inMsg struct {
	from    int
	ch      channel
	deliver func()
	drop    func(why string)
	// encode appends the message's bytes on the wire (for rate and corrupt).
	encode func(b []byte) []byte
	// decode is what the receiver's decoder makes of damaged bytes: the message to deliver, or
	// the error it refuses them with.
	decode func(b []byte) (func(), error)
	// refused reports a damaged message the decoder refused (why: the rule's reason and the
	// decoder's error).
	refused func(why string)
}

// ruleless tells whether nothing stands between channel ch of peer from and the loop: no rule, and
// nothing held (pass's common case). frame and heartbeat check it before they make the closures a
// rule needs, which were five allocations for every message and heartbeat.
func (e *netem) ruleless(from int, ch channel) bool {
	if len(e.byFrom[from]) > 0 {
		return false
	}
	l := e.links[inKey{from, ch}]
	return l == nil || len(l.queue) == 0
}

// frame takes a frame from peer from (incarnation inc) off the transport.
func (e *netem) frame(from, inc int, env *wire.Envelope) {
	n := e.n
	if e.ruleless(from, chFrames) {
		n.deliver(from, inc, env)
		return
	}
	drop := func(why string) {
		n.stats.Drops++
		m := env.Msg
		n.emit(&logs.Event{Ev: logs.EvDrop, From: from, Msg: &m, Reason: why})
	}
	if r, ok := resetRule(e.byFrom[from]); ok {
		if p := e.peer(from); !n.w.Now().Before(p.resetAt) {
			p.resetAt = n.w.Now().Add(time.Duration(r.ResetAfter))
			drop(reason("reset", r) + "; link reset")
			e.reset(from)
			return
		}
	}
	e.pass(inMsg{from: from, ch: chFrames,
		deliver: func() { n.deliver(from, inc, env) },
		drop:    drop,
		encode: func(b []byte) []byte {
			b, _ = wire.AppendFrame(b, env) // it decoded, so it encodes
			return b
		},
		decode: func(b []byte) (func(), error) {
			got, err := wire.DecodeFrame(b)
			if err != nil {
				return nil, err
			}
			return func() { n.deliver(from, inc, got) }, nil
		},
		refused: func(why string) {
			drop("bad frame from node " + strconv.Itoa(from) + ": " + why + "; link reset")
			e.reset(from)
		},
	})
}

// reset resets the connection from peer from, when the transport can.
func (e *netem) reset(from int) {
	if rs, ok := e.n.tr.(wire.Resetter); ok {
		rs.ResetInbound(from)
	}
}

// heartbeat takes a heartbeat datagram off the transport. Discarded ones are only counted.
func (e *netem) heartbeat(d wire.Datagram, from string) {
	n := e.n
	if e.ruleless(d.From, chHeartbeats) {
		n.det.datagram(d, from)
		return
	}
	e.pass(inMsg{from: d.From, ch: chHeartbeats,
		deliver: func() { n.det.datagram(d, from) },
		drop:    func(string) { e.hbDrops++ },
		encode: func(b []byte) []byte {
			p, _ := wire.EncodeDatagram(n.secret, &d)
			return append(b, p...)
		},
		decode: func(b []byte) (func(), error) {
			got, err := wire.DecodeDatagram(n.secret, n.cluster.ClusterID, b)
			if err != nil {
				return nil, err
			}
			return func() { n.det.datagram(got, from) }, nil
		},
		refused: func(string) { e.hbDrops++ },
	})
}

// rateQueue bounds the messages waiting for a link's bandwidth, as netem's default limit does;
// past it a message is dropped.
const rateQueue = 1000

// pass delivers, holds or discards one message.
func (e *netem) pass(m inMsg) {
	rules := e.byFrom[m.from]
	l := e.links[inKey{m.from, m.ch}]
	if len(rules) == 0 && (l == nil || len(l.queue) == 0) {
		m.deliver() // the common case: no rule, nothing in flight
		return
	}
	if l == nil {
		l = e.link(m.from, m.ch)
	}
	f := judge(&l.draws, rules)
	if f.why != "" {
		m.drop(f.why)
		return
	}
	var size int
	if f.corrupt != "" || f.rate > 0 {
		e.scratch = m.encode(e.scratch[:0])
		size = len(e.scratch)
	}
	deliver := m.deliver
	if f.corrupt != "" && size > 0 {
		// One bit flipped, as netem's corrupt does; the decoder must refuse it.
		bit := l.rng.IntN(size * 8)
		e.scratch[bit/8] ^= 1 << (bit % 8)
		got, err := m.decode(e.scratch)
		if err != nil {
			m.refused(f.corrupt + ": " + err.Error())
			return
		}
		deliver = got // never, with the frame's checksum: whatever the decoder made of it
	}
	now := e.n.w.Now()
	var wait time.Duration
	if f.rate > 0 {
		var ok bool
		if wait, ok = e.peer(m.from).send(now, size, f.rate); !ok {
			m.drop(fmt.Sprintf("rate %d bytes/s: %d messages queued: %s", f.rate, rateQueue, rateWhy(rules)))
			return
		}
	}
	for _, d := range f.delays {
		d += wait
		switch {
		case f.reorder && d <= 0:
			deliver()
		case f.reorder:
			e.after(d, deliver)
		case d <= 0 && len(l.queue) == 0:
			deliver()
		default:
			e.hold(l, now.Add(d), deliver)
		}
	}
}

// rateWhy names the step of a link's rate rule.
func rateWhy(rules []wire.LinkRule) string {
	for _, r := range rules {
		if r.Rate > 0 {
			return reason("rate", r)
		}
	}
	return ""
}

// send puts size bytes through the link's bandwidth: it returns how long they wait and are on
// the way (the queue ahead, then size/rate), or false when the queue is full.
func (p *inPeer) send(now time.Time, size int, rate int64) (time.Duration, bool) {
	i := 0
	for i < len(p.queued) && !p.queued[i].After(now) {
		i++
	}
	p.queued = slices.Delete(p.queued, 0, i)
	if len(p.queued) >= rateQueue {
		return 0, false
	}
	start := now
	if p.busy.After(now) {
		start = p.busy
	}
	p.busy = start.Add(time.Duration(float64(size) * float64(time.Second) / float64(rate)))
	p.queued = append(p.queued, p.busy)
	return p.busy.Sub(now), true
}

// hold queues fn on l until due, keeping the link's order.
func (e *netem) hold(l *inLink, due time.Time, fn func()) {
	if q := len(l.queue); q > 0 && due.Before(l.queue[q-1].due) {
		due = l.queue[q-1].due // keep the link's order
	}
	l.queue = append(l.queue, pending{due, fn})
	if len(l.queue) == 1 {
		e.arm(l)
	}
}

// linkChange takes the transport's news that the outbound connection to peer went up or down.
// A slowclose rule on the link from peer holds the news of a close: the node learns late that the
// connection closed, and news that follows waits behind it.
func (e *netem) linkChange(peer int, up bool, apply func()) {
	var hold time.Duration
	for _, r := range e.byFrom[peer] {
		hold = max(hold, time.Duration(r.SlowClose))
	}
	l := e.links[inKey{peer, chCloses}]
	if (up || hold == 0) && (l == nil || len(l.queue) == 0) {
		apply()
		return
	}
	if l == nil {
		l = e.link(peer, chCloses)
	}
	if up {
		hold = 0
	}
	e.hold(l, e.n.w.Now().Add(hold), apply)
}

// closing tells whether the news that the connection to peer closed is being held.
func (e *netem) closing(peer int) bool {
	l := e.links[inKey{peer, chCloses}]
	return l != nil && len(l.queue) > 0
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
