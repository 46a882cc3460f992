package report

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/topology"
)

// Data is what the page's script draws, embedded in the page as JSON. Times are microseconds since
// the run's origin (the verdict's begin_ns, else the launcher's begin, else the first event). Lanes
// are indexes into Lanes; the large parts (Msgs, Marks) are column arrays, sorted by time.
type Data struct {
	Run    string `json:"run"`
	Algo   string `json:"algo"`
	Origin int64  `json:"origin_ns"`
	// From and To bound the diagram: the first and last thing observed. End is the observed run's
	// end (the launcher's stopping), where the checker judged agreement.
	From int64 `json:"from"`
	To   int64 `json:"to"`
	End  int64 `json:"end"`

	Lanes []Lane `json:"lanes"`
	// Order says how the lanes are laid out: "ring" (cluster.json's ring order, for a ring or
	// biring, so that a token goes down the lanes and wraps from the last to the first) or "id".
	Order   string   `json:"order"`
	Incs    []Inc    `json:"incs"`
	Dead    []Span   `json:"dead"`
	Paused  []Span   `json:"paused"`
	Beliefs []Belief `json:"beliefs"`
	// Leaders is the cluster's leader timeline: who the live nodes agreed on, stretch by stretch.
	Leaders []LeaderSeg `json:"leaders"`

	Kinds   []Kind   `json:"kinds"`
	Msgs    Msgs     `json:"msgs"`
	Marks   Marks    `json:"marks"`
	Types   []string `json:"types"`   // Marks.Y indexes this
	Strings []string `json:"strings"` // Msgs.X and Marks.X index this

	Faults     []Fault      `json:"faults"`
	Partitions []Partition  `json:"partitions"`
	Overlaps   []OverlapWin `json:"overlaps"`
	// SplitBrain are the verdict's split-brain windows: two or more components each had a leader.
	SplitBrain []SplitWin  `json:"split_brain"`
	Elections  []Window    `json:"elections"`
	Violations []Violation `json:"violations"`
	// Density counts message sends in DensityBins equal bins over [From, To], for the overview strip.
	Density []int `json:"density"`
	// Stop is the run's orderly stop: from the launcher's stopping (End) to the last thing observed,
	// while the nodes stop one by one; nil when the run has no such stop.
	Stop *Window `json:"stop,omitempty"`
	// Initial is the window the diagram opens on: the first election (else the first fault) with
	// its arrows, so that something can be seen before zooming; the whole run when there is none.
	Initial Window `json:"initial"`
	// MaxLatency is the longest arrow (end - start), so the script can find every arrow crossing its
	// window from the sorted send times.
	MaxLatency int64 `json:"max_latency"`
	// counts are a long run's messages counted whole, where Msgs holds only its windows' (long.go).
	counts *overTimeCounts
}

// Lane is one node's row.
type Lane struct {
	ID    int    `json:"id"`
	Label string `json:"label"`
	// Color is the node's colour: its belief bands' colour when others follow it, its resource lines.
	Color string `json:"color"`
}

// Span is a stretch of a lane: dead (no process) or paused (SIGSTOPped).
type Span struct {
	Lane int   `json:"l"`
	From int64 `json:"a"`
	To   int64 `json:"b"`
}

// Inc is one incarnation of a node: a process from its spawn to its death.
type Inc struct {
	Lane int    `json:"l"`
	Inc  int    `json:"inc"`
	From int64  `json:"a"`
	To   int64  `json:"b"`
	Pid  int    `json:"pid,omitempty"`
	End  string `json:"end"` // how it ended: "killed", "exit 0", "stop", "running at the end"
	// RunStop marks an incarnation that ended in the run's orderly stop (at or after the launcher's
	// stopping), not in a failure: its lane is not drawn dead afterwards.
	RunStop bool `json:"run_stop,omitempty"`
}

// Belief is a stretch of a lane with one leader belief; Leader 0 is ⊥.
type Belief struct {
	Lane   int   `json:"l"`
	From   int64 `json:"a"`
	To     int64 `json:"b"`
	Leader int   `json:"v"`
}

// LeaderSeg is a stretch of the cluster's leader timeline. Leader is the ID every live node follows
// (and which follows itself), 0 when they do not agree. While the network is split into components,
// Parts says what each component followed; Stop marks the run's orderly stop at the end.
type LeaderSeg struct {
	From   int64  `json:"a"`
	To     int64  `json:"b"`
	Leader int    `json:"v"`
	Text   string `json:"text"`
	Parts  []Part `json:"parts,omitempty"`
	Stop   bool   `json:"stop,omitempty"`
}

