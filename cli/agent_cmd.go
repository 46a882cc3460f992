package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/agent"
)

func agentCommand() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "serve a launcher over standard input and output (it runs this over SSH on each host of run --hosts)",
		Description: "leaderlab run --hosts/--ssh-config connects to each host over SSH, uploads its own binary when the\n" +
			"host's copy differs, and runs `leaderlab agent --stdio` in the session: SSH authenticates and encrypts,\n" +
			"the agent speaks framed msgpack requests on its standard input and output. It only ever starts this\n" +
			"binary's node command, for nodes listed in a run's cluster.json, in WORKDIR/<run ID>/. When the session\n" +
			"ends (the launcher died, the network went) or a run's lease runs out (no request for 15s by default),\n" +
			"the nodes are killed. WORKDIR defaults to $XDG_STATE_HOME/leaderlab-agent, else\n" +
			"~/.local/state/leaderlab-agent. Its log goes to stderr (the launcher keeps it in RUN/hosts/).\n" +
			"Exit 2 on bad flags.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "stdio", Usage: "serve on standard input and output (the only transport; SSH carries it)"},
			&cli.StringFlag{Name: "workdir", Usage: "`DIR` that holds the run directories (DIR/<run ID>/)", DefaultText: "$XDG_STATE_HOME/leaderlab-agent or ~/.local/state/leaderlab-agent"},
			&cli.StringFlag{Name: "log", Usage: "append the agent's log to `FILE`", DefaultText: "stderr"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("agent takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			if !c.Bool("stdio") {
				return cli.Exit("agent: want --stdio (the agent serves only over its standard input and output, which an SSH session carries:\n"+
					"  ssh HOST leaderlab agent --stdio\n"+
					"leaderlab run --hosts FILE or --ssh-config FILE does that for you)", ExitUnusable)
			}
			var logw io.Writer = os.Stderr
			if f := c.String("log"); f != "" {
				lf, err := os.OpenFile(f, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
				if err != nil {
					return cli.Exit(fmt.Sprintf("--log: %v (want a file the agent can create or append to)", err), ExitUnusable)
				}
				defer lf.Close()
				logw = lf
			}
			ctx, stop := signalContext()
			defer stop()
			if err := agent.ServeStdio(ctx, agent.Options{WorkDir: c.String("workdir"), Log: logw}); err != nil {
				return cli.Exit("agent: "+err.Error(), 1)
			}
			return nil
		},
	}
}
