//go:build !race

package exampletest

import "time"

// latencyMargin is what HungRedis allows over the budget: a few
// milliseconds for the HTTP round trip and the fallback's check.
const latencyMargin = 15 * time.Millisecond
