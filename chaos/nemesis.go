package chaos

import (
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The fault kinds a Nemesis draws from (--nemesis kill,pause,restart,partition,link,stop).
const (
	NemesisKill      = "kill"      // SIGKILL the leader or a random live node; undone by a restart only with Restart
	NemesisPause     = "pause"     // SIGSTOP the leader or a random node for a while (pause ... for)
	NemesisRestart   = "restart"   // start again a node an earlier kill or stop left dead
	NemesisPartition = "partition" // a partition shape, healed after a while
	NemesisLink      = "link"      // a one-way link fault between two nodes, healed after a while
	NemesisStop      = "stop"      // SIGTERM the leader or a random live node (its orderly stop); undone as a kill is
	NemesisClock     = "clock"     // a clock fault (rate, bump or strobe) on the leader or a node, reset after a while
)

// NemesisKinds lists the kinds in the order error messages name them (and the draws use them: a
// new kind goes last, so that the schedules of the older kinds' seeds stay as they were).
var NemesisKinds = []string{NemesisKill, NemesisPause, NemesisRestart, NemesisPartition, NemesisLink, NemesisStop, NemesisClock}

// ParseNemesisKinds reads a comma-separated list of kinds ("kill,pause,partition"). Duplicates are
// folded; the result is in NemesisKinds order, so the same set always draws the same schedule.
func ParseNemesisKinds(s string) ([]string, error) {
	kinds, _, err := ParseNemesis(s)
	return kinds, err
}

// MaxNemesisWeight bounds a kind's weight in --nemesis.
const MaxNemesisWeight = 100

// ParseNemesis reads a comma-separated list of kinds, each with an optional weight
// ("kill=3,pause,clock=2": kill is drawn three times as often as pause). weights is nil when no kind
// has one (every kind equally likely, as the list without weights has always drawn); otherwise it
// holds every kind's weight, 1 where none was given.
func ParseNemesis(s string) (kinds []string, weights map[string]int, err error) {
	want := map[string]int{}
	weighted := false
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, ws, hasW := strings.Cut(item, "=")
		k = strings.TrimSpace(k)
		if !contains(NemesisKinds, k) {
			return nil, nil, fmt.Errorf("unknown fault kind %q in %q (accepted: a comma-separated list of %s, each optionally weighted as kind=w)", k, s, strings.Join(NemesisKinds, ", "))
		}
		w := 1
		if hasW {
			weighted = true
			w, err = strconv.Atoi(strings.TrimSpace(ws))
			if err != nil || w < 1 || w > MaxNemesisWeight {
				return nil, nil, fmt.Errorf("weight %q of %s in %q: want a whole number 1..%d", ws, k, s, MaxNemesisWeight)
			}
		}
		want[k] = w
	}
	if len(want) == 0 {
		return nil, nil, fmt.Errorf("no fault kind in %q (accepted: a comma-separated list of %s)", s, strings.Join(NemesisKinds, ", "))
	}
	for _, k := range NemesisKinds {
		if w, ok := want[k]; ok {
			kinds = append(kinds, k)
			if weighted {
				if weights == nil {
					weights = map[string]int{}
				}
				weights[k] = w
			}
		}
	}
	return kinds, weights, nil
}

// FormatNemesis writes kinds and weights as ParseNemesis reads them.
func FormatNemesis(kinds []string, weights map[string]int) string {
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k
		if weights != nil {
			parts[i] += "=" + strconv.Itoa(max(1, weights[k]))
		}
	}
	return strings.Join(parts, ",")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Nemesis draws a random fault schedule from a seed, the way Jepsen's nemesis staggers its faults,
