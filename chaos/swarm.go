package chaos

import (
	"math/rand"
	"slices"
	"strings"
	"time"
)

// Swarm testing (Groce et al., "Swarm Testing", ISSTA 2012; TigerBeetle's VOPR, SPIN's swarm): a
// campaign in which every run draws the same mix of faults explores the same corner over and over,
// and a fault that one kind masks (a kill that ends the partition's overlap) is never seen alone.
// So each run of a swarm draws its own nemesis from its seed: a subset of the kinds, a weight for
// each, the mean interval, and whether faults overlap.

// swarmSalt separates the swarm's draw from the run's other uses of its seed.
const swarmSalt = 0x737761726d // "swarm"

// SwarmDraw is one run's nemesis, as `run` takes it.
type SwarmDraw struct {
	Nemesis  string        // --nemesis: kinds with weights, "kill=3,clock=1"
	Interval time.Duration // --nemesis-interval
	Overlap  bool          // --nemesis-overlap
	Shapes   string        // --nemesis-shapes: the partition shapes, when partition is drawn
}

// Swarm draws a run's nemesis from its seed over the given kinds (of NemesisKinds): each kind is in
// with probability 1/2 (at least one is; restart comes with kill or stop), weighted 1..4; the interval
// is base × ½, 1 or 2; faults overlap in one run of four.
func Swarm(seed int64, kinds []string, base time.Duration) SwarmDraw {
	rng := rand.New(rand.NewSource(seed ^ swarmSalt))
	var in []string
	weights := map[string]int{}
	for _, k := range kinds {
		if rng.Intn(2) == 0 {
			in = append(in, k)
		}
		weights[k] = 1 + rng.Intn(4) // drawn for every kind, so that one kind's draw moves no other's
	}
	if len(in) == 0 {
		in = append(in, kinds[rng.Intn(len(kinds))])
	}
	if contains(in, NemesisRestart) && !contains(in, NemesisKill) && !contains(in, NemesisStop) {
		in = append(in, NemesisKill)
	}
	var ordered []string
	for _, k := range NemesisKinds {
		if contains(in, k) {
			ordered = append(ordered, k)
		}
	}
	scale := []time.Duration{base / 2, base, 2 * base}[rng.Intn(3)]
	d := SwarmDraw{Nemesis: FormatNemesis(ordered, weights), Interval: scale, Overlap: rng.Intn(4) == 0}
	var shapes []string
	for _, s := range Shapes {
		if rng.Intn(2) == 0 {
			shapes = append(shapes, s)
		}
	}
	if !slices.ContainsFunc(shapes, func(s string) bool { return shapeMin[s] == 2 }) {
		shapes = append(shapes, ShapeHalves) // a shape that fits every cluster
	}
	if contains(ordered, NemesisPartition) {
		d.Shapes = strings.Join(shapes, ",")
	}
	return d
}
