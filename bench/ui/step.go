package ui

import (
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/sim"
	"github.com/leaderlab/leaderlab/topology"
)

// Step mode: the simulator's bare machines, one happening at a time by hand (sim.Stepper), and an
// explorer's counterexample stepped through the same way (trace.go).

// stepper is the page's stepping session.
type stepper struct {
	st     *sim.Stepper
	layout report.Layout
	cfg    sim.Config
	trace  *traceView // set when the session steps through an explorer trace
	at     int        // the trace's transitions carried out
}

// stepRequest is POST /api/step's body.
type stepRequest struct {
	Algo       string `json:"algo"`
	Nodes      int    `json:"nodes"`
	Topology   string `json:"topology"`
	IDs        string `json:"ids"`
	Initiators string `json:"initiators"`
	Seed       int64  `json:"seed"`
	Timeout    string `json:"timeout"`
}

// stepNew starts a stepping session.
func (s *Server) stepNew(w http.ResponseWriter, r *http.Request) {
	req := stepRequest{Algo: "bully", Nodes: 5}
	if !decode(w, r, &req, `{"algo": "bully", "nodes": 5, "seed": 1}`) {
		return
	}
	if _, err := election.Lookup(req.Algo); err != nil {
		fail(w, http.StatusBadRequest, "algo %q: %v", req.Algo, err)
		return
	}
	if req.Nodes < 1 || req.Nodes > 64 {
		fail(w, http.StatusBadRequest, "nodes %d: want 1..64 in step mode (one happening at a time)", req.Nodes)
		return
	}
	cfg := sim.Config{Algo: req.Algo, N: req.Nodes, Seed: req.Seed, Topology: req.Topology}
	if req.IDs != "" {
		order, err := topology.Place(req.Nodes, req.IDs, req.Seed)
		if err != nil {
			fail(w, http.StatusBadRequest, "ids %q: %v", req.IDs, err)
			return
		}
		cfg.Order, cfg.Placement = order, req.IDs
	}
	if req.Initiators != "" {
		order := cfg.Order
		if order == nil {
			order, _ = topology.Place(req.Nodes, "ascending", 0)
		}
		inits, err := topology.ParseInitiators(req.Initiators, order, req.Seed)
		if err != nil {
			fail(w, http.StatusBadRequest, "initiators %q: %v", req.Initiators, err)
			return
		}
		cfg.Initiators = inits
	}
	if req.Timeout != "" {
		d, err := time.ParseDuration(req.Timeout)
		if err != nil || d <= 0 {
			fail(w, http.StatusBadRequest, "timeout %q: want a Go duration such as 200ms", req.Timeout)
			return
		}
		cfg.Timeout = d
	}
	st, err := sim.NewStepper(cfg)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.setStepper(&stepper{st: st, cfg: st.Sim().Config(), layout: report.LayoutOf(&st.Sim().Log().Cluster)})
	s.stepState(w, r)
}

func (s *Server) setStepper(sp *stepper) {
	s.mu.Lock()
	s.step = sp
	s.mu.Unlock()
}

// session returns the stepping session, locked (the caller unlocks s.mu), or answers 404.
func (s *Server) session(w http.ResponseWriter) *stepper {
	s.mu.Lock()
	if s.step == nil {
		s.mu.Unlock()
		fail(w, http.StatusNotFound, "no stepping session: start one (POST /api/step) or open an explorer trace (GET /api/trace?dir=…)")
		return nil
	}
	return s.step
}

// stepState answers the session's state.
func (s *Server) stepState(w http.ResponseWriter, r *http.Request) {
	sp := s.session(w)
	if sp == nil {
		return
	}
	defer s.mu.Unlock()
	reply(w, sp.state())
}

