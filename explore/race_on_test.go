//go:build race

package explore

// raceOn: the race detector slows the search about tenfold; the widest sweeps take a sample.
const raceOn = true
