package bench

// The benches' HTML page: OUT/index.html, one self-contained file (inline CSS and SVG, no script,
// nothing loaded from elsewhere) with the command line, the configuration, the summary tables, the
// charts, and a link to every run's report.html (or its verdict.json) relative to the page, so that
// the directory can be moved or archived whole.

import (
	"bytes"
	"html/template"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/leaderlab/leaderlab/rundir"
)

// PageFile is the page's name in the bench's directory.
const PageFile = "index.html"

// Page is a bench's page.
type Page struct {
	Title    string
	Command  string // the command line, shell-quoted (ShellJoin)
	Config   []KV   // the configuration, in order
	Notes    []string
	Sections []Section
}

// KV is one line of the configuration.
type KV struct{ Key, Value string }

// Section is a heading with, in this order, its text, its table, its charts and its runs.
type Section struct {
	Title  string
	Text   []string // paragraphs
	Table  *Table
	Charts []string // SVG from this package's charts (CDF, Scatter, Bars): inserted as they are
	// Runs link each run of the section; RunsTitle, when set, heads the list.
	RunsTitle string
	Runs      []RunLink
}

// Table is a summary table.
type Table struct {
	Header []string
	Rows   []Row
}

// Row is a table row; Class ("fail", "limit", "pass", "total" or "") colours it.
type Row struct {
	Cells []string
	Class string
}

// RunLink is one run: Name is what the link says, Dir its run directory, Status "pass", "fail",
// "limit" (failed only under the algorithm's declared limits) or "inconclusive" (still electing
// when the run ended), Note a tooltip and a line in the list for failed runs.
type RunLink struct {
	Name   string
	Dir    string
	Status string
	Note   string
}

// WritePage writes the page as dir/index.html and returns its path. Each run's link goes to its
// report.html when the directory has one, else to its verdict.json; a run with neither (one
// the simulator judged in memory and did not write) is listed without a link.
func WritePage(dir string, p Page) (string, error) {
	b, err := RenderPage(dir, p)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, PageFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return path, nil
}

