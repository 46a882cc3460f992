package node

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// The random draws of the link rules: delay distributions with correlation, correlated loss, and
// Gilbert-Elliott bursts. Each draws from one link channel's stream and keeps that channel's
// memory (the last draw, the burst state) in draws, so the k-th message on a channel meets the
// same fate in every run with the same seed and rules.

// draws is one link channel's random stream and what its correlated draws remember.
type draws struct {
	rng *rand.Rand
	// z is the last delay draw on a normal scale (valid once zSet): the next correlated draw
	// blends with it.
	z    float64
	zSet bool
	// lost is the last message's fate under loss; bad is Gilbert-Elliott's state (in a burst).
	lost bool
	bad  bool
}

// forget clears the channel's memory: its rules changed.
func (d *draws) forget() { d.z, d.zSet, d.lost, d.bad = 0, false, false, false }

// distCut is where the non-uniform delays are cut, in jitters above the delay (chaos.DistCut);
// below, a delay is cut at zero, as netem's are.
const distCut = 10

// The pareto delays have netem's shape, 3 (x^-3: a mean of 1.5 and a standard deviation of √0.75),
// cut at paretoCut: the cut's tail is 1/512 of the draws, and without it a draw in a million would
// hold a message for a hundred jitters. paretoMean and paretoSD are the cut distribution's exact
// moments (E[min(P,c)] = 1.5 − 1/(2c²), E[min(P,c)²] = 3 − 2/c), so that the delays keep the rule's
// mean and spread; the cut lands at (8 − 1.49)/0.72 = 9.0 standard deviations, inside distCut.
const paretoCut = 8.0

var (
	paretoMean = 1.5 - 1/(2*paretoCut*paretoCut)
	paretoSD   = math.Sqrt(3 - 2/paretoCut - paretoMean*paretoMean)
)

// delay draws one message's delay under r (its delay and jitter as spread gives them).
//
// Uniform without correlation keeps the first implementation's draw (an integer in ±jitter), so a
// schedule written before the distributions came meets the same fates. Otherwise the draw is
// netem's: a uniform number u, blended with the last one's by the correlation, mapped through the
// distribution, centred on the delay and scaled by the jitter. netem blends u itself, which narrows
// the spread and bends the distribution (tc-netem(8) warns of it); here the blend is on a normal
// scale, z = c·z' + √(1−c²)·ε and u = Φ(z), a Gaussian copula: every distribution keeps its mean and
// spread whatever the correlation, and consecutive delays correlate by about c (exactly c for
// normal).
func (d *draws) delay(r wire.LinkRule, delay, jitter int64) time.Duration {
	if jitter <= 0 {
		return time.Duration(delay)
	}
	if r.Dist == "" && r.DelayCorr == 0 {
		return time.Duration(delay + d.rng.Int64N(2*jitter+1) - jitter)
	}
	z := d.rng.NormFloat64()
	if c := r.DelayCorr; c > 0 && d.zSet {
		z = c*d.z + math.Sqrt(1-c*c)*z
	}
	d.z, d.zSet = z, true
	// x is the draw in jitters from the delay: for normal, pareto and paretonormal on a scale of
	// mean 0 and standard deviation 1; for uniform in −1..1.
	var x float64
	switch r.Dist {
	case "normal":
		x = z
	case "pareto":
		x = paretoStd(phi(z))
	case "paretonormal":
		// NISTnet's and netem's paretonormal: a quarter pareto and three quarters normal, the
		// pareto part independent; rescaled to a standard deviation of 1.
		x = (0.75*z + 0.25*paretoStd(d.rng.Float64())) / math.Sqrt(0.75*0.75+0.25*0.25)
	default:
		x = 2*phi(z) - 1
	}
	v := float64(delay) + float64(jitter)*x
	return time.Duration(min(max(v, 0), float64(delay+distCut*jitter)))
}

// phi is the standard normal distribution function.
func phi(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// paretoStd maps a uniform u in [0, 1) to a pareto draw of shape 3, cut at paretoCut, centred and
// scaled to a mean of 0 and a standard deviation of 1: its least value is −0.68, its tail long.
func paretoStd(u float64) float64 {
	p := min(math.Cbrt(1/(1-u)), paretoCut)
	return (p - paretoMean) / paretoSD
}

// loss decides whether r loses one message. Without correlation it is one draw against Loss. With
// correlation c, the message shares the last one's fate with probability c, and is otherwise lost
// with probability Loss: the loss rate stays Loss, consecutive fates correlate by c, and a run of
// losses lasts 1/(1 − c − (1−c)·Loss) messages on average. (netem blends the uniform draws
// instead, which changes the loss rate with the correlation.)
func (d *draws) loss(r wire.LinkRule) bool {
	var lost bool
	if r.LossCorr > 0 && d.rng.Float64() < r.LossCorr {
		lost = d.lost
	} else {
		lost = d.rng.Float64() < r.Loss
	}
	d.lost = lost
	return lost
}

// burst is Gilbert-Elliott's loss as netem's gemodel with its defaults: in the good state nothing
// is lost, in the bad state everything; a delivered message moves the link into a burst with
// probability BurstBegin, a lost one ends the burst with probability BurstEnd. Bursts last 1/BurstEnd
// messages on average, the gaps between them 1/BurstBegin, and the loss rate is
// BurstBegin/(BurstBegin+BurstEnd).
func (d *draws) burst(r wire.LinkRule) bool {
	if d.bad {
		if d.rng.Float64() < r.BurstEnd {
			d.bad = false
		}
		return true
	}
	if d.rng.Float64() < r.BurstBegin {
		d.bad = true
	}
	return false
}
