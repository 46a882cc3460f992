package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/leaderlab/leaderlab/observer"
	"github.com/leaderlab/leaderlab/rundir"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/chaos"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/report"
	"github.com/leaderlab/leaderlab/wire"
)

// Main runs the command line args (args[0] is the program's name) and returns the exit code.
func Main(args []string) int {
	if code, ok := nodeFast(args); ok {
		return code
	}
	app := newApp()
	err := app.Run(args)
	if err == nil {
		return 0
	}
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		if msg := strings.TrimSpace(ec.Error()); msg != "" {
			fmt.Fprintln(os.Stderr, "leaderlab:", asFlags(msg))
		}
		return ec.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "leaderlab:", asFlags(err.Error()))
	return ExitUnusable
}

func newApp() *cli.App {
	return &cli.App{
		Name:  "leaderlab",
		Usage: "a lab for distributed leader election: real processes, real sockets, real faults",
		Description: "leaderlab run starts N node processes that elect a leader over TCP, injects faults from a schedule,\n" +
			"and checks from the nodes' event logs that they ended with one, highest-ID leader.",
		Version: version(),
		// Shell completion: a command line ending in --generate-bash-completion lists what may come
		// next (leaderlab completion bash|zsh prints the scripts that ask).
		EnableBashCompletion: true,
		Commands:             []*cli.Command{runCommand(), nodeCommand(), observerCommand(), agentCommand(), sweepWorkerCommand(), checkCommand(), runsCommand(), reportCommand(), uiCommand(), benchCommand(), exploreCommand(), completionCommand(), manCommand()},
		OnUsageError:         usageError,
		ExitErrHandler:       func(*cli.Context, error) {}, // Main reports errors and picks the exit code
		HideHelpCommand:      true,
	}
}

// usageError makes every flag error exit 2 with the reason.
func usageError(c *cli.Context, err error, _ bool) error {
	return cli.Exit(fmt.Sprintf("%v (see '%s --help')", err, c.Command.HelpName), ExitUnusable)
}

