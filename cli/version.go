package cli

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// version is what `leaderlab --version` prints after "leaderlab version ": the module's version and the VCS revision the binary was built
// from, as the Go toolchain stamped them into the build info (`go build` in a git checkout stamps
// the revision, its time and whether the tree had changes; `go run` and `go test` binaries do not).
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information: built without module support)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	var parts []string
	if rev := settings["vcs.revision"]; rev != "" {
		r := "revision " + rev
		if settings["vcs.modified"] == "true" {
			r += " with uncommitted changes"
		}
		if t := settings["vcs.time"]; t != "" {
			r += " (" + t + ")"
		}
		parts = append(parts, r)
	} else {
		parts = append(parts, "no VCS revision stamped (built by go run or go test, with -buildvcs=false, or outside a git checkout)")
	}
	parts = append(parts, bi.GoVersion)
	return fmt.Sprintf("%s, %s", v, strings.Join(parts, ", "))
}
