package bench

import (
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// The log analysis of `bench rsdp`: pure functions over a logs.Run.

// rsdpSession is what the node logs say about one synchronization session (one msg.round).
type rsdpSession struct {
	Round int
	// Start is the earliest send of a hello of the round; LastShare the latest recv of a share of
	// the round (Unix ns; 0: none).
	Start, LastShare int64
	// Sends counts the sends of hello, status and share of the round.
	Sends int
	// FirstHello is each node's first hello send of the round (when it entered the session).
	FirstHello map[int]int64
	// got[receiver][kind] is the set of peers the receiver got a message of that kind from.
	got map[int]map[string]map[int]bool
}

// received tells how many distinct peers id received kind from in the session.
func (s *rsdpSession) received(id int, kind string) int { return len(s.got[id][kind]) }

// succeeded tells whether replica id received a hello, a status and a share of the session from
// every other node of ids (the paper's M_total = 3n-3 receipts, eq. 5).
func (s *rsdpSession) succeeded(id int, ids []int) bool {
	for _, kind := range []string{election.RSDPHello, election.RSDPStatus, election.RSDPShare} {
		for _, p := range ids {
			if p != id && !s.got[id][kind][p] {
				return false
			}
		}
	}
	return true
}

func isRSDPSessionKind(k string) bool {
	return k == election.RSDPHello || k == election.RSDPStatus || k == election.RSDPShare
}

// rsdpSessions gathers every session of the node logs by round.
func rsdpSessions(run *logs.Run) map[int]*rsdpSession {
	out := map[int]*rsdpSession{}
	for id, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Msg == nil || !isRSDPSessionKind(e.Msg.Kind) || (e.Ev != logs.EvSend && e.Ev != logs.EvRecv) {
				continue
			}
			s := out[e.Msg.Round]
			if s == nil {
				s = &rsdpSession{Round: e.Msg.Round, FirstHello: map[int]int64{}, got: map[int]map[string]map[int]bool{}}
				out[e.Msg.Round] = s
			}
			switch e.Ev {
			case logs.EvSend:
				s.Sends++
				if e.Msg.Kind == election.RSDPHello {
					if s.Start == 0 || e.TS < s.Start {
						s.Start = e.TS
					}
					if t, ok := s.FirstHello[id]; !ok || e.TS < t {
						s.FirstHello[id] = e.TS
					}
				}
			case logs.EvRecv:
				if e.Msg.Kind == election.RSDPShare && e.TS > s.LastShare {
					s.LastShare = e.TS
				}
				byKind := s.got[id]
				if byKind == nil {
					byKind = map[string]map[int]bool{}
					s.got[id] = byKind
				}
				if byKind[e.Msg.Kind] == nil {
					byKind[e.Msg.Kind] = map[int]bool{}
				}
				byKind[e.Msg.Kind][e.From] = true
			}
		}
	}
	return out
}

// rsdpMessageDelays are recv.ts - send.ts of every message of the node logs that keep accepts (nil:
// all), matched by msg.id (every node runs on one machine: one clock).
func rsdpMessageDelays(run *logs.Run, keep func(*election.Message) bool) []int64 {
	sent := map[string]int64{}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && e.Msg != nil && e.Msg.ID != "" {
				if _, dup := sent[e.Msg.ID]; !dup {
					sent[e.Msg.ID] = e.TS
				}
			}
		}
	}
	var out []int64
	for _, id := range slices.Sorted(maps.Keys(run.Nodes)) {
		for _, e := range run.Nodes[id].Events {
			if e.Ev != logs.EvRecv || e.Msg == nil || (keep != nil && !keep(e.Msg)) {
				continue
			}
			if t, ok := sent[e.Msg.ID]; ok {
				out = append(out, e.TS-t)
			}
		}
	}
	return out
}

// rsdpHelloTurnarounds are, for every hello of the round (0: of every round) a node received, the
// time until that node sent the status answering it: its next send of a status to the hello's
// sender with the same round.
func rsdpHelloTurnarounds(run *logs.Run, round int) []int64 {
	var out []int64
	for _, id := range slices.Sorted(maps.Keys(run.Nodes)) {
		ev := run.Nodes[id].Events
		for i, e := range ev {
			if e.Ev != logs.EvRecv || e.Msg == nil || e.Msg.Kind != election.RSDPHello || (round != 0 && e.Msg.Round != round) {
				continue
			}
			for _, f := range ev[i+1:] {
				if f.Ev == logs.EvSend && f.Msg != nil && f.Msg.Kind == election.RSDPStatus && f.To == e.From && f.Msg.Round == e.Msg.Round {
					out = append(out, f.TS-e.TS)
					break
				}
			}
		}
	}
	return out
}

