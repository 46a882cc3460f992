package cli

import (
	"fmt"
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

// TestFlagsForFields: every field the launcher's errors name maps to a flag of run that exists, and
// the CLI writes an error in flags.
func TestFlagsForFields(t *testing.T) {
	run := map[string]bool{}
	for _, c := range newApp().Commands {
		if c.Name == "run" {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					run["--"+n] = true
				}
			}
		}
	}
	for field, flag := range runFlagOf {
		if !run[flag] {
			t.Errorf("%s maps to %s, which run does not have", field, flag)
		}
	}
	if got := asFlags("Config.Timeout 10ms must be longer than Config.Heartbeat 50ms; Config.Binary stays"); got != "--timeout 10ms must be longer than --heartbeat 50ms; Config.Binary stays" {
		t.Errorf("asFlags: %q", got)
	}
	for in, want := range map[string]string{
		"explore.Config.Crashes 3: want 0..2; explore.Config.Progress stays": "--crashes 3: want 0..2; explore.Config.Progress stays",
		"explore.Config.Timeout -1s: want a positive duration":               "--timeout -1s: want a positive duration",
		`option rsdp-mode "x" (accepted: latest, popular, ranked)`:           `--rsdp-mode "x" (accepted: latest, popular, ranked)`,
	} {
		if got := asFlags(in); got != want {
			t.Errorf("asFlags(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseIDSet(t *testing.T) {
	got, err := parseIDSet("1-4, 9,3")
	if err != nil || fmt.Sprint(got) != "[1 2 3 4 9]" {
		t.Errorf("parseIDSet = %v, %v", got, err)
	}
	for _, bad := range []string{"", "x", "4-1", "0", "1-"} {
		if _, err := parseIDSet(bad); err == nil {
			t.Errorf("parseIDSet(%q) accepted", bad)
		}
	}
}
