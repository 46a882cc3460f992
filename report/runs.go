package report

// The runs index: every run directory under a root, with its verdict (leaderlab runs, and the runs
// view of leaderlab ui).

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/rundir"
)

// RunRow is one run of `leaderlab runs` and of the UI's runs index: what its cluster.json and
// verdict.json say.
type RunRow struct {
	Dir        string   `json:"dir"` // relative to the directory listed
	Created    string   `json:"created"`
	World      string   `json:"world"`
	Algo       string   `json:"algo"`
	Nodes      int      `json:"nodes"`
	Topology   string   `json:"topology"`
	Seed       int64    `json:"seed"`
	Verdict    string   `json:"verdict"` // PASS, FAIL, INCONCLUSIVE, or "none" (no verdict.json: a run cut short)
	Leader     *int     `json:"leader"`
	Failovers  int      `json:"failovers"`
	FailoverMS *float64 `json:"failover_max_ms"` // the longest measured failover
	Violations []string `json:"violations"`      // the failed properties ("uniqueness (limit)" when declared)
	Report     string   `json:"report,omitempty"`
	Problem    string   `json:"problem,omitempty"` // why the run could not be read
}

// FindRuns walks root for run directories (those holding cluster.json), not descending into one,
// and reads each one's cluster.json and verdict.json. Symbolic links (runs/latest) are not followed,
// so no run is listed twice.
func FindRuns(root string) ([]RunRow, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (want a directory of runs, e.g. runs/)", root, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (want a directory of runs, e.g. runs/)", root)
	}
	var rows []RunRow
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root {
				return err
			}
			rows = append(rows, RunRow{Dir: relTo(root, path), Verdict: "none", Problem: err.Error()})
			return fs.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, rundir.ClusterFile)); err != nil {
			return nil
		}
		rows = append(rows, ReadRunRow(root, path))
		return fs.SkipDir
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", root, err)
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Created != rows[j].Created {
			return rows[i].Created < rows[j].Created
		}
		return rows[i].Dir < rows[j].Dir
	})
	return rows, nil
}

func relTo(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// ReadRunRow reads one run directory; what cannot be read is said in Problem.
func ReadRunRow(root, dir string) RunRow {
	r := RunRow{Dir: relTo(root, dir), Verdict: "none"}
	c, err := rundir.Load(dir)
	if err != nil {
		r.Problem = err.Error()
		return r
	}
	r.Created, r.Algo, r.Nodes, r.Topology, r.Seed = c.Created, c.Algo, len(c.Nodes), c.Topology, c.Seed
	r.World = c.World
	if r.World == "" {
		r.World = rundir.WorldReal
	}
	if r.World == rundir.WorldSim {
		// A simulated run's cluster.json carries a fixed time (same seed, same bytes): when it was
		// made is when the file was written.
		if st, err := os.Stat(filepath.Join(dir, rundir.ClusterFile)); err == nil {
			r.Created = st.ModTime().UTC().Format(time.RFC3339)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err == nil {
		r.Report = filepath.Join(r.Dir, "report.html")
	}
	v, err := check.ReadVerdict(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.Problem = err.Error()
		}
		return r
	}
	r.Verdict = strings.ToUpper(v.Result()) // PASS, FAIL, INCONCLUSIVE
	r.Leader = v.Leader
	r.Failovers = len(v.Metrics.Failovers)
	for _, f := range v.Metrics.Failovers {
		if f.MS != nil && (r.FailoverMS == nil || *f.MS > *r.FailoverMS) {
			ms := *f.MS
			r.FailoverMS = &ms
		}
	}
	for _, p := range v.Properties {
		if !p.OK {
			name := p.Name
			if p.Limit != "" {
				name += " (limit)"
			}
			r.Violations = append(r.Violations, name)
		}
	}
	return r
}
