package report

import (
	"encoding/csv"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/launcher"
)

// The scripts of scripts/ run on run directories made by the in-memory driver; CI installs jq and
// python3, a machine without them skips.

func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("no %s: the script that needs it is not run", name)
	}
	return p
}

func script(name string) string { return filepath.Join("..", "scripts", name) }

func runScript(t *testing.T, interp, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(interp, append([]string{script(name)}, args...)...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// simDir simulates a run (the whole node, `leaderlab run --sim`) of 3s with the chaos schedule,
// writes it, checked, into parent/name and returns its directory and verdict.
func simDir(t *testing.T, parent, algo string, n int, seed int64, chaos string) (string, *check.Verdict) {
	t.Helper()
	return simDirWith(t, parent, algo, n, seed, chaos, nil)
}

// simDirWith is simDir with set changing the configuration before the run (nil: no change).
func simDirWith(t *testing.T, parent, algo string, n int, seed int64, chaos string, set func(*launcher.Config)) (string, *check.Verdict) {
	t.Helper()
	cfg := launcher.DefaultConfig()
	cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = algo, n, seed, true
	cfg.Duration = 3 * time.Second
	cfg.Chaos = chaos
	name := fmt.Sprintf("%s-n%d-s%d", algo, n, seed)
	if set != nil {
		set(&cfg)
		name = fmt.Sprintf("%s-%s-n%d-s%d", algo, cfg.IDs, n, seed)
	}
	s, err := launcher.Simulate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, name)
	if err := s.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir, s.Verdict
}

const killLeader = "at 1s kill leader"

func TestScriptElections(t *testing.T) {
	needTool(t, "jq")
	bash := needTool(t, "bash")
	parent := t.TempDir()
	a, va := simDir(t, parent, "bully", 5, 1, killLeader)
	_, vb := simDir(t, parent, "bully", 4, 2, "")

	stdout, stderr, code := runScript(t, bash, "elections.sh", a)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if !strings.HasPrefix(lines[0], "run\talgo\tnodes\telection\tstart_ms") {
		t.Fatalf("header %q", lines[0])
	}
	if len(lines)-1 != len(va.Metrics.Elections) || len(va.Metrics.Elections) < 2 {
		t.Fatalf("%d rows, want one per election (%d)", len(lines)-1, len(va.Metrics.Elections))
	}
	for i, e := range va.Metrics.Elections {
		f := strings.Split(lines[i+1], "\t")
		byKind := make([]string, 0, len(e.ByKind))
		for k, n := range e.ByKind {
			byKind = append(byKind, fmt.Sprintf("%s=%d", k, n))
		}
		sort.Strings(byKind)
		want := []string{a, "bully", "5", strconv.Itoa(i + 1)}
		if f[0] != want[0] || f[1] != want[1] || f[2] != want[2] || f[3] != want[3] ||
			f[6] != strconv.Itoa(e.Messages) || f[7] != strconv.Itoa(e.Announce) || f[9] != strconv.Itoa(*e.Bound) ||
			f[11] != strconv.Itoa(e.Faults) || f[13] != strings.Join(byKind, ",") {
			t.Errorf("row %d: %q; want election %+v", i+1, f, e)
		}
		start, _ := strconv.ParseFloat(f[4], 64)
		if math.Abs(start-float64(e.StartNS-va.BeginNS)/1e6) > 0.01 {
			t.Errorf("row %d starts at %s ms, want %v", i+1, f[4], float64(e.StartNS-va.BeginNS)/1e6)
		}
	}

	// A directory of runs stands for all of them.
	stdout, _, code = runScript(t, bash, "elections.sh", parent)
	if rows := strings.Count(stdout, "\n") - 1; code != 0 || rows != len(va.Metrics.Elections)+len(vb.Metrics.Elections) {
		t.Errorf("directory of runs: exit %d, %d rows", code, rows)
	}
	if _, stderr, code := runScript(t, bash, "elections.sh", t.TempDir()); code != 2 || !strings.Contains(stderr, "neither a checked run") {
		t.Errorf("not a run: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runScript(t, bash, "elections.sh"); code != 2 || !strings.Contains(stderr, "Usage: elections.sh") {
		t.Errorf("no argument: exit %d, %q", code, stderr)
	}
}

func TestScriptFailover(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	var ms []float64
	for seed := int64(1); seed <= 4; seed++ {
		_, v := simDir(t, parent, "bully", 5, seed, killLeader)
		for _, f := range v.Metrics.Failovers {
			ms = append(ms, *f.MS)
		}
	}
	pause := "at 1s pause leader for 600ms"
	_, v := simDir(t, parent, "bully", 5, 9, pause)
	if len(ms) != 4 || len(v.Metrics.Failovers) != 1 {
		t.Fatalf("the runs have %d kill and %d pause failovers, want 4 and 1", len(ms), len(v.Metrics.Failovers))
	}
	csvPath := filepath.Join(t.TempDir(), "failovers.csv")
	stdout, stderr, code := runScript(t, py, "failover.py", "--csv", csvPath, parent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sort.Float64s(ms)
	rank := func(q float64) float64 { return ms[max(0, int(math.Ceil(q*float64(len(ms))))-1)] }
	rows := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		if f := strings.Fields(line); len(f) == 7 {
			rows[f[1]] = strings.Join(f, " ")
		}
	}
	if want := fmt.Sprintf("bully kill 4 %.3f %.3f %.3f 0", rank(0.5), rank(0.9), ms[len(ms)-1]); rows["kill"] != want {
		t.Errorf("kill row %q, want %q:\n%s", rows["kill"], want, stdout)
	}
	if !strings.HasPrefix(rows["all"], "bully all 5 ") || !strings.HasPrefix(rows["pause"], "bully pause 1 ") {
		t.Errorf("pause and all rows %q, %q:\n%s", rows["pause"], rows["all"], stdout)
	}
	f, err := os.Open(csvPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 || strings.Join(recs[0], ",") != "run,algo,nodes,fault,at_ms,ms,leader,what" {
		t.Errorf("csv: %d rows, header %v; want a header and 5 failovers", len(recs), recs[0])
	}
	if _, stderr, code := runScript(t, py, "failover.py", t.TempDir()); code != 2 || !strings.Contains(stderr, "neither a checked run") {
		t.Errorf("not a run: exit %d, %q", code, stderr)
	}
	if _, stderr, code := runScript(t, py, "failover.py"); code != 2 || !strings.Contains(stderr, "usage: failover.py") {
		t.Errorf("no argument: exit %d, %q", code, stderr)
	}
}

func TestScriptCompare(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	type cell struct{ sum, n, bound int }
	want := map[string]map[int]*cell{}
	for _, algo := range []string{"bully", "chang-roberts"} {
		want[algo] = map[int]*cell{}
		for _, n := range []int{3, 5, 8} {
			for seed := int64(1); seed <= 2; seed++ {
				_, v := simDir(t, parent, algo, n, seed, "")
				for _, e := range v.Metrics.Elections {
					if e.Faults == 0 {
						c := want[algo][n]
						if c == nil {
							c = &cell{}
							want[algo][n] = c
						}
						c.sum += e.Messages + e.Announce
						c.n++
						c.bound = max(c.bound, *e.Bound)
					}
				}
			}
		}
	}
	svg := filepath.Join(t.TempDir(), "compare.svg")
	stdout, stderr, code := runScript(t, py, "compare.py", "--svg", svg, parent)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 || !strings.Contains(lines[1], "bully") || !strings.Contains(lines[1], "chang-roberts") {
		t.Fatalf("want a title, a header naming both algorithms and a row per N:\n%s", stdout)
	}
	for i, n := range []int{3, 5, 8} {
		row := lines[i+2]
		if !strings.HasPrefix(row, strconv.Itoa(n)+" ") {
			t.Errorf("row %q, want N=%d", row, n)
		}
		for _, algo := range []string{"bully", "chang-roberts"} {
			c := want[algo][n]
			if s := fmt.Sprintf("%.1f [", float64(c.sum)/float64(c.n)); !strings.Contains(row, s) || !strings.Contains(row, fmt.Sprintf("/ %d (%d)", c.bound, c.n)) {
				t.Errorf("N=%d %s: row %q lacks mean %s and bound %d over %d elections", n, algo, row, s, c.bound, c.n)
			}
		}
	}
	b, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName   xml.Name `xml:"svg"`
		Polylines []struct {
			Class string `xml:"class,attr"`
		} `xml:"polyline"`
		Circles []struct{} `xml:"circle"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the SVG is not XML: %v", err)
	}
	series := 0
	for _, p := range doc.Polylines {
		if p.Class == "series" {
			series++
		}
	}
	if series != 2 || len(doc.Circles) != 6 {
		t.Errorf("SVG: %d series and %d points, want 2 and 6", series, len(doc.Circles))
	}
}

// The rows of failover.py --by KEY come in the key's order, numbers as numbers (N = 4, 5, 10, 12, not
// 10, 12, 4, 5), run directories with the numbers in their names likewise.
func TestScriptFailoverSortsNumbers(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	var dirs []string
	for _, n := range []int{4, 5, 10, 12} {
		dir, v := simDir(t, parent, "bully", n, 1, killLeader)
		if len(v.Metrics.Failovers) == 0 {
			t.Fatalf("N=%d: no failover", n)
		}
		dirs = append(dirs, dir)
	}
	for _, tc := range []struct {
		by   string
		want []string
	}{
		{"nodes", []string{"4", "5", "10", "12"}},
		{"run", dirs},
	} {
		stdout, stderr, code := runScript(t, py, "failover.py", "--by", tc.by, parent)
		if code != 0 {
			t.Fatalf("--by %s: exit %d: %s", tc.by, code, stderr)
		}
		var keys []string
		for _, line := range strings.Split(strings.TrimSpace(stdout), "\n")[1:] {
			if k := strings.Fields(line)[0]; len(keys) == 0 || keys[len(keys)-1] != k {
				keys = append(keys, k)
			}
		}
		if strings.Join(keys, " ") != strings.Join(tc.want, " ") {
			t.Errorf("--by %s: groups in the order %q, want %q:\n%s", tc.by, keys, tc.want, stdout)
		}
	}
}

// A directory of runs stands for the run directories (those holding cluster.json) at any depth
// under it, but not for any under a run directory; each script says how many runs it read and names
// the directories it left out, and why.
func TestScriptNestedRuns(t *testing.T) {
	parent := t.TempDir()
	top, _ := simDir(t, parent, "bully", 4, 1, killLeader)
	bench := filepath.Join(parent, "bench-chaos-20261126T080000Z")
	nested, _ := simDir(t, bench, "bully", 5, 3, killLeader)
	deep, _ := simDir(t, filepath.Join(bench, "more", "deeper"), "bully", 3, 2, killLeader)
	unchecked, _ := simDir(t, bench, "bully", 7, 1, killLeader)
	if err := os.Remove(filepath.Join(unchecked, "verdict.json")); err != nil {
		t.Fatal(err)
	}
	inside, _ := simDir(t, filepath.Join(top, "extra"), "bully", 6, 1, killLeader) // a run's own subdirectory: not searched
	plots := filepath.Join(parent, "plots")
	if err := os.MkdirAll(filepath.Join(plots, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plots, "cmp.svg"), []byte("<svg/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(parent, filepath.Join(bench, "loop")); err != nil {
		t.Fatal(err)
	}
	runs := []string{top, nested, deep}
	sort.Strings(runs)

	for _, tc := range []struct {
		interp, name string
		args         []string
		// key is the column of a row that names what the run stands for: its directory or its N.
		key  int
		want []string
	}{
		{"bash", "elections.sh", nil, 0, runs},
		{"python3", "failover.py", []string{"--by", "run"}, 0, runs},
		{"python3", "compare.py", nil, 0, []string{"3", "4", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "elections.sh" {
				needTool(t, "jq")
			}
			interp := needTool(t, tc.interp)
			stdout, stderr, code := runScript(t, interp, tc.name, append(tc.args, parent)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if tc.name == "compare.py" {
				lines = lines[1:] // its title
			}
			seen := map[string]bool{}
			for _, line := range lines[1:] {
				seen[strings.Fields(line)[tc.key]] = true
			}
			got := make([]string, 0, len(seen))
			for k := range seen {
				got = append(got, k)
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("rows for %q, want %q:\n%s", got, tc.want, stdout)
			}
			if !strings.Contains(stderr, tc.name+": read 3 runs") {
				t.Errorf("stderr does not say it read 3 runs:\n%s", stderr)
			}
			named := func(dir, why string) bool {
				for _, line := range strings.Split(stderr, "\n") {
					if strings.Contains(line, dir+":") && strings.Contains(line, why) {
						return true
					}
				}
				return false
			}
			for _, skip := range []struct{ dir, why string }{
				{unchecked, "no verdict.json"},
				{plots, "no run directory"},
				{filepath.Join(bench, "loop"), "same directory as " + parent},
			} {
				if !named(skip.dir, skip.why) {
					t.Errorf("stderr does not name %s (%s):\n%s", skip.dir, skip.why, stderr)
				}
			}
			if strings.Contains(stderr, inside) || strings.Contains(stderr, filepath.Join(plots, "old")) || strings.Contains(stderr, filepath.Join(top, "nodes")) {
				t.Errorf("stderr names a directory inside a run or inside one it named:\n%s", stderr)
			}
		})
	}
}

// --help and -h print the usage, naming every option the script takes, on stdout and exit 0; a bad
// flag prints it on stderr and exits 2. README.md's row for the script names every option too.
func TestScriptHelp(t *testing.T) {
	readme, err := os.ReadFile(script("README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The options each script accepts, read from its source: a case pattern of elections.sh, an
	// add_argument of the Python ones.
	bashOpt := regexp.MustCompile(`(?m)^\s*((?:-[-a-z]+\|?)+)\)`)
	pyOpt := regexp.MustCompile(`add_argument\(((?:"-[-a-z]+",\s*)+)`)
	for _, s := range []struct{ interp, name string }{{"bash", "elections.sh"}, {"python3", "failover.py"}, {"python3", "compare.py"}} {
		t.Run(s.name, func(t *testing.T) {
			if s.name == "elections.sh" {
				needTool(t, "jq")
			}
			interp := needTool(t, s.interp)
			src, err := os.ReadFile(script(s.name))
			if err != nil {
				t.Fatal(err)
			}
			opts := []string{"-h", "--help"}
			if s.interp == "bash" {
				for _, m := range bashOpt.FindAllStringSubmatch(string(src), -1) {
					opts = append(opts, strings.Split(m[1], "|")...)
				}
			} else {
				for _, m := range pyOpt.FindAllStringSubmatch(string(src), -1) {
					for _, o := range strings.Split(m[1], ",") {
						if o = strings.Trim(strings.TrimSpace(o), `"`); o != "" {
							opts = append(opts, o)
						}
					}
				}
			}
			sort.Strings(opts)
			opts = slices.Compact(opts)
			if len(opts) < 3 {
				t.Fatalf("found only the options %q in %s", opts, s.name)
			}
			usage := "usage: " + s.name
			for _, h := range []string{"--help", "-h"} {
				stdout, stderr, code := runScript(t, interp, s.name, h)
				if code != 0 || stderr != "" || !strings.HasPrefix(strings.ToLower(stdout), usage) {
					t.Errorf("%s: exit %d, stderr %q, stdout %q; want the usage on stdout and exit 0", h, code, stderr, stdout)
				}
				for _, o := range opts {
					if !regexp.MustCompile(`(^|[\s,\[|])` + regexp.QuoteMeta(o) + `($|[\s,\]|=])`).MatchString(stdout) {
						t.Errorf("%s does not name the option %s:\n%s", h, o, stdout)
					}
				}
			}
			stdout, stderr, code := runScript(t, interp, s.name, "--no-such-flag", t.TempDir())
			if code != 2 || stdout != "" || !strings.Contains(strings.ToLower(stderr), usage) {
				t.Errorf("a bad flag: exit %d, stdout %q, stderr %q; want the usage on stderr and exit 2", code, stdout, stderr)
			}
			row := ""
			for _, line := range strings.Split(string(readme), "\n") {
				if strings.HasPrefix(line, "| `"+s.name) {
					row = line
				}
			}
			for _, o := range opts {
				if o != "-h" && o != "--help" && !strings.Contains(row, o) {
					t.Errorf("README.md's row %q does not name the option %s", row, o)
				}
			}
		})
	}
}

