package bench

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/internal/svgchart"
	"github.com/leaderlab/leaderlab/rundir"
)

// mkRun makes a run directory under dir holding the given files.
func mkRun(t *testing.T, dir, name string, files ...string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(d, f), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

var hrefRe = regexp.MustCompile(`href="([^"]*)"`)

// hrefs lists the page's links, unescaped as a browser would read them.
func hrefs(page string) []string {
	var out []string
	for _, m := range hrefRe.FindAllStringSubmatch(page, -1) {
		out = append(out, strings.NewReplacer("&amp;", "&", "&#34;", `"`, "&#39;", "'", "&lt;", "<", "&gt;", ">").Replace(m[1]))
	}
	return out
}

// The page links each run's report.html, else its verdict.json, relative to itself; a run with
// neither gets no link; every text is escaped; and nothing comes from the network.
func TestWritePage(t *testing.T) {
	dir := t.TempDir()
	withReport := mkRun(t, dir, "kill-00", rundir.ReportFile, rundir.VerdictFile)
	verdictOnly := mkRun(t, dir, "kill-01", rundir.VerdictFile)
	spaced := mkRun(t, dir, "my run #1", rundir.VerdictFile)
	colon := mkRun(t, dir, "javascript:alert(1)", rundir.VerdictFile)
	nested := mkRun(t, filepath.Join(dir, "sub"), "pause-00", rundir.VerdictFile)
	missing := filepath.Join(dir, "never-written")
	nasty := `<script>alert("x")</script>&`
	p := Page{
		Title:   "bench " + nasty,
		Command: ShellJoin([]string{"leaderlab", "bench", "failover", "--out", "a dir", "--algo", "it's"}),
		Config:  []KV{{Key: nasty, Value: nasty}},
		Notes:   []string{nasty},
		Sections: []Section{{
			Title: nasty,
			Text:  []string{nasty},
			Table: &Table{Header: []string{"fault", nasty}, Rows: []Row{{Cells: []string{nasty, "12.5"}, Class: "fail"}}},
			Charts: []string{svgchart.CDF{Title: nasty, Series: []svgchart.Series{{Name: nasty, Values: []float64{1, 2}}}}.SVG(),
				svgchart.Scatter{Series: []svgchart.ScatterSeries{{Name: "s", Points: []svgchart.Point{{X: 0, Y: 1, Href: string(RunHref(dir, withReport))}}}}}.SVG()},
			Runs: []RunLink{
				{Name: "kill-00", Dir: withReport, Status: "pass"},
				{Name: "kill-01 " + nasty, Dir: verdictOnly, Status: "fail", Note: nasty},
				{Name: "spaced", Dir: spaced, Status: "limit", Note: "declared"},
				{Name: "colon", Dir: colon, Status: "pass"},
				{Name: "nested", Dir: nested, Status: "pass"},
				{Name: "missing", Dir: missing, Status: "pass"},
			},
		}},
	}
	path, err := WritePage(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, PageFile) {
		t.Errorf("path %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if strings.Contains(page, "<script") || strings.Contains(page, `alert("x")`) {
		t.Errorf("unescaped text in the page:\n%s", page)
	}
	if !strings.Contains(page, "&lt;script&gt;") {
		t.Error("the escaped text is missing")
	}
	got := hrefs(page)
	// The scatter's point, then the failed list (kill-01, spaced), then every run's chip.
	want := []string{"kill-00/report.html", "kill-01/verdict.json", "my%20run%20%231/verdict.json",
		"kill-00/report.html", "kill-01/verdict.json", "my%20run%20%231/verdict.json", "./javascript:alert%281%29/verdict.json", "sub/pause-00/verdict.json"}
	if !slices.Equal(got, want) {
		t.Errorf("links\n got %q\nwant %q", got, want)
	}
	for _, h := range got {
		if filepath.IsAbs(h) || strings.Contains(h, dir) || strings.Contains(h, "..") {
			t.Errorf("link %q is not relative to the page", h)
		}
		// Every link resolves, from the page's directory, to a file there.
		f := strings.NewReplacer("%20", " ", "%23", "#", "%28", "(", "%29", ")").Replace(h)
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f))); err != nil {
			t.Errorf("link %q: %v", h, err)
		}
	}
	if !strings.Contains(page, `<span>missing</span>`) || !strings.Contains(page, "1 have no directory") {
		t.Error("the run with no directory should be listed without a link")
	}
	if !strings.Contains(page, "1 link their report.html") || !strings.Contains(page, "4 link their verdict.json") {
		t.Error("the links' summary is wrong")
	}
	if !strings.Contains(page, `<pre class="cmd">leaderlab bench failover --out &#39;a dir&#39; --algo &#39;it&#39;\&#39;&#39;s&#39;</pre>`) {
		t.Errorf("command line not quoted for a shell: %s", regexp.MustCompile(`<pre class="cmd">.*</pre>`).FindString(page))
	}
	// Self-contained: no scripts, no stylesheets or images from elsewhere, no URL but the SVG
	// namespace's.
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "@import", "src=", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q", bad)
		}
	}
	if n, ns := strings.Count(page, "://"), strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`); n != ns {
		t.Errorf("%d URLs with a scheme, %d of them SVG namespaces", n, ns)
	}
	if !strings.Contains(page, `<td class="num">12.5</td>`) || !strings.Contains(page, `<tr class="fail">`) {
		t.Error("table cells or row classes are missing")
	}
	if again, _ := RenderPage(dir, p); string(again) != page {
		t.Error("the same page rendered twice differs")
	}
}

func TestShellJoin(t *testing.T) {
	for in, want := range map[string]string{"plain": "plain", "--n=5,8": "--n=5,8", "a b": "'a b'", "": "''", "it's": `'it'\''s'`, "$HOME": "'$HOME'"} {
		if got := ShellJoin([]string{in}); got != want {
			t.Errorf("ShellJoin(%q) = %q, want %q", in, got, want)
		}
	}
}

