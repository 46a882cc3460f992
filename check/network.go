package check

// The network: which links the chaos records block at each moment, and the components they leave.
//
// Rules live at the receiver (ChaosRecord's comment has the record formats), so the state is kept
// per receiving node and changes at each node's acknowledgement. A link y->x is blocked while x
// holds a partition rule that does not accept y, or a drop rule on y->x. Two live nodes are in one
// component when a path of live nodes joins them in which every hop is open both ways. Transitive,
// because any protocol can relay through a node that hears both sides; both ways, because a node
// that is heard but cannot hear (or the reverse) cannot take part in an election. For disjoint
// groups the components are the groups' live members. A bridge is one component while its bridge
// node is live (two once it dies or pauses). A majorities-ring is one component: its mutual links
// form a ring, so uniqueness is judged there as in a whole network, which is the point of the
// shape — each node sees a majority, and a protocol that trusts any majority elects two leaders.

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/logs"
)

// held is what one node's transport holds.
type held struct {
	accept map[int]bool // the senders its partition rule accepts; nil: no partition rule
	part   int          // the partition record that set accept (index in m.faults)
	// links[from][kind] is the link record (index in m.faults) of each rule on from->this node.
	links map[int]map[string]int
}

// netState is the rules in force at one moment. A point shares it: it is never changed once made,
// each change makes a new one.
type netState struct {
	at map[int]*held // by receiver; absent: no rule
	// unknown is 1 + the index of a partition in force whose record gives neither groups nor reach;
	// 0 for none.
	unknown int
}

var wholeNet = &netState{}

func (n *netState) clone() *netState {
	out := &netState{at: make(map[int]*held, len(n.at)), unknown: n.unknown}
	for x, h := range n.at {
		c := &held{accept: h.accept, part: h.part}
		if len(h.links) > 0 {
			c.links = make(map[int]map[string]int, len(h.links))
			for y, k := range h.links {
				c.links[y] = maps.Clone(k)
			}
		}
		out.at[x] = c
	}
	return out
}

// blocked tells whether x drops what y sends it.
func (n *netState) blocked(y, x int) bool {
	h := n.at[x]
	if h == nil {
		return false
	}
	if h.accept != nil && !h.accept[y] {
		return true
	}
	_, drop := h.links[y][linkDrop]
	return drop
}

// cuts tells whether a rule in force can block a link.
func (n *netState) cuts() bool {
	for _, h := range n.at {
		if h.accept != nil {
			return true
		}
		for _, k := range h.links {
			if _, ok := k[linkDrop]; ok {
				return true
			}
		}
	}
	return false
}

// inForce tells whether a fault of one of these kinds ("partition", "link drop", "link loss", ...)
// is in force. A "link delay" counts only if its delay and jitter reach minDelay: a delay the
// failure detector cannot mistake for silence excuses nothing.
func (n *netState) inForce(kinds map[string]bool, faults []logs.ChaosRecord, minDelay int64) bool {
	for _, h := range n.at {
		if h.accept != nil && kinds["partition"] {
			return true
		}
		for _, k := range h.links {
			for kind, i := range k {
				if !slices.ContainsFunc(limitKinds(kind), func(lk string) bool { return kinds["link "+lk] }) {
					continue
				}
				if limitKinds(kind)[0] == "delay" && i >= 0 && i < len(faults) && delayOf(faults[i].Rule) < minDelay {
					continue
				}
				return true
			}
		}
	}
	return false
}

// drain is how long the link delays in force keep acting once they are removed: a message delayed
// before the heal arrives up to its delay and jitter after it, and a link keeps its order, so the
// messages behind it wait as long (the longest delay + jitter of the delay rules in force, in ns).
func (n *netState) drain(faults []logs.ChaosRecord) int64 {
	var longest int64
	for _, h := range n.at {
		for _, k := range h.links {
			for _, kind := range []string{"delay", "slowclose"} {
				i, ok := k[kind]
				if !ok || i < 0 || i >= len(faults) {
					continue
				}
				longest = max(longest, delayOf(faults[i].Rule))
			}
		}
	}
	return longest
}

// limitKinds names the fault kinds of an algorithm's declared limits (election.Limit's "link
// drop", "link loss", "link delay", ...) that a link rule's kind counts as: the third stage's rules
// act as the first ones did. A burst is loss; corrupt and reset lose frames and break the link,
// which a link-judged detector takes for a crash, as it would under a drop; rate and slowclose
// hold messages and news as a delay does.
func limitKinds(kind string) []string {
	switch kind {
	case "burst":
		return []string{"loss"}
	case "corrupt":
		return []string{"loss", "drop"}
	case "reset":
		return []string{"drop", "loss"}
	case "rate", "slowclose":
		return []string{"delay"}
	}
	return []string{kind}
}

