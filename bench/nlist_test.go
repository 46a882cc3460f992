package bench

import (
	"slices"
	"strings"
	"testing"
)

func TestParseNList(t *testing.T) {
	for in, want := range map[string][]int{"5,8,12,16": {5, 8, 12, 16}, "16, 5-7 ,6,": {5, 6, 7, 16}, "3-3": {3}, "": nil} {
		if got, err := ParseNList(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseNList(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"x", "5,x", "8-5", "5-", "-5", "5-x", "1.5"} {
		if _, err := ParseNList(bad); err == nil || !strings.Contains(err.Error(), "is not a cluster size or a range") {
			t.Errorf("ParseNList(%q): %v, want an error saying so", bad, err)
		}
	}
}
