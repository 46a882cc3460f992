package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ParseNList reads the cluster sizes of a bench: sizes and ranges, "5,8,12,16" or "5-16", blanks
// ignored; the sizes come back ascending, each once. The error says what was wrong with the text
// alone, for the caller to name where it came from (the CLI: --n).
func ParseNList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		bad := fmt.Errorf("%q is not a cluster size or a range (want a list such as 5,8,12,16 or 5-16)", f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, bad
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, bad
			}
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