// Part is one component of a split network in a leader stretch: its live nodes (IDs, ascending) and
// the leader they all follow, 0 when they do not agree.
type Part struct {
	IDs    []int `json:"ids"`
	Leader int   `json:"v"`
}

// Kind is a message kind with its colour and role (election, announce, other).
type Kind struct {
	Name  string `json:"name"`
	Color string `json:"color"`
	Role  string `json:"role"`
	Count int    `json:"count"`
}

// Msgs holds one arrow per message, sorted by send time. An arrow runs from (F, S) to (T, R): to the
// recv when there was one (G=0); to the receiver's drop (G=1); when the sender dropped it (G=2), T is
// the intended receiver and R the drop's time; G=3 when it was neither received nor dropped.
type Msgs struct {
	F  []int    `json:"f"`
	T  []int    `json:"t"`
	S  []int64  `json:"s"`
	R  []int64  `json:"r"`
	K  []int    `json:"k"`
	G  []int    `json:"g"`
	ID []string `json:"id"`
	X  []int    `json:"x"` // the message's fields as text ("cand 5, round 2"), an index in Strings; -1 none
}

// The values of Msgs.G.
const (
	msgDelivered = iota
	msgDroppedAtReceiver
	msgDroppedAtSender
	msgUnmatched
)

// Marks holds the events drawn as glyphs on a lane, sorted by time: Y indexes Data.Types, A is the
// event's number (leader ID, peer, round, incarnation, pulse; for a drop or an orphan recv, the
// message's index in Msgs or -1), X its text (an index in Strings, -1 none).
type Marks struct {
	L []int   `json:"l"`
	T []int64 `json:"t"`
	Y []int   `json:"y"`
	A []int   `json:"a"`
	X []int   `json:"x"`
}

// markTypes are the values of Data.Types, in the order of Marks.Y.
// "pulse" comes last so that the indexes of the others stay what they were.
var markTypes = []string{"start", "stop", "elect", "leader", "suspect", "trust", "drop", "orphan", "pulse"}

func markType(ev string) int { return slices.Index(markTypes, ev) }