type svgText struct {
	x, y, size float64
	anchor     string
	rotated    bool
	s          string
}

type svgPoint struct {
	cx, cy float64
	title  string
}

type svgChart struct {
	w, h   float64
	texts  []svgText
	points []svgPoint
}

func readSVG(t *testing.T, path string) svgChart {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c svgChart
	num := func(s string) float64 {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("%s: %q is not a number", path, s)
		}
		return v
	}
	d := xml.NewDecoder(f)
	var text *svgText
	var point *svgPoint
	inTitle := false
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range e.Attr {
				a[at.Name.Local] = at.Value
			}
			switch e.Name.Local {
			case "svg":
				vb := strings.Fields(a["viewBox"])
				if len(vb) != 4 || num(vb[0]) != 0 || num(vb[1]) != 0 {
					t.Fatalf("viewBox %q", a["viewBox"])
				}
				c.w, c.h = num(vb[2]), num(vb[3])
			case "text":
				text = &svgText{size: 12, anchor: a["text-anchor"], rotated: a["transform"] != ""}
				if a["x"] != "" {
					text.x, text.y = num(a["x"]), num(a["y"])
				}
				if a["font-size"] != "" {
					text.size = num(a["font-size"])
				}
			case "circle":
				point = &svgPoint{cx: num(a["cx"]), cy: num(a["cy"])}
			case "title":
				inTitle = true
			}
		case xml.CharData:
			if text != nil {
				text.s += string(e)
			} else if point != nil && inTitle {
				point.title += string(e)
			}
		case xml.EndElement:
			switch e.Name.Local {
			case "text":
				c.texts = append(c.texts, *text)
				text = nil
			case "circle":
				c.points = append(c.points, *point)
				point = nil
			case "title":
				inTitle = false
			}
		}
	}
	return c
}

