package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// explore refuses a bad --workers, --max-memory or --bitstate with exit 2 and an error that names
// the flag and what it takes, before it searches.
func TestExploreBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, "--workers 0: want 1 or more"},
		{[]string{"--workers", "-3"}, "--workers -3: want 1 or more"},
		{[]string{"--max-memory", "1"}, "--max-memory 1: want a size in MB, at least 16"},
		{[]string{"--max-memory", "-5"}, "--max-memory -5: want a size in MB"},
		{[]string{"--bitstate", "-1"}, "--bitstate -1: want a size in MB"},
		{[]string{"--bitstate", "128", "--max-memory", "64"}, "--bitstate 128: want a size in MB, no larger than --max-memory"},
	} {
		args := append([]string{"leaderlab", "explore", "-a", "bully", "-n", "3"}, c.args...)
		err := newApp().Run(args)
		var ec cli.ExitCoder
		if !errors.As(err, &ec) || ec.ExitCode() != ExitUnusable || !strings.Contains(asFlags(err.Error()), c.want) {
			t.Errorf("%v: %v, want exit %d and %q", c.args, err, ExitUnusable, c.want)
		}
	}
}
