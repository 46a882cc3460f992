package check

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/leaderlab/leaderlab/logs"
)

// integrity: every recv matches a send with the same msg.id; torn lines only at the end of a killed
// incarnation; every process the launcher spawned exited, and every incarnation in the logs was
// spawned; within an incarnation, Lamport clocks never go back.
func (c *checker) integrity() Property {
	p := Property{Name: PropIntegrity}
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }

	for _, id := range slices.Sorted(maps.Keys(c.run.Nodes)) {
		if _, ok := c.index[id]; !ok {
			add("a log of node %d, which cluster.json does not list", id)
		}
	}
	recvs := c.matchMessages(add) + c.checkObservers(add)
	torn := c.checkTorn(add)
	procs := c.checkProcesses(add)
	c.checkClocks(add)

	if len(problems) > 0 {
		p.Detail = fmt.Sprintf("%s: %s", plural(len(problems), "problem", "problems"), listed(problems))
		return p
	}
	p.OK = true
	p.Detail = fmt.Sprintf("%s matched a send", plural(recvs, "recv", "recvs"))
	if procs >= 0 {
		p.Detail += fmt.Sprintf("; %s spawned, all exited", plural(procs, "process", "processes"))
	}
	if len(torn) > 0 {
		p.Detail += fmt.Sprintf("; %s, each ending a killed incarnation (%s)", plural(len(torn), "torn line", "torn lines"), strings.Join(torn, ", "))
	}
	return p
}

// matchMessages checks every recv against the sends; it returns the number of recvs.
func (c *checker) matchMessages(add func(string, ...any)) int {
	recvs, orphans, wrong := 0, 0, 0
	first, firstWrong := "", ""
	for _, id := range c.ids {
		for i, e := range c.log(id).Events {
			if e.Ev != logs.EvRecv || e.Msg == nil {
				continue
			}
			recvs++
			s, ok := c.sends[e.Msg.ID]
			switch {
			case !ok:
				if orphans == 0 {
					first = fmt.Sprintf("%s, msg %s (%s) from %d", c.where(id, i), e.Msg.ID, e.Msg.Kind, e.From)
				}
				orphans++
			case s.node != e.From:
				if wrong == 0 {
					firstWrong = fmt.Sprintf("%s says msg %s came from %d, but %s sent it", c.where(id, i), e.Msg.ID, e.From, c.where(s.node, s.i))
				}
				wrong++
			}
		}
	}
	if orphans > 0 {
		add("%s no send with the same msg.id (first: %s)", plural(orphans, "recv has", "recvs have"), first)
	}
	if wrong > 0 {
		add("%s a sender other than the send's node (first: %s)", plural(wrong, "recv names", "recvs name"), firstWrong)
	}
	return recvs
}

// checkTorn checks each torn line against launcher.jsonl: only a killed incarnation may end in one.
// It returns where the accepted ones are.
func (c *checker) checkTorn(add func(string, ...any)) []string {
	var ok []string
	for _, id := range c.ids {
		for _, t := range c.log(id).Torn {
			where := fmt.Sprintf("%s:%d", logs.NodeLogName(id), t.Line)
			x := c.incOf(id, t.Inc)
			switch {
			case x == nil || x.exit == nil:
				add("%s: a torn line ends incarnation %d, which launcher.jsonl does not record as killed", where, t.Inc)
			case x.exit.Signal == "":
				how := "cleanly"
				if x.exit.Code != nil {
					how = fmt.Sprintf("with code %d", *x.exit.Code)
				}
				add("%s: a torn line ends incarnation %d, which exited %s, not on a signal", where, t.Inc, how)
			default:
				ok = append(ok, where)
			}
		}
	}
	return ok
}

// checkProcesses accounts for the launcher's processes: it returns how many were spawned, or -1
// when launcher.jsonl has no records (a run built in memory without them).
func (c *checker) checkProcesses(add func(string, ...any)) int {
	for _, r := range c.run.Launcher {
		if r.Ev == logs.LaunchError {
			add("the launcher gave up: %s", r.Detail)
		}
	}
	if len(c.run.Launcher) == 0 {
		c.warnf("launcher.jsonl has no records: processes were not accounted for")
		return -1
	}
	spawned := 0
	ids := append([]int{}, c.ids...)
	for id := range c.incs {
		if _, ok := c.index[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Ints(ids)
	for _, id := range ids {
		for _, x := range c.incs[id] {
			switch {
			case x.spawn == nil:
				where := fmt.Sprintf("node %d", id)
				if x.first >= 0 {
					where = c.where(id, x.first)
				}
				add("%s: incarnation %d was never spawned by the launcher", where, x.inc)
				continue
			case x.exit == nil:
				add("node %d incarnation %d (pid %d, spawned at %s) has no exited record: left running?", id, x.inc, x.spawn.Pid, c.rel(x.spawn.TS))
			}
			spawned++
		}
	}
	for _, r := range c.strayExits {
		add("launcher.jsonl: an exited record of node %d incarnation %d (pid %d) at %s matches no spawned process", r.Node, r.Inc, r.Pid, c.rel(r.TS))
	}
	return spawned
}

// checkClocks: in each file, incarnations never go back, and within one the Lamport clock never does.
func (c *checker) checkClocks(add func(string, ...any)) {
	for _, id := range c.ids {
		evs := c.log(id).Events
		for i := 1; i < len(evs); i++ {
			prev, e := evs[i-1], evs[i]
			switch {
			case e.Inc < prev.Inc:
				add("%s: incarnation %d after %d", c.where(id, i), e.Inc, prev.Inc)
				i = len(evs) // one finding per file
			case e.Inc == prev.Inc && e.LC < prev.LC:
				add("%s: lc %d after %d in incarnation %d", c.where(id, i), e.LC, prev.LC, e.Inc)
				i = len(evs)
			}
		}
	}
}
