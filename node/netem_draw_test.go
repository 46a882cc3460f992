package node

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/wire"
)

// moments are a sample's mean, variance, fourth central moment and lag-1 correlation.
type moments struct{ mean, variance, m4, corr float64 }

func sampleMoments(xs []float64) moments {
	n := float64(len(xs))
	var m moments
	for _, x := range xs {
		m.mean += x
	}
	m.mean /= n
	var cov float64
	for i, x := range xs {
		d := x - m.mean
		m.variance += d * d
		m.m4 += d * d * d * d
		if i > 0 {
			cov += d * (xs[i-1] - m.mean)
		}
	}
	m.corr = cov / m.variance
	m.variance /= n
	m.m4 /= n
	return m
}

// drawDelays draws n delays (in ms) of a rule from one stream.
func drawDelays(r wire.LinkRule, n int) []float64 {
	d := draws{rng: rand.New(rand.NewPCG(7, 11))}
	out := make([]float64, n)
	for i := range out {
		out[i] = float64(d.delay(r, r.Delay, r.Jitter)) / float64(time.Millisecond)
	}
	return out
}

// The delay distributions' samples match their parameters over 10,000 draws: the mean is the
// delay and the standard deviation the jitter (the uniform's ±jitter has jitter/√3), within five
// standard errors, each estimated from the sample itself (the pareto tail makes the variance's
// estimate loose, and its error says so); a correlation c makes consecutive delays correlate by c
// on the normal scale — Pearson's c for normal, (6/π)·asin(c/2) for uniform — and leaves the mean
// and the spread alone.
func TestDelayDistributions(t *testing.T) {
	const n = 10000
	ms := int64(time.Millisecond)
	uniformCorr := func(c float64) float64 { return 6 / math.Pi * math.Asin(c/2) }
	for _, tc := range []struct {
		name     string
		rule     wire.LinkRule
		sd       float64 // ms
		corr     float64 // the lag-1 correlation expected; -1: only above zero
		min, max float64 // ms: the bounds every draw keeps
	}{
		{"uniform", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, DelayCorr: 0}, 10 / math.Sqrt(3), 0, 40, 60},
		{"uniform corr 50%", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, DelayCorr: 0.5}, 10 / math.Sqrt(3), uniformCorr(0.5), 40, 60},
		{"normal", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "normal"}, 10, 0, 0, 150},
		{"normal corr 25%", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "normal", DelayCorr: 0.25}, 10, 0.25, 0, 150},
		{"normal corr 90%", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "normal", DelayCorr: 0.9}, 10, 0.9, 0, 150},
		{"pareto", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "pareto"}, 10, 0, 50 - 10*0.69, 50 + 10*9.1},
		{"pareto corr 50%", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "pareto", DelayCorr: 0.5}, 10, -1, 50 - 10*0.69, 50 + 10*9.1},
		{"paretonormal", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "paretonormal"}, 10, 0, 0, 150},
		{"paretonormal corr 50%", wire.LinkRule{Delay: 50 * ms, Jitter: 10 * ms, Dist: "paretonormal", DelayCorr: 0.5}, 10, -1, 0, 150},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xs := drawDelays(tc.rule, n)
			m := sampleMoments(xs)
			mean := float64(tc.rule.Delay) / float64(ms)
			// Correlated draws carry less information: the mean's error grows by √((1+c)/(1−c)).
			c := tc.rule.DelayCorr
			inflate := math.Sqrt((1 + c) / (1 - c))
			seMean := math.Sqrt(m.variance/n) * inflate
			seVar := math.Sqrt((m.m4-m.variance*m.variance)/n) * inflate
			t.Logf("mean %.3f ms (want %.3f ± %.3f), sd %.3f ms (want %.3f), lag-1 correlation %.3f", m.mean, mean, 5*seMean, math.Sqrt(m.variance), tc.sd, m.corr)
			if math.Abs(m.mean-mean) > 5*seMean {
				t.Errorf("mean %.3f ms, want %.3f within %.3f", m.mean, mean, 5*seMean)
			}
			if math.Abs(m.variance-tc.sd*tc.sd) > 5*seVar {
				t.Errorf("variance %.3f ms², want %.3f within %.3f", m.variance, tc.sd*tc.sd, 5*seVar)
			}
			seCorr := 5 * (1 - tc.corr*tc.corr) / math.Sqrt(n)
			if tc.corr >= 0 && math.Abs(m.corr-tc.corr) > max(seCorr, 0.03) {
				t.Errorf("lag-1 correlation %.3f, want %.3f within %.3f", m.corr, tc.corr, max(seCorr, 0.03))
			}
			if tc.corr < 0 && m.corr < 0.2 {
				t.Errorf("lag-1 correlation %.3f under corr %v, want clearly above zero", m.corr, c)
			}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, x := range xs {
				lo, hi = min(lo, x), max(hi, x)
			}
			if lo < tc.min || hi > tc.max {
				t.Errorf("draws in %.3f..%.3f ms, want within %v..%v", lo, hi, tc.min, tc.max)
			}
		})
	}
}