// width is how wide a text is at least taken to be: 0.6 em a character.
func (s svgText) width() float64 { return 0.6 * s.size * float64(len([]rune(s.s))) }

// ticks are the numeric labels of the N axis (centred under it) or of the messages axis (ending at
// its left), in the order of their values.
func (c svgChart) ticks(anchor string) (pos, val []float64) {
	type tick struct{ pos, val float64 }
	var ts []tick
	for _, s := range c.texts {
		if v, err := strconv.ParseFloat(strings.TrimSpace(s.s), 64); err == nil && s.anchor == anchor && !s.rotated {
			p := s.x
			if anchor == "end" {
				p = -(s.y - s.size/3) // up the page, from the middle of the label
			}
			ts = append(ts, tick{p, v})
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].val < ts[j].val })
	for _, t := range ts {
		pos, val = append(pos, t.pos), append(val, t.val)
	}
	return pos, val
}

// checkChart checks compare.py's chart: every text inside the viewBox, the tick labels of each axis
// distinct, in order along it and not overlapping, at places linear in their value (log: in its
// logarithm, and each 1, 2 or 5 times a power of ten), and each point where its N and mean put it.
func checkChart(t *testing.T, c svgChart, log bool) {
	t.Helper()
	for _, s := range c.texts {
		if s.rotated {
			continue
		}
		lo := map[string]float64{"end": s.x - s.width(), "middle": s.x - s.width()/2}[s.anchor]
		if s.anchor == "" || s.anchor == "start" {
			lo = s.x
		}
		if lo < 0 || lo+s.width() > c.w || s.y-s.size < 0 || s.y > c.h {
			t.Errorf("the text %q (%.0f..%.0f, %.0f) is not inside the viewBox 0 0 %.0f %.0f", s.s, lo, lo+s.width(), s.y, c.w, c.h)
		}
	}
	scale := func(v float64) float64 {
		if log {
			return math.Log10(v)
		}
		return v
	}
	fits := map[string][2]float64{}
	for _, axis := range []string{"middle", "end"} {
		pos, val := c.ticks(axis)
		if len(pos) < 2 {
			t.Errorf("axis %s: tick labels %v, want two or more", axis, val)
			continue
		}
		for i := 1; i < len(pos); i++ {
			if val[i] == val[i-1] || pos[i] <= pos[i-1] {
				t.Errorf("axis %s: the tick labels %v at %v are not distinct and in order", axis, val, pos)
			}
			w := func(v float64) float64 { return svgText{s: strconv.FormatFloat(v, 'f', -1, 64), size: 12}.width() }
			if gap := pos[i] - pos[i-1]; axis == "middle" && gap < (w(val[i])+w(val[i-1]))/2+2 || axis == "end" && gap < 12 {
				t.Errorf("axis %s: the tick labels %g and %g overlap (%.1f apart)", axis, val[i-1], val[i], gap)
			}
		}
		b := (pos[len(pos)-1] - pos[0]) / (scale(val[len(val)-1]) - scale(val[0]))
		a := pos[0] - b*scale(val[0])
		fits[axis] = [2]float64{a, b}
		for i, v := range val {
			if math.Abs(a+b*scale(v)-pos[i]) > 0.5 {
				t.Errorf("axis %s (log %v): the tick %g is at %.1f, not %.1f", axis, log, v, pos[i], a+b*scale(v))
			}
			if m := v / math.Pow(10, math.Floor(math.Log10(v))); log && math.Abs(m-1) > 1e-9 && math.Abs(m-2) > 1e-9 && math.Abs(m-5) > 1e-9 {
				t.Errorf("axis %s: the tick %g of a log axis is not 1, 2 or 5 times a power of ten", axis, v)
			}
		}
	}
	re := regexp.MustCompile(`N=(\d+): mean ([0-9.]+)`)
	for _, p := range c.points {
		m := re.FindStringSubmatch(p.title)
		if m == nil {
			t.Fatalf("point title %q", p.title)
		}
		n, _ := strconv.ParseFloat(m[1], 64)
		mean, _ := strconv.ParseFloat(m[2], 64)
		x, y := fits["middle"], fits["end"]
		if math.Abs(x[0]+x[1]*scale(n)-p.cx) > 1 || math.Abs(y[0]+y[1]*scale(mean)+p.cy) > 1.5 {
			t.Errorf("point %q at %.1f,%.1f: the axes put it at %.1f,%.1f", p.title, p.cx, p.cy, x[0]+x[1]*scale(n), -(y[0] + y[1]*scale(mean)))
		}
		if p.cx < 0 || p.cx > c.w || p.cy < 0 || p.cy > c.h {
			t.Errorf("point %q outside the viewBox", p.title)
		}
	}
}

