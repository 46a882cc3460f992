package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/rundir"
)

func reportCommand() *cli.Command {
	return &cli.Command{
		Name:      "report",
		Usage:     "render a run directory for people (RUN/report.html) and for other tools (ShiViz, Perfetto)",
		ArgsUsage: "RUN_DIR",
		Description: "Writes RUN/report.html — one self-contained page: the verdict, a space-time diagram (zoom and pan),\n" +
			"the leader timeline, elections, failovers, split-brain windows, CPU and memory — and prints its path.\n" +
			"The verdict is RUN/verdict.json, or the checker's when the run has none. Exit 2 when RUN cannot be read.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "shiviz", Usage: "also write the run in ShiViz's log format (vector clocks from send/recv matching, checked against the logged ones) to `FILE`"},
			&cli.StringFlag{Name: "perfetto", Usage: "also write the run as Chrome trace-event JSON with a flow per message to `FILE` (ui.perfetto.dev)"},
			&cli.StringFlag{Name: "nodes", Usage: "with --shiviz or --perfetto: export only these nodes (`IDS`, e.g. 1-4,9)"},
			&cli.DurationFlag{Name: "from", Usage: "with --shiviz or --perfetto: export from this time after the run's begin (e.g. 900ms)"},
			&cli.DurationFlag{Name: "to", Usage: "with --shiviz or --perfetto: export up to this time after the run's begin", DefaultText: "the run's end"},
			&cli.BoolFlag{Name: "open", Usage: "open the report in the desktop's browser once written"},
			&cli.StringFlag{Name: "open-in-browser", Hidden: true, Usage: "yes|no: the old spelling of --open, still accepted"},
		},
		Action: func(c *cli.Context) error {
			opts, err := reportArgs(c)
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			dir, open := opts.dir, opts.open
			in, err := report.Load(dir)
			if errors.Is(err, rundir.ErrNotRun) {
				return cli.Exit(fmt.Sprintf("%s is not a run directory: it has no cluster.json (make one with leaderlab run)", dir), ExitUnusable)
			}
			if err != nil {
				return cli.Exit(fmt.Sprintf("cannot read the run %s: %v", dir, err), ExitUnusable)
			}
			path, err := report.WriteFile(dir, in)
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			fmt.Println(path)
			var exported *logs.Run
			if opts.shiviz != "" || opts.perfetto != "" {
				if exported, err = in.Export(opts.window); err != nil {
					return cli.Exit(fmt.Sprintf("--nodes/--from/--to: %v", err), ExitUnusable)
				}
			}
			if f := opts.shiviz; f != "" {
				st, err := writeExport(f, func(w io.Writer) (report.ExportStats, error) { return report.WriteShiViz(w, exported) })
				if err != nil {
					return cli.Exit(fmt.Sprintf("--shiviz: %v", err), ExitUnusable)
				}
				fmt.Fprintf(os.Stderr, "leaderlab: ShiViz log %s: %d events on %d hosts, %d messages%s; %s\n", f, st.Events, st.Hosts, st.Messages, unmatched(st), st.Clocks)
				if !opts.window.Whole() {
					fmt.Fprintf(os.Stderr, "leaderlab: (a window of the run: its logged clocks also count the events left out, so the clocks written are computed within the window)\n")
				}
				warnSize(f, "ShiViz", opts.window)
			}
			if f := opts.perfetto; f != "" {
				st, err := writeExport(f, func(w io.Writer) (report.ExportStats, error) { return report.WritePerfetto(w, exported) })
				if err != nil {
					return cli.Exit(fmt.Sprintf("--perfetto: %v", err), ExitUnusable)
				}
				fmt.Fprintf(os.Stderr, "leaderlab: Perfetto trace %s: %d events on %d tracks, %d message flows%s; %s\n", f, st.Events, st.Hosts, st.Messages, unmatched(st), st.Clocks)
				warnSize(f, "Perfetto", opts.window)
			}
			if open {
				if err := openBrowser(path); err != nil {
					fmt.Fprintf(os.Stderr, "leaderlab: could not open a browser (%v); open %s yourself\n", err, path)
				}
			}
			return nil
		},
	}
}

type reportOpts struct {
	dir, shiviz, perfetto string
	open                  bool
	window                report.ExportWindow
}

