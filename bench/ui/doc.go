// Package ui is leaderlab's lab you can touch (`leaderlab ui`, `run --ui`): a local web server and
// one page that shows a live cluster, takes faults by hand, steps the simulator one happening at a
// time, steps through the explorer's counterexamples, and serves the runs index and each run's
// report.
//
// How data flows. A live run is a launcher run with a launcher.Hand (real processes, or the
// simulator paced against the wall clock); the server takes what it logs every 50 ms
// (Hand.Next), keeps a model of the cluster (model.go: each node's process and belief, the
// partition in force, the checker's properties as they stand now) and sends both to every page
// that watches as server-sent events (live.go). A fault clicked on the page is a step of the chaos
// language given to Hand.Apply: the run's own executor carries it out and records it in
// chaos.jsonl, and cluster.json's schedule gains it when the run stops, so that `run --replay`
// makes it again. Step mode is a sim.Stepper (step.go); an explorer trace is read back into its
// actions (trace.go).
//
// Safety. The server binds 127.0.0.1 unless told otherwise, and every request must carry the
// random token of the URL it prints (401 without, 403 with a wrong one), name the server as its
// Host (no DNS rebinding) and come from its own page (a cross-origin request is refused); the page
// is served with a Content-Security-Policy that lets it load nothing from elsewhere. Closing the
// server stops every run it started (the launcher kills their processes) and waits for them.
package ui
