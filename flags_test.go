package main

import (
	"testing"

	"github.com/urfave/cli/v2"
)

// TestEveryFlagIsDescribed: every flag of every command says what it does in --help.
func TestEveryFlagIsDescribed(t *testing.T) {
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				d, ok := f.(cli.DocGenerationFlag)
				if !ok || d.GetUsage() == "" {
					t.Errorf("%s %s: --%s has no description", path, c.Name, f.Names()[0])
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("leaderlab", newApp().Commands)
}
