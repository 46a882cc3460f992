// Package launcher makes a run (`leaderlab run`): it resolves the configuration (Config) into
// cluster.json, starts N node processes, tells them to begin, carries out the fault schedule, stops
// them, and has the checker judge the run directory.
//
// Progress goes to Config.Progress (stderr): the configuration, readiness, each fault, the stop. When
// that is a terminal, a status line below them is rewritten in place while the nodes run (elapsed,
// nodes up, who follows whom, the last fault: status.go); elsewhere the cluster's view is a plain
// line whenever it changes.
//
// Faults. A schedule comes from --chaos, or is drawn from the seed by the nemesis (--nemesis, see
// chaos.Nemesis) before the run starts and saved as chaos text in cluster.json. The executor
// (runFaults) fires each step at its offset from the begin and writes one chaos.jsonl record per
// step, with the targets resolved to IDs (logs.ChaosRecord says what each field means to the
// checker):
//
//   - kill, pause, resume, restart are signals to (or a new incarnation of) one process.
//   - partition, link and heal change the network faults in force (netFaults: a partition replaces
//     the partition in force, link rules accumulate, heal removes both), from which every node's
//     complete rule set is computed and handed to the network backend. The record says which
//     nodes were told (targets) and when each acknowledged (acks).
//
// Network backends (--net-backend). transport: each node's rule set is sent to its control
// endpoint (wire.CtlRules) and applied by its transport on receipt; all nodes are told at once,
// and a node that cannot answer (paused, dead, restarting) is told when it runs again.
// iptables: the kernel drops packets, by DROP rules in a chain of the launcher's own between the
// nodes' own loopback addresses (see iptables.go); needs root, carries out drop and loss only.
//
// Targets and replay. A step's random choices come from a source seeded by the run's seed and the
// step's position, so a replay (--replay RUN: ReplayConfig, Replay) draws the same nodes wherever
// the same nodes are eligible. leader resolves to the node the live nodes follow at that moment,
// which is the same in a replay only as long as the runs have not diverged; Replay prints where the
// outcomes (verdict, leader, properties, failovers, the applied chaos ops) differ.
package launcher
