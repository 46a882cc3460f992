// Package check is the checker: it turns a run's event log into a Verdict.
//
//	s, err := logs.OpenStream(dir)    // or logs.StreamOf(run), for a run in memory (Check)
//	v, err := check.CheckStream(s, check.Options{}) // an error: the run cannot be judged (exit 2)
//	v.WriteFile(dir)                  // verdict.json, for programs
//	v.Print(os.Stdout)                // a short table, for people
//
// The run is never held: it is read in time order (stream.go: a k-way merge of the node logs) in two
// passes. The first (scan.go) learns what the timeline needs of each log: each node's incarnations
// (with launcher.jsonl), their first events and stops, the msg.ids sent. Then the model is built:
// the paused stretches (chaos.jsonl), and the link rules each node holds (partition, link and heal
// records, in force from each node's acknowledgement). The second pass (pass.go) plays the timeline
// instant by instant — a point whenever a node's incarnation, pause or belief, or the rules, change;
// a point also holds the live nodes' components while a rule can block a link (network.go says what
// a component is) — and hands each point and each event to the properties (agreement, uniqueness,
// termination, integrity, complexity), the metrics (failovers, heals, elections, overlaps,
// split-brain windows) and the warnings about faults that never bit, which keep what they need
// (streams.go) and are read off at the end.
//
// A node process does not link this package: the event log it writes is package logs alone.
package check
