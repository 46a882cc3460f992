// Command leaderlab is a lab for distributed leader election: it starts N real node processes that
// elect a leader over TCP, injects faults, and checks from the nodes' event logs that the cluster
// ended with one, highest-ID leader. See README.md and docs/DESIGN.md.
//
// The commands are package cli's; this is only where the program starts.
package main

import (
	"os"

	"github.com/leaderlab/leaderlab/cli"
)

func main() {
	os.Exit(cli.Main(os.Args))
}
