package check_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/leaderlab/leaderlab/check"
	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/launcher"
	"github.com/leaderlab/leaderlab/logs"
)

// streamCorpus is a run of every algorithm and synchronizer in the simulator under the nemesis:
// kills, pauses, restarts and partitions; link rules, stops and clock faults; all of them at once.
var streamCorpus = func() []launcher.Config {
	var out []launcher.Config
	add := func(algo string, n int, seed int64, nemesis string, interval time.Duration, opts map[string]string) {
		cfg := launcher.DefaultConfig()
		cfg.Algo, cfg.Nodes, cfg.Seed, cfg.SeedSet = algo, n, seed, true
		cfg.Duration = 6 * time.Second
		cfg.Nemesis, cfg.NemesisInterval = nemesis, interval
		cfg.Options = opts
		out = append(out, cfg)
	}
	for _, a := range []string{"bully", "chang-roberts", "franklin", "hirschberg-sinclair", "lelann", "peterson", "rsdp"} {
		add(a, 5, 11, "kill,pause,restart,partition", time.Second, nil)
		add(a, 5, 12, "link,stop,clock", 500*time.Millisecond, nil)
	}
	for _, s := range []string{"abd", "alpha", "beta", "gamma"} {
		add("floodmax", 6, 13, "kill,pause,link", 700*time.Millisecond, map[string]string{election.OptSync: s})
	}
	add("rsdp", 4, 14, "kill,pause,link", time.Second, nil)
	out[len(out)-1].Detector = "mutual"
	add("bully", 7, 15, "kill,pause,restart,partition,link,stop,clock", 400*time.Millisecond, nil)
	out[len(out)-1].NemesisOverlap, out[len(out)-1].NemesisRestart, out[len(out)-1].Duration = true, true, 8*time.Second
	return out
}()

func corpusName(cfg launcher.Config) string {
	name := cfg.Algo
	if s := cfg.Options[election.OptSync]; s != "" {
		name += "-" + s
	}
	if cfg.Detector != "" {
		name += "-" + cfg.Detector
	}
	return fmt.Sprintf("%s-%d-%s", name, cfg.Seed, strings.ReplaceAll(cfg.Nemesis, ",", "+"))
}

// TestStreamedVerdictsAreTheOldOnes: the checker that streams a run directory gives the verdict
// the checker that held the run in memory gave, byte for byte, on a corpus of simulated runs of
// every algorithm under nemesis faults. testdata/stream/*.json are that checker's verdict.json of
// each run (made with LEADERLAB_STREAM_CORPUS=DIR, which writes the run directories there, and
// `leaderlab check` built from main at b9f8020, the last checker that held the run in memory).
// When a change to an algorithm or to the simulator changes the runs, rewrite them with that
// binary: what they hold is that checker's judgement of the same logs.
func TestStreamedVerdictsAreTheOldOnes(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates a corpus of runs")
	}
	keep := os.Getenv("LEADERLAB_STREAM_CORPUS")
	for _, cfg := range streamCorpus {
		name := corpusName(cfg)
		t.Run(name, func(t *testing.T) {
			s, err := launcher.Simulate(cfg)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), name)
			if keep != "" {
				dir = filepath.Join(keep, name)
			}
			if err := s.WriteDir(dir); err != nil {
				t.Fatal(err)
			}
			st, err := logs.OpenStream(dir)
			if err != nil {
				t.Fatal(err)
			}
			v, err := check.CheckStream(st, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.MarshalIndent(v, "", "  ")
			want, err := os.ReadFile(filepath.Join("testdata", "stream", name+".json"))
			if err != nil {
				t.Skipf("no verdict of the old checker for %s: %v", name, err)
			}
			if !bytes.Equal(append(got, '\n'), want) {
				t.Errorf("%s: the streamed verdict differs from the old checker's:\n%s\nold:\n%s", name, got, want)
			}
		})
	}
}
