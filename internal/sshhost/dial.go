package sshhost

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
	sshagent "golang.org/x/crypto/ssh/agent"
	"golang.org/x/crypto/ssh/knownhosts"
)

// Host is an open SSH connection to a target.
type Host struct {
	Target Target
	// HostKey is the key the host presented (its SHA256 fingerprint in messages).
	HostKey string
	// KeyChecked says how the host key was taken: "known_hosts FILE", "added to FILE
	// (accept-new)", "not checked (StrictHostKeyChecking no)", "not checked
	// (--insecure-ignore-host-key)".
	KeyChecked string

	c    *ssh.Client
	conn net.Conn
	once sync.Once
	dead chan struct{}
}

// DialOptions change how Dial checks and authenticates.
type DialOptions struct {
	// InsecureIgnoreHostKey takes any host key (the run records it): for throwaway labs only.
	InsecureIgnoreHostKey bool
	// KeepAlive is the interval of keepalive requests; a connection that misses three in a row is
	// closed (the host is gone). Default 5s.
	KeepAlive time.Duration
}

// The kinds of failure Dial names, for callers that branch on them (errors.Is).
var (
	ErrUnknownHostKey = errors.New("unknown host key")
	ErrChangedHostKey = errors.New("changed host key")
	ErrAuthRefused    = errors.New("authentication refused")
	ErrUnreachable    = errors.New("host unreachable")
)

// Dial connects to t, checks its host key and authenticates; every error names the host and says
// what would cure it.
func Dial(ctx context.Context, t Target, o DialOptions) (*Host, error) {
	auth, tried, closeAgent := authMethods(t)
	defer closeAgent()
	h := &Host{Target: t, dead: make(chan struct{})}
	cb, algos, err := h.hostKeyCallback(o)
	if err != nil {
		return nil, err
	}
	cfg := &ssh.ClientConfig{User: t.User, Auth: auth, HostKeyCallback: cb, HostKeyAlgorithms: algos, Timeout: t.ConnectTimeout}
	dctx, cancel := context.WithTimeout(ctx, t.ConnectTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(dctx, "tcp", t.Addr())
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v (is the host up and sshd running on port %d? ConnectTimeout is %v)", ErrUnreachable, t, err, t.Port, t.ConnectTimeout)
	}
	dl, _ := dctx.Deadline()
	conn.SetDeadline(dl)
	cc, chans, reqs, err := ssh.NewClientConn(conn, t.Addr(), cfg)
	if err != nil {
		conn.Close()
		var ke *hostKeyError
		switch {
		case errors.As(err, &ke):
			return nil, ke
		case strings.Contains(err.Error(), "unable to authenticate"):
			return nil, fmt.Errorf("%w: %s refused every key offered (%s) for user %s: put one of their public keys in %s's ~/.ssh/authorized_keys, or name the right key with IdentityFile in the ssh config",
				ErrAuthRefused, t, strings.Join(tried, ", "), t.User, t.Host)
		case errors.Is(err, os.ErrDeadlineExceeded) || isTimeout(err):
			return nil, fmt.Errorf("%w: %s: the SSH handshake did not finish within %v (is it sshd that listens on port %d?)", ErrUnreachable, t, t.ConnectTimeout, t.Port)
		}
		return nil, fmt.Errorf("%w: %s: SSH handshake: %v", ErrUnreachable, t, err)
	}
	conn.SetDeadline(time.Time{})
	h.c, h.conn = ssh.NewClient(cc, chans, reqs), conn
	go h.keepAlive(max(o.KeepAlive, 0))
	go func() { _ = h.c.Wait(); h.Close() }() // the connection ended (the host's sshd went): Done says so
	return h, nil
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// keepAlive closes the connection when the host stops answering: three keepalive requests in a
// row without a reply, as ServerAliveCountMax 3 does.
func (h *Host) keepAlive(every time.Duration) {
	if every == 0 {
		every = 5 * time.Second
	}
	t := time.NewTicker(every)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-h.dead:
			return
		case <-t.C:
		}
		ok := make(chan bool, 1)
		go func() {
			_, _, err := h.c.SendRequest("keepalive@openssh.com", true, nil)
			ok <- err == nil
		}()
		select {
		case good := <-ok:
			if !good {
				h.Close()
				return
			}
			missed = 0
		case <-time.After(every):
			if missed++; missed >= 3 {
				h.Close()
				return
			}
		case <-h.dead:
			return
		}
	}
}

// Close closes the connection (every session on it ends).
func (h *Host) Close() error {
	var err error
	h.once.Do(func() {
		close(h.dead)
		err = h.c.Close()
	})
	return err
}

// Done is closed when the connection is closed (by Close or by the keepalive).
func (h *Host) Done() <-chan struct{} { return h.dead }

// Wait returns when the connection ends, for whatever reason.
func (h *Host) Wait() error { return h.c.Wait() }

