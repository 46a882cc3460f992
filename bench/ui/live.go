package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/internal/field"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/report"
)

// The live cluster: a run started from the page (or by run --ui) and driven by hand through a
// launcher.Hand; what it logs goes to every page that watches, as server-sent events.

// startRequest is POST /api/live's body.
type startRequest struct {
	Algo       string   `json:"algo"`
	Nodes      *int     `json:"nodes"`
	Topology   string   `json:"topology"`
	IDs        string   `json:"ids"`
	Initiators string   `json:"initiators"`
	Chaos      string   `json:"chaos"`
	Sim        bool     `json:"sim"`
	Seed       *int64   `json:"seed"`
	Speed      *float64 `json:"speed"`
	Duration   string   `json:"duration"`  // the bound: the run stops then if not before (default 30m)
	Heartbeat  string   `json:"heartbeat"` // failure detector (default the launcher's)
	Timeout    string   `json:"timeout"`
}

const startExample = `{"algo": "bully", "nodes": 5, "sim": true}`

// fieldOf names launcher.Config's fields as the request does, for the launcher's errors.
var fieldOf = map[string]string{
	"Config.Algo": "algo", "Config.Nodes": "nodes", "Config.Topology": "topology", "Config.IDs": "ids",
	"Config.Initiators": "initiators", "Config.Chaos": "chaos", "Config.Duration": "duration",
	"Config.Heartbeat": "heartbeat", "Config.Timeout": "timeout", "Config.Settle": "settle",
}

// launchResult is what launcher.Launch returned.
type launchResult struct {
	res launcher.Result
	err error
}

// liveRun is the run the page drives.
type liveRun struct {
	hand  *launcher.Hand
	sim   bool
	model *model

	mu      sync.Mutex
	subs    map[chan []byte]bool
	hello   map[string]any // the run, its layout
	backlog [][]byte       // every batch so far, for a page that joins late (bounded: backlogMax)
	size    int
	end     []byte // the last message, once the run is over
	code    chan int
	dropped int // pages that fell behind and were cut off
}

const backlogMax = 32 << 20

// Config takes a start request into a launcher configuration.
func (s *Server) liveConfig(req startRequest, h *launcher.Hand) (launcher.Config, error) {
	cfg := launcher.DefaultConfig()
	cfg.Hand, cfg.Sim, cfg.Chaos = h, req.Sim, req.Chaos
	cfg.Stdout, cfg.Progress, cfg.Binary = s.cfg.Progress, s.cfg.Progress, s.cfg.Binary
	cfg.UntilElected = false
	if req.Algo != "" {
		cfg.Algo = req.Algo
	}
	if req.Nodes != nil {
		cfg.Nodes = *req.Nodes
	}
	cfg.Topology = req.Topology
	if req.IDs != "" {
		cfg.IDs = req.IDs
	}
	if req.Initiators != "" {
		cfg.Initiators = req.Initiators
	}
	if req.Seed != nil {
		cfg.Seed, cfg.SeedSet = *req.Seed, true
	}
	cfg.Duration = 30 * time.Minute
	for _, d := range []struct {
		name, text string
		to         *time.Duration
	}{{"duration", req.Duration, &cfg.Duration}, {"heartbeat", req.Heartbeat, &cfg.Heartbeat}, {"timeout", req.Timeout, &cfg.Timeout}} {
		if d.text == "" {
			continue
		}
		v, err := time.ParseDuration(d.text)
		if err != nil {
			return cfg, fmt.Errorf("%s %q: want a Go duration such as 200ms or 5m", d.name, d.text)
		}
		*d.to = v
	}
	cfg.ScaleDetector = req.Heartbeat == "" && req.Timeout == ""
	kind := "ui"
	if cfg.Sim {
		kind = "ui-sim"
	}
	base := filepath.Join(s.cfg.Runs, fmt.Sprintf("%s-%s-n%d-%s", time.Now().UTC().Format("20060102T150405Z"), cfg.Algo, cfg.Nodes, kind))
	cfg.Out = base
	for i := 2; exists(cfg.Out); i++ {
		cfg.Out = fmt.Sprintf("%s-%d", base, i)
	}
	return cfg, nil
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// liveStart starts a run from the page.
func (s *Server) liveStart(w http.ResponseWriter, r *http.Request) {
	var req startRequest
	if !decode(w, r, &req, startExample) {
		return
	}
	if req.Speed != nil && (*req.Speed < 0 || *req.Speed > 100) {
		fail(w, http.StatusBadRequest, "speed %v: want 0 (held) to 100 times the wall clock", *req.Speed)
		return
	}
	h := launcher.NewHand()
	cfg, err := s.liveConfig(req, h)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	if req.Speed != nil {
		_ = h.SetSpeed(*req.Speed)
	}
	lr, err := s.startLive(cfg)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, errBusy) {
			code = http.StatusConflict
		}
		fail(w, code, "%v", err)
		return
	}
	reply(w, lr.helloMsg())
}