// The failover page on made-up trials: the table's figures, failed trials in the scatter, a
// section of runs per fault.
func TestFailoverPage(t *testing.T) {
	dir := t.TempDir()
	var trials []FailoverTrial
	for i := range 10 {
		d := mkRun(t, dir, "kill-0"+string(rune('0'+i)), rundir.VerdictFile)
		trials = append(trials, FailoverTrial{Fault: "kill", Trial: i, OK: true, Has: true, MS: float64(200 + 10*i), Dir: d})
	}
	trials = append(trials,
		FailoverTrial{Fault: "pause", Trial: 0, OK: true, Has: true, MS: 350, Dir: mkRun(t, dir, "pause-00", rundir.VerdictFile)},
		FailoverTrial{Fault: "pause", Trial: 1, Why: "the live nodes never agreed again <b>", Dir: mkRun(t, dir, "pause-01", rundir.VerdictFile)},
		FailoverTrial{Fault: "pause", Trial: 2, Has: true, MS: 999, Why: "agreement: two leaders", Dir: mkRun(t, dir, "pause-02")})
	stats := FailoverSummary([]string{"kill", "pause", "stop"}, trials)
	if s := stats[0]; s.Trials != 10 || s.Failed != 0 || s.P50 != 240 || s.P90 != 280 || s.Max != 290 {
		t.Errorf("kill %+v", s)
	}
	if s := stats[1]; s.Trials != 1 || s.Failed != 2 || s.Max != 350 {
		t.Errorf("pause %+v: the failed trial's 999 ms must stay out", s)
	}
	p := FailoverPage(dir, Page{Title: "failover"}, []string{"kill", "pause", "stop"}, trials, 200)
	b, err := RenderPage(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<td>kill</td><td class=\"num\">10</td><td class=\"num\">10</td><td class=\"num\">0</td><td class=\"num\">240.00</td><td class=\"num\">280.00</td><td class=\"num\">290.00</td>",
		`<tr class="fail"><td>pause</td><td class="num">3</td><td class="num">1</td><td class="num">2</td>`,
		"<td>stop</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">0</td><td class=\"num\">n/a</td>",
		"Trials: kill", "Trials: pause", "pause trial 2 failed: agreement: two leaders (failover measured: 999 ms)",
		"never agreed again &lt;b&gt;", `<a href="pause-01/verdict.json"`, "pause-02 · failed", "timeout 200 ms"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "Trials: stop") {
		t.Error("a fault without trials gets no runs section")
	}
	if n := strings.Count(page, `stroke="`+svgchart.FailColor+`" stroke-width="2.2"`); n != 2+1 {
		t.Errorf("%d red crosses, want pause's 2 failed trials and the legend's", n)
	}
	if len(p.Sections[0].Charts) != 3 {
		t.Errorf("%d charts, want the CDF, the scatter and the bars", len(p.Sections[0].Charts))
	}
	for _, c := range p.Sections[0].Charts {
		if err := svgchart.Verify(c); err != nil {
			t.Error(err)
		}
	}
}