// authMethods offers the ssh-agent's keys (unless IdentitiesOnly) and then the identity files,
// and says what it offered, for the error when every one is refused.
func authMethods(t Target) ([]ssh.AuthMethod, []string, func()) {
	var signers []ssh.Signer
	var tried []string
	closeAgent := func() {}
	if sock := os.Getenv("SSH_AUTH_SOCK"); sock != "" && !t.IdentitiesOnly {
		if conn, err := net.Dial("unix", sock); err == nil {
			ag := sshagent.NewClient(conn)
			if ss, err := ag.Signers(); err == nil && len(ss) > 0 {
				signers = append(signers, ss...)
				tried = append(tried, fmt.Sprintf("%d keys of the ssh-agent", len(ss)))
			}
			closeAgent = func() { conn.Close() }
		}
	}
	files := t.IdentityFiles
	explicit := len(files) > 0
	if !explicit {
		for _, f := range []string{"~/.ssh/id_ed25519", "~/.ssh/id_ecdsa", "~/.ssh/id_rsa"} {
			files = append(files, expandHome(f))
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			if explicit {
				tried = append(tried, fmt.Sprintf("%s (unreadable: %v)", f, errors.Unwrap(err)))
			}
			continue
		}
		s, err := ssh.ParsePrivateKey(b)
		if err != nil {
			var pp *ssh.PassphraseMissingError
			if errors.As(err, &pp) {
				tried = append(tried, f+" (has a passphrase: add it to the ssh-agent)")
			} else {
				tried = append(tried, fmt.Sprintf("%s (not a private key: %v)", f, err))
			}
			continue
		}
		signers = append(signers, s)
		tried = append(tried, f)
	}
	if len(tried) == 0 {
		tried = []string{"no key at all: no ssh-agent, no IdentityFile, no ~/.ssh/id_*"}
	}
	return []ssh.AuthMethod{ssh.PublicKeys(signers...)}, tried, closeAgent
}

// hostKeyError is a refused host key, worded for the user.
type hostKeyError struct {
	kind error
	msg  string
}

func (e *hostKeyError) Error() string { return e.msg }
func (e *hostKeyError) Unwrap() error { return e.kind }

// hostKeyCallback checks the host's key against the known_hosts files as StrictHostKeyChecking
// says, and lists the key types known for the host first so that the host presents one of those
// (otherwise a host known by its ed25519 key that offers its ecdsa key first would look changed).
func (h *Host) hostKeyCallback(o DialOptions) (ssh.HostKeyCallback, []string, error) {
	t := h.Target
	record := func(key ssh.PublicKey, how string) {
		h.HostKey = ssh.FingerprintSHA256(key)
		h.KeyChecked = how
	}
	if o.InsecureIgnoreHostKey || t.Strict == "no" {
		how := "not checked (--insecure-ignore-host-key)"
		if !o.InsecureIgnoreHostKey {
			how = "not checked (StrictHostKeyChecking no)"
		}
		return func(_ string, _ net.Addr, key ssh.PublicKey) error { record(key, how); return nil }, nil, nil
	}
	var files []string
	for _, f := range t.KnownHosts {
		if f == "/dev/null" {
			continue
		}
		if _, err := os.Stat(f); err == nil {
			files = append(files, f)
		}
	}
	var kh ssh.HostKeyCallback
	if len(files) > 0 {
		var err error
		if kh, err = knownhosts.New(files...); err != nil {
			return nil, nil, fmt.Errorf("host %s: known hosts %s: %v", t, strings.Join(files, ", "), err)
		}
	} else {
		kh = func(string, net.Addr, ssh.PublicKey) error { return &knownhosts.KeyError{} }
	}
	known := strings.Join(t.KnownHosts, ", ")
	cb := func(hostname string, remote net.Addr, key ssh.PublicKey) error {
		err := kh(hostname, remote, key)
		if err == nil {
			record(key, "known_hosts "+known)
			return nil
		}
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return &hostKeyError{ErrUnknownHostKey, fmt.Sprintf("host %s: checking its host key against %s: %v", t, known, err)}
		}
		fp := ssh.FingerprintSHA256(key)
		entry := knownhosts.Normalize(t.Addr())
		if len(ke.Want) > 0 {
			w := ke.Want[0]
			return &hostKeyError{ErrChangedHostKey, fmt.Sprintf("host %s: its host key CHANGED: it offered %s %s, but %s line %d has %s %s for %s. "+
				"Someone may be intercepting the connection, or the host was reinstalled. If you know it was, remove the old key "+
				"(ssh-keygen -R '%s' -f %s) and connect again; nothing was run on the host",
				t, key.Type(), fp, w.Filename, w.Line, w.Key.Type(), ssh.FingerprintSHA256(w.Key), entry, entry, w.Filename)}
		}
		if t.Strict == "accept-new" && len(t.KnownHosts) > 0 && t.KnownHosts[0] != "/dev/null" {
			if err := appendKnownHost(t.KnownHosts[0], entry, key); err != nil {
				return &hostKeyError{ErrUnknownHostKey, fmt.Sprintf("host %s: StrictHostKeyChecking accept-new: adding its key to %s: %v", t, t.KnownHosts[0], err)}
			}
			record(key, "added to "+t.KnownHosts[0]+" (StrictHostKeyChecking accept-new)")
			return nil
		}
		return &hostKeyError{ErrUnknownHostKey, fmt.Sprintf("host %s: its host key is not known: no entry for %s in %s. It offered %s %s; "+
			"check that fingerprint with the host's owner, then add it (ssh-keyscan -p %d %s >> %s), or set StrictHostKeyChecking accept-new "+
			"in the ssh config; for a throwaway lab, --insecure-ignore-host-key skips the check (and the run records that)",
			t, entry, known, key.Type(), fp, t.Port, t.Host, t.KnownHosts[0])}
	}
	// The key types known for this host: ask the callback with a key it cannot know.
	var algos []string
	_, probe, _ := ed25519.GenerateKey(rand.Reader)
	if pk, err := ssh.NewSignerFromKey(probe); err == nil {
		var ke *knownhosts.KeyError
		if err := kh(t.Addr(), &net.TCPAddr{IP: net.ParseIP(t.Host), Port: t.Port}, pk.PublicKey()); errors.As(err, &ke) {
			for _, w := range ke.Want {
				algos = append(algos, keyAlgos(w.Key.Type())...)
			}
		}
	}
	return cb, dedupe(algos), nil
}

