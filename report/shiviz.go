package report

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// ShiVizRegex is the first line of a ShiViz export: the parser regex ShiViz applies to the rest.
// Each event is two lines, `host {"host":n,...}` and the event's description.
const ShiVizRegex = `(?<host>\S*) (?<clock>{.*})\n(?<event>.*)`

// ExportStats says what an export holds.
type ExportStats struct {
	Events   int // events written
	Hosts    int // node incarnations
	Messages int // messages matched send to recv (a clock merge, a flow)
	// Unmatched counts recvs whose send is in no log (written as local events, without a merge).
	Unmatched int
	// LoggedClocks counts the events written whose log line carries a vector clock (vc), and
	// ClockMismatches those whose vc differs from the clock send/recv matching gives (ShiViz only;
	// FirstMismatch names the first: host, event number, both clocks).
	LoggedClocks    int
	ClockMismatches int
	FirstMismatch   string
	// Clocks says in one sentence where the export's clocks come from, and what it lacks when the
	// run had Lamport clocks only.
	Clocks string
}

// host is one node incarnation: a process whose clock starts at 1. A restarted node is a new host
// because its clock restarts.
type host struct {
	name   string
	events []*logs.Event
	next   int // the next event to process
	id     int // index in the hosts list
}

func hostName(node, inc int) string { return logs.HostName(node, inc) }

// hostsOf lists every node incarnation with its events in file order, leaving out stats (counters,
// not happenings).
func hostsOf(run *logs.Run) []*host {
	ids := make([]int, 0, len(run.Nodes))
	for id := range run.Nodes {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var hosts []*host
	for _, id := range ids {
		byInc := map[int]*host{}
		for i := range run.Nodes[id].Events {
			e := &run.Nodes[id].Events[i]
			if e.Ev == logs.EvStats {
				continue
			}
			h := byInc[e.Inc]
			if h == nil {
				h = &host{name: hostName(id, e.Inc), id: len(hosts)}
				byInc[e.Inc] = h
				hosts = append(hosts, h)
			}
			h.events = append(h.events, e)
		}
	}
	return hosts
}

// causalOrder calls visit for every event in an order where each host's events keep their file order
// and a recv comes after its send: the next event by time among the hosts that are not waiting for
// a send. recvs of sends that no log holds, and recvs caught in a cycle (only possible in a corrupt
// run), are visited without their send (send < 0).
func causalOrder(hosts []*host, visit func(h *host, e *logs.Event, sendKey string, matched bool)) {
	sent := map[string]bool{}     // msg IDs whose send was visited
	exists := map[string]bool{}   // msg IDs with a send in some log
	waiting := map[string][]int{} // msg ID -> hosts blocked on its recv
	for _, h := range hosts {
		for _, e := range h.events {
			if e.Ev == logs.EvSend && e.Msg != nil {
				exists[e.Msg.ID] = true
			}
		}
	}
	q := &hostHeap{hosts: hosts}
	for _, h := range hosts {
		if len(h.events) > 0 {
			heap.Push(q, h.id)
		}
	}
	blocked := map[int]bool{}
	for q.Len() > 0 || len(blocked) > 0 {
		if q.Len() == 0 {
			// Every host left waits for a send that cannot come first: free the earliest.
			best := -1
			for id := range blocked {
				if best < 0 || less(hosts[id], hosts[best]) {
					best = id
				}
			}
			delete(blocked, best)
			h := hosts[best]
			e := h.events[h.next]
			ws := waiting[e.Msg.ID]
			for i, id := range ws {
				if id == best {
					waiting[e.Msg.ID] = append(ws[:i], ws[i+1:]...)
					break
				}
			}
			visit(h, e, "", false)
			h.next++
			if h.next < len(h.events) {
				heap.Push(q, h.id)
			}
			continue
		}
		h := hosts[heap.Pop(q).(int)]
		e := h.events[h.next]
		if e.Ev == logs.EvRecv && e.Msg != nil && exists[e.Msg.ID] && !sent[e.Msg.ID] {
			waiting[e.Msg.ID] = append(waiting[e.Msg.ID], h.id)
			blocked[h.id] = true
			continue
		}
		if e.Ev == logs.EvRecv && e.Msg != nil && sent[e.Msg.ID] {
			visit(h, e, e.Msg.ID, true)
		} else {
			visit(h, e, "", false)
		}
		if e.Ev == logs.EvSend && e.Msg != nil && !sent[e.Msg.ID] {
			sent[e.Msg.ID] = true
			for _, id := range waiting[e.Msg.ID] {
				delete(blocked, id)
				heap.Push(q, id)
			}
			delete(waiting, e.Msg.ID)
		}
		h.next++
		if h.next < len(h.events) {
			heap.Push(q, h.id)
		}
	}
}

// less orders hosts by their next event's time, then by host.
func less(a, b *host) bool {
	ta, tb := a.events[a.next].TS, b.events[b.next].TS
	if ta != tb {
		return ta < tb
	}
	return a.id < b.id
}

type hostHeap struct {
	hosts []*host
	ids   []int
}

func (q *hostHeap) Len() int           { return len(q.ids) }
func (q *hostHeap) Less(i, j int) bool { return less(q.hosts[q.ids[i]], q.hosts[q.ids[j]]) }
func (q *hostHeap) Swap(i, j int)      { q.ids[i], q.ids[j] = q.ids[j], q.ids[i] }
func (q *hostHeap) Push(x any)         { q.ids = append(q.ids, x.(int)) }
func (q *hostHeap) Pop() any {
	x := q.ids[len(q.ids)-1]
	q.ids = q.ids[:len(q.ids)-1]
	return x
}

// WriteShiViz writes run in ShiViz's log format: the regex line, an empty delimiter line (one
// execution), then each event as a host-and-vector-clock line and a description line. Vector clocks
// are computed from send/recv matching: each host's own entry counts its events from 1; a recv
// merges the clock its send carried (taken when the send was logged), so a recv dominates its send.
// These are the rules the nodes follow when the run has vector clocks on, so each logged vc (the
// line's) is checked against the computed clock: when all agree the two are the same text; when any
// differs, or some line has none, the computed clocks are written (they follow ShiViz's rules by
// construction) and ExportStats says how many differ. ExportStats.Clocks sums it up in a sentence.
func WriteShiViz(w io.Writer, run *logs.Run) (ExportStats, error) {
	hosts := hostsOf(run)
	st := ExportStats{Hosts: len(hosts)}
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.WriteString(ShiVizRegex + "\n\n")
	recvs := map[string]int{} // how many recvs still need a send's clock
	for _, h := range hosts {
		for _, e := range h.events {
			if e.Ev == logs.EvRecv && e.Msg != nil {
				recvs[e.Msg.ID]++
			}
		}
	}
	clocks := make([][]int, len(hosts))
	for i := range clocks {
		clocks[i] = make([]int, len(hosts))
	}
	carried := map[string][]int{}
	check := newClockChecker(hosts)
	origin := runOrigin(run)
	var line []byte
	causalOrder(hosts, func(h *host, e *logs.Event, key string, matched bool) {
		vc := clocks[h.id]
		if matched {
			for i, c := range carried[key] {
				vc[i] = max(vc[i], c)
			}
			if recvs[key]--; recvs[key] <= 0 {
				delete(carried, key)
			}
			st.Messages++
		} else if e.Ev == logs.EvRecv {
			st.Unmatched++
		}
		vc[h.id]++
		if e.VC != nil {
			st.LoggedClocks++
			if !check.same(e.VC, vc) {
				st.ClockMismatches++
				if st.FirstMismatch == "" {
					st.FirstMismatch = fmt.Sprintf("%s event %d (%s): logged %s, matching gives %s", h.name, vc[h.id], e.Ev, mustJSON(e.VC), clockJSON(hosts, vc))
				}
			}
		}
		if e.Ev == logs.EvSend && e.Msg != nil && recvs[e.Msg.ID] > 0 {
			if _, dup := carried[e.Msg.ID]; !dup {
				carried[e.Msg.ID] = append([]int(nil), vc...)
			}
		}
		line = append(line[:0], h.name...)
		line = append(line, ' ')
		line = appendClock(line, hosts, vc)
		line = append(line, '\n')
		line = append(line, describe(e, origin)...)
		line = append(line, '\n')
		bw.Write(line)
		st.Events++
	})
	st.Clocks = shivizClocks(run, st)
	return st, bw.Flush()
}

// appendClock appends a computed clock as ShiViz's JSON object, hosts in the export's order.
func appendClock(b []byte, hosts []*host, vc []int) []byte {
	b = append(b, '{')
	first := true
	for i, c := range vc {
		if c == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, hosts[i].name...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(c), 10)
	}
	return append(b, '}')
}

