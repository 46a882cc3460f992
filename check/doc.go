// Package check is the checker: it turns a run's event log (a logs.Run) into a Verdict.
//
//	run, err := logs.ReadRun(dir)     // an error: the run cannot be judged (exit 2)
//	v := check.Check(run, check.Options{})
//	v.WriteFile(dir)                  // verdict.json, for programs
//	v.Print(os.Stdout)                // a short table, for people
//
// Check first builds a model of the run: each node's incarnations (from launcher.jsonl and the logs),
// its paused stretches (chaos.jsonl), its belief over time, and the link rules each node holds
// (partition, link and heal records, in force from each node's acknowledgement), merged into one
// timeline of points; a point also holds the live nodes' components while a rule can block a link
// (network.go says what a component is). The properties (agreement, uniqueness, termination,
// integrity, complexity), the metrics (failovers, heals, elections, overlaps, split-brain windows)
// and the warnings about faults that never bit are all read off that timeline.
//
// A node process does not link this package: the event log it writes is package logs alone.
package check
