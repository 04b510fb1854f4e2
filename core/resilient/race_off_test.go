//go:build !race

package resilient_test

import "time"

// raceEnabled reports whether the race detector is on.
const raceEnabled = false

// latencyMargin is what a fault test's check may take beyond the budget:
// timer slack and scheduling. The target is a worst check of 60 ms for a
// 50 ms budget.
const latencyMargin = 10 * time.Millisecond
