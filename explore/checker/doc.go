// Package checker is the explorer's model checker, apart from what it checks: it knows a system
// only through Model (model.go), whose states and transitions it holds without looking into them,
// as stateright's checker knows its Model. Package explore's model of a cluster of election
// machines is the one it checks.
//
// Run searches breadth-first, by levels (the states of one depth, stowed compactly by the model's
// Stower), so that the first violation of each property found has a shortest path; the states seen
// are a table of fingerprints (seen.go), each with the record of how it was first reached, from
// which a path is rebuilt (path.go). A state first reached is judged by the model's invariants, a
// transition by its path properties, a quiescent state (only faults enabled) by what must hold at
// the end. Model.Reduce, the model's partial-order reduction, chooses which transitions of a state
// to explore; the checker says which properties are still judged in every state (the proviso).
// Once every state is explored, the graph walked (graph.go) tells by a topological sort whether a
// cycle exists; if one may, a depth-first search looks for one that fairness does not break, over
// the reduced graph and then, if need be, every interleaving (cycle.go).
//
// Usage:
//
//	out := checker.Run(m, checker.Options{MaxStates: 1_000_000, Reduce: true})
//	for _, f := range out.Violations { /* f.Property, f.Detail, f.Path: the transitions to it */ }
package checker