// rsdpMedian of xs (the mean of the middle two for an even count); NaN for none.
func rsdpMedian(xs []int64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return float64(s[m])
	}
	return (float64(s[m-1]) + float64(s[m])) / 2
}

// rsdpMax of xs; NaN for none.
func rsdpMax(xs []int64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	return float64(slices.Max(xs))
}

// rsdpConsensus is the first session of a run against eq. 3 and eq. 16.
type rsdpConsensus struct {
	OK bool // the session's start and last share are in the logs
	// TimeNS is the first hello sent -> the last share received of session 1.
	TimeNS int64
	// SkewNS is how long after the first hello the last node sent its first (the launcher's begin
	// reaches the nodes one by one); TailNS is the last node's first hello -> the last share
	// received, the part of the session when every replica had started.
	SkewNS, TailNS int64
	// D1 is the median delay of session 1's own messages; D1Max and TP1Max the largest delay and
	// hello turnaround of session 1 (ns): the paper's d and t_p are maxima.
	D1, D1Max, TP1Max float64
	// Sends are session 1's hello+status+share sends.
	Sends int
	// D and TP are the medians of the message delays and the hello turnarounds of the whole run
	// (ns); ND and NTP how many of each.
	D, TP   float64
	ND, NTP int
}

// analyzeRSDPConsensus measures session 1 (every node opens it when the cluster begins).
func analyzeRSDPConsensus(run *logs.Run) rsdpConsensus {
	var c rsdpConsensus
	d, tp := rsdpMessageDelays(run, nil), rsdpHelloTurnarounds(run, 0)
	c.D, c.ND, c.TP, c.NTP = rsdpMedian(d), len(d), rsdpMedian(tp), len(tp)
	d1 := rsdpMessageDelays(run, func(m *election.Message) bool { return m.Round == 1 && isRSDPSessionKind(m.Kind) })
	c.D1, c.D1Max = rsdpMedian(d1), rsdpMax(d1)
	c.TP1Max = rsdpMax(rsdpHelloTurnarounds(run, 1))
	s := rsdpSessions(run)[1]
	if s == nil {
		return c
	}
	c.Sends = s.Sends
	if s.Start > 0 && s.LastShare >= s.Start {
		c.OK, c.TimeNS = true, s.LastShare-s.Start
		last := s.Start
		for _, t := range s.FirstHello {
			last = max(last, t)
		}
		c.SkewNS, c.TailNS = last-s.Start, max(0, s.LastShare-last)
	}
	return c
}

// rsdpRunWindow is the observed run: the launcher's begin to its stopping record (Unix ns).
func rsdpRunWindow(run *logs.Run) (begin, stop int64, ok bool) {
	for _, r := range run.Launcher {
		switch {
		case r.Ev == logs.LaunchBegin && begin == 0:
			begin = r.TS
		case r.Ev == logs.LaunchStopping && stop == 0:
			stop = r.TS
		}
	}
	return begin, stop, begin > 0 && stop > begin
}

// rsdpLastStats is the log's last stats event: its hb_sent and its time.
func rsdpLastStats(nl *logs.NodeLog) (hbSent, ts int64, ok bool) {
	for i := len(nl.Events) - 1; i >= 0; i-- {
		if e := nl.Events[i]; e.Ev == logs.EvStats && e.Stats != nil {
			return e.Stats.HeartbeatsSent, e.TS, true
		}
	}
	return 0, 0, false
}

// rsdpProbesPerInterval sums the last stats hb_sent of the logs and divides by the intervals h in
// begin..stop.
func rsdpProbesPerInterval(byID map[int]*logs.NodeLog, begin, stop int64, h time.Duration) (perH float64, total int64) {
	for _, nl := range byID {
		if n, _, ok := rsdpLastStats(nl); ok {
			total += n
		}
	}
	return float64(total) / (float64(stop-begin) / float64(h)), total
}

// rsdpFirstKill is the first kill record: when and whom.
func rsdpFirstKill(run *logs.Run) (ts int64, node int, ok bool) {
	for _, r := range run.Chaos {
		if r.Op == logs.OpKill && r.Error == "" && len(r.Targets) > 0 {
			return r.TS, r.Targets[0], true
		}
	}
	return 0, 0, false
}

// rsdpKillLate is how long after its scheduled time (begin + at_ns) the first kill was carried out.
func rsdpKillLate(run *logs.Run) (time.Duration, bool) {
	begin, _, ok := rsdpRunWindow(run)
	if !ok {
		return 0, false
	}
	for _, r := range run.Chaos {
		if r.Op == logs.OpKill && r.Error == "" {
			return time.Duration(r.TS - begin - r.At), true
		}
	}
	return 0, false
}