// stepDo carries out one action: a sim.Action, or {"kind": "next"} (the happening due first) or
// {"kind": "leader"} (run to the next leader change).
func (s *Server) stepDo(w http.ResponseWriter, r *http.Request) {
	var a sim.Action
	if !decode(w, r, &a, `{"kind": "deliver", "peer": 1, "node": 2} (kinds: deliver, fire, crash, restart, suspect, trust, gone, next, leader)`) {
		return
	}
	sp := s.session(w)
	if sp == nil {
		return
	}
	defer s.mu.Unlock()
	if a.Timed {
		fail(w, http.StatusBadRequest, "timed actions are an explorer trace's: by hand an action happens when it falls due")
		return
	}
	if a.Kind != "next" && a.Kind != "leader" && a.Kind != sim.ActDeliver && a.Kind != sim.ActFire && (a.Node < 1 || a.Node > sp.cfg.N) {
		fail(w, http.StatusBadRequest, "node %d: want an ID in 1..%d", a.Node, sp.cfg.N)
		return
	}
	var err error
	switch a.Kind {
	case "next":
		next, ok := sp.st.Next()
		if !ok {
			fail(w, http.StatusConflict, "nothing is in flight and no timer is armed: crash, restart or tell a node something")
			return
		}
		err = sp.st.Do(next)
	case "leader":
		var n int
		n, err = sp.st.RunToLeaderChange(10000)
		if err == nil && n == 0 {
			fail(w, http.StatusConflict, "nothing is in flight and no timer is armed: no leader can change")
			return
		}
	default:
		err = sp.st.Do(a)
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	sp.trace = nil // by hand, the session leaves the trace it followed
	reply(w, sp.state())
}

// stepBack undoes the last action, or with {"to": k} makes the state after the first k actions
// (a trace's first k transitions).
func (s *Server) stepBack(w http.ResponseWriter, r *http.Request) {
	var req struct {
		To *int `json:"to"`
	}
	if r.ContentLength != 0 && !decode(w, r, &req, `{} (back one step) or {"to": 3} (the state after step 3)`) {
		return
	}
	sp := s.session(w)
	if sp == nil {
		return
	}
	defer s.mu.Unlock()
	var err error
	switch {
	case req.To != nil && sp.trace != nil:
		err = sp.traceTo(*req.To)
	case req.To != nil:
		acts, _ := sp.st.Actions()
		if *req.To < 0 || *req.To > len(acts) {
			fail(w, http.StatusBadRequest, "to %d: want 0..%d (the actions taken)", *req.To, len(acts))
			return
		}
		err = sp.st.GoTo(acts[:*req.To])
	case sp.trace != nil:
		err = sp.traceTo(sp.at - 1)
	default:
		err = sp.st.Back()
	}
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	reply(w, sp.state())
}

// stepExport writes the session as a run directory under the runs directory and judges it.
func (s *Server) stepExport(w http.ResponseWriter, r *http.Request) {
	sp := s.session(w)
	if sp == nil {
		return
	}
	defer s.mu.Unlock()
	base := filepath.Join(s.cfg.Runs, fmt.Sprintf("%s-%s-n%d-step", time.Now().UTC().Format("20060102T150405Z"), sp.cfg.Algo, sp.cfg.N))
	dir := base
	for i := 2; exists(dir); i++ {
		dir = fmt.Sprintf("%s-%d", base, i)
	}
	run, err := sp.st.Export(dir)
	if err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	v := check.Check(run, check.Options{})
	if err := v.WriteFile(dir); err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	reply(w, map[string]any{"dir": s.rel(dir), "verdict": verdictJSON(v), "steps": sim.StepsFile})
}

// state is what the page shows of the session.
func (sp *stepper) state() map[string]any {
	s := sp.st.Sim()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	nodes := []map[string]any{}
	for id := 1; id <= sp.cfg.N; id++ {
		st := "idle"
		switch l := s.Leader(id); {
		case !s.Alive(id):
			st = "dead"
		case s.Paused(id):
			st = "paused"
		case s.Participant(id):
			st = "electing"
		case l == id:
			st = "leader"
		case l != 0:
			st = "follower"
		}
		nodes = append(nodes, map[string]any{"id": id, "st": st, "l": s.Leader(id), "inc": s.Incarnation(id)})
	}
	flight := []map[string]any{}
	for _, f := range sp.st.InFlight() {
		flight = append(flight, map[string]any{"from": f.From, "to": f.To, "kind": f.Kind, "id": f.ID, "cand": f.Cand, "round": f.Round, "due": ms(f.Due), "head": f.Head})
	}
	timers := []map[string]any{}
	for _, t := range sp.st.Timers() {
		timers = append(timers, map[string]any{"node": t.Node, "timer": t.Timer, "due": ms(t.Due)})
	}
	acts, when := sp.st.Actions()
	done := []map[string]any{}
	for i, a := range acts {
		done = append(done, map[string]any{"text": a.String(), "t": ms(when[i])})
	}
	var evs []evJSON
	for id := 1; id <= sp.cfg.N; id++ {
		for _, e := range s.Log().Nodes[id].Events {
			if e.Ev == "stats" {
				continue
			}
			j := evJSON{T: float64(e.TS-sp.cfg.Base) / 1e6, N: e.Node, I: e.Inc, E: e.Ev, To: e.To, Fr: e.From, P: e.Peer, L: e.Leader, R: e.Reason}
			if e.Msg != nil {
				j.K, j.M, j.Cand = e.Msg.Kind, e.Msg.ID, e.Msg.Cand
			}
			evs = append(evs, j)
		}
	}
	out := map[string]any{"algo": sp.cfg.Algo, "n": sp.cfg.N, "seed": sp.cfg.Seed, "now": ms(s.Now()), "nodes": nodes,
		"flight": flight, "timers": timers, "actions": done, "events": evs, "layout": sp.layout}
	if next, ok := sp.st.Next(); ok {
		out["next"] = next.String()
	}
	if sp.trace != nil {
		out["trace"] = sp.trace
		out["trace_at"] = sp.at
	}
	return out
}
