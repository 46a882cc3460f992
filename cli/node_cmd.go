package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/leaderlab/leaderlab/node"
)

// nodeFlags is what `leaderlab node` is given.
type nodeFlags struct {
	run                       string
	id, inc                   int
	begin, awaitBegin, orders bool
}

func nodeCommand() *cli.Command {
	return &cli.Command{
		Name:         "node",
		Usage:        "run one node process (started by run; also by hand on a VM)",
		OnUsageError: usageError,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "run", Required: true, Usage: "the run directory holding cluster.json"},
			&cli.IntFlag{Name: "id", Required: true, Usage: "this node's ID"},
			&cli.IntFlag{Name: "inc", Usage: "incarnation", DefaultText: "the last one in the node's log + 1"},
			&cli.BoolFlag{Name: "begin", Usage: "begin once the links are up instead of waiting for the launcher (nodes started by hand)"},
			&cli.BoolFlag{Name: "await-begin", Usage: "a restarted incarnation waits for the launcher's begin too (the launcher sets its link rules first)"},
			&cli.BoolFlag{Name: "stdin-orders", Usage: "read the launcher's begin from stdin too, as lines \"begin <Unix ns>\" (set by run)"},
		},
		Action: func(c *cli.Context) error {
			err := runNode(nodeFlags{run: c.String("run"), id: c.Int("id"), inc: c.Int("inc"), begin: c.Bool("begin"),
				awaitBegin: c.Bool("await-begin"), orders: c.Bool("stdin-orders")})
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			return nil
		},
	}
}

// nodeFast runs `leaderlab node` without building the command line application: a launcher starts
// a thousand of them, and urfave/cli's app (every command, every flag) is built and parsed anew in
// each. It takes only a command line it reads exactly as nodeCommand would: the flags above, each
// once or more, as --flag value or --flag=value, and nothing else. Anything else — help, a missing
// or unknown flag, a bad number, an argument — goes the ordinary way (ok false), which answers it.
func nodeFast(args []string) (code int, ok bool) {
	if len(args) < 2 || args[1] != "node" {
		return 0, false
	}
	var f nodeFlags
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.run, "run", "", "")
	fs.IntVar(&f.id, "id", 0, "")
	fs.IntVar(&f.inc, "inc", 0, "")
	fs.BoolVar(&f.begin, "begin", false, "")
	fs.BoolVar(&f.awaitBegin, "await-begin", false, "")
	fs.BoolVar(&f.orders, "stdin-orders", false, "")
	if fs.Parse(args[2:]) != nil || fs.NArg() > 0 {
		return 0, false
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	if !given["run"] || !given["id"] {
		return 0, false // urfave/cli names the missing flag
	}
	if err := runNode(f); err != nil {
		if msg := strings.TrimSpace(err.Error()); msg != "" { // as Main reports the action's cli.Exit
			fmt.Fprintln(os.Stderr, "leaderlab:", asFlags(msg))
		}
		return 1, true
	}
	return 0, true
}

// runNode is the node command's action.
func runNode(f nodeFlags) error {
	// A node is one event loop and its sockets' goroutines: one P runs it. With more, every frame
	// and heartbeat that wakes the process hands work between OS threads, which at hundreds of
	// nodes on a host costs the elections more CPU than they use (measured: an idle 100-node ring,
	// 41% of two cores with two Ps, 30% with one). GOMAXPROCS in the environment still decides (the
	// launcher and the agent set it to 1 when theirs does not set it: osproc.NodeEnv).
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
	var orders io.Reader
	if f.orders {
		orders = os.Stdin
	}
	// The node handles SIGTERM and SIGINT itself: a stop event, then a clean exit.
	return node.Run(context.Background(), node.Options{Dir: f.run, ID: f.id, Inc: f.inc, Begin: f.begin, AwaitBegin: f.awaitBegin, Orders: orders})
}
