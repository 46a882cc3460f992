package check

import (
	"fmt"
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

	for _, id := range c.stream.Nodes {
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

// recvState is what the play found of the recvs: how many, and those without a send or with the
// wrong sender (the first of each in node order, named).
type recvState struct {
	recvs, orphans, wrong int
	orphan, wrongOne      *mEvent // copies of the first ones, by (node, place in the log)
	wrongMatch            match
}

// matchRecv checks a recv (of a node of the cluster) against the sends, as the play goes by.
func (c *checker) matchRecv(e *mEvent) {
	r := &c.recv
	r.recvs++
	earlier := func(x *mEvent) bool { return x == nil || e.node < x.node || (e.node == x.node && e.i < x.i) }
	copyOf := func() *mEvent {
		x := &mEvent{}
		x.set(&e.Event)
		x.t, x.node, x.i, x.line = e.t, e.node, e.i, e.line
		return x
	}
	mt := c.sends.match(e.Msg.ID)
	switch {
	case !mt.ok:
		if earlier(r.orphan) {
			r.orphan = copyOf()
		}
		r.orphans++
	case mt.node != e.From:
		if earlier(r.wrongOne) {
			r.wrongOne, r.wrongMatch = copyOf(), mt
		}
		r.wrong++
	}
}

// matchMessages says what the play found of the recvs; it returns the number of recvs.
func (c *checker) matchMessages(add func(string, ...any)) int {
	r := &c.recv
	if r.orphans > 0 {
		e := r.orphan
		first := fmt.Sprintf("%s, msg %s (%s) from %d", c.where(e.node, e.i, e.line), e.Msg.ID, e.Msg.Kind, e.From)
		add("%s no send with the same msg.id (first: %s)", plural(r.orphans, "recv has", "recvs have"), first)
	}
	if r.wrong > 0 {
		e := r.wrongOne
		firstWrong := fmt.Sprintf("%s says msg %s came from %d, but %s sent it", c.where(e.node, e.i, e.line), e.Msg.ID, e.From, c.sendWhere(e.Msg.ID, r.wrongMatch))
		add("%s a sender other than the send's node (first: %s)", plural(r.wrong, "recv names", "recvs name"), firstWrong)
	}
	return r.recvs
}

// checkTorn checks each torn line against launcher.jsonl: only a killed incarnation may end in one.
// It returns where the accepted ones are.
func (c *checker) checkTorn(add func(string, ...any)) []string {
	var ok []string
	for _, id := range c.ids {
		for _, t := range c.nodes[id].torn {
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
					where = c.where(id, x.first, x.firstLine)
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

// checkClocks: in each file, incarnations never go back, and within one the Lamport clock never does
// (the first pass found each file's first such line).
func (c *checker) checkClocks(add func(string, ...any)) {
	for _, id := range c.ids {
		if w := c.nodes[id].clockErr; w != "" {
			add("%s", w)
		}
	}
}