// but all at once before the run starts: the drawn schedule is ordinary chaos-language text, so it is
// saved with the run, read by people, and replayed exactly.
//
// The schedule alternates quiet gaps and faults. Each gap is uniform in [0, 2 × Interval); each fault
// is held for another such draw, but at least MinHold (so that the failure detector notices it), and
// is then undone: a pause by its "for", a partition or link fault by a heal, a kill by a restart when
// Restart is set (otherwise the node stays dead, and the restart kind may bring it back later). Every
// fault and its undoing happen by Until, so the run ends with its settle window quiet. Without
// Overlap the next gap starts when the fault is undone; with it, the next gap starts when the fault
// starts, so faults pile up (a heal then also ends the other network faults in force: the language's
// heal removes every rule).
//
// Targets that only the running cluster knows stay symbolic (leader, random) and are resolved when
// the step fires; link endpoints are drawn here as IDs. The nemesis never takes the last node: kills
// and pauses leave at least one node up and running at every moment.
type Nemesis struct {
	// Kinds are the fault kinds to draw from (of NemesisKinds); restart needs kill.
	Kinds []string
	// Interval is the mean gap between faults, and the mean hold of each.
	Interval time.Duration
	// Overlap lets a fault start while earlier ones are still in force.
	Overlap bool
	// Restart undoes every kill by restarting the killed node after its hold.
	Restart bool
	// Nodes is N: the IDs are 1..N.
	Nodes int
	// Until is when every fault must be over: the run's duration less its settle time.
	Until time.Duration
	// MinHold is the shortest a fault is held (e.g. twice the failure detector's timeout).
	MinHold time.Duration
	// LinkKinds are the link rules a link fault may use (of NemesisLinkKinds); empty means all of
	// them.
	LinkKinds []string
	// Shapes are the partition shapes a partition fault is drawn from (of Shapes, isolate included);
	// empty: NemesisShapes.
	Shapes []string
	// Weights, when set, make each kind of Kinds drawn in proportion to its weight (ParseNemesis);
	// nil: every kind equally likely.
	Weights map[string]int
}

// Validate checks the configuration; errors name the flag and what is accepted.
func (nm Nemesis) Validate() error {
	if len(nm.Kinds) == 0 {
		return fmt.Errorf("--nemesis: no fault kind (accepted: a comma-separated list of %s)", strings.Join(NemesisKinds, ", "))
	}
	for _, k := range nm.Kinds {
		if !contains(NemesisKinds, k) {
			return fmt.Errorf("--nemesis: unknown fault kind %q (accepted: %s)", k, strings.Join(NemesisKinds, ", "))
		}
	}
	if contains(nm.Kinds, NemesisRestart) && !contains(nm.Kinds, NemesisKill) && !contains(nm.Kinds, NemesisStop) {
		return fmt.Errorf("--nemesis %s: restart brings back nodes the nemesis killed or stopped, so it needs kill or stop in the list too (e.g. kill,restart)", strings.Join(nm.Kinds, ","))
	}
	for _, s := range nm.Shapes {
		if _, ok := shapeMin[s]; !ok {
			return fmt.Errorf("--nemesis-shapes: unknown partition shape %q (accepted: %s)", s, strings.Join(Shapes, ", "))
		}
	}
	if len(nm.Shapes) > 0 && contains(nm.Kinds, NemesisPartition) {
		fits := false
		for _, s := range nm.Shapes {
			fits = fits || nm.Nodes >= shapeMin[s]
		}
		if !fits {
			return fmt.Errorf("--nemesis-shapes %s: no shape fits %d nodes", strings.Join(nm.Shapes, ","), nm.Nodes)
		}
	}
	for _, k := range nm.LinkKinds {
		if !contains(NemesisLinkKinds, k) {
			return fmt.Errorf("nemesis link rule %q: want one of %s", k, strings.Join(NemesisLinkKinds, ", "))
		}
	}
	switch {
	case nm.Interval <= 0:
		return fmt.Errorf("--nemesis-interval %v: want a positive duration such as 1s", nm.Interval)
	case nm.Nodes < 2:
		return fmt.Errorf("--nemesis needs at least 2 nodes (a fault on the only node leaves nothing to elect), got %d", nm.Nodes)
	case nm.MinHold < 0:
		return fmt.Errorf("nemesis minimum hold %v: want 0 or more", nm.MinHold)
	case nm.Until < nm.MinHold || nm.Until <= 0:
		return fmt.Errorf("--nemesis: the faults must be over by --duration less --settle, which leaves %v, less than the shortest fault (%v): make --duration longer", max(nm.Until, 0), nm.MinHold)
	}
	return nil
}

