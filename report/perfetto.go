package report

import (
	"bufio"
	"encoding/json"
	"io"
	"sort"
	"strconv"

	"github.com/leaderlab/leaderlab/logs"
)

// Perfetto's JSON importer binds a flow's start ("s") and end ("f" with "bp":"e") to the slice open
// on the track at that moment. So every event is a short complete slice ("X") with its flow event
// 1 ns inside it, and slices on one track never overlap: each lasts until the next event on its
// track, at most sliceNS, and events that share a nanosecond are spread 3 ns apart (a display
// shift far below anything a run measures).
const (
	sliceNS  = 1000
	spreadNS = 3
)

// Thread IDs inside a node's process: events on tid = incarnation, the leader belief on
// beliefTID + incarnation.
const beliefTID = 1000

// WritePerfetto writes run as Chrome trace-event JSON for ui.perfetto.dev (or chrome://tracing): a
// process per node, a thread per incarnation with a slice per event, a thread per incarnation with
// its leader belief, the faults as global instants, and a flow (ph "s" at the send, ph "f" at the
// recv, matching ids) per message that was received. Times are microseconds since the launcher's
// begin (the first event when it comes earlier: trace times start at 0). Each event slice's args
// hold its Lamport clock (lc) and, when its line has one, its vector clock (vc); otherData.clocks
// says which the run has (ExportStats.Clocks).
func WritePerfetto(w io.Writer, run *logs.Run) (ExportStats, error) {
	hosts := hostsOf(run)
	st := ExportStats{Hosts: len(hosts)}
	origin := runOrigin(run)
	for _, h := range hosts {
		if len(h.events) > 0 && h.events[0].TS < origin {
			origin = h.events[0].TS
		}
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	ew := &eventWriter{w: bw}
	bw.WriteString(`{"displayTimeUnit":"ms","otherData":{"source":"leaderlab report","cluster":`)
	writeJSON(bw, run.Cluster.ClusterID)
	bw.WriteString(`,"algo":`)
	writeJSON(bw, run.Cluster.Algo)
	events, logged := loggedClocks(hosts)
	st.Clocks, st.LoggedClocks = perfettoClocks(run, events, logged), logged
	bw.WriteString(`,"origin_unix_ns":` + strconv.FormatInt(origin, 10) + `,"clocks":`)
	writeJSON(bw, st.Clocks)
	bw.WriteString(`},"traceEvents":[`)

	// Flow ids: one per message with a send and at least one recv.
	recvd := map[string]bool{}
	for _, h := range hosts {
		for _, e := range h.events {
			if e.Ev == logs.EvRecv && e.Msg != nil {
				recvd[e.Msg.ID] = true
			}
		}
	}
	flow := map[string]int{}
	ids := make([]int, 0, len(run.Nodes))
	for id := range run.Nodes {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		ew.meta(id, -1, "process_name", "n"+strconv.Itoa(id))
		ew.metaInt(id, "process_sort_index", id)
	}
	for _, h := range hosts {
		node, inc := h.events[0].Node, h.events[0].Inc
		ew.meta(node, inc, "thread_name", "incarnation "+strconv.Itoa(inc))
		ew.meta(node, beliefTID+inc, "thread_name", "incarnation "+strconv.Itoa(inc)+" leader")
	}
	// Flows start at sends; a send's flow id is known before any recv because ids are assigned here
	// first, over every host.
	for _, h := range hosts {
		for _, e := range h.events {
			if e.Ev == logs.EvSend && e.Msg != nil && recvd[e.Msg.ID] {
				if _, dup := flow[e.Msg.ID]; !dup {
					flow[e.Msg.ID] = len(flow) + 1
				}
			}
		}
	}
	ended := map[string]bool{}
	for _, h := range hosts {
		node, inc := h.events[0].Node, h.events[0].Inc
		ts := make([]int64, len(h.events))
		for i, e := range h.events {
			ts[i] = e.TS - origin
			if i > 0 && ts[i] < ts[i-1]+spreadNS {
				ts[i] = ts[i-1] + spreadNS
			}
		}
		belief, beliefFrom := -1, int64(0)
		endBelief := func(to int64) {
			if belief < 0 {
				return
			}
			name := "⊥"
			if belief > 0 {
				name = "leader n" + strconv.Itoa(belief)
			}
			ew.slice(node, beliefTID+inc, beliefFrom, max(to-beliefFrom, 1), name, "belief", nil)
			belief = -1
		}
		for i, e := range h.events {
			dur := int64(sliceNS)
			if i+1 < len(ts) {
				dur = min(dur, ts[i+1]-ts[i])
			}
			args := map[string]any{"lc": e.LC}
			if e.VC != nil {
				args["vc"] = e.VC
			}
			name := e.Ev
			switch e.Ev {
			case logs.EvSend, logs.EvRecv, logs.EvDrop:
				if e.Msg != nil {
					name += " " + e.Msg.Kind
					args["msg"] = e.Msg
				}
				if e.To != 0 {
					args["to"] = e.To
				}
				if e.From != 0 {
					args["from"] = e.From
				}
			case logs.EvLeader:
				name += " n" + strconv.Itoa(e.Leader)
			case logs.EvPulse:
				name += " " + strconv.Itoa(e.Pulse)
			case logs.EvSuspect, logs.EvTrust:
				name += " n" + strconv.Itoa(e.Peer)
				args["peer"] = e.Peer
			case logs.EvElect:
				if e.Round != 0 {
					args["round"] = e.Round
				}
			case logs.EvStart:
				args["pid"] = e.Pid
				args["peers"] = e.Peers
			}
			if e.Reason != "" {
				args["reason"] = e.Reason
			}
			ew.slice(node, inc, ts[i], dur, name, e.Ev, args)
			st.Events++
			if e.Msg != nil {
				if fid, ok := flow[e.Msg.ID]; ok {
					switch {
					case e.Ev == logs.EvSend:
						ew.flow("s", node, inc, ts[i]+1, fid, e.Msg.Kind)
					case e.Ev == logs.EvRecv && !ended[e.Msg.ID]:
						ended[e.Msg.ID] = true
						ew.flow("f", node, inc, ts[i]+1, fid, e.Msg.Kind)
						st.Messages++
					}
				} else if e.Ev == logs.EvRecv {
					st.Unmatched++
				}
			}
			switch e.Ev {
			case logs.EvStart:
				endBelief(ts[i])
				belief, beliefFrom = 0, ts[i]
			case logs.EvElect:
				if belief != 0 {
					endBelief(ts[i])
					belief, beliefFrom = 0, ts[i]
				}
			case logs.EvLeader:
				if belief != e.Leader {
					endBelief(ts[i])
					belief, beliefFrom = e.Leader, ts[i]
				}
			case logs.EvStop:
				endBelief(ts[i])
			}
		}
		if len(ts) > 0 {
			endBelief(ts[len(ts)-1] + sliceNS)
		}
	}
	for _, r := range run.Chaos {
		name := opLabel(r)
		if r.Error != "" {
			name += " (not applied)"
		}
		args := map[string]any{"step": r.Step, "targets": r.Targets}
		if r.Error != "" {
			args["error"] = r.Error
		}
		ew.instant(r.TS-origin, name, args)
	}
	for _, r := range run.Launcher {
		if r.Ev == logs.LaunchBegin || r.Ev == logs.LaunchStopping {
			ew.instant(r.TS-origin, r.Ev, nil)
		}
	}
	bw.WriteString("\n]}\n")
	if ew.err != nil {
		return st, ew.err
	}
	return st, bw.Flush()
}

// eventWriter appends trace events, comma-separated.
type eventWriter struct {
	w   *bufio.Writer
	n   int
	b   []byte
	err error
}

func (ew *eventWriter) begin() {
	if ew.n > 0 {
		ew.b = append(ew.b, ",\n"...)
	} else {
		ew.b = append(ew.b, '\n')
	}
	ew.n++
}

func (ew *eventWriter) flush() {
	if _, err := ew.w.Write(ew.b); err != nil && ew.err == nil {
		ew.err = err
	}
	ew.b = ew.b[:0]
}

// appendUS appends ns as microseconds with nanosecond precision: 1001882 -> 1001.882.
func appendUS(b []byte, ns int64) []byte {
	if ns < 0 {
		b = append(b, '-')
		ns = -ns
	}
	b = strconv.AppendInt(b, ns/1000, 10)
	if frac := ns % 1000; frac != 0 {
		b = append(b, '.')
		s := strconv.FormatInt(frac+1000, 10)[1:]
		for len(s) > 0 && s[len(s)-1] == '0' {
			s = s[:len(s)-1]
		}
		b = append(b, s...)
	}
	return b
}

func (ew *eventWriter) common(ph string, pid, tid int, ts int64) {
	ew.begin()
	ew.b = append(ew.b, `{"ph":"`...)
	ew.b = append(ew.b, ph...)
	ew.b = append(ew.b, `","pid":`...)
	ew.b = strconv.AppendInt(ew.b, int64(pid), 10)
	if tid >= 0 {
		ew.b = append(ew.b, `,"tid":`...)
		ew.b = strconv.AppendInt(ew.b, int64(tid), 10)
	}
	ew.b = append(ew.b, `,"ts":`...)
	ew.b = appendUS(ew.b, ts)
}

func (ew *eventWriter) str(key, v string) {
	ew.b = append(ew.b, `,"`...)
	ew.b = append(ew.b, key...)
	ew.b = append(ew.b, `":`...)
	ew.b = appendJSON(ew.b, v)
}

func (ew *eventWriter) args(args map[string]any) {
	if len(args) == 0 {
		return
	}
	ew.b = append(ew.b, `,"args":`...)
	j, err := json.Marshal(args)
	if err != nil && ew.err == nil {
		ew.err = err
	}
	ew.b = append(ew.b, j...)
}

func (ew *eventWriter) slice(pid, tid int, ts, dur int64, name, cat string, args map[string]any) {
	ew.common("X", pid, tid, ts)
	ew.b = append(ew.b, `,"dur":`...)
	ew.b = appendUS(ew.b, dur)
	ew.str("name", name)
	ew.str("cat", cat)
	ew.args(args)
	ew.b = append(ew.b, '}')
	ew.flush()
}

func (ew *eventWriter) flow(ph string, pid, tid int, ts int64, id int, kind string) {
	ew.common(ph, pid, tid, ts)
	ew.b = append(ew.b, `,"id":`...)
	ew.b = strconv.AppendInt(ew.b, int64(id), 10)
	ew.str("name", kind)
	ew.str("cat", "message")
	if ph == "f" {
		ew.b = append(ew.b, `,"bp":"e"`...)
	}
	ew.b = append(ew.b, '}')
	ew.flush()
}

func (ew *eventWriter) instant(ts int64, name string, args map[string]any) {
	ew.common("i", 0, 0, ts)
	ew.str("name", name)
	ew.str("cat", "chaos")
	ew.b = append(ew.b, `,"s":"g"`...)
	ew.args(args)
	ew.b = append(ew.b, '}')
	ew.flush()
}

func (ew *eventWriter) meta(pid, tid int, what, name string) {
	ew.begin()
	ew.b = append(ew.b, `{"ph":"M","pid":`...)
	ew.b = strconv.AppendInt(ew.b, int64(pid), 10)
	if tid >= 0 {
		ew.b = append(ew.b, `,"tid":`...)
		ew.b = strconv.AppendInt(ew.b, int64(tid), 10)
	}
	ew.str("name", what)
	ew.b = append(ew.b, `,"args":{"name":`...)
	ew.b = appendJSON(ew.b, name)
	ew.b = append(ew.b, "}}"...)
	ew.flush()
}

func (ew *eventWriter) metaInt(pid int, what string, v int) {
	ew.begin()
	ew.b = append(ew.b, `{"ph":"M","pid":`...)
	ew.b = strconv.AppendInt(ew.b, int64(pid), 10)
	ew.str("name", what)
	ew.b = append(ew.b, `,"args":{"sort_index":`...)
	ew.b = strconv.AppendInt(ew.b, int64(v), 10)
	ew.b = append(ew.b, "}}"...)
	ew.flush()
}

func appendJSON(b []byte, s string) []byte {
	j, _ := json.Marshal(s) // a string always encodes
	return append(b, j...)
}

func writeJSON(w *bufio.Writer, s string) { w.Write(appendJSON(nil, s)) }
