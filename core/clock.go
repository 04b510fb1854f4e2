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

// SystemClock is the wall clock, time.Now. It is the Limiter's default.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that moves only when told to, for tests and
// simulations. It is safe for concurrent use.
type ManualClock struct {
	ns atomic.Int64
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
