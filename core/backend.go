package core

import (
	"context"
	"time"
)

// Backend stores rate-limit state and decides checks atomically. Stores in
// core/memstore and core/redisstore implement it; the conformance suite in
// core/backendtest defines what "implements" means.
//
// Every method is safe for concurrent use. Implementations validate their
// arguments with ValidateCheck (or equivalent) and return the typed errors of
// this package before touching any state.
type Backend interface {
	// Check decides one check of cost units for key against every policy at
	// instant now, atomically: either every policy admits it and each
	// consumes cost, or nothing changes at all. It writes one decision per
	// policy into out, which has len(policies) elements.
	//
	// A denied check writes nothing: every decision reports the state as it
	// stands, with Delay zero; policies that had room report Allowed with a
	// zero RetryAfter, the others the exact RetryAfter of that policy.
	Check(ctx context.Context, key string, policies []Policy, cost int, now time.Time, out []Decision) error
	// Peek reports the state of key under every policy at now without
	// consuming anything: Remaining and ResetAfter as they stand, Allowed and
	// RetryAfter for a check of cost 1.
	Peek(ctx context.Context, key string, policies []Policy, now time.Time, out []Decision) error
	// Reset forgets the state of key under the given policies.
	Reset(ctx context.Context, key string, policies []Policy) error
}

// SingleChecker is an optional fast path a Backend may implement: a check
// against one policy without building slices, which keeps the common case
// free of allocations. Its semantics are those of Check with one policy.
type SingleChecker interface {
	CheckOne(ctx context.Context, key string, p Policy, cost int, now time.Time) (Decision, error)
}

// LeanChecker is an optional fast path a SingleChecker may add: CheckOne's
// decision without the fields the caller already has (Limit and Policy are
// the policy's own, Source is SourcePrimary), as five values the compiler
// returns in registers. A Decision is too large for registers, and the
// Limiter then zeroes and copies it twice per check; the memory store
// implements LeanChecker, and Limiter.Allow and AllowN use it when the
// backend does. Its semantics are CheckOne's; on error every other result
// is zero.
//
// A type that embeds a store to override its CheckOne must override
// CheckOneLean as well, or the Limiter calls the store's.
type LeanChecker interface {
	CheckOneLean(ctx context.Context, key string, p Policy, cost int, now time.Time) (allowed bool, remaining int, retryAfter, resetAfter, delay time.Duration, err error)
}

// ContextBounded is an optional interface a Backend may implement to say
// that none of its calls outlasts its context: once the context is done (its
// deadline passed or it was canceled), every call returns promptly, with the
// context's error if it had no answer yet, however slow or hung its storage
// is, and it writes nothing into the caller's memory after it returned.
// core/resilient calls such a backend on the caller's goroutine; any other
// it calls on a goroutine of its own, so that its budget holds even for a
// backend that ignores its context. The memory and Redis stores implement
// it; a wrapper implements it by asking what it wraps. See also
// WaitLimited.
type ContextBounded interface {
	// BoundedByContext reports whether every call returns once its context
	// is done, as above.
	BoundedByContext() bool
}

// BoundedByContext reports whether b implements ContextBounded and says
// that its calls return once their context is done.
func BoundedByContext(b Backend) bool {
	cb, ok := b.(ContextBounded)
	return ok && cb.BoundedByContext()
}

// MaxKeyLen bounds the length of a key in bytes.
const MaxKeyLen = 64 << 10

// ValidateKey returns a *KeyError for an empty key or one longer than
// MaxKeyLen. Keys are otherwise opaque bytes.
func ValidateKey(key string) error {
	if key == "" {
		return &KeyError{Reason: "key is empty"}
	}
	if len(key) > MaxKeyLen {
		return &KeyError{Reason: "key is longer than 65536 bytes"}
	}
	return nil
}

// ValidateCheck validates the arguments of a check: the key, every policy,
// and the cost against every policy's capacity (cost 0 is accepted for Peek
// when peek is true). It returns the first problem as a typed error.
func ValidateCheck(key string, policies []Policy, cost int, peek bool) error {
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
		if !peek {
			if err := p.CheckCost(cost); err != nil {
				return err
			}
		}
	}
	return nil
}