// signalContext is cancelled by SIGINT or SIGTERM.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func runCommand() *cli.Command {
	d := launcher.DefaultConfig()
	return &cli.Command{
		Name:  "run",
		Usage: "start a cluster, inject faults, check it (the main job)",
		Description: "With no flags: 5 nodes elect with Bully, the leader is killed after 1s, and the verdict is printed.\n" +
			"Exit 0 when the checker passed, 1 when it found a violation, 2 when the run could not be made.",
		OnUsageError: usageError,
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "algo", Aliases: []string{"a"}, Value: d.Algo, Usage: "election algorithm: " + strings.Join(election.Names(), ", "), Category: "cluster"},
			&cli.IntFlag{Name: "nodes", Aliases: []string{"n"}, Value: d.Nodes, Usage: "number of nodes (IDs 1..N; the highest ID should win)", Category: "cluster"},
			&cli.StringFlag{Name: "topology", Usage: "mesh, ring (one-way), biring (two-way), or a graph: grid:RxC, torus:RxC, tree:K (K-ary), random:D (connected, mean degree D, drawn from the seed), @FILE (an edge list \"a b\" per line over vertices 1..N, # comments); links only along its edges", DefaultText: "the algorithm's own", Category: "cluster"},
			&cli.StringFlag{Name: "ids", Value: d.IDs, Usage: "placement of IDs around the ring: ascending, descending, random, worst, or a list like 3,1,5,2,4", Category: "cluster"},
			&cli.StringFlag{Name: "initiators", Value: d.Initiators, Usage: "who starts the first election: all, one, or a list of IDs", Category: "cluster"},
			&cli.StringFlag{Name: "chaos", Value: d.Chaos, Usage: "fault schedule in the chaos language, or @FILE", Category: "faults"},
			&cli.StringFlag{Name: "nemesis", Usage: "instead of --chaos, draw a random fault schedule from the seed, of these kinds: a comma-separated list of " + strings.Join(chaos.NemesisKinds, ", ") + "; every fault is undone before the settle window, and the drawn schedule is saved in cluster.json", Category: "faults"},
			&cli.DurationFlag{Name: "nemesis-interval", Value: d.NemesisInterval, Usage: "the nemesis's mean gap between faults and mean fault length (each drawn uniformly in 0..2x, a fault at least 2 x --timeout)", Category: "faults"},
			&cli.BoolFlag{Name: "nemesis-overlap", Usage: "let a nemesis fault start while earlier ones are still in force", Category: "faults"},
			&cli.StringFlag{Name: "nemesis-shapes", Usage: "the partition shapes the nemesis draws from, comma-separated, of " + strings.Join(chaos.Shapes, ", "), DefaultText: strings.Join(chaos.NemesisShapes, ","), Category: "faults"},
			&cli.BoolFlag{Name: "nemesis-restart", Usage: "restart every node the nemesis kills once its fault is over (otherwise it stays dead, unless the restart kind brings it back)", Category: "faults"},
			&cli.StringFlag{Name: "net-backend", Value: d.NetBackend, Usage: "what carries out partitions and link faults: transport (the nodes drop on receipt; no root), iptables (the kernel drops; root, drop and loss only, each node on its own 127.0.x.y) or netem (the kernel's netem qdiscs on the senders' egress; root, every rule but slowclose, reset and a delay's corr; on one host the run moves to a network namespace of its own)", Category: "faults"},
			&cli.StringFlag{Name: "replay", Usage: "run the cluster of run directory `RUN` again (algorithm, nodes, ring, timings, seed, the same chaos schedule) into a new directory, and say where the outcomes differ; only --out, --report, --sim, --json and --junit may be given with it (a simulated run replays on real processes unless --sim is given)", Category: "where it runs"},
			&cli.BoolFlag{Name: "sim", Usage: "make the run in the simulator: the nodes' own code over an in-memory network in virtual time, the same run directory (cluster.json \"world\": \"sim\"); the same seed gives the same bytes, and a run of seconds takes milliseconds", Category: "where it runs"},
			&cli.Int64Flag{Name: "seed", Usage: "seed of every random choice of the run", DefaultText: "random, printed and saved", Category: "cluster"},
			&cli.DurationFlag{Name: "duration", Value: d.Duration, Usage: "how long the run lasts; when not given, a run whose nodes are still electing at its end (or follow a dead leader) goes on until every live node follows a live leader, for at most the termination bound more", Category: "timing"},
			&cli.DurationFlag{Name: "settle", Value: d.Settle, Usage: "quiet time after the last fault that the convergence checks need", Category: "timing"},
			&cli.DurationFlag{Name: "heartbeat", Value: d.Heartbeat, Usage: fmt.Sprintf("failure detector heartbeat interval (given neither this nor --timeout, both grow with the nodes on a host: × ceil(n/%d))", launcher.NodesPerBeat), Category: "timing"},
			&cli.DurationFlag{Name: "timeout", Value: d.Timeout, Usage: "failure detector suspicion timeout", Category: "timing"},
			&cli.DurationFlag{Name: "election-timeout", Usage: "Bully's T, the wait for an answer", DefaultText: "--timeout", Category: "timing"},
			&cli.DurationFlag{Name: "coordinator-timeout", Usage: "Bully's T1, the wait for a coordinator after an answer", DefaultText: "3 x --timeout", Category: "timing"},
			&cli.DurationFlag{Name: "grace", Usage: "how long two nodes may both believe in themselves before it is a violation", DefaultText: "--timeout", Category: "timing"},
			&cli.DurationFlag{Name: "termination-bound", Usage: "how much running time an elect may take to end in a leader before it is a violation (a synchronous algorithm's election lasts its pulses: give FloodMax with many --rounds a bound to match)", DefaultText: "max(2s, 5 x (T + T1))", Category: "timing"},
			&cli.StringFlag{Name: "out", Usage: "the run directory", DefaultText: "runs/<UTC time>-<algo>-n<N>", Category: "where it runs"},
			&cli.StringFlag{Name: "host", Value: d.Host, Usage: "address the nodes listen on", Category: "where it runs"},
			&cli.StringFlag{Name: "vclock", Value: d.VClock, Usage: fmt.Sprintf("vector clocks on every message and event line: auto (on up to %d nodes), on, or off (Lamport clocks only)", wire.AutoClockNodes), Category: "where it runs"},
			&cli.BoolFlag{Name: "report", Usage: "after the verdict, render RUN/report.html (as leaderlab report does) and print its path", Category: "output"},
			&cli.BoolFlag{Name: "ui", Usage: "drive the run from the lab's page (leaderlab ui): its address is printed; faults by hand land in chaos.jsonl and cluster.json's schedule; the run lasts until stopped there (or --duration when given)", Category: "output"},
			&cli.StringFlag{Name: "hosts", Usage: "run the nodes on the SSH hosts listed in `FILE` (one [user@]host[:port] per line, optionally `ids=1,4,7`; round-robin otherwise); the launcher puts its binary there and runs `leaderlab agent --stdio` over SSH. With --sim (and --count): spread the series' simulated runs over those hosts instead", Category: "where it runs"},
			&cli.StringFlag{Name: "ssh-config", Usage: "an OpenSSH client config `FILE` (as `vagrant ssh-config` writes it): its Host entries are the hosts when --hosts is not given; it resolves --hosts's names otherwise (default ~/.ssh/config)", Category: "where it runs"},
			&cli.BoolFlag{Name: "insecure-ignore-host-key", Usage: "with SSH hosts: take any host key, unchecked (for a throwaway lab; cluster.json records it)", Category: "where it runs"},
			&cli.StringFlag{Name: "detector", Value: rundir.DetectorHeartbeat, Usage: "failure detector: heartbeat (heartbeats along the algorithm's plan, a broken link suspected at once), or RSDP's failover topologies: mutual (every node probes every other every --health-interval, staggered), observer (one observer process probes every node), observers (--observers processes that agree before telling the nodes); the probing ones need a mesh", Category: "failure detector"},
			&cli.IntFlag{Name: "observers", Usage: "with --detector observers: how many observer processes", DefaultText: "3", Category: "failure detector"},
			&cli.DurationFlag{Name: "health-interval", Usage: "with a probing --detector: h, the interval between probes of each node by each prober", DefaultText: "--heartbeat", Category: "failure detector"},
			&cli.DurationFlag{Name: "probe-timeout", Usage: "with a probing --detector: how long a probe waits for its answer", DefaultText: "half of --health-interval", Category: "failure detector"},
			&cli.StringFlag{Name: "rsdp-mode", Value: election.RSDPLatest, Usage: "with --algo rsdp: how SHARE messages are aggregated: latest (the last wins), popular (the most frequent state, with a quorum of ceil(N/2)) or ranked (exponential weights, highest-ID tie-break)", Category: "algorithm options"},
			&cli.DurationFlag{Name: "rsdp-share-window", Value: election.DefaultRSDPShareWindow, Usage: "with --algo rsdp: how long SHARE messages are buffered before they are aggregated", Category: "algorithm options"},
			&cli.DurationFlag{Name: "rsdp-resync", Value: election.DefaultRSDPResync, Usage: "with --algo rsdp: the period of the synchronization sessions that repair lost messages (0: none)", Category: "algorithm options"},
			&cli.IntFlag{Name: "count", Value: 1, Usage: "make `N` runs of this configuration, each with a fresh seed (seed, seed+1, … with --seed), one at a time, into OUT/run-001, … (with --out) or runs/…, and print a summary with the failing seeds (0 with --until-fail: until one fails); with --sim and --hosts or --ssh-config the seeds are spread over the SSH hosts (each runs `leaderlab sweep-worker` on all its cores) and only the runs that did not pass are written here, made again", Category: "repetition"},
			&cli.BoolFlag{Name: "until-fail", Usage: "with --count: stop at the first run that fails", Category: "repetition"},
			&cli.BoolFlag{Name: "check-determinism", Usage: "with --sim: make every run a second time and compare the sha256 of the logs the two wrote; a seed whose two runs differ fails (the simulator stopped being deterministic)", Category: "repetition"},
		}, append(syncCLIFlags(), ciFlags()...)...),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("run takes no arguments, got %q (flags go before nothing else)", c.Args().Slice()), ExitUnusable)
			}
			out := newCIOut(c)
			if from := c.String("replay"); c.IsSet("replay") {
				var clash []string
				for _, f := range c.Command.Flags {
					name := f.Names()[0]
					if !slices.Contains([]string{"replay", "out", "report", "sim", "json", "junit"}, name) && c.IsSet(name) {
						clash = append(clash, "--"+name)
					}
				}
				if len(clash) > 0 {
					return cli.Exit(fmt.Sprintf("--replay %s takes the cluster, timings, seed and schedule from %s/cluster.json, so %s cannot be given with it (only --out, --report, --sim, --json and --junit can)", from, from, strings.Join(clash, ", ")), ExitUnusable)
				}
				cfg := launcher.DefaultConfig()
				cfg.Out = c.String("out")
				cfg.Sim = c.Bool("sim")
				if rc, _, err := launcher.ReplayConfig(from, cfg); err == nil && launcher.NeedsPrivateNet(rc) {
					return inPrivateNet()
				}
				cfg.Stdout = out.text()
				ctx, stop := signalContext()
				defer stop()
				dir, code, err := launcher.ReplayDir(ctx, from, cfg)
				return afterRun(c, out, launcher.Result{Dir: dir, Code: code}, err)
			}
			cfg := launcher.DefaultConfig()
			cfg.Algo = c.String("algo")
			cfg.Nodes = c.Int("nodes")
			cfg.Topology = c.String("topology")
			cfg.IDs = c.String("ids")
			cfg.Initiators = c.String("initiators")
			text, err := chaos.LoadSpec(c.String("chaos"))
			if err != nil {
				return cli.Exit(fmt.Sprintf("--chaos: %v", err), ExitUnusable)
			}
			cfg.Chaos = text
			cfg.Nemesis = c.String("nemesis")
			if c.IsSet("nemesis") {
				if cfg.Nemesis == "" {
					return cli.Exit(fmt.Sprintf("--nemesis \"\": want a comma-separated list of %s", strings.Join(chaos.NemesisKinds, ", ")), ExitUnusable)
				}
				if c.IsSet("chaos") && text != d.Chaos {
					return cli.Exit(fmt.Sprintf("--nemesis %s draws the fault schedule, so --chaos %q cannot be given with it (give one or the other)", cfg.Nemesis, c.String("chaos")), ExitUnusable)
				}
				cfg.Chaos = ""
			}
			cfg.NemesisInterval = c.Duration("nemesis-interval")
			cfg.NemesisOverlap = c.Bool("nemesis-overlap")
			cfg.NemesisRestart = c.Bool("nemesis-restart")
			cfg.NemesisShapes = c.String("nemesis-shapes")
			cfg.NetBackend = c.String("net-backend")
			cfg.Seed, cfg.SeedSet = c.Int64("seed"), c.IsSet("seed")
			cfg.Duration = c.Duration("duration")
			cfg.UntilElected = !c.IsSet("duration") // real runs only: the simulator's virtual time needs none
			cfg.Settle = c.Duration("settle")
			cfg.Heartbeat = c.Duration("heartbeat")
			cfg.Timeout = c.Duration("timeout")
			cfg.ScaleDetector = !c.IsSet("heartbeat") && !c.IsSet("timeout")
			cfg.ElectionTimeout = c.Duration("election-timeout")
			cfg.CoordinatorTimeout = c.Duration("coordinator-timeout")
			cfg.Grace = c.Duration("grace")
			cfg.TerminationBound = c.Duration("termination-bound")
			cfg.Out = c.String("out")
			cfg.Host = c.String("host")
			cfg.VClock = c.String("vclock")
			cfg.Hosts, cfg.SSHConfig = c.String("hosts"), c.String("ssh-config")
			cfg.InsecureIgnoreHostKey = c.Bool("insecure-ignore-host-key")
			cfg.Sim = c.Bool("sim")
			cfg.Detector = c.String("detector")
			cfg.Observers = c.Int("observers")
			cfg.HealthInterval = c.Duration("health-interval")
			cfg.ProbeTimeout = c.Duration("probe-timeout")
			cfg.Options = optionFlags(c, cfg.Algo)
			if alg, err := election.Lookup(cfg.Algo); err == nil && alg.Synchronous && !c.IsSet("chaos") && cfg.Nemesis == "" {
				// A synchronous algorithm's default chaos is none: a synchronizer is not
				// fault-tolerant (a kill stalls its pulses for ever), so the default "kill the
				// leader" would only show that.
				cfg.Chaos = ""
			}
			if launcher.NeedsPrivateNet(cfg) {
				if c.Bool("ui") {
					return cli.Exit("--ui serves its page on this machine, and a one-host run with --net-backend netem happens in a network namespace of its own, which the page cannot reach (give --hosts or --ssh-config, or another --net-backend)", ExitUnusable)
				}
				return inPrivateNet()
			}
			cfg.Stdout = out.text()
			ctx, stop := signalContext()
			defer stop()
			count, untilFail := c.Int("count"), c.Bool("until-fail")
			switch {
			case c.Bool("ui") && (count != 1 || untilFail):
				return cli.Exit("--ui drives one run from the page: it cannot be given with --count or --until-fail", ExitUnusable)
			case count < 0 || (count == 0 && !untilFail):
				return cli.Exit(fmt.Sprintf("--count %d: want 1 or more runs (0 only with --until-fail: until one fails)", count), ExitUnusable)
			case c.Bool("check-determinism") && !cfg.Sim:
				return cli.Exit("--check-determinism runs each seed twice in the simulator and compares the logs: it needs --sim (real processes are not deterministic)", ExitUnusable)
			case cfg.Sim && (cfg.Hosts != "" || cfg.SSHConfig != "") && count == 1 && !untilFail:
				return cli.Exit("--sim with --hosts or --ssh-config spreads a series of simulated runs over the hosts (give --count N or --until-fail); one simulated run needs no hosts: drop --hosts/--ssh-config", ExitUnusable)
			case cfg.Sim && (cfg.Hosts != "" || cfg.SSHConfig != ""):
				// a simulated series over SSH hosts: the seeds go to the hosts' sweep workers
				return exit(runManyOnHosts(ctx, cfg, count, untilFail, c.Bool("report"), c.Bool("check-determinism"), out))
			case count != 1 || untilFail || c.Bool("check-determinism"):
				return exit(runMany(ctx, cfg, count, untilFail, c.Bool("report"), c.Bool("check-determinism"), out))
			}
			if c.Bool("ui") {
				return runWithUI(cfg, c.IsSet("duration"))
			}
			res, err := launcher.Launch(ctx, cfg)
			return afterRun(c, out, res, err)
		},
	}
}