// Loss with correlation keeps the loss rate and correlates consecutive fates by c: a run of losses
// lasts 1/(1 − c − (1−c)·p) messages on average.
func TestCorrelatedLoss(t *testing.T) {
	const n = 100000
	for _, tc := range []struct{ p, c float64 }{{0.1, 0}, {0.1, 0.5}, {0.3, 0.8}} {
		d := draws{rng: rand.New(rand.NewPCG(3, 5))}
		r := wire.LinkRule{Loss: tc.p, LossCorr: tc.c}
		lost, runs, inRun := 0, 0, false
		for range n {
			l := d.loss(r)
			if l {
				lost++
				if !inRun {
					runs++
				}
			}
			inRun = l
		}
		rate := float64(lost) / n
		meanRun := float64(lost) / float64(runs)
		wantRun := 1 / (1 - tc.c - (1-tc.c)*tc.p)
		t.Logf("loss %v corr %v: rate %.4f, runs of %.3f", tc.p, tc.c, rate, meanRun)
		// the fates are a Markov chain: the rate's error grows with the runs' length
		if se := math.Sqrt(tc.p*(1-tc.p)/n) * math.Sqrt((1+tc.c)/(1-tc.c)); math.Abs(rate-tc.p) > 5*se {
			t.Errorf("loss %v corr %v: rate %.4f, want %v within %.4f", tc.p, tc.c, rate, tc.p, 5*se)
		}
		if math.Abs(meanRun-wantRun)/wantRun > 0.05 {
			t.Errorf("loss %v corr %v: runs of %.3f losses on average, want %.3f", tc.p, tc.c, meanRun, wantRun)
		}
	}
}

// Gilbert-Elliott's loss has the configured burst lengths: bursts of 1/r lost messages, gaps of
// 1/p delivered ones, a loss rate of p/(p+r), and bursts geometric (P(length 1) = r).
func TestGilbertElliottBursts(t *testing.T) {
	const n = 200000
	for _, tc := range []struct{ p, r float64 }{{0.01, 0.25}, {0.05, 0.5}, {0.2, 0.1}} {
		d := draws{rng: rand.New(rand.NewPCG(9, 1))}
		rule := wire.LinkRule{BurstBegin: tc.p, BurstEnd: tc.r}
		var bursts, gaps []int
		run, inBurst := 0, false
		lost := 0
		for i := range n {
			l := d.burst(rule)
			if l {
				lost++
			}
			if i > 0 && l != inBurst {
				if inBurst {
					bursts = append(bursts, run)
				} else {
					gaps = append(gaps, run)
				}
				run = 0
			}
			inBurst = l
			run++
		}
		mean := func(xs []int) float64 {
			s := 0
			for _, x := range xs {
				s += x
			}
			return float64(s) / float64(len(xs))
		}
		ones := 0
		for _, b := range bursts {
			if b == 1 {
				ones++
			}
		}
		mb, mg, rate := mean(bursts), mean(gaps), float64(lost)/n
		t.Logf("burst %v %v: %d bursts of %.3f (want %.3f), gaps of %.2f (want %.2f), loss rate %.4f (want %.4f)",
			tc.p, tc.r, len(bursts), mb, 1/tc.r, mg, 1/tc.p, rate, tc.p/(tc.p+tc.r))
		// Geometric lengths: the standard error of a mean of k lengths with mean m is √(m(m−1)/k).
		for _, c := range []struct {
			what  string
			got   float64
			want  float64
			count int
		}{{"burst length", mb, 1 / tc.r, len(bursts)}, {"gap length", mg, 1 / tc.p, len(gaps)}} {
			se := math.Sqrt(c.want * (c.want - 1) / float64(c.count))
			if math.Abs(c.got-c.want) > 5*se+1e-9 {
				t.Errorf("burst %v %v: mean %s %.3f, want %.3f within %.3f", tc.p, tc.r, c.what, c.got, c.want, 5*se)
			}
		}
		if f := float64(ones) / float64(len(bursts)); math.Abs(f-tc.r) > 5*math.Sqrt(tc.r*(1-tc.r)/float64(len(bursts))) {
			t.Errorf("burst %v %v: %.3f of the bursts lose one message, want %v", tc.p, tc.r, f, tc.r)
		}
		if want := tc.p / (tc.p + tc.r); math.Abs(rate-want)/want > 0.1 {
			t.Errorf("burst %v %v: loss rate %.4f, want %.4f", tc.p, tc.r, rate, want)
		}
	}
}
