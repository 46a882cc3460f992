package agent

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Options configure an agent. Listen and Token are required; every other field has a default.
type Options struct {
	// Listen is the host:port to listen on.
	Listen string
	// Token is the shared secret (at least MinTokenLen bytes); see LoadToken.
	Token []byte
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
	// HandshakeTimeout bounds the handshake. Default: HandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes an authenticated connection that sends no request for that long.
	// Default: DefaultIdleTimeout.
	IdleTimeout time.Duration
	// MaxConns bounds the connections served at once; more are closed on accept. Default: 64.
	MaxConns int
}

// DefaultWorkDir is where run directories go by default: $XDG_STATE_HOME/leaderlab-agent when
// XDG_STATE_HOME is set, else /var/lib/leaderlab-agent when it can be created and written, else
// leaderlab-agent under os.TempDir().
func DefaultWorkDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "leaderlab-agent")
	}
	const system = "/var/lib/leaderlab-agent"
	if os.MkdirAll(system, 0o700) == nil {
		if f, err := os.CreateTemp(system, ".probe-*"); err == nil {
			f.Close()
			os.Remove(f.Name())
			return system
		}
	}
	return filepath.Join(os.TempDir(), "leaderlab-agent")
}

// withDefaults checks o and fills in its defaults.
func (o Options) withDefaults() (Options, error) {
	if err := checkToken(o.Token); err != nil {
		return o, err
	}
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
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = HandshakeTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 64
	}
	return o, nil
}