// nemesisSalt separates the nemesis's random stream from the other uses of the run's seed.
const nemesisSalt = 0x6e656d65736973 // "nemesis"

// down is a stretch during which a fault keeps one node from running: a kill or a stop (End < 0: for
// good, or until a restart kind brings a node back) or a pause.
type down struct {
	start, end time.Duration
	kill       bool
}

// Draw draws the schedule for a seed. The same configuration and seed always give the same schedule.
func (nm Nemesis) Draw(seed int64) (*Schedule, error) {
	if err := nm.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(seed ^ nemesisSalt))
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	stagger := func() time.Duration { return ms(time.Duration(rng.Int63n(int64(2 * nm.Interval)))) }
	links := nm.LinkKinds
	if len(links) == 0 {
		links = NemesisLinkKinds
	}
	var steps []Step
	var downs []down
	add := func(st Step) { steps = append(steps, st) }
	var t time.Duration
	for {
		t += stagger()
		// The nodes kept down at t; a new fault lasts from t on and earlier ones can only end, so
		// the count at t is the most the new fault will overlap.
		nDown, nDead := 0, 0
		for _, d := range downs {
			if d.start <= t && (d.end < 0 || d.end > t) {
				nDown++
				if d.kill && d.end < 0 {
					nDead++
				}
			}
		}
		var kinds []string
		for _, k := range nm.Kinds {
			switch k {
			case NemesisKill, NemesisPause, NemesisStop:
				if nDown+1 >= nm.Nodes {
					continue // leave one node up
				}
			case NemesisRestart:
				if nDead == 0 {
					continue
				}
			}
			kinds = append(kinds, k)
		}
		if len(kinds) == 0 {
			break
		}
		kind := nm.pick(rng, kinds)
		hold := max(nm.MinHold, stagger())
		if t+hold > nm.Until {
			break
		}
		target := func() Target {
			if rng.Intn(2) == 0 {
				return Target{Kind: TargetLeader}
			}
			return Target{Kind: TargetRandom}
		}
		switch kind {
		case NemesisKill, NemesisStop:
			op := OpKill
			if kind == NemesisStop {
				op = OpStop
			}
			add(Step{At: t, Op: op, Target: target()})
			if nm.Restart {
				add(Step{At: t + hold, Op: OpRestart, Target: Target{Kind: TargetRandom}})
				downs = append(downs, down{start: t, end: t + hold, kill: true})
			} else {
				downs = append(downs, down{start: t, end: -1, kill: true})
			}
		case NemesisPause:
			add(Step{At: t, Op: OpPause, Target: target(), For: hold})
			downs = append(downs, down{start: t, end: t + hold})
		case NemesisRestart:
			add(Step{At: t, Op: OpRestart, Target: Target{Kind: TargetRandom}})
			for i := range downs { // the first node killed for good is the one counted back up
				if downs[i].kill && downs[i].end < 0 && downs[i].start <= t {
					downs[i].end = t
					break
				}
			}
		case NemesisPartition:
			add(nm.drawPartition(rng, t))
			add(Step{At: t + hold, Op: OpHeal})
		case NemesisLink:
			add(Step{At: t, Op: OpLink, Link: nm.drawLink(rng, links)})
			add(Step{At: t + hold, Op: OpHeal})
		case NemesisClock:
			st := nm.drawClock(rng, t, hold)
			add(st)
			if st.Clock.Kind != ClockStrobe {
				// the leader may be another node by then: "all" resets whichever node it was
				reset := Step{At: t + hold, Op: OpClock, Target: st.Target, Clock: &ClockFault{Kind: ClockReset}}
				if st.Target.Kind != TargetID {
					reset.Target = Target{Kind: TargetAll}
				}
				add(reset)
			}
		}
		if !nm.Overlap {
			t += hold
		}
	}
	sort.SliceStable(steps, func(a, b int) bool { return steps[a].At < steps[b].At })
	for i := range steps {
		steps[i].Text = steps[i].String()
		steps[i].Pos = i + 1
		steps[i].Line = i + 1
	}
	return &Schedule{Steps: steps}, nil
}