// inPrivateNet runs the same command again in a network namespace of its own (a one-host run with
// --net-backend netem) and exits as that run does.
func inPrivateNet() error {
	code, err := launcher.RunInPrivateNet()
	if err != nil && !launcher.ErrSaid(err) {
		return cli.Exit(err.Error(), code)
	}
	return exit(code, nil)
}

// optionFlags makes the algorithm's options from the flags of the same names (rsdp-mode,
// rsdp-share-window, rsdp-resync, sync, rounds, delta, clusters): each flag given, and for the
// algorithm that reads them the defaults of those a run always records (RSDP's three, a
// synchronous algorithm's synchronizer and ABD's δ). Which algorithm takes which option and what
// the values may be is the algorithm's to say (election.Algorithm.ValidOptions, which the launcher
// and the explorer call, naming the option: asFlags writes it as the flag); nothing is checked here.
func optionFlags(c *cli.Context, algo string) map[string]string {
	alg, _ := election.Lookup(algo)
	opts := map[string]string{}
	for _, k := range []string{election.OptRSDPMode, election.OptRSDPShareWindow, election.OptRSDPResync,
		election.OptSync, election.OptRounds, election.OptDelta, election.OptClusters} {
		recorded := slices.Contains(alg.Options, k) && (algo == "rsdp" || k == election.OptSync ||
			k == election.OptDelta && strings.TrimSpace(c.String(election.OptSync)) == "abd")
		if c.IsSet(k) || recorded && c.Value(k) != nil {
			opts[k] = strings.TrimSpace(fmt.Sprint(c.Value(k)))
		}
	}
	if len(opts) == 0 {
		return nil
	}
	return opts
}

