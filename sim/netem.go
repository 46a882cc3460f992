package sim

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/logs"
)

// The network faults in force and what they do to what arrives: the simulated twin of the chaos
// agent's rule keeping (launcher/netrules.go) and of the node's receiving side (node/netem.go).
//
// Rules live at the receiver, as in a real run: a message or heartbeat is judged when it reaches
// its node's process (a paused node judges its backlog when it resumes, by the rules then in
// force). The first rule that blocks or loses it discards it — a message becomes a `drop` event
// at the receiver with `from` and the reason ("drop: <step>", "loss 10%: <step>"), a heartbeat is
// counted in the stats' hb_drops; otherwise it is held for the rule's delay, each link (per
// sender, per channel: messages and heartbeats) keeping its order unless a rule reorders, and a
// duplicate is a second delivery of the same message. What a delay holds is delivered as planned
// even if the rules change meanwhile, and later arrivals queue behind it; it is lost if the
// receiving process dies. A new partition replaces the previous one, link rules add up (a rule
// replaces an earlier one of its kind on the same link), and heal removes them all.

// network is the rules in force.
type network struct {
	part  *cut
	links []linkFault
	// rules are the link rules composed per (from, to), rebuilt at every change.
	rules map[[2]int]rule
}

func (nw *network) on() bool { return nw.part != nil || len(nw.links) > 0 }

// cut is the partition in force.
type cut struct {
	// sides[id] lists the groups node id is in (groups form: a node hears the members of its groups).
	sides [][]int
	// reach[x] is the set of senders x accepts (reach form); nil for the groups form. A node that is
	// not a key holds no partition rule.
	reach map[int]map[int]bool
	why   string
}

// drops tells whether x refuses what y sends under the cut.
func (c *cut) drops(x, y int) bool {
	if c.reach != nil {
		h, ok := c.reach[x]
		return ok && !h[y]
	}
	sx := c.sides[x]
	if len(sx) == 0 {
		return false // in no group: no partition rule
	}
	for _, g := range sx {
		if slices.Contains(c.sides[y], g) {
			return false
		}
	}
	return true
}

func newCut(p chaos.Partition, n int, why string) *cut {
	c := &cut{why: why}
	if p.Reach != nil {
		c.reach = make(map[int]map[int]bool, len(p.Reach))
		for x, peers := range p.Reach {
			set := make(map[int]bool, len(peers))
			for _, y := range peers {
				set[y] = true
			}
			c.reach[x] = set
		}
		return c
	}
	c.sides = make([][]int, n+1)
	for g, ids := range p.Groups {
		for _, id := range ids {
			c.sides[id] = append(c.sides[id], g)
		}
	}
	return c
}

// linkFault is one link rule in force, its ends resolved.
type linkFault struct {
	from, to int
	rule     LinkRule
	why      string
}

// rule is what the faults in force do to the link from one node to another (wire.LinkRule's
// fields): dropped, else lost with probability loss, else delivered after delay ± jitter (in order
// unless reorder), and duplicated with probability dup. why names the steps that made it.
type rule struct {
	drop          bool
	delay, jitter time.Duration
	loss, dup     float64
	reorder       bool
	why           string
}

// compose rebuilds the link rules per link, as the chaos agent composes the rule set it sends a
// node: the first drop on a link blocks it (its step is the reason), later rules of a kind replace
// earlier ones of that kind ("loss 10%" then "loss 30%" is 30%), and the reason of a rule that does
// not block names every step on the link.
func (nw *network) compose() {
	type acc struct {
		r    rule
		whys []string
		done bool
	}
	accs := map[[2]int]*acc{}
	for _, l := range nw.links {
		k := [2]int{l.from, l.to}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
		}
		if a.done {
			continue
		}
		if !slices.Contains(a.whys, l.why) {
			a.whys = append(a.whys, l.why)
		}
		switch l.rule.Kind {
		case chaos.LinkDrop:
			a.r, a.done = rule{drop: true, why: l.why}, true
		case chaos.LinkDelay:
			a.r.delay, a.r.jitter = l.rule.Delay, l.rule.Jitter
		case chaos.LinkLoss:
			a.r.loss = l.rule.Percent / 100
		case chaos.LinkDup:
			a.r.dup = l.rule.Percent / 100
		case chaos.LinkReorder:
			a.r.reorder = true
		}
	}
	nw.rules = make(map[[2]int]rule, len(accs))
	for k, a := range accs {
		if !a.done {
			a.r.why = strings.Join(a.whys, "; ")
		}
		nw.rules[k] = a.r
	}
}

// ruleFor is the rule on what from sends to; false when none holds it.
func (s *Sim) ruleFor(from, to int) (rule, bool) {
	if from == to || !s.net.on() {
		return rule{}, false
	}
	if c := s.net.part; c != nil && c.drops(to, from) {
		return rule{drop: true, why: c.why}, true
	}
	r, ok := s.net.rules[[2]int{from, to}]
	return r, ok
}

// channel tells a link's messages from its heartbeats: each keeps its own order.
type channel uint8

const (
	chFrames channel = iota + 1
	chHeartbeats
)

// inLink is one channel of the link from a peer, at the receiver: the in-order deliveries a delay
// holds (pending) and the time of the last of them (tail), which later ones may not overtake.
type inLink struct {
	from    int32
	ch      channel
	pending int32
	tail    time.Duration
}

