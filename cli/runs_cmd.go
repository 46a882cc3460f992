package cli

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/rundir"
)

// RunRow is one run of `leaderlab runs` (report.RunRow: the UI lists runs alike).
type RunRow = report.RunRow

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
			rows, err := report.FindRuns(root)
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

// runCells are a row's columns for the table and the page.
func runCells(r RunRow) []string {
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
		table = append(table, runCells(r))
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

// runsPage is parsed on first use, not when any command of the binary starts.
var runsPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("runs").Parse(`<!doctype html>
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
})

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
		page.Rows = append(page.Rows, pageRow{r, runCells(r)})
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
	return writeAtomic(path, func(w io.Writer) error { return runsPage().Execute(w, page) })
}
