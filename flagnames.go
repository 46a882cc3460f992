package main

import (
	"regexp"
)

// The launcher's errors name launcher.Config's fields ("Config.Nodes 0: want 1..10000"): it is a
// library, used by the benches and tests as well as by run. The command line speaks of its flags, so
// run maps each field back to the flag that sets it.
var flagOfField = map[string]string{
	"Nodes": "--nodes", "Duration": "--duration", "Settle": "--settle", "Heartbeat": "--heartbeat", "Timeout": "--timeout",
	"NetBackend": "--net-backend", "NemesisInterval": "--nemesis-interval", "NemesisOverlap": "--nemesis-overlap",
	"NemesisRestart": "--nemesis-restart", "Nemesis": "--nemesis", "Chaos": "--chaos", "VClock": "--vclock",
	"Detector": "--detector", "Observers": "--observers", "HealthInterval": "--health-interval",
	"ProbeTimeout": "--probe-timeout", "Sim": "--sim", "Hosts": "--hosts", "Algo": "--algo", "Topology": "--topology",
	"IDs": "--ids", "Initiators": "--initiators", "Out": "--out", "Host": "--host", "SSHConfig": "--ssh-config", "InsecureIgnoreHostKey": "--insecure-ignore-host-key",
	"TerminationBound": "--termination-bound", "Grace": "--grace",
}

var configField = regexp.MustCompile(`\bConfig\.([A-Z][A-Za-z]*)`)

// The explorer's errors name explore.Config's fields ("explore.Config.Crashes 5: want 0..4"), and
// the election options are named by their keys in cluster.json ("option rsdp-mode ...", "option
// sync=..."), each set by the run flag of the same name.
var exploreFlagOf = map[string]string{
	"Algo": "--algo", "N": "--nodes", "Order": "--ids", "Initiators": "--initiators", "Crashes": "--crashes",
	"Restarts": "--restarts", "CrashTargets": "--crash-targets", "Timers": "--timers", "MaxStates": "--max-states", "MaxDepth": "--max-depth",
	"Heartbeat": "--heartbeat", "Timeout": "--timeout",
}

var (
	exploreField = regexp.MustCompile(`\bexplore\.Config\.([A-Z][A-Za-z]*)`)
	optionName   = regexp.MustCompile(`\boption ([a-z][a-z-]*)`)
)

// asFlags writes the launcher's and the explorer's field names and the options' keys in s as the
// flags that set them; a field no flag sets stays named.
func asFlags(s string) string {
	s = exploreField.ReplaceAllStringFunc(s, func(m string) string {
		if f, ok := exploreFlagOf[exploreField.FindStringSubmatch(m)[1]]; ok {
			return f
		}
		return m
	})
	s = optionName.ReplaceAllString(s, "--$1")
	return configField.ReplaceAllStringFunc(s, func(m string) string {
		if f, ok := flagOfField[m[len("Config."):]]; ok {
			return f
		}
		return m
	})
}

// The benchmarks' plans and configurations (bench.RSDPPlan, bench.ComplexityPlan, bench.ScalePlan,
// bench.FailoverConfig, bench.ChaosConfig) name their fields in their errors as the launcher does
// ("RSDPPlan.Loss 1: want ...", "ChaosConfig.Runs 0: want ..."); each bench command maps them back
// to its flags. The launcher's own "Config." has no prefix, so it is not taken for a bench's.
var planField = regexp.MustCompile(`\b[A-Z][A-Za-z]*(?:Plan|Config)\.([A-Z][A-Za-z]*)`)

// planFlags writes the plan fields s names as the flags flagOf gives for them; a field no flag sets
// stays named.
func planFlags(s string, flagOf map[string]string) string {
	return planField.ReplaceAllStringFunc(s, func(m string) string {
		if f, ok := flagOf[planField.FindStringSubmatch(m)[1]]; ok {
			return f
		}
		return m
	})
}