// compare.py --svg on N from 4 to 64, whose first few crowd a linear axis, and series with long
// names: with --log both axes are logarithmic with 1-2-5 ticks; with or without, the tick labels do
// not overlap and the legend is inside the picture.
func TestScriptCompareLog(t *testing.T) {
	py := needTool(t, "python3")
	parent := t.TempDir()
	for _, n := range []int{4, 5, 6, 8, 16, 64} {
		simDir(t, parent, "bully", n, 1, "")
		simDir(t, parent, "chang-roberts", n, 1, "")
	}
	for _, n := range []int{5, 16} {
		simDirWith(t, parent, "chang-roberts", n, 1, "", func(c *launcher.Config) { c.IDs = "descending" })
	}
	for _, log := range []bool{false, true} {
		t.Run(fmt.Sprintf("log=%v", log), func(t *testing.T) {
			svg := filepath.Join(t.TempDir(), "compare.svg")
			args := []string{"--svg", svg, parent}
			if log {
				args = append([]string{"--log"}, args...)
			}
			stdout, stderr, code := runScript(t, py, "compare.py", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, "chang-roberts (ring, descending)") {
				t.Fatalf("no series named chang-roberts (ring, descending):\n%s", stdout)
			}
			c := readSVG(t, svg)
			if len(c.points) != 14 {
				t.Errorf("%d points, want 14", len(c.points))
			}
			checkChart(t, c, log)
		})
	}
}