// keyAlgos are the host key algorithms that a key of type typ signs with.
func keyAlgos(typ string) []string {
	switch typ {
	case ssh.KeyAlgoRSA:
		return []string{ssh.KeyAlgoRSASHA512, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSA}
	}
	return []string{typ}
}

func dedupe(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// appendKnownHost adds one line for entry to file, creating it (0600) if need be.
func appendKnownHost(file, entry string, key ssh.PublicKey) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(knownhosts.Line([]string{entry}, key) + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Run runs cmd on the host (through the remote user's shell) with stdin as its input, and returns
// its standard output; a failure carries its standard error.
func (h *Host) Run(ctx context.Context, cmd string, stdin io.Reader) ([]byte, error) {
	s, err := h.c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("host %s: new session: %w", h.Target, err)
	}
	defer s.Close()
	var out, errb bytes.Buffer
	s.Stdout, s.Stderr, s.Stdin = &out, &errb, stdin
	done := make(chan error, 1)
	go func() { done <- s.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		s.Signal(ssh.SIGKILL)
		s.Close()
		return nil, fmt.Errorf("host %s: %s: %w", h.Target, firstWord(cmd), ctx.Err())
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = "no error output"
		}
		return out.Bytes(), fmt.Errorf("host %s: `%s` failed: %v: %s", h.Target, truncate(cmd, 120), err, truncate(msg, 400))
	}
	return out.Bytes(), nil
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Stream is a command's standard input and output as one stream; Close ends its input (the
// command sees EOF) and the session.
type Stream struct {
	io.Reader
	io.WriteCloser
	s    *ssh.Session
	once sync.Once
	done chan struct{}
	err  error
}

// Close closes the command's input and the session.
func (st *Stream) Close() error {
	st.once.Do(func() {
		st.WriteCloser.Close()
		st.s.Close()
	})
	return nil
}

// Done is closed when the command has ended; Err then says how.
func (st *Stream) Done() <-chan struct{} { return st.done }

// Err is how the command ended (nil while it runs or when it exited 0).
func (st *Stream) Err() error {
	select {
	case <-st.done:
		return st.err
	default:
		return nil
	}
}

// Start runs cmd on the host with its standard input and output as the returned stream and its
// standard error written to stderr.
func (h *Host) Start(cmd string, stderr io.Writer) (*Stream, error) {
	s, err := h.c.NewSession()
	if err != nil {
		return nil, fmt.Errorf("host %s: new session: %w", h.Target, err)
	}
	in, err := s.StdinPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	out, err := s.StdoutPipe()
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Stderr = stderr
	if err := s.Start(cmd); err != nil {
		s.Close()
		return nil, fmt.Errorf("host %s: start `%s`: %w", h.Target, truncate(cmd, 120), err)
	}
	st := &Stream{Reader: out, WriteCloser: in, s: s, done: make(chan struct{})}
	go func() {
		st.err = s.Wait()
		close(st.done)
	}()
	return st, nil
}

// RemoteAddr is the host's address of the connection.
func (h *Host) RemoteAddr() net.Addr { return h.conn.RemoteAddr() }

// LocalAddr is this side's address of the connection: the launcher's address as the host sees it.
func (h *Host) LocalAddr() net.Addr { return h.conn.LocalAddr() }
