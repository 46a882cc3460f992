package ui

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// The cluster as the page shows it, kept from what the run logs as it logs it: each node's process
// (starting, up, paused, dead) and belief, who suspects whom, the partition in force; and the
// properties the checker judges afterwards, as they stand now.

// nodeView is one node as the page draws it.
type nodeView struct {
	ID     int    `json:"id"`
	Inc    int    `json:"inc"`
	State  string `json:"st"`            // leader, follower, electing, idle, paused, dead, starting
	Leader int    `json:"l"`             // its belief (0: none)
	Sus    []int  `json:"sus,omitempty"` // the live nodes that suspect it
}

type nodeModel struct {
	inc                 int
	up, paused, started bool
	leader              int
	electing            bool
	suspects            map[int]bool // the peers it suspects
}

// model is the cluster now.
type model struct {
	ids    []int
	nodes  map[int]*nodeModel
	groups [][]int // the partition in force (nil: none)
	links  []string
}

func newModel(ids []int) *model {
	m := &model{ids: slices.Clone(ids), nodes: map[int]*nodeModel{}}
	for _, id := range ids {
		m.nodes[id] = &nodeModel{suspects: map[int]bool{}}
	}
	return m
}

// event takes one node event.
func (m *model) event(e *logs.Event) {
	n := m.nodes[e.Node]
	if n == nil {
		return
	}
	switch e.Ev {
	case logs.EvStart:
		*n = nodeModel{inc: e.Inc, up: true, started: true, suspects: map[int]bool{}}
	case logs.EvElect:
		n.electing, n.leader = true, 0
	case logs.EvLeader:
		n.electing, n.leader = false, e.Leader
	case logs.EvSuspect:
		n.suspects[e.Peer] = true
	case logs.EvTrust:
		delete(n.suspects, e.Peer)
	case logs.EvStop:
		n.up = false
	}
}

// chaosRecord takes one applied fault.
func (m *model) chaosRecord(r *logs.ChaosRecord) {
	if r.Error != "" {
		return
	}
	for _, id := range r.Targets {
		n := m.nodes[id]
		if n == nil {
			continue
		}
		switch r.Op {
		case chaos.OpKill:
			n.up, n.paused = false, false
		case chaos.OpPause:
			n.paused = true
		case chaos.OpResume, chaos.OpStop:
			n.paused = false
		}
	}
	switch r.Op {
	case chaos.OpPartition:
		m.groups = r.Groups
	case chaos.OpLink:
		m.links = append(m.links, fmt.Sprintf("%d->%d %s", r.From, r.To, r.Rule))
	case chaos.OpHeal:
		m.groups, m.links = nil, nil
	}
}

// launchRecord takes one record of the launcher's.
func (m *model) launchRecord(r *logs.LaunchRecord) {
	n := m.nodes[r.Node]
	if n == nil {
		return
	}
	switch r.Ev {
	case logs.LaunchExited:
		if r.Inc == n.inc || n.inc == 0 {
			n.up, n.paused = false, false
		}
	case logs.LaunchSpawned:
		if r.Inc > n.inc {
			n.started = false
		}
	}
}

func (m *model) live(id int) bool { n := m.nodes[id]; return n != nil && n.up && !n.paused }

// views are every node as drawn.
func (m *model) views() []nodeView {
	sus := map[int][]int{}
	for _, id := range m.ids {
		if m.live(id) {
			for p := range m.nodes[id].suspects {
				sus[p] = append(sus[p], id)
			}
		}
	}
	out := make([]nodeView, 0, len(m.ids))
	for _, id := range m.ids {
		n := m.nodes[id]
		v := nodeView{ID: id, Inc: n.inc, Leader: n.leader, Sus: sus[id]}
		sort.Ints(v.Sus)
		switch {
		case !n.started && !n.up:
			v.State = "starting"
			if n.inc > 0 {
				v.State = "dead"
			}
		case !n.up:
			v.State = "dead"
		case n.paused:
			v.State = "paused"
		case n.electing:
			v.State = "electing"
		case n.leader == id:
			v.State = "leader"
		case n.leader != 0:
			v.State = "follower"
		default:
			v.State = "idle"
		}
		out = append(out, v)
	}
	return out
}

