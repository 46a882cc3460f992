package launcher

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// RunInPrivateNet runs this process's command line again in a new network namespace and returns
// its exit code. The child's standard streams are this process's; SIGINT and SIGTERM are passed on
// to it, and it gets SIGTERM if this process dies.
func RunInPrivateNet() (int, error) {
	if uid := os.Geteuid(); uid != 0 {
		return ExitUnusable, fmt.Errorf("--net-backend netem on one host runs in a network namespace of its own (its qdiscs would slow every program's loopback), which needs root, and this is uid %d (or give --hosts or --ssh-config: the agents run under sudo -n)", uid)
	}
	cmd := exec.Command("/proc/self/exe", os.Args[1:]...)
	cmd.Args[0] = os.Args[0]
	cmd.Env = append(os.Environ(), PrivateNetEnv+"="+strconv.FormatUint(netnsInode(), 10))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGTERM}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// Pdeathsig is the thread's, not the process's: the thread that starts the child stays.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return ExitUnusable, fmt.Errorf("--net-backend netem: a network namespace for the run: %w", err)
	}
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Exited():
		return ee.ExitCode(), errSaid
	case errors.As(err, &ee):
		return ExitUnusable, fmt.Errorf("the run in its network namespace ended by %v", ee.ProcessState)
	}
	return ExitUnusable, err
}

// errSaid is returned with the child's exit code: it has said what there was to say.
var errSaid = errors.New("")

// ErrSaid tells whether RunInPrivateNet's error was already printed by the run it started.
func ErrSaid(err error) bool { return errors.Is(err, errSaid) }

// loopbackUp brings up the loopback interface of the run's own network namespace (a new one has
// it down).
func loopbackUp() error {
	out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip link set lo up: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}
