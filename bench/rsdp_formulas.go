package bench

import (
	"math"
	"math/rand/v2"
	"time"
)

// The formulas of Toliupa et al. 2024 (pure), each named by its equation, and what eq. 8-11 come to
// for this protocol (a Monte Carlo).

// rsdpEq3ConsensusTime is eq. 3: T = 3(d + t_p(n-1)), in the unit of d and t_p.
func rsdpEq3ConsensusTime(d, tp float64, n int) float64 { return 3 * (d + tp*float64(n-1)) }

// rsdpEq6ReplicaSuccess is eq. 6: P_replica = (1-p_f)(1-p_l)^(3n-3).
func rsdpEq6ReplicaSuccess(pl, pf float64, n int) float64 {
	return (1 - pf) * math.Pow(1-pl, float64(3*n-3))
}

// rsdpEq8LastStateFailure is eq. 8: 1 - [(1-p_f)(1-p_l)^(3n-3)]^n.
func rsdpEq8LastStateFailure(pl, pf float64, n int) float64 {
	return 1 - math.Pow(rsdpEq6ReplicaSuccess(pl, pf, n), float64(n))
}

// rsdpEq9Quorum is eq. 9: q = ceil(n/2).
func rsdpEq9Quorum(n int) int { return (n + 1) / 2 }

// rsdpEq11VoteFailure is eq. 10-11: 1 - sum_{k=q}^{n} C(n,k) P^k (1-P)^(n-k), P = P_replica.
func rsdpEq11VoteFailure(pReplica float64, n int) float64 {
	ok := 0.0
	for k := rsdpEq9Quorum(n); k <= n; k++ {
		ok += rsdpBinomial(n, k) * math.Pow(pReplica, float64(k)) * math.Pow(1-pReplica, float64(n-k))
	}
	return math.Max(0, 1-ok)
}

// rsdpBinomial is C(n, k) as a float (n <= 64 here: exact enough).
func rsdpBinomial(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	k = min(k, n-k)
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return math.Round(c)
}

// rsdpEq12MutualDetection is eq. 12: E[T_d1] = h/2N.
func rsdpEq12MutualDetection(h time.Duration, n int) time.Duration {
	return h / time.Duration(2*n)
}

// rsdpStaggeredDetection is the exact E[T_d] of our mutual detector's staggering when the node that
// dies is a prober too: the N probers start at position·h/N, the dead one's slot is gone, so the
// N-1 survivors leave N-2 gaps of h/N and one of 2h/N; a death uniform over h waits half its gap:
// E = sum(gap²)/2h = h(N+2)/(2N²).
func rsdpStaggeredDetection(h time.Duration, n int) time.Duration {
	return time.Duration(float64(h) * float64(n+2) / float64(2*n*n))
}

// rsdpEq16ConsensusMessages is eq. 16 (and eq. 29 with M for N): 3N(N-1).
func rsdpEq16ConsensusMessages(n int) int { return 3 * n * (n - 1) }

// rsdpEq17MutualHealth is eq. 17's M_health for mutual evaluation: each of N probes N-1 others.
func rsdpEq17MutualHealth(n int) int { return n * (n - 1) }

// rsdpEq17TotalMessages is eq. 17 (and 23, 30): T_obs/h x M_health + M_consensus.
func rsdpEq17TotalMessages(tObs, h time.Duration, mHealth, mConsensus int) float64 {
	return float64(tObs)/float64(h)*float64(mHealth) + float64(mConsensus)
}

// rsdpEq19ObserverDetection is eq. 19: E[T_d2] = h_o/2.
func rsdpEq19ObserverDetection(ho time.Duration) time.Duration { return ho / 2 }

// rsdpEq22ObserverHealth is eq. 22: one observer probes N nodes per h_o.
func rsdpEq22ObserverHealth(n int) int { return n }

// rsdpEq25ObserversDetection is eq. 25: E[T_d3] = h_o/2M.
func rsdpEq25ObserversDetection(ho time.Duration, m int) time.Duration {
	return ho / time.Duration(2*m)
}

// rsdpEq28ObserversHealth is eq. 28: M observers probe N nodes each per h_o.
func rsdpEq28ObserversHealth(m, n int) int { return m * n }

// rsdpEq29ObserverConsensus is eq. 29: M(M-1) x 3.
func rsdpEq29ObserverConsensus(m int) int { return rsdpEq16ConsensusMessages(m) }

// rsdpProtocolLoss is what eq. 8-11's question comes to for this protocol, by Monte Carlo: one
// session among n replicas where each of its messages is lost with probability p, independently,
// and a status is sent only for a hello that arrived. Replica i completes the session iff, from
// every other j, j's hello, j's status (which needs i's hello to j and the status back) and j's
// share arrive: 4(n-1) deliveries, shared with other replicas (i's hello to j counts for j as
// well). It returns the probability that some replica does not complete the session, that fewer
// than ceil(n/2) do, and that a given replica does.
func rsdpProtocolLoss(n int, p float64, samples int, rng *rand.Rand) (failAll, failVote, replica float64) {
	q := rsdpEq9Quorum(n)
	hello := make([]bool, n*n) // hello[i*n+j]: i's hello reached j
	status := make([]bool, n*n)
	share := make([]bool, n*n)
	var all, vote, ok int
	for range samples {
		for k := range hello {
			hello[k] = rng.Float64() >= p
			status[k] = rng.Float64() >= p
			share[k] = rng.Float64() >= p
		}
		done := 0
		for i := 0; i < n; i++ {
			good := true
			for j := 0; j < n && good; j++ {
				if j != i {
					good = hello[j*n+i] && hello[i*n+j] && status[j*n+i] && share[j*n+i]
				}
			}
			if good {
				done++
			}
		}
		ok += done
		if done < n {
			all++
		}
		if done < q {
			vote++
		}
	}
	f := float64(samples)
	return float64(all) / f, float64(vote) / f, float64(ok) / (f * float64(n))
}

// rsdpProtocolSamples is how many sessions rsdpProtocolLoss draws for a table row.
const rsdpProtocolSamples = 20000
