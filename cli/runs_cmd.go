package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/rundir"
)

// RunRow is one run of `leaderlab runs`.
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

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "an index of the runs under a directory (nested too), with their verdicts",
		ArgsUsage: "[DIR]",
		Description: "Lists every run directory under DIR (default runs/; a directory holding cluster.json, found at any depth,\n" +
			"so the runs of a bench are listed too), oldest first: when it was made, simulated or real, the algorithm,\n" +
			"N, the topology, the verdict, the agreed leader, the failovers and the longest, the failed properties and\n" +
			"the seed. --html writes DIR/runs.html linking each run's report (or its verdict.json). Exit 0 when every\n" +
			"run listed passed, 1 when one failed or has no verdict, 2 when DIR cannot be read.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "html", Usage: "also write DIR/runs.html: the table, linking each run's report.html (render missing ones with leaderlab report) or verdict.json"},
			&cli.BoolFlag{Name: "json", Usage: "print the rows as JSON on stdout instead of the table"},
		},
		Action: func(c *cli.Context) error {
			// The flags may also come after the directory (`leaderlab runs runs/ --html`), which the
			// flag parser leaves among the arguments.
			html, asJSON := c.Bool("html"), c.Bool("json")
			var dirs []string
			for _, a := range c.Args().Slice() {
				switch a {
				case "--html", "-html":
					html = true
				case "--json", "-json":
					asJSON = true
				default:
					if strings.HasPrefix(a, "-") {
						return cli.Exit(fmt.Sprintf("runs: unknown flag %q (accepted: --html, --json)", a), ExitUnusable)
					}
					dirs = append(dirs, a)
				}
			}
			if len(dirs) > 1 {
				return cli.Exit(fmt.Sprintf("runs takes one directory at most, got %q", dirs), ExitUnusable)
			}
			root := "runs"
			if len(dirs) == 1 {
				root = dirs[0]
			}
			rows, err := findRuns(root)
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			bad, unknown := 0, 0
			for _, r := range rows {
				switch r.Verdict {
				case "PASS":
				case "INCONCLUSIVE":
					unknown++
				default:
					bad++
				}
			}
			if asJSON {
				b, _ := json.MarshalIndent(rows, "", "  ")
				fmt.Println(string(b))
			} else {
				printRuns(os.Stdout, rows)
			}
			if html {
				path := filepath.Join(root, "runs.html") // not index.html: a bench's page is its directory's index
				if err := writeRunsHTML(path, root, rows); err != nil {
					return cli.Exit(fmt.Sprintf("--html: %v", err), ExitUnusable)
				}
				fmt.Fprintf(os.Stderr, "index: %s\n", path)
			}
			switch {
			case bad > 0:
				return cli.Exit("", ExitViolation)
			case unknown > 0:
				return cli.Exit("", ExitInconclusive)
			}
			return nil
		},
	}
}

// findRuns walks root for run directories (those holding cluster.json), not descending into one,
// and reads each one's cluster.json and verdict.json. Symbolic links (runs/latest) are not followed,
// so no run is listed twice.
func findRuns(root string) ([]RunRow, error) {
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
			rows = append(rows, RunRow{Dir: rel(root, path), Verdict: "none", Problem: err.Error()})
			return fs.SkipDir
		}
		if !d.IsDir() {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, rundir.ClusterFile)); err != nil {
			return nil
		}
		rows = append(rows, readRunRow(root, path))
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

func rel(root, path string) string {
	if r, err := filepath.Rel(root, path); err == nil {
		return r
	}
	return path
}

