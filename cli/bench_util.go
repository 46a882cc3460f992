package cli

import (
	"slices"
	"strings"
)

// splitList splits a comma-separated flag value, dropping blanks and repeats.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// anySlice makes a row's cells the arguments of a Printf.
func anySlice(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
