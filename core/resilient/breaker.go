package resilient

import (
	"sync"
	"sync/atomic"
	"time"
)

// breaker is a circuit breaker over consecutive failures. The closed state
// is read and kept with atomics only, so the healthy path takes no lock.
type breaker struct {
	threshold int64
	cooldown  time.Duration

	state    atomic.Uint32 // a breakerState
	failures atomic.Int64  // consecutive failures while closed

	mu       sync.Mutex
	openedAt time.Time // when the breaker last opened or a probe last failed
	probeAt  time.Time // when the next probe is due, while open
}

// transition is a state change to report once the lock is released.
type transition struct {
	from, to breakerState
	ok       bool
}

// allow reports whether an operation at now may call the primary, and
// whether that call is the probe of an open breaker.
func (b *breaker) allow(now time.Time) (call, probe bool, t transition) {
	if breakerState(b.state.Load()) == breakerClosed {
		return true, false, t
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch breakerState(b.state.Load()) {
	case breakerClosed:
		return true, false, t
	case breakerOpen:
		// A clock that went back before the opening would otherwise keep
		// the breaker open for as long as it lags: probe at once.
		if !now.Before(b.probeAt) || now.Before(b.openedAt) {
			b.state.Store(uint32(breakerHalfOpen))
			return true, true, transition{breakerOpen, breakerHalfOpen, true}
		}
	}
	return false, false, t
}

// success records a primary call that answered.
func (b *breaker) success(probe bool) transition {
	if !probe {
		if b.failures.Load() != 0 {
			b.failures.Store(0)
		}
		return transition{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.failures.Store(0)
	b.state.Store(uint32(breakerClosed))
	return transition{breakerHalfOpen, breakerClosed, true}
}

// failure records a primary call that failed at now.
func (b *breaker) failure(probe bool, now time.Time) transition {
	if probe {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.openedAt, b.probeAt = now, now.Add(b.cooldown)
		b.state.Store(uint32(breakerOpen))
		return transition{breakerHalfOpen, breakerOpen, true}
	}
	if b.failures.Add(1) < b.threshold {
		return transition{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if breakerState(b.state.Load()) != breakerClosed {
		return transition{}
	}
	b.openedAt, b.probeAt = now, now.Add(b.cooldown)
	b.state.Store(uint32(breakerOpen))
	return transition{breakerClosed, breakerOpen, true}
}

// abort gives back a probe whose call ended without telling anything about
// the primary (the caller cancelled): the next operation probes again.
func (b *breaker) abort(probe bool, now time.Time) transition {
	if !probe {
		return transition{}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.probeAt = now
	b.state.Store(uint32(breakerOpen))
	return transition{breakerHalfOpen, breakerOpen, true}
}

// retryIn is the time from now until the breaker next lets an operation reach
// the primary: the next probe while it is open, the cooldown otherwise (a
// failure that repeats opens it for that long). Always positive.
func (b *breaker) retryIn(now time.Time) time.Duration {
	if breakerState(b.state.Load()) == breakerOpen {
		b.mu.Lock()
		d := b.probeAt.Sub(now)
		b.mu.Unlock()
		if d > 0 {
			return d
		}
	}
	return b.cooldown
}
