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
// It reads wall time only, to the microsecond: every backend computes in
// Unix microseconds, and instances sharing a Redis must agree on it. The
// readings carry no monotonic component, so durations between two of them
// follow the wall clock, steps included: use time.Now to measure elapsed
// time. (BenchmarkSystemClock in this package compares it with time.Now.)
type SystemClock struct{}

// Now returns the current wall-clock time, to the microsecond on
// linux/amd64, without a monotonic reading there.
func (SystemClock) Now() time.Time { return wallNow() }

// ManualClock is a Clock that moves only when told to, for tests and
// simulations. It is safe for concurrent use. Its reading sits alone on its
// cache lines, so that goroutines reading it share them with nothing else.
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
