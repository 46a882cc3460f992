package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
)

// countSummary is what run --count says at the end (and --json carries).
type countSummary struct {
	Made   int `json:"made"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Inconclusive counts the runs that ended while their election was still progressing
	// (exit 3): neither passed nor failed, and --until-fail goes on past them.
	Inconclusive int      `json:"inconclusive"`
	FailingSeeds []int64  `json:"failing_seeds"`
	FailingDirs  []string `json:"failing_dirs"`
	StoppedEarly bool     `json:"stopped_early"`
}

// runMany is run --count N [--until-fail]: N runs of the same configuration, each with a fresh seed
// (seed, seed+1, … when --seed is given, drawn otherwise), one at a time, each into its own
// directory (OUT/run-001, … with --out; runs/<time>-… otherwise), and a summary with the failing
// seeds. --until-fail stops at the first run that fails (with no --count: runs until one does, or
// until interrupted); an inconclusive run is no failure. A run that cannot be made stops the series:
// the next would not be made either. The series exits 1 when a run failed, else 3 when one was
// inconclusive.
func runMany(ctx context.Context, cfg launcher.Config, count int, untilFail, report, twice bool, out *ciOut) (int, error) {
	text := out.text()
	base := cfg.Out
	ser := &series{text: text, count: count, start: time.Now()}
	for i := 0; count == 0 || i < count; i++ {
		if ctx.Err() != nil {
			ser.sum.StoppedEarly = true
			break
		}
		c := cfg
		if cfg.SeedSet {
			c.Seed = cfg.Seed + int64(i)
		}
		if base != "" {
			c.Out = filepath.Join(base, fmt.Sprintf("run-%03d", i+1))
		}
		c.Stdout, c.Progress = io.Discard, io.Discard
		res, err := launcher.Launch(ctx, c)
		dir, code := res.Dir, res.Code
		out.add(res, err)
		if dir != "" {
			keepLatest(dir)
			if report && code != ExitUnusable {
				if path, rerr := renderReport(dir); rerr != nil {
					fmt.Fprintf(os.Stderr, "leaderlab: --report: %v\n", rerr)
				} else {
					fmt.Fprintf(text, "report: %s\n", path)
				}
			}
		}
		if twice && dir != "" && (code == ExitOK || code == ExitViolation || code == ExitInconclusive) {
			if why := sameTwice(c, dir); why != "" {
				fmt.Fprintf(text, "run %d: NONDETERMINISTIC  seed %d  %s: %s\n", i+1, c.Seed, dir, why)
				code = ExitViolation
			}
		}
		r := out.runs[len(out.runs)-1]
		if stop, unusable := ser.tell(i, r.Seed, dir, code, err, untilFail); unusable {
			return finishMany(out, &ser.sum, text, ExitUnusable, err)
		} else if stop {
			break
		}
	}
	return ser.finish(out)
}

// series counts the runs of run --count as they are told, in order, and prints a line each.
type series struct {
	text  io.Writer
	count int // 0: until one fails
	start time.Time
	sum   countSummary
}

// tell prints run i's line (where: its directory, or where it was made) and counts it. unusable
// says that it could not be made: the series stops (the next would not be made either); stop that
// it failed under --until-fail.
func (s *series) tell(i int, seed int64, where string, code int, err error, untilFail bool) (stop, unusable bool) {
	sum, text, count := &s.sum, s.text, s.count
	sum.Made++
	of := "?"
	if count > 0 {
		of = fmt.Sprint(count)
	}
	eta := ""
	if count > 0 && i+1 < count {
		eta = fmt.Sprintf(", about %s to go", (time.Since(s.start) / time.Duration(i+1) * time.Duration(count-i-1)).Round(time.Second))
	}
	switch code {
	case ExitOK:
		sum.Passed++
		fmt.Fprintf(text, "run %d/%s: PASS  seed %d  %s%s\n", i+1, of, seed, where, eta)
	case ExitViolation:
		sum.Failed++
		sum.FailingSeeds = append(sum.FailingSeeds, seed)
		sum.FailingDirs = append(sum.FailingDirs, where)
		fmt.Fprintf(text, "run %d/%s: FAIL  seed %d  %s%s\n", i+1, of, seed, where, eta)
	case ExitInconclusive:
		sum.Inconclusive++
		fmt.Fprintf(text, "run %d/%s: INCONCLUSIVE  seed %d  %s%s\n", i+1, of, seed, where, eta)
	default:
		fmt.Fprintf(text, "run %d/%s: could not be made: %v\n", i+1, of, err)
		sum.StoppedEarly = count == 0 || i+1 < count
		return true, true
	}
	if untilFail && code == ExitViolation {
		sum.StoppedEarly = count == 0 || i+1 < count
		return true, false
	}
	return false, false
}

// finish is the series' summary and exit code once every run was told.
func (s *series) finish(out *ciOut) (int, error) {
	code := ExitOK
	switch {
	case s.sum.Failed > 0:
		code = ExitViolation
	case s.sum.Inconclusive > 0:
		code = ExitInconclusive
	}
	return finishMany(out, &s.sum, s.text, code, nil)
}

// finishMany prints the series' summary and the --json/--junit output.
func finishMany(out *ciOut, sum *countSummary, text io.Writer, code int, err error) (int, error) {
	fmt.Fprintf(text, "%s: %d passed, %d failed", plural(sum.Made, "run", "runs"), sum.Passed, sum.Failed)
	if sum.Inconclusive > 0 {
		fmt.Fprintf(text, ", %d inconclusive (still electing when the run ended)", sum.Inconclusive)
	}
	if sum.StoppedEarly {
		fmt.Fprint(text, " (stopped early)")
	}
	fmt.Fprintln(text)
	if sum.Failed > 0 {
		seeds := make([]string, len(sum.FailingSeeds))
		for i, s := range sum.FailingSeeds {
			seeds[i] = fmt.Sprint(s)
		}
		fmt.Fprintf(text, "failing seeds: %s\nreplay the first: leaderlab run --replay %s\n", strings.Join(seeds, ", "), sum.FailingDirs[0])
	}
	if ferr := out.finish(true, sum); ferr != nil && err == nil {
		return ExitUnusable, ferr
	}
	return code, err
}

// keepLatest points DIR/../latest at the run directory dir (run does so for its default directories
// under runs/, and run --count in the series' directory) (a relative symbolic link, replaced
// atomically), so that runs/latest is always the last run. A "latest" that is not a symbolic link
// is left alone, with a word on stderr.
func keepLatest(dir string) {
	parent, name := filepath.Dir(filepath.Clean(dir)), filepath.Base(filepath.Clean(dir))
	link := filepath.Join(parent, "latest")
	if st, err := os.Lstat(link); err == nil && st.Mode()&os.ModeSymlink == 0 {
		fmt.Fprintf(os.Stderr, "leaderlab: %s exists and is not a symbolic link: not pointing it at %s\n", link, name)
		return
	}
	tmp := filepath.Join(parent, fmt.Sprintf(".latest-%d", os.Getpid()))
	os.Remove(tmp)
	if err := os.Symlink(name, tmp); err != nil {
		return // a file system without symbolic links: no latest
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		fmt.Fprintf(os.Stderr, "leaderlab: %s not updated: %v\n", link, err)
	}
}

// plural is "1 run", "3 runs".
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// sameTwice makes simulated run c again and compares what it writes with what the first wrote in
// dir (bench.SameTwice); "" when they are the same.
func sameTwice(c launcher.Config, dir string) string { return bench.SameTwice(c, dir) }
