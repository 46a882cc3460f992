package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/explore"
	"github.com/leaderlab/leaderlab/topology"
)

func exploreCommand() *cli.Command {
	d := explore.DefaultConfig("bully", 4)
	return &cli.Command{
		Name:      "explore",
		Usage:     "check every interleaving of the real election machines for a small cluster",
		ArgsUsage: " ",
		Description: "Explores, breadth-first, every order of deliveries, timer firings, failure-detector news and crashes\n" +
			"over the algorithms' own state machines (election), and checks at every quiescent state that\n" +
			"the live nodes follow one leader, the highest live ID (ElectionTerminationImpliesSameLeader,\n" +
			"HighestAliveProcessIsLeader), that no election is left open and no cycle runs for ever (ElectionWillEnd),\n" +
			"and that a fault-free election stays within the algorithm's message bound (MessageBound).\n" +
			"A violation's shortest trace is written as a run directory that check, report and run --sim --replay read.\n" +
			"Ctrl-C (or SIGTERM) ends the search where it is and prints what was explored, as a bound does.\n" +
			"Exit 0 explored without violation (completely, or to --max-states or --max-depth, as printed), 1 a violation (or a\n" +
			"machine that broke the reduction's assumption: OUT/broken.txt), 2 bad input.",
		OnUsageError: usageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Aliases: []string{"a"}, Value: d.Algo, Usage: "election algorithm: " + strings.Join(explore.Explorable(), ", ")},
			&cli.IntFlag{Name: "nodes", Aliases: []string{"n"}, Value: d.N, Usage: fmt.Sprintf("number of nodes, 1..%d (IDs 1..N)", explore.MaxN)},
			&cli.StringFlag{Name: "ids", Value: "ascending", Usage: "placement of IDs around the ring: ascending, descending, random, worst, or a list like 3,1,4,2"},
			&cli.StringFlag{Name: "initiators", Value: "all", Usage: "who starts the first election: all, one (the lowest ID), or a list of IDs"},
			&cli.IntFlag{Name: "crashes", Usage: "up to `K` nodes crash (SIGKILL), each at any point"},
			&cli.StringFlag{Name: "crash-targets", Value: explore.CrashAny, Usage: "which nodes may crash: any, or leader (only a node that believes itself the leader: Vinther's KillLeader)"},
			&cli.IntFlag{Name: "restarts", Usage: "up to `K` crashed nodes start again, each at any point after its crash"},
			&cli.BoolFlag{Name: "partitions", Usage: "one partition into two sides (every split), at any point, and its heal at any point after"},
			&cli.StringFlag{Name: "timers", Value: explore.TimersTimely, Usage: "timely (a timer fires only when no message is in flight, in the order of the deadlines: timeouts longer than any delay) or async (any armed timer fires at any moment)"},
			&cli.IntFlag{Name: "max-states", Usage: "stop after `M` distinct states (the output says the search was bounded)", DefaultText: fmt.Sprint(explore.DefaultMaxStates)},
			&cli.IntFlag{Name: "max-depth", Usage: "explore only the states within `D` transitions of the start, every one of them (the output says the search was bounded): a bound for a state space that paths starving a link make endless"},
			&cli.IntFlag{Name: "max-memory", Usage: fmt.Sprintf("the memory the search may take, `MB` megabytes (at least %d): past it, the levels, the fingerprints seen, the paths and the graph spill to disk (under --out, or the temporary directory) and the search goes on", explore.MinMemory>>20), DefaultText: "60% of the machine's memory"},
			&cli.IntFlag{Name: "workers", Value: runtime.NumCPU(), Usage: "expand each level with `N` goroutines: the same states, violations and traces as one, sooner"},
			&cli.IntFlag{Name: "bitstate", Usage: "a partial search for what is beyond memory and disk: the states seen are bits of an array of `MB` megabytes (Holzmann's bitstate hashing); the output says how much it may have missed, and cycles are not judged"},
			&cli.DurationFlag{Name: "heartbeat", Value: d.Heartbeat, Usage: "the failure detector's heartbeat interval: the period of the heartbeat rounds that carry the nodes' leader claims"},
			&cli.DurationFlag{Name: "timeout", Value: d.Timeout, Usage: "the failure detector's timeout, from which Bully's T and T1 and the rings' stall timer derive as in a run"},
			&cli.BoolFlag{Name: "no-reduction", Usage: "explore every interleaving, without partial-order reduction"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of --ids random", Value: 1},
			&cli.StringFlag{Name: "out", Usage: "directory for explore.json and, for each violation, OUT/<property>/ (a run directory of its shortest trace)", DefaultText: "runs/<UTC time>-explore-<algo>-n<N> when there is a violation; nothing written otherwise"},
		}, syncCLIFlags()...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("explore takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			cfg := explore.DefaultConfig(c.String("algo"), c.Int("nodes"))
			cfg.Crashes, cfg.Restarts = c.Int("crashes"), c.Int("restarts")
			cfg.CrashTargets, cfg.Timers = c.String("crash-targets"), c.String("timers")
			cfg.MaxStates, cfg.Timeout = c.Int("max-states"), c.Duration("timeout")
			cfg.MaxDepth = c.Int("max-depth")
			cfg.NoReduction = c.Bool("no-reduction")
			cfg.Partitions = c.Bool("partitions")
			cfg.Heartbeat = c.Duration("heartbeat")
			cfg.Options = optionFlags(c, cfg.Algo)
			if mb := c.Int("max-memory"); mb < 0 || mb > 0 && mb < explore.MinMemory>>20 {
				return cli.Exit(fmt.Sprintf("--max-memory %d: want a size in MB, at least %d (0 or absent: 60%% of the machine's memory)", mb, explore.MinMemory>>20), ExitUnusable)
			} else {
				cfg.MaxMemory = uint64(mb) << 20
			}
			if w := c.Int("workers"); w < 1 {
				return cli.Exit(fmt.Sprintf("--workers %d: want 1 or more goroutines (absent: the machine's %d cores)", w, runtime.NumCPU()), ExitUnusable)
			} else {
				cfg.Workers = w
			}
			if mb := c.Int("bitstate"); mb < 0 || mb > 0 && cfg.MaxMemory > 0 && uint64(mb)<<20 > cfg.MaxMemory {
				return cli.Exit(fmt.Sprintf("--bitstate %d: want a size in MB, no larger than --max-memory (0 or absent: an exact search)", mb), ExitUnusable)
			} else {
				cfg.Bitstate = uint64(mb) << 20
			}
			cfg.SpillDir = c.String("out")
			cfg.Progress = os.Stderr
			if cfg.N >= 1 && cfg.N <= explore.MaxN {
				order, err := topology.Place(cfg.N, c.String("ids"), c.Int64("seed"))
				if err != nil {
					return cli.Exit("--ids "+err.Error(), ExitUnusable)
				}
				cfg.Order, cfg.Placement = order, c.String("ids")
				inits, err := topology.ParseInitiators(c.String("initiators"), order, c.Int64("seed"))
				if err != nil {
					return cli.Exit("--initiators "+err.Error(), ExitUnusable)
				}
				if len(inits) < cfg.N {
					cfg.Initiators = inits
				}
			}
			x, err := explore.New(cfg)
			if err != nil {
				if errors.Is(err, explore.ErrConfig) {
					return cli.Exit(err.Error(), ExitUnusable)
				}
				return exit(ExitUnusable, err)
			}
			// Ctrl-C or a SIGTERM (timeout(1)) ends the search where it is, and what it explored is
			// printed, as for a bound
			ctx, stop := signalContext()
			defer stop()
			x.SetStop(ctx.Done())
			r := x.Run()
			r.Print(os.Stdout)
			out := c.String("out")
			defaultOut := filepath.Join("runs", fmt.Sprintf("%s-explore-%s-n%d", time.Now().UTC().Format("20060102T150405Z"), cfg.Algo, cfg.N))
			// writeTrace writes a path's account to OUT/name and says where it is, as what.
			writeTrace := func(dir, name, what string, v *explore.Violation) error {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(p, []byte(x.TraceText(v)), 0o644); err != nil {
					return err
				}
				fmt.Printf("explore: the path to %s (%d transitions) is in %s\n", what, len(v.Trace), p)
				return nil
			}
			if r.Deepest != nil && out != "" {
				if err := writeTrace(out, "deepest.txt", "one of the deepest states", r.Deepest); err != nil {
					return exit(ExitUnusable, err)
				}
			}
			if r.BrokenAt != nil {
				if out == "" {
					out = defaultOut
				}
				if err := writeTrace(out, "broken.txt", "that send", r.BrokenAt); err != nil {
					return exit(ExitUnusable, err)
				}
				return exit(ExitViolation, nil)
			}
			if out == "" && len(r.Violations) == 0 {
				return exit(ExitOK, nil)
			}
			if out == "" {
				out = defaultOut
			}
			dirs := map[string]string{}
			for _, v := range r.Violations {
				dir := filepath.Join(out, v.Property)
				verdict, err := x.WriteDir(v, dir)
				if err != nil {
					return exit(ExitUnusable, err)
				}
				dirs[v.Property] = dir
				judged := "the checker fails it"
				if verdict.OK {
					judged = "the checker PASSES it (the property is one the run's checker does not judge so)"
				}
				fmt.Printf("explore: %s: shortest trace (%d transitions) in %s; %s\n", v.Property, len(v.Trace), dir, judged)
			}
			if err := r.WriteSummary(out, dirs); err != nil {
				return exit(ExitUnusable, err)
			}
			if len(r.Violations) > 0 {
				return exit(ExitViolation, nil)
			}
			return exit(ExitOK, nil)
		},
	}
}