// reportArgs reads the run directory and the flags. urfave/cli stops at the first argument, and
// `leaderlab report RUN --shiviz FILE` is how people write it, so flags after RUN are parsed here.
func reportArgs(c *cli.Context) (reportOpts, error) {
	o := reportOpts{shiviz: c.String("shiviz"), perfetto: c.String("perfetto"), open: c.Bool("open")}
	old := c.String("open-in-browser")
	nodes := c.String("nodes")
	o.window.From, o.window.To = c.Duration("from"), c.Duration("to")
	args := c.Args().Slice()
	if len(args) == 0 {
		return o, errors.New("report needs the run directory as its argument")
	}
	o.dir = args[0]
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.shiviz, "shiviz", o.shiviz, "")
	fs.StringVar(&o.perfetto, "perfetto", o.perfetto, "")
	fs.BoolVar(&o.open, "open", o.open, "")
	fs.StringVar(&old, "open-in-browser", old, "")
	fs.StringVar(&nodes, "nodes", nodes, "")
	fs.DurationVar(&o.window.From, "from", o.window.From, "")
	fs.DurationVar(&o.window.To, "to", o.window.To, "")
	if err := fs.Parse(args[1:]); err != nil {
		return o, fmt.Errorf("%v (accepted after the run directory: --shiviz FILE, --perfetto FILE, --nodes IDS, --from D, --to D, --open)", err)
	}
	if nodes != "" {
		ids, err := parseIDSet(nodes)
		if err != nil {
			return o, fmt.Errorf("--nodes %q: %v", nodes, err)
		}
		o.window.Nodes = ids
	}
	if !o.window.Whole() && o.shiviz == "" && o.perfetto == "" {
		return o, errors.New("--nodes, --from and --to choose what an export takes: give --shiviz FILE or --perfetto FILE too")
	}
	if o.window.From < 0 || o.window.To < 0 {
		return o, fmt.Errorf("--from %v, --to %v: want times after the run's begin (0 or more)", o.window.From, o.window.To)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("report takes one run directory, got also %q", fs.Args())
	}
	switch old { // the old spelling
	case "":
	case "yes":
		o.open = true
	case "no":
	default:
		return o, fmt.Errorf("--open-in-browser %q: want yes or no (or use --open)", old)
	}
	return o, nil
}

// exportWarnBytes is the size past which an export is hard to open: ShiViz, which parses the whole
// log in the browser, slows to a crawl well before 100 MB; Perfetto's UI holds up longer.
const exportWarnBytes = 20 << 20

// warnSize says when an export is too big to open comfortably, and how to take less of the run.
func warnSize(path, tool string, w report.ExportWindow) {
	st, err := os.Stat(path)
	if err != nil || st.Size() < exportWarnBytes {
		return
	}
	how := "take a window (--from, --to) or some nodes (--nodes)"
	if !w.Whole() {
		how = "take a narrower window or fewer nodes"
	}
	fmt.Fprintf(os.Stderr, "leaderlab: warning: %s is %d MB, more than %s opens comfortably: %s\n", path, st.Size()>>20, tool, how)
}

// parseIDSet reads node IDs as a list with ranges: "1-4,9".
func parseIDSet(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 1 || b < a {
			return nil, fmt.Errorf("%q is not a node ID or a range of them (want e.g. 1-4,9)", f)
		}
		for id := a; id <= b; id++ {
			if !slices.Contains(out, id) {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

func unmatched(st report.ExportStats) string {
	if st.Unmatched == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d recvs without a send)", st.Unmatched)
}

// writeExport writes an export to path through a temporary file, so that a failed export leaves no
// half-written file behind.
func writeExport(path string, write func(io.Writer) (report.ExportStats, error)) (report.ExportStats, error) {
	var st report.ExportStats
	err := writeAtomic(path, func(w io.Writer) (err error) {
		st, err = write(w)
		return err
	})
	return st, err
}

// writeAtomic writes path through a temporary file beside it, renamed into place once whole: a
// failed write leaves no half-written file behind. The file is readable by all (0644).
func writeAtomic(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// openBrowser hands a path or a URL to the desktop's opener and does not wait for the browser.
func openBrowser(path string) error {
	abs := path
	if !strings.Contains(path, "://") {
		var err error
		if abs, err = filepath.Abs(path); err != nil {
			return err
		}
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", abs)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", abs)
	default:
		cmd = exec.Command("xdg-open", abs)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait() //nolint:errcheck // the opener's exit status says nothing useful
	return nil
}
