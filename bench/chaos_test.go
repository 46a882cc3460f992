package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/logs"
)

// TestChaosConfigValidate: a bad configuration is refused with the field it names (for the CLI to
// map to its flag) and what would be accepted.
func TestChaosConfigValidate(t *testing.T) {
	good := DefaultChaosConfig()
	good.Ns = []int{5, 8}
	if err := good.Validate(); err != nil {
		t.Fatalf("the default configuration refused: %v", err)
	}
	cases := []struct {
		name string
		edit func(c *ChaosConfig)
		want string
	}{
		{"unknown algorithm", func(c *ChaosConfig) { c.Algos = []string{"bully", "nope"} }, `ChaosConfig.Algos: unknown algorithm "nope"`},
		{"no algorithm", func(c *ChaosConfig) { c.Algos = nil }, "ChaosConfig.Algos: no algorithm given (accepted: bully,"},
		{"no N", func(c *ChaosConfig) { c.Ns = nil }, "ChaosConfig.Ns: no cluster size given"},
		{"N of one", func(c *ChaosConfig) { c.Ns = []int{1, 5} }, "ChaosConfig.Ns 1: want 2.."},
		{"nemesis", func(c *ChaosConfig) { c.Nemesis = "kill,bogus" }, `ChaosConfig.Nemesis: unknown fault kind "bogus"`},
		{"runs", func(c *ChaosConfig) { c.Runs = 0 }, "ChaosConfig.Runs 0: want at least 1"},
		{"interval", func(c *ChaosConfig) { c.Interval = 0 }, "ChaosConfig.Interval 0s: want a positive duration such as 500ms"},
		{"duration", func(c *ChaosConfig) { c.Duration = -time.Second }, "ChaosConfig.Duration -1s: want a positive duration such as 6s"},
	}
	for _, c := range cases {
		bad := good
		c.edit(&bad)
		wantRefused(t, c.name, bad.Validate(), c.want)
	}
}

func TestChaosAlgorithms(t *testing.T) {
	got := ChaosAlgorithms()
	if got[0] != "bully" || got[len(got)-1] != "rsdp" || !slices.Contains(got, "chang-roberts") || slices.Contains(got, "floodmax") {
		t.Errorf("%q: want Bully, the asynchronous rings and RSDP", got)
	}
	for _, a := range got {
		if _, err := election.Lookup(a); err != nil {
			t.Error(err)
		}
	}
}

// TestChaosCellRow: a cell's printed row and the lines of its failing runs, as the CLI prints
// them: the runs that failed only under a declared limit count as expected and nothing else (their
// orphans are listed, not counted), a passing run with orphans is listed and counted, and an
// inconclusive run (still electing at the end) counts in its own column, with its lost lines.
func TestChaosCellRow(t *testing.T) {
	cell := ChaosCell{Algo: "lelann", N: 5, Runs: []ChaosRun{
		{Seed: 1, Dir: "d/1", OK: true, SplitBrainMS: 100.25, Warnings: 1},
		{Seed: 2, Dir: "d/2", Failed: []string{"uniqueness", "agreement"}, Why: "uniqueness: 2 leaders", SplitBrainMS: 40, Lost: 2},
		{Seed: 3, Dir: "d/3", OK: true, Orphans: []int{77, 78}},
		{Seed: 4, Dir: "d/4", Limit: true, Failed: []string{"uniqueness"}, Why: "uniqueness: under loss", SplitBrainMS: 9000, Lost: 5, Orphans: []int{9}, Warnings: 4},
		{Seed: 5, Dir: "d/5", Failed: []string{"agreement"}, Orphans: []int{80}},
		{Seed: 6, Dir: "d/6", Inconclusive: true, Failed: []string{"agreement"}, Why: "inconclusive: still electing", Lost: 1},
	}}
	s := cell.Stats()
	var b bytes.Buffer
	s.print(&b, cell.Algo, "5")
	want := "lelann                 5     6          2         1             1           140.2      100.2     3       3        1  agreement×2,uniqueness×1\n"
	if b.String() != want {
		t.Errorf("row\n%q\nwant\n%q", b.String(), want)
	}
	var failing []string
	for _, r := range cell.Runs {
		if r.Status() != "pass" {
			failing = append(failing, r.failing())
		}
	}
	if want := []string{
		"FAIL seed 2 d/2: uniqueness,agreement (uniqueness: 2 leaders)",
		"FAIL seed 3 d/3: orphans [77 78]",
		"LIMIT seed 4 d/4: uniqueness,orphans [9] (uniqueness: under loss)",
		"FAIL seed 5 d/5: agreement,orphans [80]",
		"INCONCLUSIVE seed 6 d/6: agreement (inconclusive: still electing)",
	}; !slices.Equal(failing, want) {
		t.Errorf("failing runs\n%q\nwant\n%q", failing, want)
	}
	if got := (ChaosStats{}).props(","); got != "-" {
		t.Errorf("no failed property: %q", got)
	}
}

