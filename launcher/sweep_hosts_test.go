package launcher

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// The queue of a sweep over hosts: lowest first, a lost host's jobs again, nothing past a cut.
func TestSweepQueue(t *testing.T) {
	q := newSweepQueue(5)
	var got []int
	for range 3 {
		i, ok := q.take()
		if !ok {
			t.Fatal("take: nothing with 5 jobs")
		}
		got = append(got, i)
	}
	q.giveBack([]int{2, 0}) // a host with jobs 0 and 2 in hand is lost
	q.finish(1)
	for q.available() {
		i, _ := q.take()
		got = append(got, i)
	}
	if want := []int{0, 1, 2, 0, 2, 3, 4}; !slices.Equal(got, want) {
		t.Errorf("handed out %v, want %v (the lost host's 0 and 2 before the fresh 3)", got, want)
	}
	if q.exhausted() {
		t.Error("exhausted with five jobs out")
	}
	for _, i := range []int{0, 2, 3, 4} {
		q.finish(i)
	}
	if !q.exhausted() || q.done != 5 {
		t.Errorf("after every result: exhausted %v, done %d", q.exhausted(), q.done)
	}

	// Without end, until a cut: run --count 0 --until-fail.
	q = newSweepQueue(0)
	for range 6 {
		q.take()
	}
	q.giveBack([]int{4, 1})
	q.cutAfter(2) // job 2 failed: 4 is not needed any more, 1 still is
	if i, ok := q.take(); !ok || i != 1 {
		t.Errorf("after the cut: take %d %v, want 1", i, ok)
	}
	if q.available() {
		t.Error("a job past the cut is still handed out")
	}
}

// fakeHost is a worker (ServeSweep) over pipes, as a host's session would carry it; kill ends the
// session as a lost host's would.
type fakeHost struct {
	*sweepConn
	kill func()
}

func newFakeHost(t *testing.T, name string, cpus int, do SweepDo) fakeHost {
	jobsR, jobsW := io.Pipe()
	resR, resW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ServeSweep(ctx, jobsR, resW, cpus, do)
		resW.Close()
	}()
	kill := func() {
		cancel()
		jobsR.CloseWithError(errors.New("session died"))
		resW.CloseWithError(errors.New("session died"))
	}
	t.Cleanup(func() { kill(); <-done })
	c := &sweepConn{SweepHost: SweepHost{Name: name}, w: jobsW, r: bufio.NewReader(resR),
		stop: func() { jobsW.Close() }, stderr: func() string { return "(empty)" }, inflight: map[int]bool{}}
	l, err := readSweepLine(c.r)
	if err != nil || l.Hello == nil {
		t.Fatalf("hello: %+v %v", l, err)
	}
	c.CPUs = l.Hello.CPUs
	return fakeHost{c, kill}
}

// double is a job kind of the tests: {"n": N} gives {"twice": 2N}.
func double(_ context.Context, job json.RawMessage, dir string) (any, error) {
	var j struct{ N *int }
	if err := json.Unmarshal(job, &j); err != nil || j.N == nil {
		return nil, fmt.Errorf("want {\"n\": N}, got %s", job)
	}
	return map[string]int{"twice": 2 * *j.N}, nil
}

