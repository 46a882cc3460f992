package sim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/leaderlab/leaderlab/logs"
	"github.com/leaderlab/leaderlab/rundir"
)

// cluster is the run's cluster.json.
func (s *Sim) cluster(order, inits []int, spec string) rundir.Cluster {
	c := s.cfg
	placement := c.Placement
	if placement == "" {
		placement = "ascending"
		if c.Order != nil {
			placement = joinInts(c.Order)
		}
	}
	nodes := make([]rundir.Node, c.N)
	for i := range nodes {
		nodes[i] = rundir.Node{ID: i + 1, Addr: "sim:" + strconv.Itoa(i+1)}
	}
	return rundir.Cluster{
		Version:            rundir.Version,
		ClusterID:          fmt.Sprintf("sim-%d", c.Seed),
		Algo:               c.Algo,
		Topology:           c.Topology,
		Edges:              slices.Clone(c.Edges),
		Placement:          placement,
		Ring:               slices.Clone(order),
		InitiatorsSpec:     spec,
		Initiators:         inits,
		Nodes:              nodes,
		Heartbeat:          rundir.Duration(c.Heartbeat),
		Timeout:            rundir.Duration(c.Timeout),
		ElectionTimeout:    rundir.Duration(c.ElectionTimeout),
		CoordinatorTimeout: rundir.Duration(c.CoordinatorTimeout),
		Settle:             rundir.Duration(c.Settle),
		Duration:           rundir.Duration(c.Duration),
		Grace:              rundir.Duration(c.Grace),
		TerminationBound:   rundir.Duration(c.TerminationBound),
		Seed:               c.Seed,
		Options:            c.Options,
		Created:            time.Unix(0, c.Base).UTC().Format(time.RFC3339),
	}
}

func joinInts(ids []int) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = strconv.Itoa(id)
	}
	return strings.Join(parts, ",")
}

// WriteDir writes run as a run directory, exactly as a real run lays it out: nodes/<id>.jsonl,
// chaos.jsonl, launcher.jsonl and, last, cluster.json (mode 0600), so that a directory with a
// cluster.json is complete. `leaderlab check DIR` then judges it like a real run.
func WriteDir(run *logs.Run, dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, rundir.NodesDir), 0o755); err != nil {
		return fmt.Errorf("sim: write run: %w", err)
	}
	ids := make([]int, 0, len(run.Nodes))
	for id := range run.Nodes {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var b []byte
	for _, id := range ids {
		b = b[:0]
		for i := range run.Nodes[id].Events {
			var err error
			if b, err = logs.AppendEvent(b, &run.Nodes[id].Events[i]); err != nil {
				return fmt.Errorf("sim: node %d: %w", id, err)
			}
		}
		if err := os.WriteFile(rundir.NodeLog(dir, id), b, 0o644); err != nil {
			return fmt.Errorf("sim: write run: %w", err)
		}
	}
	if err := writeLines(filepath.Join(dir, rundir.ChaosFile), run.Chaos); err != nil {
		return err
	}
	if err := writeLines(filepath.Join(dir, rundir.LauncherFile), run.Launcher); err != nil {
		return err
	}
	c := run.Cluster
	if err := rundir.Save(dir, &c); err != nil {
		return fmt.Errorf("sim: %w", err)
	}
	return nil
}

func writeLines[T any](path string, recs []T) error {
	var b []byte
	for i := range recs {
		j, err := json.Marshal(&recs[i])
		if err != nil {
			return fmt.Errorf("sim: encode %s: %w", filepath.Base(path), err)
		}
		b = append(append(b, j...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("sim: write run: %w", err)
	}
	return nil
}