// pick draws one of kinds, uniformly or by Weights.
func (nm Nemesis) pick(rng *rand.Rand, kinds []string) string {
	if nm.Weights == nil {
		return kinds[rng.Intn(len(kinds))]
	}
	total := 0
	for _, k := range kinds {
		total += max(1, nm.Weights[k])
	}
	r := rng.Intn(total)
	for _, k := range kinds {
		if r -= max(1, nm.Weights[k]); r < 0 {
			return k
		}
	}
	return kinds[len(kinds)-1]
}

// drawPartition draws a shape the cluster is big enough for.
func (nm Nemesis) drawPartition(rng *rand.Rand, t time.Duration) Step {
	st := Step{At: t, Op: OpPartition}
	var shapes []string
	from := nm.Shapes
	if len(from) == 0 {
		from = NemesisShapes
	}
	for _, s := range from {
		if nm.Nodes >= shapeMin[s] {
			shapes = append(shapes, s)
		}
	}
	st.Shape = shapes[rng.Intn(len(shapes))]
	if st.Shape == ShapeIsolate {
		st.Target = Target{Kind: TargetLeader}
		if rng.Intn(2) == 1 {
			st.Target = Target{Kind: TargetRandom}
		}
	}
	return st
}

// NemesisLinkKinds are the link rules the nemesis draws (drawLink sizes them); the other kinds are
// written in schedules.
var NemesisLinkKinds = []string{LinkDrop, LinkDelay, LinkLoss, LinkDup, LinkReorder}

// drawLink draws a one-way rule between two different nodes. Its sizes follow MinHold, which follows
// the failure detector's timeout: a delay of 1/8 to 1/2 of it (so some delays are noticed and some
// are not), a loss of 10% to 90%, a duplication of 10% to 50%.
func (nm Nemesis) drawLink(rng *rand.Rand, kinds []string) *LinkRule {
	from := 1 + rng.Intn(nm.Nodes)
	to := 1 + rng.Intn(nm.Nodes-1)
	if to >= from {
		to++
	}
	r := &LinkRule{From: Target{Kind: TargetID, ID: from}, To: Target{Kind: TargetID, ID: to}, Kind: kinds[rng.Intn(len(kinds))]}
	switch r.Kind {
	case LinkDelay:
		unit := max(nm.MinHold/8, 8*time.Millisecond).Round(time.Millisecond)
		r.Delay = time.Duration(1+rng.Intn(4)) * unit
		r.Jitter = (r.Delay / 4).Round(time.Millisecond)
	case LinkLoss:
		r.Percent = float64(10 * (1 + rng.Intn(9)))
	case LinkDup:
		r.Percent = float64(10 * (1 + rng.Intn(5)))
	}
	return r
}

// drawClock draws a clock fault on the leader or one node, held for hold: a rate of 0.25 to 4 (some
// within the algorithms' clock bounds, some beyond), a bump of ±1/4 to 2 MinHolds, or a strobe of
// 1/4 to 1 MinHold flipping every 5 to 20ms for the whole hold.
func (nm Nemesis) drawClock(rng *rand.Rand, t, hold time.Duration) Step {
	st := Step{At: t, Op: OpClock, Target: Target{Kind: TargetLeader}}
	if rng.Intn(2) == 1 {
		st.Target = Target{Kind: TargetID, ID: 1 + rng.Intn(nm.Nodes)}
	}
	unit := max(nm.MinHold/4, 10*time.Millisecond).Round(time.Millisecond)
	switch rng.Intn(3) {
	case 0:
		rates := []float64{0.25, 0.5, 0.75, 1.5, 2, 3, 4}
		st.Clock = &ClockFault{Kind: ClockRate, Rate: rates[rng.Intn(len(rates))]}
	case 1:
		by := time.Duration(1+rng.Intn(8)) * unit
		if rng.Intn(2) == 1 {
			by = -by
		}
		st.Clock = &ClockFault{Kind: ClockBump, By: by}
	default:
		every := time.Duration(5+rng.Intn(16)) * time.Millisecond
		st.Clock = &ClockFault{Kind: ClockStrobe, By: time.Duration(1+rng.Intn(4)) * unit, Every: every, For: max(hold, every)}
	}
	return st
}
