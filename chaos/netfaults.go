package chaos

import (
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/wire"
)

// netFaults is the network faults in force since the last heal, with the meanings the checker
// reads jsonl by (logs.ChaosRecord): a partition replaces the partition in force, link rules
// accumulate, and heal removes both. Node x drops what y sends when the partition keeps x from
// hearing y, or a link y->x drop says so; otherwise the link rules on y->x compose into one rule (a
// later rule of a kind replaces an earlier one of the same kind: "loss 10%" then "loss 30%" is 30%,
// not 37%). From it, rules computes every node's complete rule set, which is what a node is sent.
type netFaults struct {
	cut   *cut
	links []linkFault
}

// cut is the partition in force, in the Reach form: hears[x] is the set of peers x accepts. A node
// that is not a key holds no partition rule (it accepts everyone; the others refuse it).
type cut struct {
	hears map[int]map[int]bool
	why   string
}

// linkFault is one link rule in force, its endpoints resolved.
type linkFault struct {
	from, to int
	rule     LinkRule
	why      string
}

// partition replaces the partition in force; it returns the nodes it keeps from hearing someone
// among ids.
func (f *netFaults) partition(p Partition, ids []int, why string) []int {
	hears := map[int]map[int]bool{}
	for x, peers := range p.Reachable() {
		hears[x] = map[int]bool{}
		for _, y := range peers {
			hears[x][y] = true
		}
	}
	c := cut{hears: hears, why: why}
	f.cut = &c
	var cutOff []int
	for _, x := range ids {
		for _, y := range ids {
			if x != y && c.drops(x, y) {
				cutOff = append(cutOff, x)
				break
			}
		}
	}
	return cutOff
}

// drops tells whether x drops what y sends under this cut.
func (c cut) drops(x, y int) bool {
	h, ok := c.hears[x]
	return ok && !h[y]
}

// link adds a one-way rule on what from sends to to.
func (f *netFaults) link(from, to int, r LinkRule, why string) {
	f.links = append(f.links, linkFault{from: from, to: to, rule: r, why: why})
}

// heal removes every rule; it returns whether there was any.
func (f *netFaults) heal() bool {
	had := f.cut != nil || len(f.links) > 0
	f.cut, f.links = nil, nil
	return had
}

// rules returns every node's complete rule set: one wire.LinkRule per peer it treats specially,
// ascending by From, and an empty (non-nil) set for a node that hears everyone as usual.
func (f *netFaults) rules(ids []int) map[int][]wire.LinkRule {
	out := make(map[int][]wire.LinkRule, len(ids))
	for _, x := range ids {
		set := []wire.LinkRule{}
		for _, y := range ids {
			if y == x {
				continue
			}
			if r, ok := f.rule(y, x); ok {
				set = append(set, r)
			}
		}
		out[x] = set
	}
	return out
}

// rule composes what the faults in force do to the messages from y to x.
func (f *netFaults) rule(y, x int) (wire.LinkRule, bool) {
	r := wire.LinkRule{From: y}
	if f.cut != nil && f.cut.drops(x, y) {
		r.Drop, r.Why = true, f.cut.why
		return r, true
	}
	var whys []string
	for _, l := range f.links {
		if l.from != y || l.to != x {
			continue
		}
		if !slices.Contains(whys, l.why) {
			whys = append(whys, l.why)
		}
		switch l.rule.Kind {
		case LinkDrop:
			return wire.LinkRule{From: y, Drop: true, Why: l.why}, true
		case LinkDelay:
			r.Delay, r.Jitter = int64(l.rule.Delay), int64(l.rule.Jitter)
			r.Dist, r.DelayCorr = l.rule.Dist, l.rule.Corr/100
		case LinkLoss:
			r.Loss, r.LossCorr = l.rule.Percent/100, l.rule.Corr/100
		case LinkDup:
			r.Dup = l.rule.Percent / 100
		case LinkReorder:
			r.Reorder = true
		case LinkBurst:
			r.BurstBegin, r.BurstEnd = l.rule.Percent/100, l.rule.End/100
		case LinkRate:
			r.Rate = l.rule.Rate
		case LinkCorrupt:
			r.Corrupt = l.rule.Percent / 100
		case LinkSlowClose:
			r.SlowClose = int64(l.rule.Delay)
		case LinkReset:
			r.Reset, r.ResetAfter = true, int64(l.rule.Delay)
		}
	}
	if len(whys) == 0 {
		return r, false
	}
	r.Why = strings.Join(whys, "; ")
	return r, true
}

// RuleText renders a link rule's fault without its endpoints: "drop", "delay 100ms±20ms", "loss 10%".
func RuleText(r LinkRule) string {
	s := r.String()
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}
