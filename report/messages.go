package report

// The arrows and markers: messages matched send to recv, drops, and the other events.

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// msgFields renders a message's fields besides id and kind: "cand 5, round 2".
func msgFields(m *election.Message) string {
	var parts []string
	add := func(name string, v int) {
		if v != 0 {
			parts = append(parts, name+" "+strconv.Itoa(v))
		}
	}
	add("cand", m.Cand)
	add("round", m.Round)
	add("phase", m.Phase)
	add("hops", m.Hops)
	add("dir", m.Dir)
	add("origin", m.Origin)
	if len(m.IDs) > 0 {
		s := make([]string, len(m.IDs))
		for i, id := range m.IDs {
			s[i] = strconv.Itoa(id)
		}
		parts = append(parts, "ids ["+strings.Join(s, " ")+"]")
	}
	return strings.Join(parts, ", ")
}

// messages matches every recv to its send by msg.id, links drops to their messages, and lists the
// other events as marks.
func (b *builder) messages() {
	ids := make([]int, 0, len(b.run.Nodes))
	for id := range b.run.Nodes {
		if _, ok := b.lane[id]; ok {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	type msg struct {
		f, t, k, g, x int
		s, r          int64
		id            string
		done          bool // received or dropped: the arrow's end is known
	}
	nsend := 0
	for _, id := range ids {
		for i := range b.run.Nodes[id].Events {
			if b.run.Nodes[id].Events[i].Ev == logs.EvSend {
				nsend++
			}
		}
	}
	msgs := make([]msg, 0, nsend)
	byID := make(map[string]int, nsend)
	// Most messages carry the same few fields: their text is looked up by value, not built each time.
	type fieldsKey struct{ cand, round, phase, hops, dir, origin int }
	fieldsIdx := map[fieldsKey]int{}
	fields := func(m *election.Message) int {
		if len(m.IDs) > 0 {
			return b.str(msgFields(m))
		}
		k := fieldsKey{m.Cand, m.Round, m.Phase, m.Hops, m.Dir, m.Origin}
		if i, ok := fieldsIdx[k]; ok {
			return i
		}
		i := b.str(msgFields(m))
		fieldsIdx[k] = i
		return i
	}
	kindIdx := map[string]int{}
	kindOf := func(k string) int {
		if i, ok := kindIdx[k]; ok {
			return i
		}
		kindIdx[k] = len(b.d.Kinds)
		b.d.Kinds = append(b.d.Kinds, Kind{Name: k, Role: b.role(k)})
		return len(b.d.Kinds) - 1
	}
	// Sends first, so that a recv or drop in an earlier file still finds its send.
	for _, id := range ids {
		for i := range b.run.Nodes[id].Events {
			e := &b.run.Nodes[id].Events[i]
			if e.Ev != logs.EvSend || e.Msg == nil {
				continue
			}
			to, ok := b.lane[e.To]
			if !ok {
				to = b.lane[id]
			}
			k := kindOf(e.Msg.Kind)
			b.d.Kinds[k].Count++
			if _, dup := byID[e.Msg.ID]; !dup {
				byID[e.Msg.ID] = len(msgs)
			}
			t := b.us(e.TS)
			msgs = append(msgs, msg{f: b.lane[id], t: to, k: k, g: msgUnmatched, x: fields(e.Msg), s: t, r: t, id: e.Msg.ID})
		}
	}
	type mark struct {
		l, y, a, x int
		t          int64
	}
	var marks []mark
	for _, id := range ids {
		l := b.lane[id]
		for i := range b.run.Nodes[id].Events {
			e := &b.run.Nodes[id].Events[i]
			t := b.us(e.TS)
			switch e.Ev {
			case logs.EvRecv:
				j, ok := -1, false
				if e.Msg != nil {
					j, ok = byID[e.Msg.ID]
				}
				if ok && msgs[j].g != msgDelivered {
					m := &msgs[j]
					m.g, m.t, m.r, m.done = msgDelivered, l, t, true
					continue
				}
				text := "a recv whose send is not in any log"
				if ok {
					text = "a second recv of a message already received"
				}
				if e.Msg != nil {
					text += fmt.Sprintf(" (%s %s from n%d)", e.Msg.Kind, e.Msg.ID, e.From)
				}
				marks = append(marks, mark{l: l, t: t, y: markType("orphan"), a: j, x: b.str(text)})
			case logs.EvDrop:
				j := -1
				if e.Msg != nil {
					if k, ok := byID[e.Msg.ID]; ok {
						j = k
						if m := &msgs[k]; !m.done {
							m.done, m.r = true, t
							if l == m.f {
								m.g = msgDroppedAtSender
							} else {
								m.g, m.t = msgDroppedAtReceiver, l
							}
						}
					}
				}
				text := e.Reason
				if j < 0 {
					peer := "to n" + strconv.Itoa(e.To)
					if e.From != 0 {
						peer = "from n" + strconv.Itoa(e.From)
					}
					what := "a message"
					if e.Msg != nil {
						what = e.Msg.Kind + " " + e.Msg.ID
					}
					text = fmt.Sprintf("%s %s: %s", what, peer, e.Reason)
				}
				marks = append(marks, mark{l: l, t: t, y: markType("drop"), a: j, x: b.str(text)})
			case logs.EvStart:
				marks = append(marks, mark{l: l, t: t, y: markType("start"), a: e.Inc, x: -1})
			case logs.EvStop:
				marks = append(marks, mark{l: l, t: t, y: markType("stop"), a: e.Inc, x: b.str(e.Reason)})
			case logs.EvElect:
				marks = append(marks, mark{l: l, t: t, y: markType("elect"), a: e.Round, x: -1})
			case logs.EvLeader:
				marks = append(marks, mark{l: l, t: t, y: markType("leader"), a: e.Leader, x: -1})
			case logs.EvSuspect, logs.EvTrust:
				marks = append(marks, mark{l: l, t: t, y: markType(e.Ev), a: e.Peer, x: b.str(e.Reason)})
			case logs.EvPulse:
				marks = append(marks, mark{l: l, t: t, y: markType("pulse"), a: e.Pulse, x: -1})
			}
		}
	}
	// Stable by time: a drop's mark index into msgs must survive the sort, so sort a permutation.
	perm := make([]int, len(msgs))
	for i := range perm {
		perm[i] = i
	}
	// Ties keep the read order (node, then file), which makes the sort stable without a stable sort.
	slices.SortFunc(perm, func(p, q int) int { return cmp.Or(cmp.Compare(msgs[p].s, msgs[q].s), cmp.Compare(p, q)) })
	newIdx := make([]int, len(msgs))
	M := &b.d.Msgs
	M.F, M.T, M.S, M.R = make([]int, len(msgs)), make([]int, len(msgs)), make([]int64, len(msgs)), make([]int64, len(msgs))
	M.K, M.G, M.ID, M.X = make([]int, len(msgs)), make([]int, len(msgs)), make([]string, len(msgs)), make([]int, len(msgs))
	span := b.d.To - b.d.From
	b.d.Density = make([]int, DensityBins)
	for n, j := range perm {
		m := &msgs[j]
		newIdx[j] = n
		M.F[n], M.T[n], M.S[n], M.R[n], M.K[n], M.G[n], M.ID[n], M.X[n] = m.f, m.t, m.s, m.r, m.k, m.g, m.id, m.x
		if lat := max(m.r-m.s, m.s-m.r); lat > b.d.MaxLatency {
			b.d.MaxLatency = lat
		}
		bin := int((m.s - b.d.From) * DensityBins / max(span, 1))
		b.d.Density[min(max(bin, 0), DensityBins-1)]++
	}
	mperm := make([]int, len(marks))
	for i := range mperm {
		mperm[i] = i
	}
	slices.SortFunc(mperm, func(p, q int) int { return cmp.Or(cmp.Compare(marks[p].t, marks[q].t), cmp.Compare(p, q)) })
	K := &b.d.Marks
	K.L, K.T, K.Y, K.A, K.X = make([]int, len(marks)), make([]int64, len(marks)), make([]int, len(marks)), make([]int, len(marks)), make([]int, len(marks))
	for n, j := range mperm {
		m := marks[j]
		a := m.a
		if (m.y == markType("drop") || m.y == markType("orphan")) && a >= 0 {
			a = newIdx[a]
		}
		K.L[n], K.T[n], K.Y[n], K.A[n], K.X[n] = m.l, m.t, m.y, a, m.x
	}
	b.colorKinds()
}

// role says whether a message kind is one of the algorithm's election or announcement kinds.
func (b *builder) role(kind string) string {
	switch {
	case !b.algOK:
		return "other"
	case b.alg.IsAnnounce(kind):
		return "announce"
	case b.alg.IsElection(kind):
		return "election"
	}
	return "other"
}

// kindPalette is a categorical palette readable on white (after ColorBrewer's Dark2 and Set1).
var kindPalette = []string{"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#377eb8", "#e41a1c", "#4daf4a", "#984ea3", "#666666"}

// nodeColor gives each node ID its own hue, spread by the golden angle so that neighbouring IDs
// differ; the same ID has the same colour in every report.
func nodeColor(id int) string {
	h := (float64(id) * 137.508)
	h -= 360 * float64(int(h/360))
	return fmt.Sprintf("hsl(%.0f,62%%,46%%)", h)
}

// colorKinds sorts the kinds by name (so a kind keeps its colour across runs of one algorithm) and
// renumbers the messages' K.
func (b *builder) colorKinds() {
	old := slices.Clone(b.d.Kinds)
	slices.SortFunc(b.d.Kinds, func(p, q Kind) int { return strings.Compare(p.Name, q.Name) })
	remap := make([]int, len(old))
	for i, k := range old {
		remap[i] = slices.IndexFunc(b.d.Kinds, func(x Kind) bool { return x.Name == k.Name })
	}
	for i := range b.d.Kinds {
		b.d.Kinds[i].Color = kindPalette[i%len(kindPalette)]
	}
	for i, k := range b.d.Msgs.K {
		b.d.Msgs.K[i] = remap[k]
	}
}
