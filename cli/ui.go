package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench/ui"
	"github.com/leaderlab/leaderlab/launcher"
)

func uiCommand() *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: "the lab you can touch: a local web page with a live cluster, faults by hand, step mode, the explorer's traces and the runs",
		Description: "Serves one page on the loopback interface (--addr to choose another address) and prints its address, with\n" +
			"a random token every request must carry. From the page: start a run (real processes or the simulator) and\n" +
			"watch it, kill, pause, resume, stop, restart nodes, cut partitions and set link faults by hand (recorded in\n" +
			"chaos.jsonl and replayed by run --replay), step the simulator one message or timer at a time, step through\n" +
			"an explorer's counterexample, and open any run's report. Ctrl-C stops it and every run it started.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "the address to listen on (port 0: a free one); a non-loopback address serves the lab to the network, still behind the token"},
			&cli.BoolFlag{Name: "no-open", Usage: "print the page's address without opening a browser"},
			&cli.StringFlag{Name: "runs", Value: "runs", Usage: "the directory of runs the page lists and new runs go into"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("ui takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			s, err := ui.New(ui.Config{Addr: c.String("addr"), Runs: c.String("runs"), Progress: os.Stderr})
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			return serveUI(s, !c.Bool("no-open"), nil)
		},
	}
}

// serveUI prints the page's address, opens it when asked, and serves until SIGINT or SIGTERM (or,
// with a run, until the run is over and then the signal); closing stops every run the server
// started. It returns the run's exit code when there is a run.
func serveUI(s *ui.Server, open bool, afterStart func() (<-chan int, error)) error {
	fmt.Printf("leaderlab ui: %s (Ctrl-C stops it and every run it started)\n", s.URL())
	errc := make(chan error, 1)
	go func() { errc <- s.Serve() }()
	if open {
		if err := openBrowser(s.URL()); err != nil {
			fmt.Fprintf(os.Stderr, "leaderlab ui: could not open a browser (%v): open the address above\n", err)
		}
	}
	ctx, stop := signalContext()
	defer stop()
	code := 0
	if afterStart != nil {
		done, err := afterStart()
		if err != nil {
			_ = s.Close()
			return cli.Exit(err.Error(), ExitUnusable)
		}
		select {
		case code = <-done:
			fmt.Fprintln(os.Stderr, "leaderlab ui: the run is over; the page stays up until Ctrl-C")
		case <-ctx.Done():
		}
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if err != nil {
			return cli.Exit(err.Error(), ExitUnusable)
		}
	}
	fmt.Fprintln(os.Stderr, "leaderlab ui: stopping")
	if err := s.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "leaderlab ui: %v\n", err)
	}
	return exit(code, nil)
}

// runWithUI is run --ui: the run driven from the page (until it is stopped there, or --duration
// when given), its verdict printed as run prints it.
func runWithUI(cfg launcher.Config, durationSet bool) error {
	s, err := ui.New(ui.Config{Runs: "runs", Progress: os.Stderr})
	if err != nil {
		return cli.Exit(err.Error(), ExitUnusable)
	}
	if !durationSet {
		cfg.Duration = 30 * time.Minute
	}
	cfg.UntilElected = false
	cfg.Hand = launcher.NewHand()
	cfg.Progress = os.Stderr
	return serveUI(s, true, func() (<-chan int, error) {
		return s.StartLive(cfg)
	})
}
