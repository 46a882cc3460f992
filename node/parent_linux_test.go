package node

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestParentWatched: a process started with a parent-death signal (as the launcher and the agent
// start nodes) knows it, from whichever goroutine asks; one started without does not.
func TestParentWatched(t *testing.T) {
	if os.Getenv("LEADERLAB_PARENT_WATCHED_CHILD") != "" {
		return
	}
	for _, withSig := range []bool{true, false} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestParentWatchedChild$")
		cmd.Env = append(os.Environ(), "LEADERLAB_PARENT_WATCHED_CHILD=1")
		if withSig {
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		if want := fmt.Sprintf("parentWatched=%v", withSig); !strings.Contains(string(out), want) {
			t.Errorf("started with a parent-death signal: %v; the child says %q, want %s", withSig, out, want)
		}
	}
}

func TestParentWatchedChild(t *testing.T) {
	if os.Getenv("LEADERLAB_PARENT_WATCHED_CHILD") == "" {
		t.Skip("the child half of TestParentWatched")
	}
	done := make(chan bool)
	go func() { done <- parentWatched() }() // asked from another goroutine, likely another thread
	fmt.Printf("parentWatched=%v\n", <-done)
}
