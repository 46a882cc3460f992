package svgchart

import "testing"

func TestNiceAbove(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{
		{-3, 1}, {0, 1}, {0.03, 0.05}, {1, 1}, {1.01, 2}, {3, 5}, {5, 5}, {7, 10}, {10, 10}, {11, 20}, {150, 200}, {501, 1000},
	} {
		if got := NiceAbove(c.v); got != c.want {
			t.Errorf("NiceAbove(%g) = %g, want %g", c.v, got, c.want)
		}
	}
}
