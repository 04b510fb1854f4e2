package core

import (
	"sync/atomic"
	"time"
)

// Clock tells the time. The Limiter reads it once per check and passes the
// result to its Backend.
type Clock interface {
	Now() time.Time
}

// SystemClock is the system's wall clock. It is the Limiter's default.
//
// The limiter needs only wall time, to the microsecond: every backend
// computes in Unix microseconds, and instances sharing a Redis must agree
// on it. time.Now also reads the monotonic clock, which doubles its cost
// (44 ns against 25 ns on the 2-core linux/amd64 machine of the project's
// benchmarks), so on linux/amd64 Now reads gettimeofday through the vDSO
// instead; elsewhere it is time.Now. Either way, durations between two
// readings follow the wall clock, steps included: use time.Now to measure
// elapsed time.
type SystemClock struct{}

// Now returns the current wall-clock time, to the microsecond on
// linux/amd64, without a monotonic reading there.
func (SystemClock) Now() time.Time { return wallNow() }

// ManualClock is a Clock that moves only when told to, for tests and
// simulations. It is safe for concurrent use.
//
// A ManualClock fills two cache lines of its own. Unpadded, its 8 bytes came
// from the runtime's allocator of tiny objects, which packs them beside
// others, and goroutines reading it on every check while one of them
// advanced it made the memory store's two-goroutine benchmarks run 2.5x
// slower (40 ns against 105 ns per check) for whichever algorithm the
// layout of a run happened to hit.
type ManualClock struct {
	ns atomic.Int64
	_  [120]byte
}

// NewManualClock returns a ManualClock reading t.
func NewManualClock(t time.Time) *ManualClock {
	c := &ManualClock{}
	c.ns.Store(t.UnixNano())
	return c
}

// Now returns the clock's current reading, in UTC.
func (c *ManualClock) Now() time.Time { return time.Unix(0, c.ns.Load()).UTC() }

// Set moves the clock to t, forwards or backwards.
func (c *ManualClock) Set(t time.Time) { c.ns.Store(t.UnixNano()) }

// Advance moves the clock by d (backwards if d is negative) and returns the
// new reading.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	return time.Unix(0, c.ns.Add(int64(d))).UTC()
}
