package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// Clock tells the time. The Limiter reads it once per check and passes the
// result to its Backend.
type Clock interface {
	Now() time.Time
}

// SystemClock returns the system's wall clock, the Limiter's default. It
// reads wall time to the microsecond, without a monotonic component:
// instances sharing a Redis must agree on it.
func SystemClock() Clock { return systemClock{} }

type systemClock struct{}

func (systemClock) Now() time.Time { return wallNow() }

// ManualClock is a Clock that moves only when told to, for tests and
// simulations. It is safe for concurrent use.
type ManualClock struct {
	ns atomic.Int64
	_  [120]byte

	waiting atomic.Int32 // len(timers), read without the lock
	mu      sync.Mutex
	timers  []manualTimer
}

// manualTimer is a channel of After, sent the reading that reached at.
type manualTimer struct {
	at int64
	c  chan time.Time
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
func (c *ManualClock) Set(t time.Time) {
	c.ns.Store(t.UnixNano())
	c.fire()
}

// Advance moves the clock by d (backwards if d is negative) and returns the
// new reading.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	now := c.ns.Add(int64(d))
	c.fire()
	return time.Unix(0, now).UTC()
}

// After returns a channel that receives the clock's reading once Set or
// Advance has moved it d or more past its reading now; at once when d <= 0.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	at := c.ns.Load() + int64(d)
	if d <= 0 {
		ch <- time.Unix(0, c.ns.Load()).UTC()
	} else {
		c.timers = append(c.timers, manualTimer{at: at, c: ch})
		c.waiting.Add(1)
	}
	c.mu.Unlock()
	return ch
}

// fire sends to every timer the reading has reached.
func (c *ManualClock) fire() {
	if c.waiting.Load() == 0 {
		return
	}
	c.mu.Lock()
	now := c.ns.Load()
	kept := c.timers[:0]
	for _, t := range c.timers {
		if now >= t.at {
			t.c <- time.Unix(0, now).UTC()
			c.waiting.Add(-1)
		} else {
			kept = append(kept, t)
		}
	}
	c.timers = kept
	c.mu.Unlock()
}
