// Package chaos is the fault language of leaderlab: it parses a schedule such as
//
//	at 1s kill leader; at 2s restart 5
//	at 3s partition isolate leader   # cut the leader off
//	at 4.5s heal
//
// into a Schedule of Steps, checks everything that can be checked before the cluster exists (IDs in
// 1..N, positive durations, percentages in 0..100, disjoint partition groups), and renders it back in
// canonical form. Targets that depend on the running cluster (leader, highest, lowest, random) stay
// symbolic in a Step; the executor in the launcher resolves them when the step fires, with Resolve,
// and turns a partition shape into sides with Shape. Both are pure: the cluster's state and the
// seeded randomness come in as arguments, so a schedule replays the same under the same seed.
//
// Data flows: --chaos text -> LoadSpec (reads @FILE) -> Parse -> Schedule.Unsupported (refuses what
// the executor cannot do) -> the executor, which at each step's time calls Resolve / Shape and
// records the resolved targets in chaos.jsonl.
//
// --nemesis takes the place of --chaos: Nemesis.Draw draws a schedule from the run's seed before the
// run starts (Jepsen's staggered faults, each undone before the settle window) and renders it as
// chaos text, which then takes the same path, and is saved so that a replay runs the same steps.
package chaos