// TestLostLines: a recv whose msg.id no send in the run's logs has is a lost line; one that a send
// of another node matches is not, however many nodes received it.
func TestLostLines(t *testing.T) {
	msg := func(id string) *election.Message { return &election.Message{ID: id, Kind: "ELECTION"} }
	run := &logs.Run{Nodes: map[int]*logs.NodeLog{
		1: {Node: 1, Events: []logs.Event{{Ev: logs.EvSend, To: 2, Msg: msg("1.1.1")}, {Ev: logs.EvRecv, From: 2, Msg: msg("2.1.1")}, {Ev: logs.EvRecv, From: 3, Msg: msg("3.1.9")}}},
		2: {Node: 2, Events: []logs.Event{{Ev: logs.EvRecv, From: 1, Msg: msg("1.1.1")}, {Ev: logs.EvSend, To: 1, Msg: msg("2.1.1")}, {Ev: logs.EvDrop, From: 3, Msg: msg("3.1.8")}}},
		3: {Node: 3, Events: []logs.Event{{Ev: logs.EvRecv, From: 2, Msg: msg("2.1.7")}, {Ev: logs.EvStart}, {Ev: logs.EvRecv, From: 1, Msg: msg("1.1.1")},
			{Ev: logs.EvRecv, From: 4}}},
	}}
	if n := lostLines(run); n != 2 {
		t.Errorf("%d lost lines, want 2 (3.1.9 at node 1, 2.1.7 at node 3)", n)
	}
	if n := lostLines(&logs.Run{}); n != 0 {
		t.Errorf("%d lost lines in an empty run", n)
	}
}

// TestOrphanNodes reads a process table made in a temporary directory: the live node processes of
// the run are orphans; a zombie, a node of another run and other commands are not.
func TestOrphanNodes(t *testing.T) {
	proc, run := t.TempDir(), filepath.Join(t.TempDir(), "run")
	proc1 := func(pid, state string, args ...string) {
		d := filepath.Join(proc, pid)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if args != nil {
			os.WriteFile(filepath.Join(d, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644)
		}
		os.WriteFile(filepath.Join(d, "stat"), []byte(pid+" (leaderlab) "+state+" 1 1 1"), 0o644)
	}
	proc1("101", "S", "/usr/bin/leaderlab", "node", "--run", run, "--id", "3")
	proc1("102", "Z", "/usr/bin/leaderlab", "node", "--run", run, "--id", "4")
	proc1("103", "R", "leaderlab", "node", "--run", run+"/", "--id", "5")
	proc1("104", "S", "leaderlab", "node", "--run", run+"-2", "--id", "1")
	proc1("105", "S", "leaderlab", "run", "--out", run)
	proc1("106", "S")
	proc1("self", "S", "leaderlab", "node", "--run", run)
	if got := orphanNodes(proc, run); !slices.Equal(got, []int{101, 103}) {
		t.Errorf("orphans %v, want [101 103]", got)
	}
	if got := OrphanNodes(run); len(got) != 0 {
		t.Errorf("this machine has node processes of a run just named: %v", got)
	}
}

// TestChaosSimulated measures a small grid in the simulator: the header, a row per cell and the
// total, the progress, the CSV (a row per cell) and the page.
func TestChaosSimulated(t *testing.T) {
	dir := t.TempDir()
	c := DefaultChaosConfig()
	c.Algos, c.Ns, c.Runs, c.Seed, c.Sim = []string{"bully", "lelann"}, []int{4}, 3, 7, true
	c.Out, c.CSV = dir, filepath.Join(dir, "rows.csv")
	var out, prog bytes.Buffer
	res, err := Chaos(context.Background(), c, &out, &prog)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != 2 || len(res.Cells[1].Runs) != 3 || res.Cells[1].Runs[2].Seed != 9 || res.Page != filepath.Join(c.Out, "index.html") {
		t.Fatalf("result %+v", res)
	}
	text := out.String()
	for _, want := range []string{
		"chaos: bully,lelann; n [4]; 3 runs each of 6s; --nemesis kill,pause,restart,partition,link,stop,clock --nemesis-interval 500ms --nemesis-restart; seeds 7..9; runs in " + c.Out + "\n",
		"\nbully                  4     3 ", "\nlelann                 4     3 ", "\ntotal                        6 ", "\npage: " + res.Page + "\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if want := "bench chaos: 3/6 runs (bully n=4 done), about "; !strings.HasPrefix(prog.String(), want) || !strings.HasSuffix(prog.String(), "bench chaos: 6/6 runs (lelann n=4 done)\n") {
		t.Errorf("progress:\n%s", prog.String())
	}
	f, err := os.Open(c.CSV)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 3 || !slices.Equal(rows[0], chaosCSVHeader) || rows[2][0] != "lelann" || rows[2][2] != "3" {
		t.Errorf("CSV %q (%v): want the header and a row per cell", rows, err)
	}
	if _, err := os.Stat(res.Page); err != nil {
		t.Error(err)
	}
}

// TestChaosStopped: an interrupted bench says so with the total so far and writes no page without
// a cell; a CSV that cannot be made names its field.
func TestChaosStopped(t *testing.T) {
	c := DefaultChaosConfig()
	c.Algos, c.Ns, c.Runs, c.Sim, c.Out = []string{"bully"}, []int{4}, 2, true, t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	res, err := Chaos(ctx, c, &out, &out)
	if err != context.Canceled || len(res.Cells) != 0 || res.Page != "" || !strings.Contains(out.String(), "\ntotal (so far) ") {
		t.Errorf("cancelled: %+v, %v:\n%s", res, err, out.String())
	}
	if _, err := os.Stat(filepath.Join(c.Out, "index.html")); err == nil {
		t.Error("a page of no cell")
	}
	c.CSV = filepath.Join(c.Out, "no", "such", "rows.csv")
	_, err = Chaos(context.Background(), c, &out, &out)
	wantRefused(t, "csv", err, "ChaosConfig.CSV: open ")
}