// delayOf reads how long a rule can hold a message, in ns: delay and jitter of "delay 150ms±38ms",
// delay + 10 jitters for a distribution ("delay 50ms jitter 10ms normal": its draws are cut there,
// chaos.DistCut), slowclose's hold; a rate's queue has no bound to read, so it counts as long. 0
// for the other rules.
func delayOf(rule string) int64 {
	f := strings.Fields(rule)
	if len(f) < 2 {
		return 0
	}
	switch f[0] {
	case "slowclose":
		d, _ := time.ParseDuration(f[1])
		return int64(d)
	case "rate":
		return math.MaxInt64 / 4
	case "delay":
	default:
		return 0
	}
	if len(f) >= 4 && f[2] == "jitter" {
		d, _ := time.ParseDuration(f[1])
		j, _ := time.ParseDuration(f[3])
		if len(f) >= 5 && f[4] != "uniform" && f[4] != "corr" {
			return int64(d + 10*j)
		}
		return int64(d + j)
	}
	var total int64
	for _, part := range strings.Split(strings.Join(f[1:], ""), "±") {
		if d, err := time.ParseDuration(strings.TrimSpace(part)); err == nil {
			total += int64(d)
		}
	}
	return total
}

// PartialPartition is the fault kind, for an algorithm's declared limits (election.Limit), of a
// partition under which two live nodes of one component cannot hear each other: the component holds
// together only through nodes that hear both (a majorities-ring; a bridge while its bridge node is
// live). A clean partition (disjoint groups) is not one.
const PartialPartition = "partial partition"

// PausedPeer is the fault kind, for an algorithm's declared uniqueness limits, of a node that went
// silent (paused) while an overlap was young: within the grace after it began, or before it began
// by at most the grace. The overlap is the limit if it ended within the limit's Recovery after that
// pause began; an overlap that was already a violation when the pause came is not excused.
const PausedPeer = "pause"

// partial tells whether a partition rule in force blocks a link, one way or both, between two live
// nodes of one component (comps: the live nodes' components).
func (n *netState) partial(comps [][]int) bool {
	for _, comp := range comps {
		for _, x := range comp {
			h := n.at[x]
			if h == nil || h.accept == nil {
				continue
			}
			for _, y := range comp {
				if y != x && !h.accept[y] {
					return true
				}
			}
		}
	}
	return false
}

