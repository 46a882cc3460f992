package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// ResourcesFile is RUN/resources.jsonl, the launcher's per-node samples (docs/DESIGN.md, "The run
// directory (the contract)").
const ResourcesFile = "resources.jsonl"

// Sample is one line of resources.jsonl. The report reads only the fields it draws; it does not import
// the launcher for them (the file is the contract, not the launcher's type).
type Sample struct {
	TS   int64   `json:"ts"`
	Node int     `json:"node"`
	Inc  int     `json:"inc"`
	Pid  int     `json:"pid"`
	RSS  uint64  `json:"rss"`
	CPU  float64 `json:"cpu"`
	FDs  int32   `json:"fds"`
}

// Input is what a report is made of.
type Input struct {
	Dir     string
	Run     *logs.Run
	Verdict *check.Verdict
	// VerdictFrom says where the verdict came from: "verdict.json" or "checked now".
	VerdictFrom string
	// Resources are the samples of resources.jsonl (nil when the run has none).
	Resources []Sample
	// Warnings are things the report could not use (a bad verdict.json, a bad resources line).
	Warnings []string
	// long, for a run of more than DrawWhole events, streams its logs (long.go): Run then holds
	// what the diagram draws of it.
	long *longRun
}

// Load reads a run directory. The error wraps rundir.ErrNotRun for a directory without
// cluster.json; any other error means the run cannot be read. A run of more than DrawWhole events
// is streamed, not read whole: its diagram draws windows of it (long.go).
func Load(dir string) (*Input, error) {
	s, err := logs.OpenStream(dir)
	if err != nil {
		return nil, err
	}
	events, err := countLines(s)
	if err == nil && events > drawWhole {
		return loadLong(s, events)
	}
	run, err := logs.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	in := &Input{Dir: dir, Run: run}
	in.verdict(func() (*check.Verdict, error) { return check.Check(run, check.Options{}), nil })
	var rerr error
	in.Resources, rerr = readResources(filepath.Join(dir, ResourcesFile))
	if rerr != nil {
		in.Warnings = append(in.Warnings, rerr.Error())
	}
	return in, nil
}

// loadLong reads a long run: its verdict (verdict.json, or the streaming checker's), then what its
// diagram draws.
func loadLong(s *logs.Stream, events int) (*Input, error) {
	dir := s.Run.Dir
	in := &Input{Dir: dir}
	if err := in.verdict(func() (*check.Verdict, error) { return check.CheckStream(s, check.Options{}) }); err != nil {
		return nil, err
	}
	// The checker, when it just ran, read every line of the logs and checked them: their vector
	// clocks can be passed over; otherwise they are checked now, as ReadRun would.
	if in.VerdictFrom == rundir.VerdictFile {
		s.VC = logs.VCCheck
	}
	in.long = &longRun{s: s, events: events, windows: drawWindows(in.Verdict)}
	run, err := in.long.drawn()
	if err != nil {
		if canonical := s.Err(); canonical != nil {
			err = canonical
		}
		return nil, err
	}
	in.Run = run
	drawn := 0
	for _, nl := range run.Nodes {
		drawn += len(nl.Events)
	}
	in.Warnings = append(in.Warnings, in.long.longNote(drawn))
	var rerr error
	in.Resources, rerr = readResources(filepath.Join(dir, ResourcesFile))
	if rerr != nil {
		in.Warnings = append(in.Warnings, rerr.Error())
	}
	return in, nil
}

// verdict takes RUN/verdict.json, or, when there is none or it cannot be read, check's.
func (in *Input) verdict(checkNow func() (*check.Verdict, error)) error {
	b, err := os.ReadFile(filepath.Join(in.Dir, rundir.VerdictFile))
	switch {
	case err == nil:
		var v check.Verdict
		if jerr := json.Unmarshal(b, &v); jerr != nil {
			in.Warnings = append(in.Warnings, fmt.Sprintf("verdict.json is not valid (%v): the run was checked again", jerr))
		} else {
			in.Verdict, in.VerdictFrom = &v, rundir.VerdictFile
		}
	case !errors.Is(err, os.ErrNotExist):
		in.Warnings = append(in.Warnings, fmt.Sprintf("verdict.json cannot be read (%v): the run was checked again", err))
	}
	if in.Verdict == nil {
		v, err := checkNow()
		if err != nil {
			return err
		}
		in.Verdict, in.VerdictFrom = v, "checked now"
	}
	return nil
}

// readResources reads resources.jsonl; a missing file is no error. A bad line is skipped and counted
// (the samples are a picture, not evidence).
func readResources(path string) ([]Sample, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("resources.jsonl cannot be read: %w", err)
	}
	defer f.Close()
	var out []Sample
	bad, first := 0, 0
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var s Sample
			if json.Unmarshal(line, &s) != nil || s.TS == 0 || s.Node < 1 {
				if bad == 0 {
					first = n
				}
				bad++
			} else {
				out = append(out, s)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("resources.jsonl: %w", err)
		}
	}
	if bad > 0 {
		return out, fmt.Errorf("resources.jsonl: %d bad line(s) skipped, the first is line %d", bad, first)
	}
	return out, nil
}
