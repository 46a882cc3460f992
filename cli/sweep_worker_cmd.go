package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/bench"
	"github.com/leaderlab/leaderlab/launcher"
)

// sweepWorkerCommand is the hidden end of a sweep over hosts (bench chaos --sim --hosts, run --sim
// --count N --hosts): the sweeping machine runs it over SSH and speaks launcher.ServeSweep's
// protocol on its standard input and output.
func sweepWorkerCommand() *cli.Command {
	return &cli.Command{
		Name:   "sweep-worker",
		Hidden: true,
		Usage:  "make a sweep's simulated runs, read as JSON lines on standard input, on every core (run over SSH by bench chaos --sim --hosts and run --sim --count --hosts)",
		Description: "Says hello ({\"hello\": {\"cpus\": N, ...}}), then reads one job a line ({\"id\": N, \"job\": {\"kind\": \"chaos\"|\"run\",\n" +
			"\"config\": {...}, \"twice\": false}}) and writes one result a line ({\"id\": N, \"result\": {...}} or {\"id\": N,\n" +
			"\"error\": \"...\"}) as each run ends. It makes as many runs at once as it has cores, in a temporary directory\n" +
			"it removes, and exits when its input closes. Exit 2 on bad flags.",
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("sweep-worker takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			// SIGHUP too (sshd's word when the session goes): the worker ends its jobs and removes
			// its temporary directory rather than dying with it left behind.
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			if err := launcher.ServeSweep(ctx, os.Stdin, os.Stdout, 0, bench.DoSweepJob); err != nil {
				return cli.Exit("sweep-worker: "+err.Error(), 1)
			}
			return nil
		},
	}
}
