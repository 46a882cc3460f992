package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/logs"
)

// RSDP end to end (issue 6): each share-aggregation mode survives a SIGKILL of the leader; a SIGTERM
// takes the CLOSE path (the stopped node's close reaches the others, who drop it without waiting
// for a detector); each failover topology, with its observer processes, finds the dead leader.

func TestRSDPModesKillLeader(t *testing.T) {
	for _, mode := range []string{"latest", "popular", "ranked"} {
		t.Run(mode, func(t *testing.T) {
			runCluster(t, 4, "-a", "rsdp", "--rsdp-mode", mode, "--duration", "3s")
		})
	}
}

func TestRSDPStopTakesTheClosePath(t *testing.T) {
	dir := runCluster(t, 4, "-a", "rsdp", "--duration", "3s", "--chaos", "at 1s stop leader")
	run, err := logs.ReadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	closes := map[string]bool{}
	for _, e := range run.Nodes[5].Events {
		if e.Ev == logs.EvSend && e.Msg.Kind == "close" {
			closes[e.Msg.ID] = true
		}
	}
	if len(closes) != 4 {
		t.Fatalf("node 5 sent %d close messages on SIGTERM, want one to each of the 4 others", len(closes))
	}
	// Every survivor receives the close. The close and the broken link race (the stopped node
	// lingers a moment after its last send so that the close usually wins); at least one survivor
	// must have dropped 5 on the close, before any suspicion of it.
	closedFirst := 0
	for id := 1; id <= 4; id++ {
		got, suspected := false, false
		for _, e := range run.Nodes[id].Events {
			if e.Ev == logs.EvRecv && closes[e.Msg.ID] {
				got = true
				if !suspected {
					closedFirst++
				}
			}
			if e.Ev == logs.EvSuspect && e.Peer == 5 {
				suspected = true
			}
		}
		if !got {
			t.Errorf("node %d never received node 5's close", id)
		}
	}
	if closedFirst == 0 {
		t.Errorf("no survivor received node 5's close before suspecting it: the CLOSE path was not taken")
	}
}

func TestRSDPDetectors(t *testing.T) {
	for _, tc := range []struct {
		detector  string
		observers int // observer logs expected
		extra     []string
	}{
		{"mutual", 0, nil},
		{"observer", 1, nil},
		{"observers", 3, []string{"--observers", "3"}},
	} {
		t.Run(tc.detector, func(t *testing.T) {
			args := append([]string{"-a", "rsdp", "--detector", tc.detector, "--health-interval", "50ms", "--duration", "3s"}, tc.extra...)
			dir := runCluster(t, 4, args...)
			b, err := os.ReadFile(filepath.Join(dir, "verdict.json"))
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				Metrics struct {
					Detections []check.Detection     `json:"detections"`
					Observers  []check.ObserverStats `json:"observers"`
				} `json:"metrics"`
			}
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			if len(v.Metrics.Detections) != 1 || v.Metrics.Detections[0].FirstMS == nil {
				t.Fatalf("detections %+v: want the kill of 5 detected", v.Metrics.Detections)
			}
			if len(v.Metrics.Observers) != tc.observers {
				t.Fatalf("%d observers in the verdict, want %d", len(v.Metrics.Observers), tc.observers)
			}
			for _, o := range v.Metrics.Observers {
				if o.Probes == 0 {
					t.Errorf("observer %d sent no probes", o.ID)
				}
			}
			if tc.observers > 0 {
				// the verdict that took 5 out came from an observer: every survivor says so
				run, err := logs.ReadRun(dir)
				if err != nil {
					t.Fatal(err)
				}
				for id := 1; id <= 4; id++ {
					var why []string
					for _, e := range run.Nodes[id].Events {
						if e.Ev == logs.EvSuspect && e.Peer == 5 {
							why = append(why, e.Reason)
						}
					}
					if len(why) == 0 || !strings.HasPrefix(why[0], "observer 1000") {
						t.Errorf("node %d's suspicions of 5: %q; want the first from an observer's verdict", id, why)
					}
				}
			}
		})
	}
}

func TestRSDPFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rsdp-mode", "popular"}, "--rsdp-mode applies to rsdp only"},
		{[]string{"-a", "rsdp", "--rsdp-mode", "loudest"}, `--rsdp-mode "loudest" (accepted: latest, popular, ranked)`},
		{[]string{"-a", "rsdp", "--detector", "oracle"}, `--detector "oracle": want one of heartbeat, mutual, observer, observers`},
		{[]string{"-a", "rsdp", "--detector", "observer", "--observers", "3"}, "only the observers detector has several observers"},
		{[]string{"-a", "chang-roberts", "--detector", "mutual"}, "the probing detectors run on a mesh"},
		{[]string{"-a", "rsdp", "--health-interval", "10ms"}, "give --detector mutual, observer or observers"},
	} {
		code, out := leaderlab(t, append([]string{"run", "--out", filepath.Join(t.TempDir(), "r")}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) {
			t.Errorf("run %v: exit %d, output %q; want exit 2 and %q", tc.args, code, out, tc.want)
		}
	}
}
