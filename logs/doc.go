// Package logs is the event log of a run: its schema, its writers and its readers. Package check
// judges what it reads.
//
// Nodes write their events with Writer (one JSON line per event, unbuffered); the launcher writes
// chaos.jsonl and launcher.jsonl with JSONLines. After the run, ReadRun loads a run directory into a
// Run (ReadNodeLog reads one node's log, accepting a torn line only where a SIGKILL can leave one):
//
//	run, err := logs.ReadRun(dir)     // an error: the run cannot be judged (exit 2)
//	v := check.Check(run, check.Options{})
//
// A run too long to hold is read as a Stream instead: its records at once, each log an event at a
// time, as often as the reader needs (stream.go); the lines are judged as ReadRun judges them.
//
//	s, err := logs.OpenStream(dir)
//	v, err := check.CheckStream(s, check.Options{})
//
// The node's lines take a fast decoder (fastdecode.go) that falls back to encoding/json for any line
// it does not know; both read a line the same way.
package logs
