package core

import (
	"context"
	"sync"
	"time"
)

// Limiter checks keys against policies. It reads its Clock once per check and
// hands that instant to its Backend, which decides atomically.
//
// A Limiter is safe for concurrent use. Create one with NewLimiter.
type Limiter struct {
	backend Backend
	single  SingleChecker
	lean    LeanChecker
	clock   Clock
	scratch sync.Pool // *scratch, for backends without a single-policy fast path
}

type scratch struct {
	p [1]Policy
	d [1]Decision
}

// Option configures a Limiter.
type Option func(*Limiter)

// WithClock sets the Limiter's clock. The default is SystemClock; tests use a
// ManualClock. A nil clock is ignored.
func WithClock(c Clock) Option {
	return func(l *Limiter) {
		if c != nil {
			l.clock = c
		}
	}
}

// NewLimiter returns a Limiter over b. It panics if b is nil, a programming
// error.
func NewLimiter(b Backend, opts ...Option) *Limiter {
	if b == nil {
		panic("core: NewLimiter called with a nil Backend")
	}
	l := &Limiter{backend: b, clock: SystemClock{}}
	l.single, _ = b.(SingleChecker)
	l.lean, _ = b.(LeanChecker)
	l.scratch.New = func() any { return new(scratch) }
	for _, o := range opts {
		o(l)
	}
	return l
}

// Backend returns the Limiter's backend.
func (l *Limiter) Backend() Backend { return l.backend }

// Clock returns the Limiter's clock.
func (l *Limiter) Clock() Clock { return l.clock }

// Allow checks one unit for key under p. It is AllowN with cost 1.
func (l *Limiter) Allow(ctx context.Context, key string, p Policy) (d Decision, err error) {
	if l.lean != nil {
		// Written out in Allow and AllowN: a helper returning the Decision
		// is too large to inline, and would copy it once more.
		d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter, d.Delay, err = l.lean.CheckOneLean(ctx, key, p, 1, l.clock.Now())
		if err != nil {
			return Decision{}, err
		}
		d.Limit = p.Limit
		return d, nil
	}
	if l.single != nil { // the fast path, called directly: one copy of the Decision less
		d, err = l.single.CheckOne(ctx, key, p, 1, l.clock.Now())
		return d, err
	}
	return l.checkPooled(ctx, key, p, 1, l.clock.Now())
}

// AllowN checks cost units for key under p and consumes them if admitted.
// Invalid arguments yield a typed error (ErrInvalidKey, ErrInvalidPolicy,
// ErrInvalidCost, ErrCostExceedsCapacity) and change nothing.
func (l *Limiter) AllowN(ctx context.Context, key string, p Policy, cost int) (d Decision, err error) {
	now := l.clock.Now()
	if l.lean != nil {
		d.Allowed, d.Remaining, d.RetryAfter, d.ResetAfter, d.Delay, err = l.lean.CheckOneLean(ctx, key, p, cost, now)
		if err != nil {
			return Decision{}, err
		}
		d.Limit = p.Limit
		return d, nil
	}
	if l.single != nil {
		return l.single.CheckOne(ctx, key, p, cost, now)
	}
	return l.checkPooled(ctx, key, p, cost, now)
}

// checkPooled runs a single-policy check through Backend.Check with pooled
// one-element slices, for backends without a SingleChecker fast path.
func (l *Limiter) checkPooled(ctx context.Context, key string, p Policy, cost int, now time.Time) (Decision, error) {
	s := l.scratch.Get().(*scratch)
	s.p[0] = p
	err := l.backend.Check(ctx, key, s.p[:], cost, now, s.d[:])
	d := s.d[0]
	*s = scratch{}
	l.scratch.Put(s)
	if err != nil {
		return Decision{}, err
	}
	return d, nil
}

// Check checks cost units for key under every policy at once ("10 per second
// and 1,000 per hour"): all or nothing, so a denial by one policy consumes
// nothing from any. Decisions are written into out when it has room for
// len(policies) of them, and into a new slice otherwise.
func (l *Limiter) Check(ctx context.Context, key string, policies []Policy, cost int, out []Decision) (Result, error) {
	if cap(out) < len(policies) {
		out = make([]Decision, len(policies))
	}
	out = out[:len(policies)]
	if err := l.backend.Check(ctx, key, policies, cost, l.clock.Now(), out); err != nil {
		return Result{}, err
	}
	allowed, binding := bind(out)
	return Result{Allowed: allowed, Decisions: out, Policies: policies, Binding: binding}, nil
}

// Peek reports the state of key under p without consuming anything.
func (l *Limiter) Peek(ctx context.Context, key string, p Policy) (Decision, error) {
	var out [1]Decision
	if err := l.backend.Peek(ctx, key, []Policy{p}, l.clock.Now(), out[:]); err != nil {
		return Decision{}, err
	}
	return out[0], nil
}

// Reset forgets the state of key under the given policies, so that its next
// check starts from a full quota.
func (l *Limiter) Reset(ctx context.Context, key string, policies ...Policy) error {
	if err := ValidateKey(key); err != nil {
		return err
	}
	if len(policies) == 0 {
		return ErrNoPolicy
	}
	for _, p := range policies {
		if err := p.Validate(); err != nil {
			return err
		}
	}
	return l.backend.Reset(ctx, key, policies)
}
