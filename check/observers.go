package check

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/leaderlab/leaderlab/logs"
)

// Observer processes (RSDP's failover topologies, cluster.json's observers) write event logs of
// their own, observers/<id>.jsonl, in the node log's schema plus the verdict event. The checker
// reads them, checks that their agreement messages match (every recv a send of another observer),
// counts their probes and verdicts, and measures detection: how long after a fault some prober
// (a node's own detector or an observer) first suspected the node the fault hit.

// ObserverStats sums up one observer's log.
type ObserverStats struct {
	ID int `json:"id"`
	// Probes is the number of probes it sent (its last stats event); Suspects how many of its probes
	// failed for a node it held live; Verdicts how many verdicts it gave the cluster (down and up).
	Probes   int64 `json:"probes"`
	Suspects int   `json:"suspects"`
	Verdicts int   `json:"verdicts"`
	// Messages is the agreement messages it sent to the other observers.
	Messages int `json:"messages"`
}

// Detection is how long a fault that took a node away went unnoticed.
type Detection struct {
	Fault string  `json:"fault"` // "kill 5 at 1000.2ms"
	Node  int     `json:"node"`
	AtMS  float64 `json:"at_ms"`
	// FirstMS is the time from the fault to the first suspicion of Node by any node or observer, and
	// By that prober; null when nobody suspected it before the end.
	FirstMS *float64 `json:"first_ms"`
	By      int      `json:"by,omitempty"`
	// AllMS is the time until every node that stayed live had suspected it (or been told); null when
	// some never did.
	AllMS *float64 `json:"all_ms"`
}

// observerState is what a pass over the observers' logs found.
type observerState struct {
	problems []string        // recvs no observer sent, in observer order
	recvs    int             // their recvs
	stats    []ObserverStats // by ID
}

// readObservers reads each observer's log twice: for its sends, then for its recvs, its counts and
// its suspicions of the nodes the faults hit (detectStart's entries).
func (m *model) readObservers(c *checker) error {
	s := m.stream
	sent := map[string]int{}
	each := func(fn func(id int, e *logs.Event, line int)) error {
		for _, id := range s.Observers {
			if err := m.readLog(s.Observer, id, func(_ int, e *logs.Event, line int) bool { fn(id, e, line); return true }); err != nil {
				return err
			}
		}
		return nil
	}
	if err := each(func(id int, e *logs.Event, _ int) {
		if e.Ev == logs.EvSend && e.Msg != nil {
			sent[e.Msg.ID] = id
		}
	}); err != nil {
		return err
	}
	o := &c.obs
	byID := map[int]*ObserverStats{}
	for _, id := range s.Observers {
		o.stats = append(o.stats, ObserverStats{ID: id})
	}
	for i := range o.stats {
		byID[o.stats[i].ID] = &o.stats[i]
	}
	return each(func(id int, e *logs.Event, line int) {
		st := byID[id]
		switch e.Ev {
		case logs.EvStats:
			if e.Stats != nil {
				st.Probes = e.Stats.HeartbeatsSent
			}
		case logs.EvSuspect:
			st.Suspects++
			c.detectObserver(id, e.Peer, e.TS)
		case logs.EvVerdict:
			st.Verdicts++
		case logs.EvSend:
			st.Messages++
		case logs.EvRecv:
			if e.Msg == nil {
				return
			}
			o.recvs++
			if from, ok := sent[e.Msg.ID]; !ok || from != e.From {
				o.problems = append(o.problems, fmt.Sprintf("observers/%d.jsonl line %d: recv of %s from %d that observer %d never sent", id, line, e.Msg.ID, e.From, e.From))
			}
		}
	})
}

// checkObservers adds the integrity problems of the observers' logs: a recv that no observer sent.
func (c *checker) checkObservers(add func(string, ...any)) int {
	for _, p := range c.obs.problems {
		add("%s", p)
	}
	return c.obs.recvs
}

