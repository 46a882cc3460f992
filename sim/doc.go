// Package sim is the simulator: seeded, deterministic, in virtual time. It has two drivers.
//
// Cluster runs the whole node — package node's event loop, failure detector, links and re-dial,
// link rules and partitions, lifecycle and event log, the very code a node process runs — for N
// nodes over an in-memory transport with TCP's link states (sim/wirenet.go), in virtual time
// (sim/sched.go), with the chaos schedule carried out by chaos.Executor as the launcher carries it
// out. `leaderlab run --sim` and `bench chaos --sim` use it through launcher.Simulate; it writes the
// run directory a real run writes, with cluster.json saying "world": "sim". Same cluster and seed,
// same bytes.
//
// Sim runs the bare election machines of package election and nothing else: messages with seeded
// delays that keep each link's order, the machines' timers, and step-by-step controls (Crash,
// Restart, Pause, Resume, Inject). There is no failure detector and no network fault here: a test
// tells a machine what a detector would (Inject(5, InSuspect of 8) is Polyakov et al.'s "node 5
// notices"), and everything about faults as users see them is Cluster's. It is the algorithms' own
// test rig, the explorer's replay of a counterexample (Config.Scripted: the trace's inputs fed at
// the trace's times), and the instrument of message complexity at thousands of nodes (`leaderlab
// bench complexity`), where Config.NoEvents keeps only the counters and the states.
//
// Why two drivers, and why Sim carries out effects itself (sim/node.go) instead of through package
// node's step (node/effects.go). They are two ideas, not two copies of one: Cluster answers "what
// does a run of the shipped node do", so it runs node's code and nothing of its own; Sim answers
// "what does the algorithm do", so it leaves out what node adds around the machine — the failure
// detector and its heartbeat plan (EffHeartbeat is ignored: the test or the trace says who is
// suspected), links that dial, break and re-dial, link rules, control requests, vector clocks — and
// what it would cost: a node per process with a transport and closures per input does not reach the
// 4096-node rings bench complexity runs, nor let a trace put an input at an exact moment. What the
// two share is the log: Sim stamps every event as a node does (message IDs "id.inc.seq", Lamport
// clocks, send before its delivery, a drop for a dead peer), so the checker, the reports and
// `leaderlab check` read both alike.
//
// Usage of the bare machines:
//
//	s, err := sim.New(sim.Config{Algo: "chang-roberts", N: 64, Seed: 7, NoEvents: true})
//	...
//	s.RunFor(time.Second)
//	leader, ok := s.Converged()
//	msgs := s.Messages()
//
// Same Config, same run: every random choice comes from Config.Seed (or the cluster's seed), and
// nothing depends on the wall clock or on map order.
package sim
