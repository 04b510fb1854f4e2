//go:build !race

package resilient_test

// raceEnabled reports whether the race detector is on.
const raceEnabled = false
