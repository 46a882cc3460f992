package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/launcher"
	"github.com/urfave/cli/v2"
)

// splitList splits a comma-separated flag value, dropping blanks and repeats.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// anySlice makes a row's cells the arguments of a Printf.
func anySlice(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// noteDynamic tells, on standard error, that this binary is dynamically linked, when a timing
// bench is about to start nodes on this machine with it (launcher.DynamicNote).
func noteDynamic(c *cli.Context, bench string) {
	if c.Bool("sim") || c.String("hosts") != "" || c.String("ssh-config") != "" {
		return
	}
	if exe, err := os.Executable(); err == nil {
		if note := launcher.DynamicNote(exe); note != "" {
			fmt.Fprintf(os.Stderr, "leaderlab bench %s: %s\n", bench, note)
		}
	}
}