var errBusy = errors.New("a run is going on: stop it first (one live run at a time)")

// StartLive starts a run driven by hand (cfg.Hand set) and shows it on the page (run --ui). It
// returns once the run began, or with the error that kept it from it; the channel gets the run's
// exit code when it is over.
func (s *Server) StartLive(cfg launcher.Config) (<-chan int, error) {
	lr, err := s.startLive(cfg)
	if err != nil {
		return nil, err
	}
	return lr.code, nil
}

// startLive starts a run driven by hand (cfg.Hand set) and shows it on the page.
func (s *Server) startLive(cfg launcher.Config) (*liveRun, error) {
	s.mu.Lock()
	if s.live != nil && s.live.end == nil {
		s.mu.Unlock()
		return nil, errBusy
	}
	lr := &liveRun{hand: cfg.Hand, sim: cfg.Sim, subs: map[chan []byte]bool{}, code: make(chan int, 1)}
	s.live = lr
	s.mu.Unlock()
	done := make(chan launchResult, 1)
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		res, err := launcher.Launch(s.ctx, cfg)
		done <- launchResult{res, err}
	}()
	<-cfg.Hand.Began()
	select {
	case <-cfg.Hand.Done():
		res := <-done
		err := res.err
		var fe *field.Error
		if errors.As(err, &fe) {
			err = errors.New(fe.Format(func(f string) string {
				if n, ok := fieldOf[f]; ok {
					return n
				}
				return f
			}))
		}
		if err == nil {
			err = fmt.Errorf("the run ended before it began (exit %d)", res.res.Code)
		}
		s.mu.Lock()
		s.live = nil
		s.mu.Unlock()
		return nil, err
	default:
	}
	dir, c, begin := cfg.Hand.Run()
	lr.model = newModel(c.IDs())
	lr.hello = map[string]any{"type": "hello", "dir": s.rel(dir), "algo": c.Algo, "nodes": len(c.Nodes), "topology": c.Topology,
		"world": c.World, "seed": c.Seed, "begin": begin, "sim": cfg.Sim, "layout": report.LayoutOf(&c),
		"settle_ms": c.Settle.D().Milliseconds(), "timeout_ms": c.Timeout.D().Milliseconds(), "grace_ms": c.Grace.D().Milliseconds()}
	s.runs.Add(1)
	go func() {
		defer s.runs.Done()
		lr.pump(begin, done, s)
	}()
	return lr, nil
}

// rel is a run directory relative to the runs directory (the page links its files under /runs/).
func (s *Server) rel(dir string) string {
	if r, err := filepath.Rel(s.cfg.Runs, dir); err == nil {
		return filepath.ToSlash(r)
	}
	return dir
}

func (lr *liveRun) helloMsg() map[string]any {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	out := map[string]any{}
	for k, v := range lr.hello {
		out[k] = v
	}
	if lr.model != nil {
		out["state"] = lr.model.views()
		out["props"] = lr.model.properties()
	}
	return out
}

// evJSON is a node event as the page reads it: t ms after the begin.
type evJSON struct {
	T    float64 `json:"t"`
	N    int     `json:"n"`
	I    int     `json:"i"`
	E    string  `json:"e"`
	K    string  `json:"k,omitempty"` // the message's kind
	M    string  `json:"m,omitempty"` // the message's ID
	To   int     `json:"to,omitempty"`
	Fr   int     `json:"fr,omitempty"`
	P    int     `json:"p,omitempty"` // the peer suspected or trusted
	L    int     `json:"l,omitempty"` // the leader
	R    string  `json:"r,omitempty"`
	Cand int     `json:"c,omitempty"`
}

