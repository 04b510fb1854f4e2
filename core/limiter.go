package core

import (
	"context"
	"sync"
	"unsafe"

	"github.com/ratelimit-go/ratelimit/internal/opt"
)

// Limiter checks keys against policies. It reads its Clock once per check and
// hands that instant to its Backend, which decides atomically.
//
// A Limiter is safe for concurrent use. Create one with NewLimiter.
type Limiter struct {
	backend Backend
	clock   Clock
	// pad fills the Limiter's own 128 bytes: every check on every CPU reads
	// it, and a small object shares its cache line with its neighbours in
	// the heap, which another CPU may be writing (docs/benchmarks.md).
	_ [128 - 2*unsafe.Sizeof(Backend(nil))]byte
}

// one is the pooled space of a single-policy check, padded to 256 bytes so
// that two CPUs' pooled spaces never share a cache line.
type one struct {
	item [1]Item
	d    [1]Decision
	_    [256 - unsafe.Sizeof([1]Item{}) - unsafe.Sizeof([1]Decision{})]byte
}

var onePool = sync.Pool{New: func() any { return new(one) }}

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
	l := &Limiter{backend: b, clock: systemClock{}}
	opt.Apply(l, opts)
	return l
}

// Clock returns the Limiter's clock.
func (l *Limiter) Clock() Clock { return l.clock }

// Allow checks one unit for key under p. It is AllowN with cost 1.
func (l *Limiter) Allow(ctx context.Context, key string, p Policy) (d Decision, err error) {
	err = l.single(ctx, key, &p, 1, OpConsume, &d)
	return
}

// AllowN checks cost units for key under p and consumes them if admitted.
// Invalid arguments yield a typed error (ErrInvalidKey, ErrInvalidPolicy,
// ErrInvalidCost, ErrCostExceedsCapacity) and change nothing. A Concurrency
// policy is refused with ErrInvalidPolicy: its slot could not be given back
// (Check's Result.At names it).
func (l *Limiter) AllowN(ctx context.Context, key string, p Policy, cost int) (d Decision, err error) {
	err = l.single(ctx, key, &p, cost, OpConsume, &d)
	return
}

// single decides a batch of one item in pooled space, and copies the
// decision to out unless it fails. It writes through out: a returned
// Decision is copied on in moves that stall (BenchmarkReturnDecision).
func (l *Limiter) single(ctx context.Context, key string, p *Policy, cost int, op Op, out *Decision) error {
	if op == OpConsume && p.Algorithm == Concurrency {
		return &PolicyError{Policy: p.Name, Field: "algorithm", Value: string(Concurrency), Err: ErrInvalidPolicy,
			Reason: "a slot taken by Allow or Wait could not be given back; take it with Check, whose Result.At names it"}
	}
	s := onePool.Get().(*one)
	it := &s.item[0]
	it.set(key, p, cost, op)
	err := l.backend.Do(ctx, s.item[:], l.clock.Now(), s.d[:])
	it.Key = "" // keep no key alive in the pool
	if err == nil {
		*out = s.d[0]
	}
	onePool.Put(s)
	return err
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
	now := l.clock.Now()
	if err := Check(ctx, l.backend, key, policies, cost, now, out); err != nil {
		return Result{}, err
	}
	allowed, binding := bind(out)
	return Result{Allowed: allowed, Decisions: out, Policies: policies, Binding: binding, At: now}, nil
}

// Do decides a batch of items at the clock's instant (Backend.Do): a check
// of several keys, each with its own policy and cost, all or nothing. On a
// Cluster the keys must share a hash slot (redisstore.WithSlotKey). The
// Result's Policies is nil.
func (l *Limiter) Do(ctx context.Context, items []Item, out []Decision) (Result, error) {
	if cap(out) < len(items) {
		out = make([]Decision, len(items))
	}
	out = out[:len(items)]
	now := l.clock.Now()
	if err := l.backend.Do(ctx, items, now, out); err != nil {
		return Result{}, err
	}
	allowed, binding := bind(out)
	return Result{Allowed: allowed, Decisions: out, Binding: binding, At: now}, nil
}

// Peek reports the state of key under p without consuming anything.
func (l *Limiter) Peek(ctx context.Context, key string, p Policy) (d Decision, err error) {
	err = l.single(ctx, key, &p, 0, OpPeek, &d)
	return
}

// Reset forgets the state of key under the given policies, so that its next
// check starts from a full quota.
func (l *Limiter) Reset(ctx context.Context, key string, policies ...Policy) error {
	return doKeyed(ctx, l.backend, key, policies, 0, OpReset, l.clock.Now(), make([]Decision, len(policies)))
}