// rsdpMutualExpectation is what the mutual detector should log per h in this run, the kill
// included: every node probes its N-1 peers each h until the kill, the survivors N-2 after it (the
// dead node is suspected at once and not probed again), and each node's count is what its last
// stats event says (the killed node's last one comes before its death).
func rsdpMutualExpectation(run *logs.Run, h time.Duration) (float64, bool) {
	begin, stop, ok := rsdpRunWindow(run)
	if !ok {
		return 0, false
	}
	n := len(run.Cluster.Nodes)
	kill, _, killed := rsdpFirstKill(run)
	if !killed {
		kill = math.MaxInt64
	}
	var probes float64
	for _, nl := range run.Nodes {
		_, last, ok := rsdpLastStats(nl)
		if !ok || last <= begin {
			continue
		}
		before := min(last, kill) - begin
		after := max(0, last-kill)
		probes += (float64(n-1)*float64(before) + float64(n-2)*float64(after)) / float64(h)
	}
	return probes / (float64(stop-begin) / float64(h)), true
}

// rsdpFalseSuspicions counts the suspect events of nodes and observers about a node that was alive:
// any node but the one killed, or the killed one before its kill (killed 0: none was killed).
func rsdpFalseSuspicions(run *logs.Run, killed int, killTS int64) int {
	k := 0
	count := func(byID map[int]*logs.NodeLog) {
		for _, nl := range byID {
			for _, e := range nl.Events {
				if e.Ev == logs.EvSuspect && (e.Peer != killed || e.TS < killTS) {
					k++
				}
			}
		}
	}
	count(run.Nodes)
	count(run.Observers)
	return k
}

// rsdpObserverMessages counts the agreement messages the observers sent about node cand (0: about
// any node).
func rsdpObserverMessages(run *logs.Run, cand int) int {
	k := 0
	for _, nl := range run.Observers {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && (cand == 0 || (e.Msg != nil && e.Msg.Cand == cand)) {
				k++
			}
		}
	}
	return k
}

// rsdpLossFrom is when every link rule of the run was in force: the latest link record's time or
// acknowledgement; 0 without link records.
func rsdpLossFrom(run *logs.Run) int64 {
	var t int64
	for _, r := range run.Chaos {
		if r.Op != logs.OpLink || r.Error != "" {
			continue
		}
		t = max(t, r.TS)
		for _, a := range r.Acks {
			t = max(t, a)
		}
	}
	return t
}

// rsdpLinkRules counts the link rules the chaos agent applied.
func rsdpLinkRules(run *logs.Run) int {
	k := 0
	for _, r := range run.Chaos {
		if r.Op == logs.OpLink && r.Error == "" {
			k++
		}
	}
	return k
}

// rsdpLossStats counts the sessions of a loss run.
type rsdpLossStats struct {
	// Sessions is how many sessions started in the window; FailAll how many some replica did not
	// complete; FailVote how many fewer than ceil(n/2) replicas completed; Short how many had fewer
	// sends than 3n(n-1) (a hello lost is a status never sent; a node that abandoned the session
	// for a newer one sent no share).
	Sessions, FailAll, FailVote, Short int
	// ReplicaOK of Replicas (sessions x n) completed.
	ReplicaOK, Replicas int
	// Lost and Delivered count the frames the nodes dropped by a loss rule and received, from the
	// window's start to the end of the logs.
	Lost, Delivered int
	// Rounds are the rounds counted.
	Rounds []int
}

// analyzeRSDPLoss judges every session whose first hello was sent in from..to: replica i completed
// it iff it received n-1 hellos, n-1 statuses (the answers to its own hello) and n-1 shares of the
// round.
func analyzeRSDPLoss(run *logs.Run, from, to int64) rsdpLossStats {
	var st rsdpLossStats
	ids := run.Cluster.IDs()
	n := len(ids)
	q := rsdpEq9Quorum(n)
	sessions := rsdpSessions(run)
	for _, r := range slices.Sorted(maps.Keys(sessions)) {
		s := sessions[r]
		if s.Start == 0 || s.Start < from || s.Start > to {
			continue
		}
		st.Sessions++
		st.Rounds = append(st.Rounds, r)
		ok := 0
		for _, id := range ids {
			if s.succeeded(id, ids) {
				ok++
			}
		}
		st.ReplicaOK += ok
		st.Replicas += n
		if ok < n {
			st.FailAll++
		}
		if ok < q {
			st.FailVote++
		}
		if s.Sends < rsdpEq16ConsensusMessages(n) {
			st.Short++
		}
	}
	for _, nl := range run.Nodes {
		for _, e := range nl.Events {
			if e.TS < from || e.Msg == nil {
				continue
			}
			switch {
			case e.Ev == logs.EvRecv:
				st.Delivered++
			case e.Ev == logs.EvDrop && e.From != 0 && strings.HasPrefix(e.Reason, "loss"):
				st.Lost++
			}
		}
	}
	return st
}
