// Package sim runs election state machines in memory: a seeded discrete-event simulator with
// virtual time, the second driver of node/election besides the node process.
//
// N machines of any registered algorithm exchange messages through a queue of deliveries: each
// message gets a delay drawn from a seeded uniform distribution, a link never reorders (unless a
// reorder rule says so), a message to a killed node is lost (its send, then a drop), and a paused
// node's inbox fills until it resumes. Timers follow the machines' EffSetTimer and EffCancelTimer in virtual time. With
// Config.Detector on, a failure detector follows the machines' heartbeat plans as node/ does
// (heartbeats, suspicion after Timeout, the reset of a killed peer's links); off, the test injects
// suspicions itself. Faults (kill, pause, resume, restart, partition, link, heal) come from
// Config.Faults, FaultsFromChaos, Nemesis, or the step-by-step controls.
//
// Network faults (partition, link, heal) have the real node's semantics (node/netem.go): rules are
// held by the receiving node and apply to messages and heartbeats alike; a refused message is a
// `drop` event at the receiver with `from` and the reason ("drop: <step>", "loss 10%: <step>"), a
// refused heartbeat counts in the stats' hb_drops; delays keep each link's order unless a rule
// reorders; a duplicate is a second `recv` of the same msg.id. A partition replaces the previous
// one, link rules add up, heal clears both, and each is recorded in chaos.jsonl as the launcher
// records it (groups or reach, from/to/rule, acks at the same virtual instant), so that the
// checker finds the components, the split-brain windows and the convergence after each heal.
// FaultsFromChaos reads a schedule in the chaos language.
//
// Everything a real node would log is logged, as logs.Event values (never encoded on the hot path):
// the same events, message IDs, Lamport clocks and timestamps (Config.Base plus virtual time), with
// the chaos and launcher records and the cluster.json of a real run, so that the checker judges a
// simulated run like a real one. WriteDir lays it out as a run directory.
//
// Usage:
//
//	cfg := sim.DefaultConfig("bully", 5)
//	cfg.Seed = 7
//	cfg.Faults = []sim.Fault{{At: time.Second, Op: sim.Kill, Node: sim.TargetLeader}}
//	// or: cfg.Faults, err = sim.FaultsFromChaos("at 1s partition isolate leader; at 2.5s heal", 5)
//	s, err := sim.New(cfg)
//	...
//	run := s.Run() // *logs.Run; sim.WriteDir(run, dir) for `leaderlab check dir`
//
// Stories drive it step by step: New, RunFor (or Step), Crash, Restart, Pause, Resume, Apply (any
// fault, network ones included), Inject, then look at Leader, Participant, Converged and the
// message counters (Sent, Delivered, Dropped by kind; ResetCounts between phases). Sweeps draw
// fault schedules with Nemesis; Config.NoEvents keeps only the counters and the state where the
// log is not wanted.
//
// A machine that has a StepInto(dst, in) method (Bully does) appends its effects to a buffer the
// simulator reuses instead of allocating a slice per input.
//
// Same Config, same run: every random choice comes from Config.Seed, and nothing depends on the
// wall clock or on map order.
package sim