// property is one of the checker's properties as it stands now.
type property struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// properties judge the cluster now: uniqueness (at most one node believes in itself on each side of
// the partition in force; the checker allows a grace), agreement (every live node follows the
// highest live ID, which believes in itself), and who believes what.
func (m *model) properties() []property {
	sides := m.groups
	if len(sides) == 0 {
		sides = [][]int{m.ids}
	}
	uni := property{Name: "uniqueness", OK: true}
	var leaders []string
	for _, side := range sides {
		var self []int
		for _, id := range side {
			if m.live(id) && m.nodes[id].leader == id && !m.nodes[id].electing {
				self = append(self, id)
			}
		}
		if len(self) > 1 {
			uni.OK = false
			uni.Detail = fmt.Sprintf("violated now: %s each believe they lead%s (the checker allows a grace)", launcher.IDRanges(self), sideNote(len(sides)))
		}
		if len(self) > 0 {
			leaders = append(leaders, launcher.IDRanges(self))
		}
	}
	if uni.OK {
		uni.Detail = "no two live nodes believe in themselves"
		if len(leaders) > 0 {
			uni.Detail = "leading: " + strings.Join(leaders, " | ")
		}
		if len(sides) > 1 {
			uni.Detail += " (one per side of the partition)"
		}
	}
	agr := property{Name: "agreement", OK: true}
	top := 0
	var live []int
	for _, id := range m.ids {
		if m.live(id) {
			live = append(live, id)
			top = max(top, id)
		}
	}
	var off []string
	for _, id := range live {
		n := m.nodes[id]
		switch {
		case n.electing || n.leader == 0:
			off = append(off, fmt.Sprintf("%d electing", id))
		case n.leader != top:
			off = append(off, fmt.Sprintf("%d follows %d", id, n.leader))
		}
	}
	switch {
	case len(live) == 0:
		agr.OK, agr.Detail = false, "no live node"
	case len(off) > 0:
		agr.OK = false
		agr.Detail = fmt.Sprintf("not now: %s (the highest live ID is %d)", strings.Join(first(off, 6), "; "), top)
	default:
		agr.Detail = fmt.Sprintf("all %d live nodes follow %d, the highest live ID", len(live), top)
	}
	if len(sides) > 1 {
		agr.Detail += "; a partition is in force: agreement is judged once it heals"
	}
	return []property{uni, agr, {Name: "beliefs", OK: true, Detail: m.beliefs()}}
}

// beliefs is who believes what, as the status line says it: "leader 5: 1-5; electing: 3".
func (m *model) beliefs() string {
	by := map[int][]int{}
	var down []int
	for _, id := range m.ids {
		switch n := m.nodes[id]; {
		case !m.live(id):
			down = append(down, id)
		case n.electing:
			by[0] = append(by[0], id)
		default:
			by[n.leader] = append(by[n.leader], id)
		}
	}
	var ls []int
	for l := range by {
		ls = append(ls, l)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(ls)))
	var parts []string
	for _, l := range ls {
		if l == 0 {
			parts = append(parts, "no leader: "+launcher.IDRanges(by[l]))
		} else {
			parts = append(parts, fmt.Sprintf("leader %d: %s", l, launcher.IDRanges(by[l])))
		}
	}
	if len(down) > 0 {
		parts = append(parts, "down or paused: "+launcher.IDRanges(down))
	}
	return strings.Join(parts, "; ")
}

func sideNote(sides int) string {
	if sides > 1 {
		return " on one side"
	}
	return ""
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("%d more", len(s)-n))
	}
	return s
}