// One job in, one result out; lines that are not jobs give an error line naming what was wrong,
// and the worker goes on.
func TestServeSweep(t *testing.T) {
	in := strings.Join([]string{
		`{"id": 7, "job": {"n": 21}}`,
		`not json`,
		`{"job": {"n": 1}}`,
		`{"id": 8, "job": {"m": 1}}`,
		`{"id": 9}`,
		``,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := ServeSweep(context.Background(), strings.NewReader(in), &out, 1, double); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 || !strings.Contains(lines[0], `"hello":{"cpus":1`) {
		t.Fatalf("output:\n%s\nwant a hello and six answers", out.String())
	}
	want := []string{
		`{"id":7,"result":{"twice":42}}`,
		`{"line":2,"error":"not a job line: invalid character 'o' in literal null (expecting 'u') (want {\"id\": N, \"job\": {...}})"}`,
		`{"line":3,"error":"a job line without an id (want {\"id\": N, \"job\": {...}})"}`,
		`{"id":8,"error":"want {\"n\": N}, got {\"m\": 1}"}`,
		`{"id":9,"line":5,"error":"job 9 has no job (want {\"id\": N, \"job\": {...}})"}`,
		`{"line":6,"error":"not a job line: unexpected end of JSON input (want {\"id\": N, \"job\": {...}})"}`,
	}
	got := slices.Sorted(slices.Values(lines[1:])) // answers come as jobs end
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("answers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A host lost mid-sweep: its unfinished jobs are made by the other, every job has its one
// result, and the loss is told.
func TestSweepLostHost(t *testing.T) {
	var made atomic.Int32
	var once sync.Once
	var dying fakeHost
	block := make(chan struct{})
	dying = newFakeHost(t, "h1", 2, func(ctx context.Context, job json.RawMessage, dir string) (any, error) {
		if made.Add(1) == 3 {
			once.Do(func() { go dying.kill() })
		}
		if made.Load() >= 3 {
			<-block // never answers: the session dies with these in hand
		}
		return double(ctx, job, dir)
	})
	defer close(block)
	good := newFakeHost(t, "h2", 2, double)
	s := &Sweep{hosts: []*sweepConn{dying.sweepConn, good.sweepConn}}
	var mu sync.Mutex
	results := map[int]int{}
	var lost []string
	err := s.Run(context.Background(), SweepJobs{Count: 20,
		Job: func(i int) any { return map[string]int{"n": i} },
		Done: func(i int, host string, res json.RawMessage) bool {
			var r struct{ Twice int }
			json.Unmarshal(res, &r)
			mu.Lock()
			defer mu.Unlock()
			if _, twice := results[i]; twice {
				t.Errorf("job %d: two results", i)
			}
			results[i] = r.Twice
			return false
		},
		Lost: func(host, why string) { mu.Lock(); lost = append(lost, host+": "+why); mu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if results[i] != 2*i {
			t.Errorf("job %d: result %d, want %d", i, results[i], 2*i)
		}
	}
	if len(lost) != 1 || !strings.HasPrefix(lost[0], "h1: ") {
		t.Errorf("lost: %q, want h1", lost)
	}
	hs := s.Hosts()
	if hs[0].Lost == "" || hs[1].Lost != "" || hs[0].Runs+hs[1].Runs != 20 {
		t.Errorf("hosts: %+v", hs)
	}
}

// Every host lost: the sweep stops with an error naming them.
func TestSweepAllHostsLost(t *testing.T) {
	var h fakeHost
	h = newFakeHost(t, "h1", 1, func(ctx context.Context, job json.RawMessage, dir string) (any, error) {
		go h.kill()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s := &Sweep{hosts: []*sweepConn{h.sweepConn}}
	err := s.Run(context.Background(), SweepJobs{Count: 3, Job: func(i int) any { return map[string]int{"n": i} },
		Done: func(int, string, json.RawMessage) bool { return false }})
	if !errors.Is(err, ErrHostsLost) || !strings.Contains(err.Error(), "h1: ") {
		t.Errorf("err %v: want ErrHostsLost naming h1", err)
	}
}

// A cut (until-fail): no job after the cut is handed out once it is known.
func TestSweepCut(t *testing.T) {
	h := newFakeHost(t, "h1", 1, double)
	s := &Sweep{hosts: []*sweepConn{h.sweepConn}}
	var max atomic.Int32
	err := s.Run(context.Background(), SweepJobs{Count: 0, Job: func(i int) any { return map[string]int{"n": i} },
		Done: func(i int, _ string, _ json.RawMessage) bool {
			if int32(i) > max.Load() {
				max.Store(int32(i))
			}
			return i == 5
		}})
	if err != nil {
		t.Fatal(err)
	}
	if m := max.Load(); m < 5 || m > 5+2 { // the host's room (2 × 1 core) may be out past the cut
		t.Errorf("the last job made: %d, want 5 (and at most the host's room more)", m)
	}
}

// A signal ends the worker while its input is still open (sshd's SIGHUP when the session goes):
// it returns, and its temporary directory is gone.
func TestServeSweepSignal(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	in, _ := io.Pipe() // never closed
	ctx, cancel := context.WithCancel(context.Background())
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- ServeSweep(ctx, in, &out, 1, double) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("ServeSweep: %v, want it ended by the signal", err)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temporary directory: %v", left)
	}
}
