package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/leaderlab/leaderlab/election"
	"github.com/leaderlab/leaderlab/internal/field"
)

// flagOf is the one table from the fields the libraries name in their errors to the flags that set
// them. The libraries (the launcher, the explorer, the benches, the algorithms' options) are used by
// tests and by each other as well as by the commands, so their errors name their fields
// (field.Error: "Config.Nodes 0: want 1..10000"); the command line speaks of its flags, so a
// command writes each field it sets as its flag. A field is named by its type and its name, an
// algorithm's option by its key; TestEveryFieldHasAFlag holds every field a validator can name to a
// flag of the command that sets it.
var flagOf = map[string]string{
	// launcher.Config: run
	"Config.Nodes": "--nodes", "Config.Duration": "--duration", "Config.Settle": "--settle", "Config.Heartbeat": "--heartbeat",
	"Config.Timeout": "--timeout", "Config.ElectionTimeout": "--election-timeout", "Config.CoordinatorTimeout": "--coordinator-timeout",
	"Config.NetBackend": "--net-backend", "Config.NemesisInterval": "--nemesis-interval", "Config.NemesisOverlap": "--nemesis-overlap", "Config.NemesisShapes": "--nemesis-shapes",
	"Config.NemesisRestart": "--nemesis-restart", "Config.Nemesis": "--nemesis", "Config.Chaos": "--chaos", "Config.VClock": "--vclock",
	"Config.Detector": "--detector", "Config.Observers": "--observers", "Config.HealthInterval": "--health-interval",
	"Config.ProbeTimeout": "--probe-timeout", "Config.Sim": "--sim", "Config.Hosts": "--hosts", "Config.Algo": "--algo",
	"Config.Topology": "--topology", "Config.IDs": "--ids", "Config.Initiators": "--initiators", "Config.Out": "--out",
	"Config.Host": "--host", "Config.SSHConfig": "--ssh-config", "Config.InsecureIgnoreHostKey": "--insecure-ignore-host-key", "Config.TerminationBound": "--termination-bound", "Config.Grace": "--grace",

	// explore.Config: explore
	"explore.Config.Algo": "--algo", "explore.Config.N": "--nodes", "explore.Config.Order": "--ids",
	"explore.Config.Initiators": "--initiators", "explore.Config.Crashes": "--crashes", "explore.Config.Restarts": "--restarts",
	"explore.Config.CrashTargets": "--crash-targets", "explore.Config.Timers": "--timers", "explore.Config.MaxStates": "--max-states",
	"explore.Config.MaxDepth": "--max-depth", "explore.Config.Heartbeat": "--heartbeat", "explore.Config.Timeout": "--timeout",
	"explore.Config.MaxMemory": "--max-memory", "explore.Config.Workers": "--workers", "explore.Config.Bitstate": "--bitstate",

	// bench.FailoverConfig: bench failover
	"FailoverConfig.Algo": "--algo", "FailoverConfig.Nodes": "--nodes", "FailoverConfig.Trials": "--trials",
	"FailoverConfig.Faults": "--faults", "FailoverConfig.Heartbeat": "--heartbeat", "FailoverConfig.Timeout": "--timeout",
	"FailoverConfig.Sim": "--sim", "FailoverConfig.Out": "--out", "FailoverConfig.Detector": "--detector",
	"FailoverConfig.Observers": "--observers", "FailoverConfig.HealthInterval": "--health-interval",
	"FailoverConfig.RSDPMode": "--rsdp-mode", "FailoverConfig.Hosts": "--hosts", "FailoverConfig.SSHConfig": "--ssh-config", "FailoverConfig.InsecureIgnoreHostKey": "--insecure-ignore-host-key",

	// bench.ChaosConfig: bench chaos
	"ChaosConfig.Algos": "--algos", "ChaosConfig.Ns": "--n", "ChaosConfig.Runs": "--runs", "ChaosConfig.Nemesis": "--nemesis",
	"ChaosConfig.Interval": "--nemesis-interval", "ChaosConfig.Duration": "--duration", "ChaosConfig.Seed": "--seed",
	"ChaosConfig.CSV": "--csv", "ChaosConfig.Out": "--out", "ChaosConfig.Sim": "--sim", "ChaosConfig.CheckDeterminism": "--check-determinism",
	"ChaosConfig.Hosts": "--hosts", "ChaosConfig.SSHConfig": "--ssh-config", "ChaosConfig.InsecureIgnoreHostKey": "--insecure-ignore-host-key",

	// bench.ComplexityPlan: bench complexity
	"ComplexityPlan.Algos": "--algos", "ComplexityPlan.Ns": "--n", "ComplexityPlan.Placements": "--placements",
	"ComplexityPlan.Initiators": "--initiators", "ComplexityPlan.RealMax": "--real-max", "ComplexityPlan.MemMax": "--mem-max",
	"ComplexityPlan.Seed": "--seed", "ComplexityPlan.Dir": "--out",

	// bench.RSDPPlan: bench rsdp
	"RSDPPlan.Ns": "--n", "RSDPPlan.Modes": "--modes", "RSDPPlan.Detectors": "--detectors", "RSDPPlan.Observers": "--observers",
	"RSDPPlan.Trials": "--trials", "RSDPPlan.HealthInterval": "--health-interval", "RSDPPlan.Loss": "--loss", "RSDPPlan.Dir": "--out",

	// bench.ScalePlan: bench scale
	"ScalePlan.Algos": "--algos", "ScalePlan.IDs": "--ids", "ScalePlan.Initiators": "--initiators", "ScalePlan.Ns": "--n",
	"ScalePlan.Trials": "--trials", "ScalePlan.Duration": "--duration", "ScalePlan.Seed": "--seed", "ScalePlan.Hosts": "--hosts",
	"ScalePlan.SSHConfig": "--ssh-config", "ScalePlan.InsecureIgnoreHostKey": "--insecure-ignore-host-key", "ScalePlan.Dir": "--out",

	// the algorithms' options (cluster.json's options): run and explore, each by the flag of its name
	"option " + election.OptRSDPMode: "--" + election.OptRSDPMode, "option " + election.OptRSDPShareWindow: "--" + election.OptRSDPShareWindow,
	"option " + election.OptRSDPResync: "--" + election.OptRSDPResync, "option " + election.OptSync: "--" + election.OptSync,
	"option " + election.OptRounds: "--" + election.OptRounds, "option " + election.OptDelta: "--" + election.OptDelta,
	"option " + election.OptClusters: "--" + election.OptClusters,
}