// The chaos page on made-up cells: outcomes counted as the CLI counts them, split brain of the
// runs that are not expected failures, a runs section per cell.
func TestChaosPage(t *testing.T) {
	dir := t.TempDir()
	cells := []ChaosCell{
		{Algo: "bully", N: 5, Runs: []ChaosRun{
			{Seed: 1, Dir: filepath.Join(dir, "bully-n5-seed1"), OK: true, SplitBrainMS: 100},
			{Seed: 2, Dir: mkRun(t, dir, "bully-n5-seed2", rundir.VerdictFile), Failed: []string{"agreement"}, Why: "agreement: 2 & 3 <disagree>", SplitBrainMS: 300, Lost: 1},
			{Seed: 3, Dir: filepath.Join(dir, "bully-n5-seed3"), OK: true, Orphans: []int{4241, 4242}},
		}},
		{Algo: "rsdp", N: 5, Runs: []ChaosRun{
			{Seed: 1, Dir: mkRun(t, dir, "rsdp-n5-seed1", rundir.VerdictFile), Limit: true, Failed: []string{"uniqueness"}, SplitBrainMS: 5000, Warnings: 3},
			{Seed: 2, OK: true, SplitBrainMS: 0},
			{Seed: 3, Dir: mkRun(t, dir, "rsdp-n5-seed3", rundir.VerdictFile), Inconclusive: true, Failed: []string{"agreement"}, Why: "inconclusive: still electing"},
		}},
	}
	s := cells[0].Stats()
	if s.Runs != 3 || s.Violations != 1 || s.Expected != 0 || s.Passed != 2 || s.SplitSum != 400 || s.SplitMax != 300 || s.Lost != 1 || s.Orphans != 2 || s.ByProp["agreement"] != 1 {
		t.Errorf("bully %+v", s)
	}
	if s := cells[1].Stats(); s.Expected != 1 || s.Inconclusive != 1 || s.Violations != 0 || s.Judged != 1 || s.SplitMax != 0 || s.Warnings != 0 || len(s.ByProp) != 0 {
		t.Errorf("rsdp %+v: the expected run's figures must stay out", s)
	}
	if got := []string{cells[0].Runs[0].Status(), cells[0].Runs[1].Status(), cells[0].Runs[2].Status(), cells[1].Runs[0].Status(), cells[1].Runs[2].Status()}; !slices.Equal(got, []string{"pass", "fail", "fail", "limit", "inconclusive"}) {
		t.Errorf("statuses %q", got)
	}
	p := ChaosPage(dir, Page{Title: "chaos"}, cells)
	b, err := RenderPage(dir, p)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{
		`<tr class="fail"><td>bully</td><td class="num">5</td><td class="num">3</td><td class="num">1</td><td class="num">0</td><td class="num">0</td><td class="num">2</td><td class="num">400.0</td><td class="num">133</td><td class="num">300.0</td><td class="num">1</td><td class="num">2</td><td class="num">0</td><td>agreement×1</td></tr>`,
		`<tr class="limit"><td>rsdp</td>`,
		`<tr class="total"><td>total</td><td></td><td class="num">6</td><td class="num">1</td><td class="num">1</td><td class="num">1</td><td class="num">3</td>`,
		`<span class="status-inconclusive">INCONCLUSIVE</span>`,
		"Runs: bully, n=5", "Runs: rsdp, n=5", `<a href="bully-n5-seed2/verdict.json"`, `<a href="rsdp-n5-seed1/verdict.json"`,
		"agreement: 2 &amp; 3 &lt;disagree&gt;", "2 orphan processes", "Runs by outcome", "Split-brain time, CDF across runs"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// One N: the categories are the algorithms alone.
	if !strings.Contains(page, `>bully</text>`) || strings.Contains(page, `>bully n=5</text>`) {
		t.Error("categories with a single N should name the algorithm alone")
	}
	for _, c := range p.Sections[0].Charts {
		if err := svgchart.Verify(c); err != nil {
			t.Error(err)
		}
	}
	if m := (ChaosStats{}).SplitMean(); !math.IsNaN(m) {
		t.Errorf("mean of no runs %g", m)
	}
}
