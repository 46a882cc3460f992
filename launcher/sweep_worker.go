package launcher

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
)

// The sweep worker's protocol (`leaderlab sweep-worker`, run over SSH by a sweep over hosts): one
// JSON document a line each way. The worker first says hello, then reads job lines and answers
// each with one result line, in the order the jobs end (not the order they came):
//
//	worker → sweep  {"hello": {"cpus": 8, "goarch": "amd64", "machine": "<boot ID>"}}
//	sweep → worker  {"id": 12, "job": {...}}
//	worker → sweep  {"id": 12, "result": {...}}   or   {"id": 12, "error": "..."}
//	worker → sweep  {"line": 3, "error": "..."}    a line that is not a job: what was wrong with it
//
// A job and its result are the caller's (bench's job kinds); the worker only carries them. It runs
// as many jobs at once as it has cores, each in a directory of its own under a temporary
// directory that it removes when it ends, and it ends when its input closes (the sweep is done, or
// the SSH session died): the simulator runs in its process, so nothing outlives it.

// SweepHello is the worker's first line: what its host offers.
type SweepHello struct {
	CPUs   int    `json:"cpus"`
	GOARCH string `json:"goarch"`
	// Machine is the kernel's boot ID: hosts that share it share one machine's cores (the
	// namespace lab's).
	Machine string `json:"machine"`
}

// sweepLine is every line of the protocol, both ways.
type sweepLine struct {
	Hello  *SweepHello     `json:"hello,omitempty"`
	ID     *int            `json:"id,omitempty"`
	Line   int             `json:"line,omitempty"`
	Job    json.RawMessage `json:"job,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// SweepDo makes one job in dir (an empty directory of its own) and returns its result, which the
// worker sends as JSON; an error is a job that could not be decoded or made at all.
type SweepDo func(ctx context.Context, job json.RawMessage, dir string) (any, error)

// maxSweepLine bounds a job line (a job is a configuration: a few kilobytes).
const maxSweepLine = 1 << 20

// ServeSweep is the worker: hello, then the jobs of in, up to workers (0: every core) at a time,
// each made by do, the results written to out. It returns when in ends and the jobs taken are
// done, or when out cannot be written (the sweep is gone).
func ServeSweep(ctx context.Context, in io.Reader, out io.Writer, workers int, do SweepDo) error {
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	tmp, err := os.MkdirTemp("", "leaderlab-sweep-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var wmu sync.Mutex
	var werr error
	send := func(l sweepLine) bool {
		b, err := json.Marshal(l)
		if err != nil {
			b, _ = json.Marshal(sweepLine{ID: l.ID, Error: "the result cannot be written as JSON: " + err.Error()})
		}
		wmu.Lock()
		defer wmu.Unlock()
		if werr == nil {
			_, werr = out.Write(append(b, '\n'))
		}
		return werr == nil
	}
	if !send(sweepLine{Hello: &SweepHello{CPUs: workers, GOARCH: runtime.GOARCH, Machine: localMachine()}}) {
		return fmt.Errorf("sweep worker: writing hello: %w", werr)
	}
	jobs := make(chan sweepLine)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for l := range jobs {
				dir := filepath.Join(tmp, strconv.Itoa(*l.ID))
				res, err := sweepOne(ctx, do, l.Job, dir)
				os.RemoveAll(dir)
				if err != nil {
					send(sweepLine{ID: l.ID, Error: err.Error()})
				} else {
					b, merr := json.Marshal(res)
					if merr != nil {
						send(sweepLine{ID: l.ID, Error: "the result cannot be written as JSON: " + merr.Error()})
					} else {
						send(sweepLine{ID: l.ID, Result: b})
					}
				}
			}
		}()
	}
	// The input is read apart, so that a signal (ctx) ends the worker while its input is still
	// open: it finishes the jobs in hand and removes its directory.
	lines, scanErr := make(chan []byte), make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), maxSweepLine)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
		scanErr <- sc.Err()
		close(lines)
	}()
read:
	for n := 1; ; n++ {
		var b []byte
		var ok bool
		select {
		case b, ok = <-lines:
			if !ok {
				break read
			}
		case <-ctx.Done():
			break read
		}
		l, why := parseSweepJob(b)
		if why != "" {
			send(sweepLine{ID: l.ID, Line: n, Error: why})
			continue
		}
		select {
		case jobs <- l:
		case <-ctx.Done():
			break read
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-scanErr:
		if err != nil {
			return fmt.Errorf("sweep worker: reading jobs: %w", err)
		}
	default:
	}
	if werr != nil {
		return fmt.Errorf("sweep worker: writing results: %w", werr)
	}
	return ctx.Err()
}

// parseSweepJob reads one job line; why says what is wrong with a line that is not a job.
func parseSweepJob(b []byte) (sweepLine, string) {
	var l sweepLine
	if err := json.Unmarshal(b, &l); err != nil {
		return sweepLine{}, fmt.Sprintf("not a job line: %v (want {\"id\": N, \"job\": {...}})", err)
	}
	switch {
	case l.ID == nil:
		return l, "a job line without an id (want {\"id\": N, \"job\": {...}})"
	case *l.ID < 0:
		return l, fmt.Sprintf("id %d: want 0 or more", *l.ID)
	case len(l.Job) == 0 || string(l.Job) == "null":
		return l, fmt.Sprintf("job %d has no job (want {\"id\": N, \"job\": {...}})", *l.ID)
	}
	return l, ""
}

// sweepOne makes one job, a panic in it turned into its error (the worker's other jobs go on).
func sweepOne(ctx context.Context, do SweepDo, job json.RawMessage, dir string) (res any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the job panicked: %v", p)
		}
	}()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return do(ctx, job, dir)
}