func (n *node) inLink(from int, ch channel, create bool) *inLink {
	for i := range n.inq {
		if l := &n.inq[i]; int(l.from) == from && l.ch == ch {
			return l
		}
	}
	if !create {
		return nil
	}
	n.inq = append(n.inq, inLink{from: int32(from), ch: ch})
	return &n.inq[len(n.inq)-1]
}

// fate is what the rules do to one arriving message: discarded (why), or handed over at once
// (now copies) and held (later).
type fate struct {
	why   string
	now   int
	later [2]heldCopy
	nl    int
}

// heldCopy is one copy a delay holds: its delivery time, and whether it keeps the link's order.
type heldCopy struct {
	at      time.Duration
	ordered bool
}

// reorderDelay is the delay of a reorder rule that names none (node/netem.go's): messages must be
// held to overtake each other.
const reorderDelay = 10 * time.Millisecond

// judge decides one arrival's fate on channel ch of the link from `from` to n, under r (the zero
// rule when none holds the link but earlier messages are still held on it), as node/netem.go's
// judge and pass do: draws are made only for the faults the rule has.
func (s *Sim) judge(n *node, from int, ch channel, r rule) fate {
	switch {
	case r.drop:
		return fate{why: "drop: " + r.why}
	case r.loss > 0 && s.netRng.Float64() < r.loss:
		return fate{why: "loss " + strconv.FormatFloat(r.loss*100, 'g', 4, 64) + "%: " + r.why}
	}
	copies := 1
	if r.dup > 0 && s.netRng.Float64() < r.dup {
		copies++
	}
	delay, jitter := r.delay, r.jitter
	if r.reorder && jitter == 0 {
		if delay == 0 {
			delay = reorderDelay
		}
		jitter = delay // a spread of 0..2 × delay, the same mean
	}
	l := n.inLink(from, ch, true)
	var f fate
	for range copies {
		d := delay
		if jitter > 0 {
			d += time.Duration(s.netRng.Int63n(int64(2*jitter+1))) - jitter
		}
		switch {
		case r.reorder && d <= 0, !r.reorder && d <= 0 && l.pending == 0:
			f.now++
		case r.reorder:
			f.later[f.nl] = heldCopy{at: s.now + d}
			f.nl++
		default:
			at := max(s.now+d, l.tail)
			l.tail = at
			l.pending++
			f.later[f.nl] = heldCopy{at: at, ordered: true}
			f.nl++
		}
	}
	return f
}

// arrive: message it reaches n's process; it passes the rules of its link before the machine gets
// it.
func (s *Sim) arrive(n *node, it *item) {
	from := int(it.from)
	r, ruled := s.ruleFor(from, n.id)
	if !ruled {
		if l := n.inLink(from, chFrames, false); l == nil || l.pending == 0 {
			s.receive(n, it)
			return
		}
	}
	f := s.judge(n, from, chFrames, r)
	env := s.env(it.env)
	if f.why != "" {
		e := s.event(n, logs.EvDrop)
		e.From, e.Msg, e.Reason = from, &env.m, f.why
		n.stats.Drops++
		s.kinds[env.kc].Dropped++
		s.freeEnv(it.env)
		return
	}
	env.refs += int32(f.now + f.nl - 1)
	for _, h := range f.later[:f.nl] {
		rel := *it
		rel.at, rel.aux = h.at, 0
		if h.ordered {
			rel.aux = 1
		}
		s.push(kRelease, rel)
	}
	for range f.now {
		s.receive(n, it)
	}
}

// arriveBeat: a heartbeat from `from` (incarnation inc, leader claim) reaches n's process.
func (s *Sim) arriveBeat(n *node, from, claim, inc int) {
	r, ruled := s.ruleFor(from, n.id)
	if !ruled {
		if l := n.inLink(from, chHeartbeats, false); l == nil || l.pending == 0 {
			s.heartbeat(n, from, claim, inc)
			return
		}
	}
	f := s.judge(n, from, chHeartbeats, r)
	if f.why != "" {
		n.stats.HeartbeatDrops++
		return
	}
	for _, h := range f.later[:f.nl] {
		ordered := uint32(0)
		if h.ordered {
			ordered = 1
		}
		s.push(kReleaseBeat, item{at: h.at, node: int16(n.id), inc: int32(n.inc), from: int16(from), aux: int32(claim), gen: uint32(inc), env: ordered})
	}
	for range f.now {
		s.heartbeat(n, from, claim, inc)
	}
}

// released: a held copy's time came (kRelease, kReleaseBeat) at a running n.
func (s *Sim) released(n *node, it *item) {
	ch, ordered := chFrames, it.aux == 1
	if it.kind() == kReleaseBeat {
		ch, ordered = chHeartbeats, it.env == 1
	}
	if ordered {
		if l := n.inLink(int(it.from), ch, false); l != nil && l.pending > 0 {
			l.pending--
		}
	}
	if ch == chHeartbeats {
		s.heartbeat(n, int(it.from), int(it.aux), int(it.gen))
		return
	}
	s.receive(n, it)
}

// vanish: a held message dies with the process that held it. Nobody logs it: the sender wrote it
// to a connection that worked, and the receiver is gone.
func (s *Sim) vanish(it *item) {
	if it.kind() != kRelease {
		return
	}
	s.kinds[s.env(it.env).kc].Dropped++
	s.freeEnv(it.env)
}

// blocks tells whether n's rules refuse everything from `from` (a partition, a drop rule).
func (s *Sim) blocks(from int, n *node) bool {
	r, ok := s.ruleFor(from, n.id)
	return ok && r.drop
}