// RenderPage renders the page to be written in dir.
func RenderPage(dir string, p Page) ([]byte, error) {
	v := pageView{Page: p}
	for _, s := range p.Sections {
		sv := sectionView{Section: s}
		for _, c := range s.Charts {
			sv.SVG = append(sv.SVG, template.HTML(c)) // the chart kit escapes every text it writes
		}
		for _, r := range s.Runs {
			lv := linkView{RunLink: r, Href: RunHref(dir, r.Dir)}
			switch {
			case lv.Href == "":
				sv.Unlinked++
			case strings.HasSuffix(string(lv.Href), "/"+rundir.ReportFile) || string(lv.Href) == rundir.ReportFile:
				sv.Reports++
			default:
				sv.Verdicts++
			}
			if r.Status != "pass" && r.Status != "" {
				sv.Failed = append(sv.Failed, lv)
			}
			sv.Links = append(sv.Links, lv)
		}
		sv.Collapse = len(sv.Links) > 60
		v.Sections = append(v.Sections, sv)
	}
	var buf bytes.Buffer
	if err := pageTemplate().Execute(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type pageView struct {
	Page
	Sections []sectionView
}

type sectionView struct {
	Section
	SVG                         []template.HTML
	Links, Failed               []linkView
	Reports, Verdicts, Unlinked int
	Collapse                    bool
}

type linkView struct {
	RunLink
	Href template.URL
}

// RunHref is the relative link from a page in pageDir to run's report.html, or its verdict.json,
// or "" when it has neither. Each path segment is escaped, and a first segment that could be read
// as a URL scheme ("a:b") is preceded by "./".
func RunHref(pageDir, run string) template.URL {
	if run == "" {
		return ""
	}
	for _, f := range []string{rundir.ReportFile, rundir.VerdictFile} {
		path := filepath.Join(run, f)
		if st, err := os.Stat(path); err != nil || st.IsDir() {
			continue
		}
		rel, err := filepath.Rel(pageDir, path)
		if err != nil {
			// Not under the page (another volume): an absolute file URL is all there is.
			abs, _ := filepath.Abs(path)
			return template.URL((&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String())
		}
		segs := strings.Split(filepath.ToSlash(rel), "/")
		for i, s := range segs {
			segs[i] = url.PathEscape(s)
		}
		href := strings.Join(segs, "/")
		if strings.Contains(segs[0], ":") {
			href = "./" + href
		}
		return template.URL(href)
	}
	return ""
}

// ShellJoin quotes args for a POSIX shell where needed, so that the command line on a page can be
// pasted back.
func ShellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=+./:,@%") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// isNumeric tells whether a table cell holds a figure (it is then right-aligned).
func isNumeric(s string) bool {
	s = strings.TrimSuffix(strings.TrimSuffix(s, "%"), " ms")
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || s == "n/a" || s == "-"
}

// pageTemplate is parsed on first use, not when any command of the binary starts.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{"numeric": isNumeric}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; background: #fafafa; margin: 0; }
main { max-width: 1340px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 6px; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 12.5px; }
pre.cmd { background: #f0f0f0; border: 1px solid #ddd; border-radius: 4px; padding: 8px 10px; white-space: pre-wrap; word-break: break-all; }
dl.config { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
dl.config dt { color: #555; }
dl.config dd { margin: 0; }
table.summary { border-collapse: collapse; margin: 8px 0 4px; background: #fff; }
table.summary th, table.summary td { border: 1px solid #ddd; padding: 4px 10px; text-align: left; vertical-align: top; }
table.summary th { background: #f0f0f0; font-weight: 600; }
table.summary td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.fail td { background: #fdecea; }
tr.limit td { background: #fff4e0; }
tr.total td { font-weight: 600; background: #f6f6f6; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 16px; margin: 12px 0; }
.charts figure { margin: 0; background: #fff; border: 1px solid #e2e2e2; border-radius: 4px; padding: 6px; }
.charts svg { width: 100%; height: auto; display: block; }
ul.runs { list-style: none; padding: 0; margin: 6px 0; display: flex; flex-wrap: wrap; gap: 4px; }
ul.runs li a, ul.runs li span { display: inline-block; padding: 1px 7px; border-radius: 10px; border: 1px solid #cfe3cf; background: #eef7ee; color: #1f5f1f; text-decoration: none; font-size: 12.5px; }
ul.runs li.fail a, ul.runs li.fail span { background: #fdecea; border-color: #f1b0aa; color: #9b1c13; }
ul.runs li.limit a, ul.runs li.limit span { background: #fff4e0; border-color: #f0cf8e; color: #7a4d00; }
ul.runs li.inconclusive a, ul.runs li.inconclusive span { background: #f0f0f0; border-color: #bbb; color: #555; }
ul.runs li span { opacity: 0.75; }
ul.failed { margin: 4px 0 8px; padding-left: 20px; }
ul.failed li { margin: 2px 0; }
.muted { color: #666; }
.status-fail { color: #9b1c13; font-weight: 600; }
.status-limit { color: #7a4d00; font-weight: 600; }
.status-inconclusive { color: #555; font-weight: 600; }
</style>
</head>
<body>
<main>
<h1>{{.Title}}</h1>
{{if .Command}}<pre class="cmd">{{.Command}}</pre>{{end}}
{{if .Config}}<dl class="config">{{range .Config}}<dt>{{.Key}}</dt><dd>{{.Value}}</dd>{{end}}</dl>{{end}}
{{range .Notes}}<p class="muted">{{.}}</p>
{{end}}
{{range .Sections}}<section>
<h2>{{.Title}}</h2>
{{range .Text}}<p>{{.}}</p>
{{end}}{{with .Table}}<table class="summary">
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr{{if .Class}} class="{{.Class}}"{{end}}>{{range .Cells}}<td{{if numeric .}} class="num"{{end}}>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table>
{{end}}{{if .SVG}}<div class="charts">
{{range .SVG}}<figure>{{.}}</figure>
{{end}}</div>
{{end}}{{if .Links}}{{if .RunsTitle}}<h3>{{.RunsTitle}}</h3>
{{end}}<p class="muted">{{len .Links}} runs{{if .Reports}}; {{.Reports}} link their report.html{{end}}{{if .Verdicts}}; {{.Verdicts}} link their verdict.json (<code>leaderlab report DIR</code> renders a report){{end}}{{if .Unlinked}}; {{.Unlinked}} have no directory (passed in the simulator, judged in memory){{end}}.</p>
{{if .Failed}}<ul class="failed">
{{range .Failed}}<li><span class="status-{{.Status}}">{{if eq .Status "limit"}}LIMIT{{else if eq .Status "inconclusive"}}INCONCLUSIVE{{else}}FAIL{{end}}</span> {{if .Href}}<a href="{{.Href}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}{{if .Note}}: {{.Note}}{{end}}</li>
{{end}}</ul>
{{end}}{{if .Collapse}}<details><summary>every run</summary>{{end}}<ul class="runs">
{{range .Links}}<li class="{{.Status}}">{{if .Href}}<a href="{{.Href}}"{{if .Note}} title="{{.Note}}"{{end}}>{{.Name}}</a>{{else}}<span{{if .Note}} title="{{.Note}}"{{end}}>{{.Name}}</span>{{end}}</li>
{{end}}</ul>{{if .Collapse}}</details>{{end}}
{{end}}</section>
{{end}}</main>
</body>
</html>
`))
})