func clockJSON(hosts []*host, vc []int) string { return string(appendClock(nil, hosts, vc)) }

func mustJSON(c logs.VClock) string {
	b, _ := c.MarshalJSON() // cannot fail
	return string(b)
}

// runOrigin is the launcher's begin, else the first event's time.
func runOrigin(run *logs.Run) int64 {
	for _, r := range run.Launcher {
		if r.Ev == logs.LaunchBegin {
			return r.TS
		}
	}
	first := int64(0)
	for _, nl := range run.Nodes {
		if len(nl.Events) > 0 && (first == 0 || nl.Events[0].TS < first) {
			first = nl.Events[0].TS
		}
	}
	return first
}

// describe renders an event on one line: "send election 3.1.5 to n4 (round 2) @ 1001.882ms".
func describe(e *logs.Event, origin int64) string {
	var b strings.Builder
	b.WriteString(e.Ev)
	msg := func() {
		if e.Msg != nil {
			b.WriteString(" " + e.Msg.Kind + " " + e.Msg.ID)
		}
	}
	switch e.Ev {
	case logs.EvStart:
		fmt.Fprintf(&b, " %s incarnation %d", e.Algo, e.Inc)
	case logs.EvSend:
		msg()
		fmt.Fprintf(&b, " to n%d", e.To)
	case logs.EvRecv:
		msg()
		fmt.Fprintf(&b, " from n%d", e.From)
	case logs.EvDrop:
		msg()
		if e.From != 0 {
			fmt.Fprintf(&b, " from n%d", e.From)
		} else {
			fmt.Fprintf(&b, " to n%d", e.To)
		}
	case logs.EvSuspect, logs.EvTrust:
		fmt.Fprintf(&b, " n%d", e.Peer)
	case logs.EvElect:
		if e.Round != 0 {
			fmt.Fprintf(&b, " round %d", e.Round)
		}
	case logs.EvLeader:
		fmt.Fprintf(&b, " n%d", e.Leader)
	case logs.EvPulse:
		fmt.Fprintf(&b, " %d", e.Pulse)
	}
	if e.Msg != nil {
		if f := msgFields(e.Msg); f != "" {
			b.WriteString(" (" + f + ")")
		}
	}
	if e.Reason != "" {
		b.WriteString(": " + e.Reason)
	}
	fmt.Fprintf(&b, " @ %sms", trimFloat(float64(e.TS-origin)/1e6))
	return oneLine.Replace(b.String())
}

var oneLine = strings.NewReplacer("\n", " ", "\r", " ")
