package ui

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/leaderlab/leaderlab/logs"
)

// newTestServer serves a lab on a free loopback port with runs in a temporary directory.
func newTestServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Config{Runs: filepath.Join(t.TempDir(), "runs")})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s
}

func get(t *testing.T, u string, header map[string]string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", u, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The server binds the loopback interface unless told otherwise, and prints a URL with its token.
func TestUIBindsLoopbackByDefault(t *testing.T) {
	s := newTestServer(t)
	a := s.Addr().(*net.TCPAddr)
	if !a.IP.IsLoopback() {
		t.Errorf("listening on %v, want a loopback address", a)
	}
	u, err := url.Parse(s.URL())
	if err != nil || u.Host != a.String() || u.Query().Get(TokenParam) == "" || len(u.Query().Get(TokenParam)) < 32 {
		t.Errorf("URL %q: want http://%v/?token=<128 random bits>", s.URL(), a)
	}
}

// A request without the token is refused (401), a wrong token too (403), and so is a request from
// another origin or for another host name, even with the token.
func TestUIRefusesNoTokenAndCrossOrigin(t *testing.T) {
	s := newTestServer(t)
	base := "http://" + s.Addr().String()
	tok := s.token
	for _, c := range []struct {
		name   string
		path   string
		header map[string]string
		want   int
		says   string
	}{
		{"no token", "/", nil, 401, "no token"},
		{"no token, API", "/api/runs", nil, 401, "no token"},
		{"wrong token", "/?token=00", nil, 403, "wrong token"},
		{"cross-origin", "/api/runs?token=" + tok, map[string]string{"Origin": "http://evil.example"}, 403, "cross-origin"},
		{"cross-site fetch", "/api/runs?token=" + tok, map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "cross-site"},
		{"rebound host name", "/api/runs?token=" + tok, map[string]string{"Host": "evil.example:" + strings.Split(s.Addr().String(), ":")[1]}, 403, "host"},
		{"the page", "/?token=" + tok, nil, 200, "<!doctype html>"},
		{"same origin, token in a header", "/api/runs", map[string]string{TokenHeader: tok, "Origin": base}, 200, `"rows"`},
	} {
		req, _ := http.NewRequest("GET", base+c.path, nil)
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		if h := c.header["Host"]; h != "" {
			req.Host = h
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want || !strings.Contains(string(b), c.says) {
			t.Errorf("%s: HTTP %d %q, want %d saying %q", c.name, resp.StatusCode, b, c.want, c.says)
		}
	}
}

// The page loads nothing from elsewhere: no URL of another host in it, and a policy that forbids it.
func TestUIPageLoadsNothingFromElsewhere(t *testing.T) {
	s := newTestServer(t)
	code, body := get(t, s.URL(), nil)
	if code != 200 {
		t.Fatalf("the page: HTTP %d", code)
	}
	for _, bad := range []string{"http://", "https://", "//cdn", "@import"} {
		if i := strings.Index(body, bad); i >= 0 && !strings.Contains(body[i:min(len(body), i+40)], "www.w3.org/2000/svg") {
			t.Errorf("the page holds %q: %s", bad, body[i:min(len(body), i+60)])
		}
	}
	resp, err := http.Get(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q: want one that keeps the page to its own origin", csp)
	}
}

// Every bad input is an error that names it and says what is accepted.
func TestUIBadInputIsNamed(t *testing.T) {
	s := newTestServer(t)
	base := "http://" + s.Addr().String()
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		req.Header.Set(TokenHeader, s.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var e apiError
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error
	}
	for _, c := range []struct{ path, body, says string }{
		{"/api/live", `{"algo": "bully", "nodes": }`, "bad JSON"},
		{"/api/live", `{"algo": "bully", "nodez": 5}`, `unknown field "nodez"`},
		{"/api/live", `{"algo": "paxos", "sim": true}`, "paxos"},
		{"/api/live", `{"nodes": 0, "sim": true}`, "nodes 0"},
		{"/api/live", `{"sim": true, "duration": "soon"}`, `duration "soon"`},
		{"/api/live/fault", `{"action": "kill 3"}`, "no live run"},
		{"/api/step", `{"algo": "bully", "nodes": 500}`, "nodes 500"},
		{"/api/step/do", `{"kind": "deliver"}`, "no stepping session"},
	} {
		code, msg := post(c.path, c.body)
		if code < 400 || !strings.Contains(msg, c.says) {
			t.Errorf("POST %s %s: HTTP %d %q, want an error naming %q", c.path, c.body, code, msg, c.says)
		}
	}
	if code, msg := post("/api/step", `{"algo": "bully", "nodes": 3, "seed": 1}`); code != 200 {
		t.Fatalf("step: HTTP %d %s", code, msg)
	}
	for _, c := range []struct{ body, says string }{
		{`{"kind": "deliver", "peer": 1, "node": 1}`, "no message is in flight"},
		{`{"kind": "crash", "node": 9}`, "node 9"},
		{`{"kind": "fire", "node": 2, "timer": "nope"}`, `"nope"`},
		{`{"kind": "dance", "node": 2}`, "want one of"},
	} {
		code, msg := post("/api/step/do", c.body)
		if code != 400 || !strings.Contains(msg, c.says) {
			t.Errorf("POST /api/step/do %s: HTTP %d %q, want 400 naming %q", c.body, code, msg, c.says)
		}
	}
	if code, body := get(t, base+"/runs/../etc/passwd?token="+s.token, nil); code < 400 {
		t.Errorf("/runs/../etc/passwd: HTTP %d %s", code, body)
	}
}

// Closing the server stops the runs it started: a real run's node processes are gone once Close
// returns.
func TestUICloseKillsItsRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: no real processes")
	}
	bin := filepath.Join(t.TempDir(), "leaderlab")
	if out, err := exec.Command("go", "build", "-o", bin, "../..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s, err := New(Config{Runs: filepath.Join(t.TempDir(), "runs"), Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	req, _ := http.NewRequest("POST", "http://"+s.Addr().String()+"/api/live", strings.NewReader(`{"algo": "bully", "nodes": 3}`))
	req.Header.Set(TokenHeader, s.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("start a real run: HTTP %d", resp.StatusCode)
	}
	dir, _, _ := s.current().hand.Run()
	recs, err := logs.ReadLauncher(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, r := range recs {
		if r.Ev == logs.LaunchSpawned {
			pids = append(pids, r.Pid)
		}
	}
	if len(pids) != 3 {
		t.Fatalf("%d nodes spawned, want 3", len(pids))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("node process %d still runs after the server closed", pid)
		}
	}
}
