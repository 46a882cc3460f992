package cli

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/agent"
)

func agentCommand() *cli.Command {
	return &cli.Command{
		Name:  "agent",
		Usage: "run the host agent of multi-host runs: the launcher on another machine starts, signals and watches nodes here",
		Description: "Listens on --listen for a launcher that holds the token of --token-file (HMAC-SHA256 challenge-response,\n" +
			"then every frame authenticated, so nothing can be forged or replayed). It only ever starts this binary's\n" +
			"node command, for nodes listed in a run's cluster.json, in WORKDIR/<run ID>/. When a run's lease runs out\n" +
			"(no request from its launcher for 15s by default) its nodes are killed; when the agent stops (SIGINT,\n" +
			"SIGTERM), all its nodes are. WORKDIR defaults to $XDG_STATE_HOME/leaderlab-agent when XDG_STATE_HOME is set,\n" +
			"else /var/lib/leaderlab-agent when writable, else $TMPDIR/leaderlab-agent.\n" +
			"Prints \"agent listening on ADDR\" once listening. Exit 2 on bad flags or when it cannot listen.",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Required: true, Usage: "`HOST:PORT` to listen on, e.g. 192.168.56.11:7070 (0.0.0.0 for every address)"},
			&cli.StringFlag{Name: "token-file", Required: true, Usage: "`FILE` holding the shared secret (at least 16 bytes; the launcher reads the same file)"},
			&cli.StringFlag{Name: "workdir", Usage: "`DIR` that holds the run directories (DIR/<run ID>/)", DefaultText: "$XDG_STATE_HOME/leaderlab-agent, /var/lib/leaderlab-agent or $TMPDIR/leaderlab-agent"},
			&cli.StringFlag{Name: "log", Usage: "append the agent's log to `FILE`", DefaultText: "stderr"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return cli.Exit(fmt.Sprintf("agent takes no arguments, got %q", c.Args().Slice()), ExitUnusable)
			}
			listen := c.String("listen")
			if err := checkListen(listen); err != nil {
				return cli.Exit(fmt.Sprintf("--listen: %v", err), ExitUnusable)
			}
			tokenFile := c.String("token-file")
			token, err := agent.LoadToken(tokenFile)
			if err != nil {
				return cli.Exit(fmt.Sprintf("--token-file: %v", err), ExitUnusable)
			}
			if st, err := os.Stat(tokenFile); err == nil && st.Mode().Perm()&0o077 != 0 {
				fmt.Fprintf(os.Stderr, "leaderlab: warning: token file %s is readable by other users (mode %v); chmod 600 it\n", tokenFile, st.Mode().Perm())
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
			srv, err := agent.Listen(agent.Options{Listen: listen, Token: token, WorkDir: c.String("workdir"), Log: logw})
			if err != nil {
				return cli.Exit(err.Error(), ExitUnusable)
			}
			fmt.Printf("agent listening on %s\n", srv.Addr())
			ctx, stop := signalContext()
			defer stop()
			if err := srv.Serve(ctx); err != nil {
				return cli.Exit(err.Error(), 1)
			}
			return nil
		},
	}
}

// checkListen checks a --listen value: host:port with a numeric port in 0..65535 (the host may be
// empty for every address).
func checkListen(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (%v); want e.g. 192.168.56.11:7070 or 0.0.0.0:7070", addr, err)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
		return fmt.Errorf("%q: port %q is not a number in 0..65535; want e.g. 192.168.56.11:7070", addr, port)
	}
	return nil
}
