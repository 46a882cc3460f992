package ui

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/rundir"
)

// runsIndex answers the runs index: every run under the runs directory with its verdict (as
// `leaderlab runs` lists them).
func (s *Server) runsIndex(w http.ResponseWriter, r *http.Request) {
	rows, err := report.FindRuns(s.cfg.Runs)
	if err != nil {
		fail(w, http.StatusInternalServerError, "%v", err)
		return
	}
	if rows == nil {
		rows = []report.RunRow{}
	}
	reply(w, map[string]any{"root": s.cfg.Runs, "rows": rows})
}

// runFile serves a file of a run under the runs directory (Maelstrom's serve): a run's report.html
// is rendered first when it has none. Nothing outside the runs directory is served, symbolic links
// that lead out of it included.
func (s *Server) runFile(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	clean := path.Clean("/" + rel)[1:]
	if clean == "" || clean != rel || strings.Contains(rel, "\\") {
		fail(w, http.StatusBadRequest, "path %q: want a file inside the runs directory, e.g. /runs/<run>/report.html", rel)
		return
	}
	if path.Base(clean) == "report.html" {
		dir := filepath.Join(s.cfg.Runs, filepath.FromSlash(path.Dir(clean)))
		if _, err := os.Stat(filepath.Join(dir, "report.html")); errors.Is(err, fs.ErrNotExist) && s.inside(dir) {
			if _, err := os.Stat(filepath.Join(dir, rundir.ClusterFile)); err == nil {
				in, err := report.Load(dir)
				if err == nil {
					_, err = report.WriteFile(dir, in)
				}
				if err != nil {
					fail(w, http.StatusInternalServerError, "the report of %s could not be rendered: %v", path.Dir(clean), err)
					return
				}
			}
		}
	}
	root, err := os.OpenRoot(s.cfg.Runs)
	if err != nil {
		fail(w, http.StatusInternalServerError, "the runs directory: %v", err)
		return
	}
	defer root.Close()
	if path.Base(clean) == rundir.ClusterFile {
		fail(w, http.StatusForbidden, "%s holds the run's secret and is not served", clean)
		return
	}
	f, err := root.Open(filepath.FromSlash(clean))
	if err != nil {
		fail(w, http.StatusNotFound, "no file %s in the runs directory %s", clean, s.cfg.Runs)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		fail(w, http.StatusNotFound, "%s is not a file (want e.g. /runs/<run>/report.html or verdict.json)", clean)
		return
	}
	http.ServeContent(w, r, st.Name(), st.ModTime(), f)
}

// inside tells whether dir lies inside the runs directory.
func (s *Server) inside(dir string) bool {
	rel, err := filepath.Rel(s.cfg.Runs, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