type chaosJSON struct {
	T       float64 `json:"t"`
	Op      string  `json:"op"`
	Targets []int   `json:"targets"`
	Step    string  `json:"step"`
	Error   string  `json:"error,omitempty"`
	Groups  [][]int `json:"groups,omitempty"`
}

// pump takes what the run logs every 50 ms to the pages, and the verdict at the end.
func (lr *liveRun) pump(begin int64, done <-chan launchResult, s *Server) {
	ms := func(ts int64) float64 { return float64(ts-begin) / 1e6 }
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	over := false
	for {
		select {
		case <-lr.hand.Done():
			over = true
		case <-t.C:
		}
		f := lr.hand.Next()
		msg := map[string]any{"type": "batch", "now": ms(f.Now), "wall": time.Now().UnixMilli()}
		if f.Stop > 0 {
			msg["stop"] = f.Stop.Milliseconds()
		}
		if len(f.Events)+len(f.Chaos)+len(f.Launch) > 0 {
			evs := make([]evJSON, 0, len(f.Events))
			lr.mu.Lock()
			for i := range f.Events {
				e := &f.Events[i]
				lr.model.event(e)
				if e.Ev == logs.EvStats {
					continue
				}
				j := evJSON{T: ms(e.TS), N: e.Node, I: e.Inc, E: e.Ev, To: e.To, Fr: e.From, P: e.Peer, L: e.Leader, R: e.Reason}
				if e.Msg != nil {
					j.K, j.M, j.Cand = e.Msg.Kind, e.Msg.ID, e.Msg.Cand
				}
				evs = append(evs, j)
			}
			var cs []chaosJSON
			for i := range f.Chaos {
				c := &f.Chaos[i]
				lr.model.chaosRecord(c)
				cs = append(cs, chaosJSON{T: ms(c.TS), Op: c.Op, Targets: c.Targets, Step: c.Step, Error: c.Error, Groups: c.Groups})
			}
			for i := range f.Launch {
				lr.model.launchRecord(&f.Launch[i])
			}
			msg["ev"], msg["chaos"] = evs, cs
			msg["state"], msg["props"] = lr.model.views(), lr.model.properties()
			lr.mu.Unlock()
		}
		lr.send(msg, false)
		if over {
			break
		}
	}
	lr.hand.CloseFeed()
	r := <-done
	end := map[string]any{"type": "end", "dir": s.rel(r.res.Dir), "code": r.res.Code}
	if r.err != nil {
		end["error"] = r.err.Error()
	}
	if v := r.res.Verdict; v != nil {
		end["verdict"] = verdictJSON(v)
	}
	lr.send(end, true)
	lr.code <- r.res.Code
}

// verdictJSON is the part of a verdict the page shows.
func verdictJSON(v *check.Verdict) map[string]any {
	fo := []map[string]any{}
	for _, f := range v.Metrics.Failovers {
		fo = append(fo, map[string]any{"fault": f.Fault, "ms": f.MS})
	}
	return map[string]any{"outcome": v.Result(), "leader": v.Leader, "properties": v.Properties, "failovers": fo}
}

// send gives msg to every page watching; one that has fallen behind by a few seconds is cut off
// (its page reconnects and starts again from the backlog).
func (lr *liveRun) send(msg map[string]any, last bool) {
	b, err := json.Marshal(msg)
	if err != nil {
		return
	}
	lr.mu.Lock()
	defer lr.mu.Unlock()
	if last {
		lr.end = b
	} else if msg["ev"] != nil {
		lr.backlog = append(lr.backlog, b)
		lr.size += len(b)
		for lr.size > backlogMax && len(lr.backlog) > 1 {
			lr.size -= len(lr.backlog[0])
			lr.backlog = lr.backlog[1:]
		}
	}
	for ch := range lr.subs {
		select {
		case ch <- b:
		default:
			delete(lr.subs, ch)
			close(ch)
			lr.dropped++
		}
	}
	if last {
		for ch := range lr.subs {
			close(ch)
		}
		lr.subs = map[chan []byte]bool{}
	}
}

