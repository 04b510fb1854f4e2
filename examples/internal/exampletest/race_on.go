//go:build race

package exampletest

import "time"

// latencyMargin is what HungRedis allows over the budget. The race detector
// makes the runtime's timers late by up to hundreds of milliseconds on a
// 2-core machine, so a race build proves only that every request is bounded.
const latencyMargin = 500 * time.Millisecond