// syncCLIFlags are the synchronizer's flags, of run and explore.
func syncCLIFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sync", Value: "alpha", Usage: "with a synchronous algorithm (floodmax): the synchronizer that runs its pulses over the asynchronous network: abd (bounded delay --delta, physical clocks), alpha (safe to every neighbour, an ack per message), beta (a spanning tree: safe up, next down), gamma (clusters of beta trees, safe across one edge between neighbouring clusters)", Category: "algorithm options"},
		&cli.IntFlag{Name: "rounds", Usage: "with floodmax: how many rounds it floods", DefaultText: "the graph's diameter", Category: "algorithm options"},
		&cli.DurationFlag{Name: "delta", Value: 50 * time.Millisecond, Usage: "with --sync abd: δ, the bound on a message's delay it assumes (pulse k starts at local time 2(k-1)δ); a delay beyond it breaks the pulses, and the checker shows the late message", Category: "algorithm options"},
		&cli.IntFlag{Name: "clusters", Usage: "with --sync gamma: how many clusters the graph is cut into", DefaultText: "ceil(sqrt(N))", Category: "algorithm options"},
	}
}

// afterRun renders the report of a checked run when --report asks for it, then exits as the run
// does: a report that cannot be made is said on stderr and does not change the exit code.
func afterRun(c *cli.Context, out *ciOut, res launcher.Result, err error) error {
	dir, code := res.Dir, res.Code
	if dir != "" && !c.IsSet("out") { // runs/latest; a directory the user named is left as named
		keepLatest(dir)
	}
	if c.Bool("report") && dir != "" && code != ExitUnusable {
		if path, rerr := renderReport(dir); rerr != nil {
			fmt.Fprintf(os.Stderr, "leaderlab: --report: %v (the verdict stands; try leaderlab report %s)\n", rerr, dir)
		} else {
			fmt.Fprintf(out.text(), "report: %s\n", path)
		}
	}
	out.add(res, err)
	if ferr := out.finish(false, nil); ferr != nil && err == nil {
		return exit(ExitUnusable, ferr)
	}
	return exit(code, err)
}