func (c *checker) observerStats() []ObserverStats {
	if len(c.obs.stats) == 0 {
		return nil
	}
	return c.obs.stats
}

// detectEntry is a detection being measured: the first suspicion of node after at, by a node
// (first, by) or an observer, and the last of the nodes' first ones (all).
type detectEntry struct {
	j, node   int
	at        int64
	first     int64
	by        int
	all       int64
	suspected int // nodes other than node, live at the end, that suspected it
	obsFirst  map[int]int64
}

// detectStart lists the detections to measure: for every kill, stop and pause, each of its nodes.
func (c *checker) detectStart() {
	c.detect = nil
	c.detectOf = map[int][]*detectEntry{}
	for j, op := range c.faults {
		if op.Op != logs.OpKill && op.Op != logs.OpStop && op.Op != logs.OpPause {
			continue
		}
		for _, target := range op.Targets {
			d := &detectEntry{j: j, node: target, at: c.opTime[j]}
			c.detect = append(c.detect, d)
			c.detectOf[target] = append(c.detectOf[target], d)
		}
	}
	for _, ds := range c.detectOf {
		slices.SortStableFunc(ds, func(a, b *detectEntry) int { return cmp.Compare(a.at, b.at) })
	}
	c.detectNext = map[[2]int]int{}
}

// detectSuspect takes node id's suspicion of peer at t (up to the end), the first of id's for
// every detection of peer from at on that it is later than.
func (c *checker) detectSuspect(id, peer int, t int64) {
	ds := c.detectOf[peer]
	if len(ds) == 0 || id == peer || t > c.end {
		return
	}
	key := [2]int{peer, id}
	k := c.detectNext[key]
	for ; k < len(ds) && ds[k].at <= t; k++ {
		d := ds[k]
		if d.first == 0 || t < d.first {
			d.first, d.by = t, id
		}
		d.all = max(d.all, t)
		if c.liveAt(id, c.end) {
			d.suspected++
		}
	}
	c.detectNext[key] = k
}

// detectObserver takes an observer's suspicion of peer at t: its first in its log from each
// detection's at on.
func (c *checker) detectObserver(obs, peer int, t int64) {
	for _, d := range c.detectOf[peer] {
		if t < d.at {
			continue
		}
		if d.obsFirst == nil {
			d.obsFirst = map[int]int64{}
		}
		if _, ok := d.obsFirst[obs]; !ok {
			d.obsFirst[obs] = t
		}
	}
}

// detections measures, for every kill, stop and pause, when its node was first suspected and when
// every node that stayed live had suspected it.
func (c *checker) detections() []Detection {
	var out []Detection
	for _, d := range c.detect {
		op := c.faults[d.j]
		at, target := d.at, d.node
		det := Detection{Fault: fmt.Sprintf("%s %d at %s", op.Op, target, c.rel(at)), Node: target, AtMS: c.relMS(at)}
		first, by := d.first, d.by
		for _, id := range slices.Sorted(maps.Keys(d.obsFirst)) {
			if t := d.obsFirst[id]; t <= c.end && (first == 0 || t < first) {
				first, by = t, id
			}
		}
		live := 0
		for _, id := range c.ids {
			if id != target && c.liveAt(id, c.end) {
				live++
			}
		}
		if first > 0 {
			ms := roundMS(first-at, 1000)
			det.FirstMS, det.By = &ms, by
		}
		if d.all > 0 && d.suspected == live {
			ms := roundMS(d.all-at, 1000)
			det.AllMS = &ms
		}
		out = append(out, det)
	}
	return out
}

// liveAt tells whether some incarnation of node id was running at t.
func (c *checker) liveAt(id int, t int64) bool {
	for _, x := range c.incs[id] {
		if x.start <= t && t <= x.end {
			return true
		}
	}
	return false
}

// relMS is t in milliseconds since the run's begin.
func (c *checker) relMS(t int64) float64 { return roundMS(t-c.begin, 1000) }
