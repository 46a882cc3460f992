package main

import (
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/election"
)

// ringAlgorithms lists the registered asynchronous algorithms that run on a ring (a synchronizer
// is not fault-tolerant: e2e_sync_test.go runs FloodMax).
func ringAlgorithms() []election.Algorithm {
	var out []election.Algorithm
	for _, name := range election.Names() {
		a, _ := election.Lookup(name)
		if !a.Synchronous && (a.Accepts("ring") == nil || a.Accepts("biring") == nil) {
			out = append(out, a)
		}
	}
	return out
}

// TestRingsEndToEnd runs every ring algorithm as 8 real processes: a clean election, a kill of the
// leader, and a kill of the leader's successor (node 1 on the ascending ring) that restarts.
func TestRingsEndToEnd(t *testing.T) {
	algs := ringAlgorithms()
	if len(algs) == 0 {
		t.Fatal("no ring algorithm is registered")
	}
	for _, a := range algs {
		t.Run(a.Name, func(t *testing.T) {
			runCluster(t, 8, "-a", a.Name, "-n", "8", "--duration", "2s", "--chaos", "")
			runCluster(t, 7, "-a", a.Name, "-n", "8", "--ids", "worst", "--duration", "3s", "--chaos", "at 1s kill leader")
			runCluster(t, 8, "-a", a.Name, "-n", "8", "--duration", "4s", "--chaos", "at 1s kill 1; at 2s restart 1")
		})
	}
}

// TestRingRefusesMesh: an algorithm given a topology it cannot run on is refused, naming the
// topologies it accepts.
func TestRingRefusesMesh(t *testing.T) {
	code, out := leaderlab(t, "run", "-a", "chang-roberts", "--topology", "mesh", "--out", t.TempDir()+"/x")
	if code != 2 {
		t.Fatalf("chang-roberts on a mesh exited %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{"chang-roberts", "mesh", "ring"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not mention %q:\n%s", want, out)
		}
	}
}
