package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options configure an agent. Every field has a default.
type Options struct {
	// WorkDir holds the run directories. Default: DefaultWorkDir().
	WorkDir string
	// Binary is the program started as `Binary node --run ...`. Default: os.Executable(), the
	// agent's own leaderlab binary. Tests put a fake node here.
	Binary string
	// Log receives the agent's log, one line per connection refused or closed, request refused,
	// process started or ended, lease expired. Default: os.Stderr.
	Log io.Writer
	// Now is the agent's wall clock as the time op reports it (and event timestamps). Default:
	// time.Now. Tests shift it.
	Now func() time.Time
	// IdleTimeout ends a stream that sends no request for that long. Default: DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// DefaultWorkDir is where run directories go by default: leaderlab-agent under $XDG_STATE_HOME
// when it is set, else under $HOME/.local/state (the XDG default), else under os.TempDir(). It is
// the remote user's own, as everything a launcher leaves on an SSH host is.
func DefaultWorkDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "leaderlab-agent")
	}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "leaderlab-agent")
	}
	return filepath.Join(os.TempDir(), "leaderlab-agent")
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if o.WorkDir == "" {
		o.WorkDir = DefaultWorkDir()
	}
	dir, err := filepath.Abs(o.WorkDir)
	if err != nil {
		return o, fmt.Errorf("work directory %s: %w", o.WorkDir, err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return o, fmt.Errorf("work directory %s: %w (want a directory the agent can create and write)", dir, err)
	}
	o.WorkDir = dir
	if o.Binary == "" {
		if o.Binary, err = os.Executable(); err != nil {
			return o, fmt.Errorf("cannot find the agent's own executable to start nodes with: %w", err)
		}
	}
	if o.Log == nil {
		o.Log = os.Stderr
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	return o, nil
}