// readRunRow reads one run directory; what cannot be read is said in Problem.
func readRunRow(root, dir string) RunRow {
	r := RunRow{Dir: rel(root, dir), Verdict: "none"}
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

// runCells are a row's columns for the table and the page.
func (r RunRow) cells() []string {
	leader, fo := "-", "-"
	if r.Leader != nil {
		leader = strconv.Itoa(*r.Leader)
	}
	if r.Failovers > 0 {
		fo = strconv.Itoa(r.Failovers)
		if r.FailoverMS != nil {
			fo += fmt.Sprintf(" (≤ %.0f ms)", *r.FailoverMS)
		} else {
			fo += " (one never ended)"
		}
	}
	viol := strings.Join(r.Violations, ", ")
	if r.Problem != "" {
		viol = "unreadable: " + r.Problem
	}
	if viol == "" {
		viol = "-"
	}
	created := r.Created
	if len(created) >= 19 {
		created = strings.Replace(created[:19], "T", " ", 1)
	}
	return []string{created, r.World, r.Algo, strconv.Itoa(r.Nodes), r.Topology, r.Verdict, leader, fo, viol, strconv.FormatInt(r.Seed, 10), r.Dir}
}

var runsHeader = []string{"made (UTC)", "world", "algo", "n", "topology", "verdict", "leader", "failovers", "failed properties", "seed", "dir"}

func printRuns(w io.Writer, rows []RunRow) {
	table := [][]string{runsHeader}
	for _, r := range rows {
		table = append(table, r.cells())
	}
	width := make([]int, len(runsHeader))
	for _, row := range table {
		for i, cell := range row {
			width[i] = max(width[i], len([]rune(cell)))
		}
	}
	for _, row := range table {
		var b strings.Builder
		for i, cell := range row {
			b.WriteString(cell)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", width[i]-len([]rune(cell))+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
	pass, fail, unknown, none := 0, 0, 0, 0
	for _, r := range rows {
		switch r.Verdict {
		case "PASS":
			pass++
		case "FAIL":
			fail++
		case "INCONCLUSIVE":
			unknown++
		default:
			none++
		}
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed, ", plural(len(rows), "run", "runs"), pass, fail)
	if unknown > 0 {
		fmt.Fprintf(w, "%d inconclusive, ", unknown)
	}
	fmt.Fprintf(w, "%d without a verdict\n", none)
}

var runsPage = template.Must(template.New("runs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>leaderlab runs — {{.Root}}</title>
<style>
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse}th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0;cursor:pointer}td.v{font-weight:600}
tr.PASS td.v{color:#1a7f37}tr.FAIL td.v{color:#c62828}tr.INCONCLUSIVE td.v{color:#b26a00}tr.none td.v{color:#888}
input{margin:.5em 0;padding:.3em;width:24em}
</style></head><body>
<h1>Runs under {{.Root}}</h1>
<p>{{len .Rows}} runs: {{.Pass}} passed, {{.Fail}} failed,{{if .Inconclusive}} {{.Inconclusive}} inconclusive,{{end}} {{.None}} without a verdict. Click a column to sort; type to filter.</p>
<input id="f" placeholder="filter (algo, verdict, property, seed…)">
<table id="t"><thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}{{$row := .}}<tr class="{{.Row.Verdict}}">{{range $i, $c := .Cells}}<td{{if eq $i 5}} class="v"{{end}}>{{if eq $i 10}}<a href="{{call $.Link $row}}">{{$c}}</a>{{else}}{{$c}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table>
<script>
const t=document.getElementById('t'),f=document.getElementById('f');
f.oninput=()=>{const q=f.value.toLowerCase();for(const r of t.tBodies[0].rows)r.style.display=r.textContent.toLowerCase().includes(q)?'':'none'};
t.tHead.onclick=e=>{const i=[...e.target.parentNode.children].indexOf(e.target);if(i<0)return;
const rows=[...t.tBodies[0].rows],dir=t.dataset.col==i?-1:1;t.dataset.col=dir>0?i:'';
const num=s=>/^-?[0-9.]+$/.test(s)?parseFloat(s):NaN;
rows.sort((a,b)=>{const x=a.cells[i].textContent,y=b.cells[i].textContent,p=num(x),q=num(y);
return dir*(isNaN(p)||isNaN(q)?x.localeCompare(y):p-q)});rows.forEach(r=>t.tBodies[0].appendChild(r))};
</script></body></html>
`))

// writeRunsHTML writes the index page, whole or not at all.
func writeRunsHTML(path, root string, rows []RunRow) error {
	type pageRow struct {
		Row   RunRow
		Cells []string
	}
	page := struct {
		Root             string
		Header           []string
		Rows             []pageRow
		Pass, Fail, None int
		Inconclusive     int
		Link             func(pageRow) string
	}{Root: root, Header: runsHeader}
	for _, r := range rows {
		page.Rows = append(page.Rows, pageRow{r, r.cells()})
		switch r.Verdict {
		case "PASS":
			page.Pass++
		case "FAIL":
			page.Fail++
		case "INCONCLUSIVE":
			page.Inconclusive++
		default:
			page.None++
		}
	}
	page.Link = func(r pageRow) string {
		if r.Row.Report != "" {
			return filepath.ToSlash(r.Row.Report)
		}
		return filepath.ToSlash(filepath.Join(r.Row.Dir, rundir.VerdictFile))
	}
	return writeAtomic(path, func(w io.Writer) error { return runsPage.Execute(w, page) })
}
