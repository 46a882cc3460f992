package check

import (
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

// checkObservers adds the integrity problems of the observers' logs: a recv that no observer sent.
func (c *checker) checkObservers(add func(string, ...any)) int {
	sent := map[string]int{}
	for id, nl := range c.run.Observers {
		for _, e := range nl.Events {
			if e.Ev == logs.EvSend && e.Msg != nil {
				sent[e.Msg.ID] = id
			}
		}
	}
	recvs := 0
	for _, id := range slices.Sorted(maps.Keys(c.run.Observers)) {
		for i, e := range c.run.Observers[id].Events {
			if e.Ev != logs.EvRecv || e.Msg == nil {
				continue
			}
			recvs++
			if from, ok := sent[e.Msg.ID]; !ok || from != e.From {
				add("observers/%d.jsonl line %d: recv of %s from %d that observer %d never sent", id, c.run.Observers[id].Line[i], e.Msg.ID, e.From, e.From)
			}
		}
	}
	return recvs
}

func (c *checker) observerStats() []ObserverStats {
	var out []ObserverStats
	for _, id := range slices.Sorted(maps.Keys(c.run.Observers)) {
		s := ObserverStats{ID: id}
		for _, e := range c.run.Observers[id].Events {
			switch e.Ev {
			case logs.EvStats:
				if e.Stats != nil {
					s.Probes = e.Stats.HeartbeatsSent
				}
			case logs.EvSuspect:
				s.Suspects++
			case logs.EvVerdict:
				s.Verdicts++
			case logs.EvSend:
				s.Messages++
			}
		}
		out = append(out, s)
	}
	return out
}

// detections measures, for every kill, stop and pause, when its node was first suspected and when
// every node that stayed live had suspected it.
func (c *checker) detections() []Detection {
	var out []Detection
	for j, op := range c.faults {
		if op.Op != logs.OpKill && op.Op != logs.OpStop && op.Op != logs.OpPause {
			continue
		}
		at := c.opTime[j]
		for _, target := range op.Targets {
			d := Detection{Fault: fmt.Sprintf("%s %d at %s", op.Op, target, c.rel(at)), Node: target, AtMS: c.relMS(at)}
			first, by := int64(0), 0
			consider := func(t int64, who int) {
				if t >= at && t <= c.end && (first == 0 || t < first) {
					first, by = t, who
				}
			}
			all, missing := int64(0), false
			for _, id := range c.ids {
				if id == target {
					continue
				}
				own := int64(0)
				for i, e := range c.log(id).Events {
					if t := c.ts[id][i]; e.Ev == logs.EvSuspect && e.Peer == target && t >= at && t <= c.end {
						own = t
						break
					}
				}
				if own > 0 {
					consider(own, id)
					all = max(all, own)
				} else if c.liveAt(id, c.end) {
					missing = true
				}
			}
			for id, nl := range c.run.Observers {
				for _, e := range nl.Events {
					if e.Ev == logs.EvSuspect && e.Peer == target && e.TS >= at {
						consider(e.TS, id)
						break
					}
				}
			}
			if first > 0 {
				ms := roundMS(first-at, 1000)
				d.FirstMS, d.By = &ms, by
			}
			if all > 0 && !missing {
				ms := roundMS(all-at, 1000)
				d.AllMS = &ms
			}
			out = append(out, d)
		}
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
