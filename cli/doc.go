// Package cli is leaderlab's command line: every command, its flags, and the exit codes. A command
// maps its flags onto the configuration of the package that does the work (launcher.Config,
// explore.Config, the bench plans, report, node, observer, agent), runs it, and prints the result;
// the work itself lives in those packages. Main is the whole program: the module root's main calls it.
//
// Exit codes (DESIGN.md): 0 the checker passed (or the command did its job), 1 it found a violation,
// 2 the run could not be made or read, or the command line was wrong.
package cli