// Fault is a chaos record drawn as a vertical line across the lanes.
type Fault struct {
	T       int64  `json:"t"`
	Op      string `json:"op"`
	Targets []int  `json:"targets"`
	Label   string `json:"label"`
	Step    string `json:"step,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Partition is the stretch between a partition and the heal (or the next partition, or the end),
// shaded across the lanes.
type Partition struct {
	From  int64  `json:"a"`
	To    int64  `json:"b"`
	Label string `json:"label"`
}

// OverlapWin is a stretch when two or more live nodes believed in themselves (verdict metrics).
type OverlapWin struct {
	From        int64 `json:"a"`
	To          int64 `json:"b"`
	Lanes       []int `json:"lanes"`
	BeyondGrace bool  `json:"beyond_grace"`
}

// SplitWin is a split-brain window of the verdict: two or more components each had a leader (the
// leaders' lanes, and their IDs).
type SplitWin struct {
	From    int64 `json:"a"`
	To      int64 `json:"b"`
	Leaders []int `json:"leaders"`
	Lanes   []int `json:"lanes"`
}

// Window is a stretch of time with a label, to zoom to (an election).
type Window struct {
	From  int64  `json:"a"`
	To    int64  `json:"b"`
	Label string `json:"label"`
}

// Violation is where a failed property can be seen: a stretch and the lanes involved.
type Violation struct {
	Property string `json:"property"`
	From     int64  `json:"a"`
	To       int64  `json:"b"`
	Lanes    []int  `json:"lanes"`
	Text     string `json:"text"`
}

// DensityBins is the resolution of the overview strip.
const DensityBins = 600

// builder turns a run into Data.
type builder struct {
	run    *logs.Run
	v      *check.Verdict
	d      *Data
	lane   map[int]int // node ID -> lane
	strIdx map[string]int
	alg    election.Algorithm
	algOK  bool
	// incs per lane, by start; the source of Dead and of the beliefs' ends.
	incs [][]Inc
	// ended: End is the launcher's stopping (or the verdict's end), not just the last event.
	ended bool
	// byID lists the lane indexes by node ID (for texts, which name nodes in ID order).
	byID []int
}

// us converts a Unix ns time to the page's microseconds since the origin.
func (b *builder) us(ns int64) int64 { return (ns - b.d.Origin) / 1000 }

func (b *builder) str(s string) int {
	if s == "" {
		return -1
	}
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	b.d.Strings = append(b.d.Strings, s)
	b.strIdx[s] = len(b.d.Strings) - 1
	return len(b.d.Strings) - 1
}

// BuildData computes what the page draws from a run and its verdict.
func BuildData(run *logs.Run, v *check.Verdict, name string) *Data {
	b := &builder{run: run, v: v, d: &Data{Run: name, Algo: run.Cluster.Algo}, lane: map[int]int{}, strIdx: map[string]int{}}
	b.alg, b.algOK = lookupAlgo(run.Cluster.Algo)
	b.d.Types = markTypes
	b.origin()
	ids, order := laneOrder(&run.Cluster)
	b.d.Order = order
	for k, id := range ids {
		b.lane[id] = k
		b.d.Lanes = append(b.d.Lanes, Lane{ID: id, Label: "n" + strconv.Itoa(id), Color: nodeColor(id)})
	}
	b.domain()
	b.incarnations()
	b.pauses()
	b.beliefs()
	b.messages()
	b.chaos()
	b.leaderTimeline()
	b.metrics()
	b.violations()
	b.initialView()
	b.d.nonNil()
	return b.d
}

// laneOrder is the order of the lanes: a ring's (or biring's) nodes in cluster.json's ring order,
// so that a token's path runs down the lanes, any node the ring does not list after them; other
// topologies' nodes by ID.
func laneOrder(c *rundir.Cluster) ([]int, string) {
	ids := c.IDs()
	sort.Ints(ids)
	switch strings.TrimSpace(c.Topology) {
	case topology.Ring, topology.BiRing:
	default:
		return ids, "id"
	}
	known := make(map[int]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	out := make([]int, 0, len(ids))
	seen := make(map[int]bool, len(ids))
	for _, id := range c.Ring {
		if known[id] && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return ids, "id"
	}
	for _, id := range ids {
		if !seen[id] {
			out = append(out, id)
		}
	}
	return out, "ring"
}

// nonNil makes every list a JSON array (the script iterates them without checking for null).
func (d *Data) nonNil() {
	orEmpty(&d.Lanes)
	orEmpty(&d.Incs)
	orEmpty(&d.Dead)
	orEmpty(&d.Paused)
	orEmpty(&d.Beliefs)
	orEmpty(&d.Leaders)
	orEmpty(&d.Kinds)
	orEmpty(&d.Strings)
	orEmpty(&d.Faults)
	orEmpty(&d.Partitions)
	orEmpty(&d.Overlaps)
	orEmpty(&d.SplitBrain)
	orEmpty(&d.Elections)
	orEmpty(&d.Violations)
	orEmpty(&d.Density)
	for i := range d.Violations {
		orEmpty(&d.Violations[i].Lanes)
	}
}

func orEmpty[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

func lookupAlgo(name string) (election.Algorithm, bool) {
	a, err := election.Lookup(name)
	return a, err == nil
}

// origin picks the time origin: the verdict's begin, the launcher's begin, or the first event.
func (b *builder) origin() {
	if b.v != nil && b.v.BeginNS != 0 {
		b.d.Origin = b.v.BeginNS
		return
	}
	for _, r := range b.run.Launcher {
		if r.Ev == logs.LaunchBegin {
			b.d.Origin = r.TS
			return
		}
	}
	first := int64(0)
	for _, nl := range b.run.Nodes {
		if len(nl.Events) > 0 && (first == 0 || nl.Events[0].TS < first) {
			first = nl.Events[0].TS
		}
	}
	b.d.Origin = first
}

// domain is [min(0, first event), max(end, last event)], where end is the launcher's stopping.
func (b *builder) domain() {
	from, to := int64(0), int64(0)
	end, haveEnd := int64(0), false
	if b.v != nil && b.v.EndNS != 0 {
		end, haveEnd = b.us(b.v.EndNS), true
	}
	for _, r := range b.run.Launcher {
		if r.Ev == logs.LaunchStopping && !haveEnd {
			end, haveEnd = b.us(r.TS), true
		}
	}
	b.ended = haveEnd
	for _, nl := range b.run.Nodes {
		for i := range nl.Events {
			t := b.us(nl.Events[i].TS)
			from, to = min(from, t), max(to, t)
		}
	}
	for _, r := range b.run.Chaos {
		to = max(to, b.us(r.TS))
	}
	if !haveEnd {
		end = to
	}
	to = max(to, end)
	if to <= from {
		to = from + 1000
	}
	b.d.From, b.d.To, b.d.End = from, to, end
}
