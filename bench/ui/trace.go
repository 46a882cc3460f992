package ui

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/explore"
	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/rundir"
	"github.com/leaderlab/leaderlab/sim"
)

// An explorer's counterexample, stepped through: the run directory explore wrote for a violated
// property holds cluster.json (the machines, the ring, the timings) and trace.txt (the transitions
// with every node's belief after each). Each transition is read back as step-mode actions at its
// virtual time and carried out in a scripted simulator, as explore wrote the run directory, so the
// page shows every node's state, the messages in flight and the timers pending after any step; a
// step whose beliefs differ from the trace's says so.

// traceView is an opened trace.
type traceView struct {
	Dir    string      `json:"dir"`
	Header []string    `json:"header"` // the trace's comment lines: the command, the property broken
	Steps  []traceStep `json:"steps"`
	acts   [][]sim.Action
}

// traceStep is one transition of the trace.
type traceStep struct {
	N       int    `json:"n"`
	At      string `json:"at"`
	Text    string `json:"text"`
	Beliefs string `json:"beliefs"` // as the explorer wrote them: [⊥ 3 †]
	Note    string `json:"note,omitempty"`
	Differs string `json:"differs,omitempty"` // set once carried out, when the simulator's beliefs differ
	want    []int  // -1 crashed, 0 none
}