// renderReport writes RUN/report.html, as `leaderlab report RUN` does, and returns its path.
func renderReport(dir string) (string, error) {
	in, err := report.Load(dir)
	if err != nil {
		return "", fmt.Errorf("cannot read the run %s: %w", dir, err)
	}
	return report.WriteFile(dir, in)
}

// exit turns an exit code and error into what urfave/cli returns.
func exit(code int, err error) error {
	if err != nil {
		return cli.Exit(err.Error(), code)
	}
	if code != 0 {
		return cli.Exit("", code)
	}
	return nil
}

func observerCommand() *cli.Command {
	return &cli.Command{
		Name:         "observer",
		Usage:        "run one observer process of RSDP's observer/observers detectors (started by run)",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run directory holding cluster.json"},
			&cli.IntFlag{Name: "id", Required: true, Usage: "this observer's ID (from cluster.json's observers)"},
		},
		Action: func(c *cli.Context) error {
			if err := observer.Run(context.Background(), observer.Options{Dir: c.String("run"), ID: c.Int("id")}); err != nil {
				return cli.Exit(err.Error(), 1)
			}
			return nil
		},
	}
}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:         "check",
		Usage:        "check a run directory again, offline",
		ArgsUsage:    "RUN_DIR",
		Description:  "Reads the run's logs, writes verdict.json and prints the verdict. Exit 0 passed, 1 violation, 2 unreadable.",
		OnUsageError: usageError,
		Flags:        ciFlags(),
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Exit("check needs exactly one argument: the run directory", ExitUnusable)
			}
			out := newCIOut(c)
			dir := c.Args().First()
			v, code, err := launcher.CheckVerdict(dir, out.text())
			out.add(launcher.Result{Dir: dir, Code: code, Verdict: v}, err)
			if ferr := out.finish(false, nil); ferr != nil && err == nil {
				return exit(ExitUnusable, ferr)
			}
			return exit(code, err)
		},
	}
}
