// Package report renders a run directory for people and for other tools.
//
// Load reads a run (logs.ReadRun), its verdict (verdict.json, or check.Check when there is none) and
// the launcher's resource samples. From that Input:
//
//	in, err := report.Load(dir)             // errors wrap rundir.ErrNotRun for a directory that is not a run
//	path, err := report.WriteFile(dir, in)  // RUN/report.html: one self-contained page
//	report.WriteShiViz(w, in.Run)           // ShiViz's log format; clocks from send/recv matching, checked against logged vc
//	report.WritePerfetto(w, in.Run)         // Chrome trace-event JSON with a flow per message
//
// The page is built in two halves. Go computes everything that needs the whole run — lanes,
// incarnations, dead and paused stretches, each node's leader belief, messages matched send to recv,
// faults, partitions, the cluster's leader timeline, where each violation is — into Data, which is
// embedded in the page as JSON with column arrays for the large parts (messages, markers). The
// tables and the resource charts are rendered by html/template, and so is the "Over time" chart
// (overtime.go: the messages sent per time bucket by kind, the verdict's elections as bars, the
// faults as lines and bands; counted and drawn in Go, so that it costs little for a big run), as is
// the picture of a general graph's (or a ring's) network, laid out in Go (graph.go) with each node
// as it ended the run. The page's own script (assets/,
// plain JavaScript, no library) draws the space-time diagram from Data for the time window in view
// only, and bundles arrows and markers when more are in view than it can draw one by one, saying so
// on the page. It opens on the first election (Data.Initial) with its arrows in sight, the whole run
// a click away; its legend hides and shows message kinds, and a lane's name hides the lane.
//
// What the page shows follows the verdict: every split-brain window (metrics.split_brain) is listed
// and shaded; while a partition splits the live nodes, the leader timeline says each component's
// leader; a killed node dies at its kill record, not when the launcher reaped it; the launcher's
// stop at the end is the run's stop (Data.Stop), not a row of deaths; a ring's lanes follow its
// ring order.
package report