// records lists the chaos records (indexes in model.faults) whose rules are in force, ascending.
func (n *netState) records() []int {
	set := map[int]bool{}
	for _, h := range n.at {
		if h.accept != nil {
			set[h.part] = true
		}
		for _, k := range h.links {
			for _, j := range k {
				set[j] = true
			}
		}
	}
	if n.unknown != 0 {
		set[n.unknown-1] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// linkDrop is the only link rule that blocks.
const linkDrop = "drop"

// ruleKind is a link rule's kind: the first word of its text ("delay 20ms±5ms" -> "delay").
func ruleKind(rule string) string {
	if f := strings.Fields(rule); len(f) > 0 {
		return f[0]
	}
	return ""
}

// accepts returns, for a partition record, the senders each node accepts; a node absent holds no
// partition rule. ok is false when the record gives neither groups nor reach.
func accepts(op logs.ChaosRecord) (map[int]map[int]bool, bool) {
	out := map[int]map[int]bool{}
	switch {
	case op.Reach != nil:
		for x, peers := range op.Reach {
			set := map[int]bool{}
			for _, y := range peers {
				set[y] = true
			}
			out[x] = set
		}
	case len(op.Groups) > 0:
		for _, g := range op.Groups {
			for _, x := range g {
				if out[x] == nil {
					out[x] = map[int]bool{}
				}
				for _, y := range g {
					if y != x {
						out[x][y] = true
					}
				}
			}
		}
	default:
		return nil, false
	}
	return out, true
}

// netItems lists, for each partition, link and heal record, the moment each node it concerns
// takes its rules (its ack, else the record's ts); effect[j] is when the last of them did.
func (m *model) netItems() (items []item, effect []int64) {
	effect = make([]int64, len(m.faults))
	for j, op := range m.faults {
		effect[j] = op.TS
		var nodes []int
		switch op.Op {
		case logs.OpPartition:
			acc, ok := accepts(op)
			if !ok {
				m.warnf("%s: the record gives neither groups nor reach; uniqueness is not judged while it is in force", m.faultName(j))
				items = append(items, item{t: op.TS, kind: itNet, node: 0, ref: j})
				continue
			}
			for _, x := range slices.Sorted(maps.Keys(acc)) {
				if _, known := m.index[x]; !known {
					m.warnf("%s: node %d is not in cluster.json (ignored)", m.faultName(j), x)
				}
			}
			nodes = m.ids
		case logs.OpHeal:
			nodes = m.ids
		case logs.OpLink:
			_, okFrom := m.index[op.From]
			_, okTo := m.index[op.To]
			if !okFrom || !okTo || op.To == op.From || ruleKind(op.Rule) == "" {
				m.warnf("%s: a link record needs from and to (two nodes of the cluster) and a rule (ignored)", m.faultName(j))
				continue
			}
			nodes = []int{op.To}
		default:
			continue
		}
		acks := m.acks(j)
		for _, x := range nodes {
			t := op.TS
			if a, ok := acks[x]; ok {
				t = a
			}
			effect[j] = max(effect[j], t)
			items = append(items, item{t: t, kind: itNet, node: x, ref: j})
		}
	}
	return items, effect
}

// acks decodes record j's acks (string keys).
func (m *model) acks(j int) map[int]int64 {
	out := map[int]int64{}
	for k, t := range m.faults[j].Acks {
		id, err := strconv.Atoi(k)
		if err != nil || t <= 0 {
			m.warnf("%s: bad ack %q: %d (want a node ID and a Unix ns time; ignored)", m.faultName(j), k, t)
			continue
		}
		out[id] = t
	}
	return out
}

// unacknowledged warns of each node that was sent rules while it ran and did not acknowledge them
// (its rules are taken as in force from the record's time). A paused node cannot answer: the
// launcher tells it when it resumes, and until then it is not live anyway. A record without acks
// (the simulator's) says nothing either way. It asks the timeline who was live at each record's
// time (probes, answered as the run is played); unacknowledgedWarn says what they found.
func (m *model) unacknowledged(p *player) {
	m.unacked = map[int][]int{}
	for j, op := range m.faults {
		if len(op.Acks) == 0 || (op.Op != logs.OpPartition && op.Op != logs.OpLink && op.Op != logs.OpHeal) {
			continue
		}
		p.probe(op.TS, func(pt *point) {
			acks := map[int]bool{}
			for k := range op.Acks {
				if id, err := strconv.Atoi(k); err == nil {
					acks[id] = true
				}
			}
			var missing []int
			for _, x := range op.Targets {
				if k, ok := m.index[x]; ok && !acks[x] && pt != nil && pt.state[k].live() {
					missing = append(missing, x)
				}
			}
			if len(missing) > 0 {
				m.unacked[j] = missing
			}
		})
	}
}

func (m *model) unacknowledgedWarn() {
	for _, j := range slices.Sorted(maps.Keys(m.unacked)) {
		missing := m.unacked[j]
		who := "node "
		if len(missing) > 1 {
			who = "nodes "
		}
		m.warnf("%s: %s%s did not acknowledge the rules; taken as in force from the record's time",
			m.faultName(j), who, joinIDs(missing, ","))
	}
}

// applyNet makes the network state after node it.node takes its share of record it.ref. With wins,
// it closes and opens the link rules' windows (staticItems plays the rule records once for them).
func (m *model) applyNet(n *netState, it item, wins bool) *netState {
	op := m.faults[it.ref]
	next := n.clone()
	if op.Op == logs.OpPartition && !hasSides(op) {
		next.unknown = it.ref + 1
		return next
	}
	h := next.at[it.node]
	if h == nil {
		h = &held{}
		next.at[it.node] = h
	}
	switch op.Op {
	case logs.OpPartition:
		next.unknown = 0
		h.accept, h.part = m.acceptOf(it.ref)[it.node], it.ref
		if h.accept != nil && h.accept[it.node] {
			h.accept = maps.Clone(h.accept)
			delete(h.accept, it.node)
		}
	case logs.OpLink:
		kind := ruleKind(op.Rule)
		if h.links == nil {
			h.links = map[int]map[string]int{}
		}
		if h.links[op.From] == nil {
			h.links[op.From] = map[string]int{}
		}
		if old, ok := h.links[op.From][kind]; ok && wins {
			m.closeLink(old, it.t)
		}
		h.links[op.From][kind] = it.ref
		if wins {
			m.linkWin[it.ref] = span{it.t, forever}
		}
	case logs.OpHeal:
		next.unknown = 0
		for _, k := range h.links {
			for _, old := range k {
				if wins {
					m.closeLink(old, it.t)
				}
			}
		}
		delete(next.at, it.node)
	}
	if h.accept == nil && len(h.links) == 0 && next.at[it.node] == h {
		delete(next.at, it.node)
	}
	return next
}

// hasSides tells whether a partition record says who hears whom (groups or reach).
func hasSides(op logs.ChaosRecord) bool { return op.Reach != nil || len(op.Groups) > 0 }

// acceptOf is partition record j's accepts, computed again for each record as the play comes to
// it (a long run has hundreds, each a map per node) and kept while its rules are being taken.
func (m *model) acceptOf(j int) map[int]map[int]bool {
	if m.accCache == nil || m.accJ != j {
		m.accCache, _ = accepts(m.faults[j])
		m.accJ = j
	}
	return m.accCache
}

func (m *model) closeLink(j int, t int64) {
	if w, ok := m.linkWin[j]; ok && w.to == forever {
		w.to = t
		m.linkWin[j] = w
	}
}

// components returns the components of the live nodes under the rules in force (see the top of
// this file), each ascending, ordered by their lowest ID.
func (m *model) components(n *netState, st []nodeState) [][]int {
	var live []int
	for k, s := range st {
		if s.live() {
			live = append(live, m.ids[k])
		}
	}
	seen := map[int]bool{}
	var out [][]int
	for _, a := range live {
		if seen[a] {
			continue
		}
		comp := []int{a}
		seen[a] = true
		for q := 0; q < len(comp); q++ {
			x := comp[q]
			for _, y := range live {
				if !seen[y] && !n.blocked(x, y) && !n.blocked(y, x) {
					seen[y] = true
					comp = append(comp, y)
				}
			}
		}
		sort.Ints(comp)
		out = append(out, comp)
	}
	return out
}

// recordComponents are the components a partition record's own rules make of the given nodes (no
// other rule counted), for asking whether it cut the leader off from the majority.
func (m *model) recordComponents(j int, nodes []int) [][]int {
	n := &netState{at: map[int]*held{}}
	acc, _ := accepts(m.faults[j])
	for x, a := range acc {
		n.at[x] = &held{accept: a}
	}
	st := make([]nodeState, len(m.ids))
	for _, x := range nodes {
		if k, ok := m.index[x]; ok {
			st[k] = nodeState{inc: 1}
		}
	}
	return m.components(n, st)
}

// faultName names chaos record j for people: "partition 1-2|3 at 300ms (step \"at 300ms partition
// halves\")".
func (m *model) faultName(j int) string {
	op := m.faults[j]
	s := describeOp(op) + " at " + m.rel(op.TS)
	if op.Step != "" {
		s += fmt.Sprintf(" (step %q)", op.Step)
	}
	return s
}

// describeOp renders a chaos op with what it did: "kill 5", "partition 1-2|3-5", "link 1->2 drop".
func describeOp(op logs.ChaosRecord) string {
	switch op.Op {
	case logs.OpPartition:
		switch {
		case op.Reach != nil:
			keys := slices.Sorted(maps.Keys(op.Reach))
			parts := make([]string, len(keys))
			for i, x := range keys {
				parts[i] = fmt.Sprintf("%d<-%s", x, joinIDs(op.Reach[x], ","))
			}
			return "partition " + strings.Join(parts, " ")
		case len(op.Groups) > 0:
			return "partition " + formatGroups(op.Groups)
		}
	case logs.OpLink:
		return fmt.Sprintf("link %d->%d %s", op.From, op.To, op.Rule)
	}
	return opName(op)
}

// formatGroups writes sides as the chaos language does: "1-3|4,6".
func formatGroups(groups [][]int) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		var items []string
		for a := 0; a < len(g); {
			b := a
			for b+1 < len(g) && g[b+1] == g[b]+1 {
				b++
			}
			if b > a {
				items = append(items, strconv.Itoa(g[a])+"-"+strconv.Itoa(g[b]))
			} else {
				items = append(items, strconv.Itoa(g[a]))
			}
			a = b + 1
		}
		parts[i] = strings.Join(items, ",")
	}
	return strings.Join(parts, "|")
}
