// Package logs is the event log of a run and what is made of it afterwards.
//
// Nodes write their events with Writer (one JSON line per event, unbuffered); the launcher writes
// chaos.jsonl and launcher.jsonl with JSONLines. After the run, ReadRun loads a run directory into a
// Run (ReadNodeLog reads one node's log, accepting a torn line only where a SIGKILL can leave one),
// and Check turns the Run into a Verdict:
//
//	run, err := logs.ReadRun(dir)     // an error: the run cannot be judged (exit 2)
//	v := logs.Check(run, logs.Options{})
//	v.WriteFile(dir)                  // verdict.json, for programs
//	v.Print(os.Stdout)                // a short table, for people
//
// Check first builds a model of the run: each node's incarnations (from launcher.jsonl and the logs),
// its paused stretches (chaos.jsonl), and its belief over time, merged into one timeline of points.
// The properties (agreement, uniqueness, termination, integrity, complexity) and the metrics
// (failovers, elections, split-brain time) are all read off that timeline.
package logs
