//go:build race

package resilient_test

// raceEnabled reports whether the race detector is on; it slows the key
// flood tenfold, so the flood is scaled down under it.
const raceEnabled = true
