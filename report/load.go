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
}

// Load reads a run directory. The error wraps rundir.ErrNotRun for a directory without
// cluster.json; any other error means the run cannot be read.
func Load(dir string) (*Input, error) {
	run, err := logs.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	in := &Input{Dir: dir, Run: run}
	b, err := os.ReadFile(filepath.Join(dir, rundir.VerdictFile))
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
		in.Verdict, in.VerdictFrom = check.Check(run, check.Options{}), "checked now"
	}
	in.Resources, err = readResources(filepath.Join(dir, ResourcesFile))
	if err != nil {
		in.Warnings = append(in.Warnings, err.Error())
	}
	return in, nil
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