// traceLine is a transition line of trace.txt: "  3  1.2ms     deliver 1->2 election cand 2   [⊥ 2 3]".
var traceLine = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(\d+)\s+(\S+)\s+(.*?)\s+(\[[^\]]*\])\s*$`)
})

// readTrace reads a counterexample's trace.txt into actions.
func readTrace(dir string) (*traceView, error) {
	b, err := os.ReadFile(filepath.Join(dir, explore.TraceFile))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want a directory explore wrote for a violation, holding %s)", dir, err, explore.TraceFile)
	}
	tv := &traceView{Dir: dir}
	byTimeout := map[[2]int]bool{}
	suspects := map[[2]int]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			tv.Header = append(tv.Header, strings.TrimSpace(strings.TrimPrefix(line, "#")))
			continue
		}
		m := traceLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		at, err := time.ParseDuration(m[2])
		if err != nil {
			return nil, fmt.Errorf("%s line %q: time %q: %v", explore.TraceFile, line, m[2], err)
		}
		step := traceStep{N: n, At: m[2], Text: m[3], Beliefs: m[4]}
		for _, f := range strings.Fields(strings.Trim(m[4], "[]")) {
			switch f {
			case "†":
				step.want = append(step.want, -1)
			case "⊥":
				step.want = append(step.want, 0)
			default:
				v, _ := strconv.Atoi(f)
				step.want = append(step.want, v)
			}
		}
		acts, note := traceActions(m[3], at, byTimeout, suspects)
		step.Note = note
		tv.Steps = append(tv.Steps, step)
		tv.acts = append(tv.acts, acts)
	}
	if len(tv.Steps) == 0 {
		return nil, fmt.Errorf("%s/%s has no transitions", dir, explore.TraceFile)
	}
	return tv, nil
}

// The patterns are compiled on first use, not when any command of the binary starts.
var (
	reDeliver = lazyRegexp(`^deliver (\d+)->(\d+)(?: (.*))?$`)
	reTimer   = lazyRegexp(`^timer (\S+) fires at (\d+)$`)
	reNode    = lazyRegexp(`^(crash|restart) (\d+)$`)
	reTimeout = lazyRegexp(`^(\d+) suspects (\d+) \(timeout\)$`)
)

func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// traceActions reads one transition as actions at time at, as explore's script carries it out: a
// delivery of the detector's news (end of stream: the link broke; hello: the peer is back) is a
// suspicion or a trust, and a message from a peer suspected by timeout is trusted first.
func traceActions(text string, at time.Duration, byTimeout, suspects map[[2]int]bool) ([]sim.Action, string) {
	timed := func(a sim.Action) sim.Action { a.At, a.Timed = at, true; return a }
	atoi := func(s string) int { v, _ := strconv.Atoi(s); return v }
	if m := reDeliver().FindStringSubmatch(text); m != nil {
		from, to := atoi(m[1]), atoi(m[2])
		k := [2]int{to, from}
		switch {
		case m[3] == "end of stream":
			if suspects[k] {
				return nil, ""
			}
			suspects[k] = true
			return []sim.Action{timed(sim.Action{Kind: sim.ActSuspect, Node: to, Peer: from, Reason: "link broke"})}, ""
		case m[3] == "hello":
			if !suspects[k] {
				return nil, ""
			}
			delete(suspects, k)
			delete(byTimeout, k)
			return []sim.Action{timed(sim.Action{Kind: sim.ActTrust, Node: to, Peer: from})}, ""
		}
		var out []sim.Action
		if byTimeout[k] {
			delete(byTimeout, k)
			delete(suspects, k)
			out = append(out, timed(sim.Action{Kind: sim.ActTrust, Node: to, Peer: from}))
		}
		return append(out, timed(sim.Action{Kind: sim.ActDeliver, Node: to, Peer: from})), ""
	}
	if m := reTimer().FindStringSubmatch(text); m != nil {
		return []sim.Action{timed(sim.Action{Kind: sim.ActFire, Node: atoi(m[2]), Timer: m[1]})}, ""
	}
	if m := reNode().FindStringSubmatch(text); m != nil {
		return []sim.Action{timed(sim.Action{Kind: m[1], Node: atoi(m[2])})}, ""
	}
	if m := reTimeout().FindStringSubmatch(text); m != nil {
		k := [2]int{atoi(m[1]), atoi(m[2])}
		byTimeout[k], suspects[k] = true, true
		return []sim.Action{timed(sim.Action{Kind: sim.ActSuspect, Node: k[0], Peer: k[1], Reason: "timeout"})}, ""
	}
	return nil, "not carried out in step mode (the bare machines have no network faults or heartbeats): the trace's beliefs are shown"
}

// traceTo makes the state after the trace's first k transitions.
func (sp *stepper) traceTo(k int) error {
	tv := sp.trace
	if k < 0 || k > len(tv.Steps) {
		return fmt.Errorf("step %d: want 0..%d (the trace's transitions)", k, len(tv.Steps))
	}
	var acts []sim.Action
	for _, a := range tv.acts[:k] {
		acts = append(acts, a...)
	}
	if err := sp.st.GoTo(acts); err != nil {
		return err
	}
	sp.at = k
	s := sp.st.Sim()
	for i := range tv.Steps[:k] {
		tv.Steps[i].Differs = ""
	}
	if k > 0 {
		step := &tv.Steps[k-1]
		var diff []string
		for i, want := range step.want {
			got := s.Leader(i + 1)
			if !s.Alive(i + 1) {
				got = -1
			}
			if got != want && !(want == -1 && got == 0) {
				diff = append(diff, fmt.Sprintf("node %d follows %d here, %d in the trace", i+1, got, want))
			}
		}
		if len(diff) > 0 {
			step.Differs = strings.Join(diff, "; ")
		}
	}
	return nil
}

// tracesIndex lists the counterexamples under the runs directory: every directory with a trace.txt.
func (s *Server) tracesIndex(w http.ResponseWriter, r *http.Request) {
	type row struct {
		Dir    string `json:"dir"`
		Header string `json:"header"`
		Steps  int    `json:"steps"`
	}
	rows := []row{}
	_ = filepath.WalkDir(s.cfg.Runs, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != explore.TraceFile {
			return nil
		}
		dir := filepath.Dir(p)
		if tv, err := readTrace(dir); err == nil {
			h := ""
			if len(tv.Header) > 1 {
				h = tv.Header[1]
			}
			rows = append(rows, row{Dir: s.rel(dir), Header: h, Steps: len(tv.Steps)})
		}
		return nil
	})
	reply(w, map[string]any{"root": s.cfg.Runs, "traces": rows})
}

// traceOpen opens a counterexample (?dir=, under the runs directory or a path) in a stepping
// session, at its step 0 (?step= for another).
func (s *Server) traceOpen(w http.ResponseWriter, r *http.Request) {
	dir := r.URL.Query().Get("dir")
	if dir == "" {
		fail(w, http.StatusBadRequest, "no dir: want ?dir=<a counterexample directory explore wrote> (see GET /api/traces)")
		return
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.cfg.Runs, filepath.FromSlash(dir))
	}
	tv, err := readTrace(dir)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	c, err := rundir.Load(dir)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	cfg := sim.Config{Algo: c.Algo, N: len(c.Nodes), Order: c.Ring, Placement: c.Placement, Initiators: c.Initiators,
		Topology: c.Topology, Edges: c.Edges, Timeout: c.Timeout.D(), Heartbeat: c.Heartbeat.D(), Options: c.Options,
		ElectionTimeout: c.ElectionTimeout.D(), CoordinatorTimeout: c.CoordinatorTimeout.D()}
	st, err := sim.NewStepper(cfg)
	if err != nil {
		fail(w, http.StatusBadRequest, "the trace's cluster: %v", err)
		return
	}
	tv.Dir = s.rel(dir)
	sp := &stepper{st: st, cfg: st.Sim().Config(), layout: report.LayoutOf(c), trace: tv}
	k := 0
	if q := r.URL.Query().Get("step"); q != "" {
		if k, err = strconv.Atoi(q); err != nil {
			fail(w, http.StatusBadRequest, "step %q: want a number 0..%d", q, len(tv.Steps))
			return
		}
	}
	if err := sp.traceTo(k); err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.setStepper(sp)
	s.mu.Lock()
	defer s.mu.Unlock()
	reply(w, sp.state())
}
