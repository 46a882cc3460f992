package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
)

// Config is what `leaderlab ui` needs. The command maps its flags onto it.
type Config struct {
	// Addr is the address to listen on (default DefaultAddr: the loopback interface, a free port).
	Addr string
	// Runs is the directory of runs the index lists and new runs go into (default "runs").
	Runs string
	// Token is the secret every request must carry; empty draws a random one.
	Token string
	// Binary is the leaderlab executable a real run's nodes run (empty: this program).
	Binary string
	// Progress receives the runs' progress lines (default io.Discard).
	Progress io.Writer
}

// DefaultAddr binds the loopback interface only, on a port the kernel picks.
const DefaultAddr = "127.0.0.1:0"

// TokenParam is the query parameter that carries the token (TokenHeader carries it too).
const (
	TokenParam  = "token"
	TokenHeader = "X-Leaderlab-Token"
)

// Server is the lab's web server: one page, its API, the runs' files.
type Server struct {
	cfg   Config
	token string
	ln    net.Listener
	http  *http.Server
	// ctx ends every run the server started when it closes; runs is their goroutines.
	ctx    context.Context
	cancel context.CancelFunc
	runs   sync.WaitGroup

	mu   sync.Mutex
	live *liveRun
	step *stepper
}

// New listens on cfg.Addr and makes the server; Serve serves it.
func New(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.Runs == "" {
		cfg.Runs = "runs"
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	if cfg.Token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("draw the token: %w", err)
		}
		cfg.Token = hex.EncodeToString(b)
	}
	if err := os.MkdirAll(cfg.Runs, 0o755); err != nil {
		return nil, fmt.Errorf("the runs directory: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("--addr %s: %w (want host:port, e.g. 127.0.0.1:8080; port 0 picks a free one)", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, token: cfg.Token, ln: ln}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.http = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// URL is the page's address with its token: what to open.
func (s *Server) URL() string {
	host := s.ln.Addr().String()
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok && a.IP.IsUnspecified() {
		host = net.JoinHostPort("127.0.0.1", fmt.Sprint(a.Port))
	}
	return "http://" + host + "/?" + TokenParam + "=" + url.QueryEscape(s.token)
}

// Serve serves until Close.
func (s *Server) Serve() error {
	err := s.http.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Close stops the server: every run it started is stopped (a real run's processes are killed by
// its launcher) and waited for.
func (s *Server) Close() error {
	s.cancel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = s.http.Close()
	}
	s.runs.Wait()
	return err
}

// Handler is the server's handler, every route behind the guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.page)
	mux.HandleFunc("GET /api/runs", s.runsIndex)
	mux.HandleFunc("GET /runs/{path...}", s.runFile)
	mux.HandleFunc("POST /api/live", s.liveStart)
	mux.HandleFunc("GET /api/live", s.liveStatus)
	mux.HandleFunc("GET /api/live/events", s.liveEvents)
	mux.HandleFunc("POST /api/live/fault", s.liveFault)
	mux.HandleFunc("POST /api/live/speed", s.liveSpeed)
	mux.HandleFunc("POST /api/live/stop", s.liveStop)
	mux.HandleFunc("POST /api/step", s.stepNew)
	mux.HandleFunc("GET /api/step", s.stepState)
	mux.HandleFunc("POST /api/step/do", s.stepDo)
	mux.HandleFunc("POST /api/step/back", s.stepBack)
	mux.HandleFunc("POST /api/step/export", s.stepExport)
	mux.HandleFunc("GET /api/traces", s.tracesIndex)
	mux.HandleFunc("GET /api/trace", s.traceOpen)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, http.StatusNotFound, "no such page or API: %s %s (the page is /, the API under /api/, the runs' files under /runs/)", r.Method, r.URL.Path)
	})
	return s.guard(mux)
}

// guard lets a request through only when it carries the token, comes from this server's own page
// (no Origin of another site: a page elsewhere cannot drive the lab through the browser) and names
// this server as its Host (a DNS name rebound to 127.0.0.1 does not).
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		// Nothing from elsewhere: no script, style, image or connection to another origin.
		h.Set("Content-Security-Policy", "default-src 'self' 'unsafe-inline' data: blob:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		if !s.hostOK(r.Host) {
			fail(w, http.StatusForbidden, "host %q: this server answers only to its own address %s (a request for another name is refused)", r.Host, s.ln.Addr())
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			fail(w, http.StatusForbidden, "cross-origin request from %s refused: only the lab's own page (http://%s) may call it", o, r.Host)
			return
		}
		if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
			fail(w, http.StatusForbidden, "cross-site request refused: only the lab's own page may call it")
			return
		}
		tok := r.Header.Get(TokenHeader)
		if tok == "" {
			tok = r.URL.Query().Get(TokenParam)
		}
		switch {
		case tok == "":
			fail(w, http.StatusUnauthorized, "no token: open the address leaderlab ui printed (it ends in ?%s=…)", TokenParam)
			return
		case subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) != 1:
			fail(w, http.StatusForbidden, "wrong token: open the address leaderlab ui printed (it ends in ?%s=…)", TokenParam)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hostOK tells whether a request's Host names this server: its address, or localhost on its port.
func (s *Server) hostOK(host string) bool {
	a, ok := s.ln.Addr().(*net.TCPAddr)
	if !ok {
		return false
	}
	if a.IP.IsUnspecified() {
		return true // --addr 0.0.0.0:P: reached by any name; the token still guards it
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil || port != fmt.Sprint(a.Port) {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.Equal(a.IP) || (a.IP.IsLoopback() && ip.IsLoopback())
	}
	return strings.EqualFold(h, "localhost") && a.IP.IsLoopback()
}

// apiError is every error answer's body.
type apiError struct {
	Error string `json:"error"`
}

// fail answers with an error that names what was wrong and what is accepted.
func fail(w http.ResponseWriter, code int, format string, a ...any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(apiError{Error: fmt.Sprintf(format, a...)})
}

// reply answers with v as JSON.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// decode reads a request's JSON body into v strictly (unknown fields refused); example is what a
// good body looks like, for the error.
func decode(w http.ResponseWriter, r *http.Request, v any, example string) bool {
	dec := json.NewDecoder(io.LimitReader(r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		fail(w, http.StatusBadRequest, "bad JSON in the request body: %v; want e.g. %s", err, example)
		return false
	}
	if dec.More() {
		fail(w, http.StatusBadRequest, "bad JSON in the request body: more than one value; want e.g. %s", example)
		return false
	}
	return true
}