// The fields each command sets, as views of flagOf.
var (
	runFlagOf        = flagsOf("Config", "option")
	exploreFlagOf    = flagsOf("explore.Config", "option")
	failoverFlagOf   = flagsOf("FailoverConfig")
	chaosFlagOf      = flagsOf("ChaosConfig")
	complexityFlagOf = flagsOf("ComplexityPlan")
	rsdpFlagOf       = flagsOf("RSDPPlan")
	scaleFlagOf      = flagsOf("ScalePlan")
	// topFlagOf is what Main writes in flags in whatever a command returns: the launcher's fields
	// (a bench's trial reports its run's error), the explorer's and the options.
	topFlagOf = flagsOf("Config", "explore.Config", "option")
)

// typeOf is the type part of a field's name: "explore.Config" of "explore.Config.N", "option" of
// "option sync".
func typeOf(name string) string {
	if i := strings.LastIndexAny(name, ". "); i >= 0 {
		return name[:i]
	}
	return name
}

// flagsOf is flagOf's entries of the types given.
func flagsOf(types ...string) map[string]string {
	out := map[string]string{}
	for name, flag := range flagOf {
		if slices.Contains(types, typeOf(name)) {
			out[name] = flag
		}
	}
	return out
}

// asFlags writes the fields of the launcher, the explorer and the options in s as their flags.
func asFlags(s string) string { return planFlags(s, topFlagOf) }

// planFlags writes the fields of flagOf that s names as their flags; a field no flag sets stays
// named. It replaces whole names only (field.ReplaceName), the longer first: a field.Error comes
// out as its Format with these flags would write it, and so does a message that is not one yet
// (the hosts file's, an option that names two options).
func planFlags(s string, flagOf map[string]string) string {
	names := slices.Sorted(maps.Keys(flagOf))
	slices.SortStableFunc(names, func(a, b string) int { return len(b) - len(a) }) // the longer first
	for _, f := range names {
		s = field.ReplaceName(s, f, flagOf[f])
	}
	return s
}