// liveEvents streams the live run to a page: its hello, what it logged so far, then as it logs.
func (s *Server) liveEvents(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	lr := s.live
	s.mu.Unlock()
	if lr == nil {
		fail(w, http.StatusNotFound, "no live run: start one (POST /api/live)")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		fail(w, http.StatusInternalServerError, "streaming is not supported by this connection")
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	hello, _ := json.Marshal(lr.helloMsg())
	ch := make(chan []byte, 256)
	lr.mu.Lock()
	backlog, end := lr.backlog, lr.end
	if end == nil {
		lr.subs[ch] = true
	}
	lr.mu.Unlock()
	write := func(b []byte) bool {
		_, err := fmt.Fprintf(w, "data: %s\n\n", b)
		return err == nil
	}
	write(hello)
	for _, b := range backlog {
		write(b)
	}
	if end != nil {
		write(end)
		fl.Flush()
		return
	}
	fl.Flush()
	for {
		select {
		case b, ok := <-ch:
			if !ok {
				return
			}
			if !write(b) {
				return
			}
			fl.Flush()
		case <-r.Context().Done():
			lr.mu.Lock()
			if lr.subs[ch] {
				delete(lr.subs, ch)
			}
			lr.mu.Unlock()
			return
		case <-s.ctx.Done():
			return
		}
	}
}

// liveStatus is the live run's hello and state (404 when there is none).
func (s *Server) liveStatus(w http.ResponseWriter, r *http.Request) {
	lr := s.current()
	if lr == nil {
		fail(w, http.StatusNotFound, "no live run: start one (POST /api/live)")
		return
	}
	msg := lr.helloMsg()
	lr.mu.Lock()
	if lr.end != nil {
		msg["end"] = json.RawMessage(lr.end)
	}
	msg["dropped_pages"] = lr.dropped
	lr.mu.Unlock()
	reply(w, msg)
}

func (s *Server) current() *liveRun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// liveFault takes a fault by hand: {"action": "kill 5"}.
func (s *Server) liveFault(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Action string `json:"action"`
	}
	if !decode(w, r, &req, `{"action": "kill 5"}`) {
		return
	}
	lr := s.current()
	if lr == nil {
		fail(w, http.StatusNotFound, "no live run: start one (POST /api/live)")
		return
	}
	recs, err := lr.hand.Apply(req.Action)
	if err != nil {
		fail(w, http.StatusBadRequest, "%v", err)
		return
	}
	reply(w, map[string]any{"records": recs})
}

// liveSpeed sets a simulated run's pace: {"speed": 0.5}.
func (s *Server) liveSpeed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Speed *float64 `json:"speed"`
	}
	if !decode(w, r, &req, `{"speed": 0.5}`) {
		return
	}
	lr := s.current()
	switch {
	case lr == nil:
		fail(w, http.StatusNotFound, "no live run: start one (POST /api/live)")
	case req.Speed == nil:
		fail(w, http.StatusBadRequest, `no speed: want e.g. {"speed": 0.5} (0 holds virtual time still, at most 100)`)
	case !lr.sim:
		fail(w, http.StatusBadRequest, "the live run is made of real processes: its pace is the wall clock's (speed applies to a simulated run)")
	default:
		if err := lr.hand.SetSpeed(*req.Speed); err != nil {
			fail(w, http.StatusBadRequest, "%v", err)
			return
		}
		reply(w, map[string]any{"speed": *req.Speed})
	}
}

// liveStop chooses the live run's end.
func (s *Server) liveStop(w http.ResponseWriter, r *http.Request) {
	lr := s.current()
	if lr == nil {
		fail(w, http.StatusNotFound, "no live run: start one (POST /api/live)")
		return
	}
	at, err := lr.hand.Stop()
	if err != nil {
		fail(w, http.StatusConflict, "%v", err)
		return
	}
	settle, _ := lr.helloMsg()["settle_ms"].(int64)
	reply(w, map[string]any{"stop_ms": at.Milliseconds(), "note": fmt.Sprintf("the run stops at +%v (now, or %v of quiet after the last fault, which the checker needs)", at, time.Duration(settle)*time.Millisecond)})
}
