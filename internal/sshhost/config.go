// Package sshhost reaches the hosts of a multi-host run over SSH, the way Jepsen's control layer
// reaches its nodes: golang.org/x/crypto/ssh for the protocol, host keys checked against
// known_hosts (golang.org/x/crypto/ssh/knownhosts), keys from the ssh-agent and the identity files,
// and the hosts named as in OpenSSH's client configuration (github.com/kevinburke/ssh_config reads
// the file `vagrant ssh-config` writes). It knows nothing of leaderlab's runs: it resolves a
// target, dials it with errors that say what to do, runs commands, uploads a file by its digest,
// and opens a session whose standard input and output are one stream.
package sshhost

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	sshconfig "github.com/kevinburke/ssh_config"
)

// Target is one host, resolved: where to connect, as whom, with which keys, and how to check the
// host's key.
type Target struct {
	// Name is the host as the user wrote it (a Host alias of the config, or [user@]host[:port]).
	Name string
	// Host and Port are where to connect (HostName and Port of the config).
	Host string
	Port int
	// User is the remote user (User of the config; default: the local user).
	User string
	// IdentityFiles are private keys to offer (IdentityFile; ~ expanded). With none, the
	// defaults ~/.ssh/id_ed25519, id_ecdsa and id_rsa that exist are offered.
	IdentityFiles []string
	// IdentitiesOnly offers only IdentityFiles, not the ssh-agent's keys.
	IdentitiesOnly bool
	// KnownHosts are the known_hosts files (UserKnownHostsFile; default ~/.ssh/known_hosts).
	KnownHosts []string
	// Strict is StrictHostKeyChecking: "yes" (and "ask": an unknown key is refused), "accept-new"
	// (an unknown key is added to the first known_hosts file), "no" (any key is taken).
	Strict string
	// ConnectTimeout bounds the TCP connection and the SSH handshake (default 10s).
	ConnectTimeout time.Duration
}

// Addr is host:port.
func (t Target) Addr() string { return net.JoinHostPort(t.Host, strconv.Itoa(t.Port)) }

// String names the target in messages: the name, and the address when it differs.
func (t Target) String() string {
	addr := t.User + "@" + t.Addr()
	if t.Name == "" || t.Name == addr {
		return addr
	}
	return fmt.Sprintf("%s (%s)", t.Name, addr)
}

// Config is an OpenSSH client configuration, or none (every key then takes its default).
type Config struct {
	path string
	cfg  *sshconfig.Config
}

// LoadConfig reads an OpenSSH client configuration file.
func LoadConfig(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ssh config %s: %w", path, err)
	}
	defer f.Close()
	c, err := sshconfig.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("ssh config %s: %v (want OpenSSH's syntax, as `vagrant ssh-config` writes it)", path, err)
	}
	return &Config{path: path, cfg: c}, nil
}

// UserConfig is ~/.ssh/config when it exists and reads, else an empty configuration: a --hosts
// target is resolved through it as ssh would.
func UserConfig() *Config {
	home, err := os.UserHomeDir()
	if err != nil {
		return &Config{}
	}
	c, err := LoadConfig(filepath.Join(home, ".ssh", "config"))
	if err != nil {
		return &Config{}
	}
	return c
}

// Path is the file the configuration came from ("" for none).
func (c *Config) Path() string { return c.path }

