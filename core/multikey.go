package core

import (
	"context"
	"errors"
	"time"
)

// Keyed is one policy of a multi-key check and the key it applies to: the
// descriptors of one Envoy rate-limit request, for example, each with a key
// and a limit of its own.
type Keyed struct {
	Key    string
	Policy Policy
}

// MultiKeyChecker is an optional interface a Backend may implement: a check
// of several keys, each under its own policy, decided at once and all or
// nothing, like Check for one key. The memory store and the Redis store
// implement it (on a Redis Cluster the keys must share a hash slot; see
// redisstore.WithSlotKey).
type MultiKeyChecker interface {
	// CheckMany decides one check of cost units against every item at
	// instant now: either every item's policy admits it for its key and
	// each consumes cost, or nothing changes at all. It writes one decision
	// per item into out, which has len(items) elements. An item given twice
	// (the same key and a policy of the same Identity) is one state and
	// consumes once.
	CheckMany(ctx context.Context, items []Keyed, cost int, now time.Time, out []Decision) error
}

// ErrMultiKeyUnsupported is returned by Limiter.CheckMany when the backend
// does not implement MultiKeyChecker.
var ErrMultiKeyUnsupported = errors.New("core: the backend cannot check several keys at once")

// ValidateMany is ValidateCheck for a multi-key check: every key and policy
// valid, at least one item, and cost within every policy's capacity.
func ValidateMany(items []Keyed, cost int) error {
	if len(items) == 0 {
		return ErrNoPolicy
	}
	for _, it := range items {
		if err := ValidateKey(it.Key); err != nil {
			return err
		}
		if err := it.Policy.Validate(); err != nil {
			return err
		}
		if err := it.Policy.CheckCost(cost); err != nil {
			return err
		}
	}
	return nil
}

// CheckMany checks cost units against every item, each a key and its
// policy, all or nothing: a denial by one consumes nothing from any. It
// needs a backend that implements MultiKeyChecker (ErrMultiKeyUnsupported
// otherwise). Decisions are written into out when it has room for
// len(items) of them, and into a new slice otherwise.
func (l *Limiter) CheckMany(ctx context.Context, items []Keyed, cost int, out []Decision) (Result, error) {
	mk, ok := l.backend.(MultiKeyChecker)
	if !ok {
		return Result{}, ErrMultiKeyUnsupported
	}
	if cap(out) < len(items) {
		out = make([]Decision, len(items))
	}
	out = out[:len(items)]
	if err := mk.CheckMany(ctx, items, cost, l.clock.Now(), out); err != nil {
		return Result{}, err
	}
	allowed, binding := bind(out)
	return Result{Allowed: allowed, Decisions: out, Binding: binding}, nil
}