// Hosts lists the Host aliases of the file that name one host (no wildcard, no negation), in the
// file's order: the hosts of a run --ssh-config.
func (c *Config) Hosts() []string {
	if c.cfg == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for _, h := range c.cfg.Hosts {
		for _, p := range h.Patterns {
			s := p.String()
			if s == "" || strings.ContainsAny(s, "*?!") || seen[s] {
				continue
			}
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func (c *Config) get(alias, key string) string {
	if c.cfg == nil {
		return ""
	}
	v, _ := c.cfg.Get(alias, key)
	return unquote(v)
}

func (c *Config) getAll(alias, key string) []string {
	if c.cfg == nil {
		return nil
	}
	vs, _ := c.cfg.GetAll(alias, key)
	var out []string
	for _, v := range vs {
		// UserKnownHostsFile takes several files on one line.
		for _, f := range splitArgs(v) {
			out = append(out, f)
		}
	}
	return out
}

// ParseTarget splits [user@]host[:port] (an IPv6 address in brackets when a port follows).
func ParseTarget(s string) (user, host string, port int, err error) {
	rest := s
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		user, rest = rest[:i], rest[i+1:]
		if user == "" {
			return "", "", 0, fmt.Errorf("%q: empty user before @ (want [user@]host[:port])", s)
		}
	}
	host = rest
	if h, p, e := net.SplitHostPort(rest); e == nil {
		n, perr := strconv.Atoi(p)
		if perr != nil || n < 1 || n > 65535 {
			return "", "", 0, fmt.Errorf("%q: port %q is not a number in 1..65535 (want [user@]host[:port])", s, p)
		}
		host, port = h, n
	} else if strings.Count(rest, ":") == 1 {
		return "", "", 0, fmt.Errorf("%q: %v (want [user@]host[:port])", s, e)
	}
	if host == "" || strings.ContainsAny(host, " \t/") {
		return "", "", 0, fmt.Errorf("%q: no host name (want [user@]host[:port])", s)
	}
	return user, host, port, nil
}

// Resolve turns a target as the user wrote it ([user@]host[:port], or a Host alias of c) into a
// Target, taking from c what the target does not say, and OpenSSH's defaults for the rest.
func (c *Config) Resolve(name string) (Target, error) {
	usr, host, port, err := ParseTarget(name)
	if err != nil {
		return Target{}, err
	}
	t := Target{Name: name, Host: host, Port: port, User: usr}
	if hn := c.get(host, "HostName"); hn != "" {
		t.Host = strings.ReplaceAll(hn, "%h", host)
	}
	if t.Port == 0 {
		if p := c.get(host, "Port"); p != "" {
			n, err := strconv.Atoi(p)
			if err != nil || n < 1 || n > 65535 {
				return Target{}, fmt.Errorf("host %s: Port %q in %s is not a number in 1..65535", name, p, c.path)
			}
			t.Port = n
		} else {
			t.Port = 22
		}
	}
	if t.User == "" {
		t.User = c.get(host, "User")
	}
	if t.User == "" {
		if u, err := user.Current(); err == nil {
			t.User = u.Username
		} else {
			t.User = os.Getenv("USER")
		}
	}
	for _, f := range c.getAll(host, "IdentityFile") {
		t.IdentityFiles = append(t.IdentityFiles, expandHome(f))
	}
	t.IdentitiesOnly = strings.EqualFold(c.get(host, "IdentitiesOnly"), "yes")
	for _, f := range c.getAll(host, "UserKnownHostsFile") {
		t.KnownHosts = append(t.KnownHosts, expandHome(f))
	}
	if len(t.KnownHosts) == 0 {
		t.KnownHosts = []string{expandHome("~/.ssh/known_hosts")}
	}
	switch s := strings.ToLower(c.get(host, "StrictHostKeyChecking")); s {
	case "", "ask", "yes", "true":
		t.Strict = "yes"
	case "accept-new":
		t.Strict = "accept-new"
	case "no", "off", "false":
		t.Strict = "no"
	default:
		return Target{}, fmt.Errorf("host %s: StrictHostKeyChecking %q in %s: want yes, accept-new or no", name, s, c.path)
	}
	t.ConnectTimeout = 10 * time.Second
	if v := c.get(host, "ConnectTimeout"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return Target{}, fmt.Errorf("host %s: ConnectTimeout %q in %s: want a whole number of seconds, 1 or more", name, v, c.path)
		}
		t.ConnectTimeout = time.Duration(n) * time.Second
	}
	return t, nil
}

// expandHome expands a leading ~/ to the home directory.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, strings.TrimPrefix(p[1:], "/"))
		}
	}
	return p
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// splitArgs splits a value into its space-separated words, keeping a double-quoted word whole.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, have := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, have = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if have {
				out = append(out, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if have {
		out = append(out, cur.String())
	}
	return out
}
