package core

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Keyed is one policy of a multi-key check and the key it applies to: the
// descriptors of one Envoy rate-limit request, for example, each with a key
// and a limit of its own.
type Keyed struct {
	Key    string
	Policy Policy
	// Cost, when above 0, is the units this item consumes in place of the
	// check's cost (Envoy's per-descriptor hits_addend). 0 means the
	// check's cost. Items that share a state (the same key and a policy of
	// the same Identity) must ask for the same cost.
	Cost int
}

// EffectiveCost is the units the item consumes in a check of cost units:
// its own Cost if it has one, cost otherwise.
func (k *Keyed) EffectiveCost(cost int) int {
	if k.Cost != 0 {
		return k.Cost
	}
	return cost
}

// MultiKeyChecker is an optional interface a Backend may implement: a check
// of several keys, each under its own policy, decided at once and all or
// nothing, like Check for one key. The memory store and the Redis store
// implement it (on a Redis Cluster the keys must share a hash slot; see
// redisstore.WithSlotKey).
type MultiKeyChecker interface {
	// CheckMany decides one check of cost units against every item at
	// instant now: either every item's policy admits it for its key and
	// each consumes its units (Keyed.EffectiveCost), or nothing changes at
	// all. It writes one decision per item into out, which has len(items)
	// elements. An item given twice (the same key and a policy of the same
	// Identity) is one state and consumes once.
	CheckMany(ctx context.Context, items []Keyed, cost int, now time.Time, out []Decision) error
}

// ErrMultiKeyUnsupported is returned by Limiter.CheckMany when the backend
// does not implement MultiKeyChecker.
var ErrMultiKeyUnsupported = errors.New("core: the backend cannot check several keys at once")

// ValidateMany is ValidateCheck for a multi-key check: every key and policy
// valid, at least one item, every item's units (Keyed.EffectiveCost) at
// least 1 and within its policy's capacity, and the same units for items
// that share a state. Its errors match ErrInvalidKey, ErrInvalidPolicy,
// ErrNoPolicy, ErrInvalidCost or ErrCostExceedsCapacity.
func ValidateMany(items []Keyed, cost int) error {
	if len(items) == 0 {
		return ErrNoPolicy
	}
	for i := range items {
		it := &items[i]
		if err := ValidateKey(it.Key); err != nil {
			return err
		}
		if err := it.Policy.Validate(); err != nil {
			return err
		}
		if it.Cost < 0 {
			return &CostError{Policy: it.Policy.Name, Cost: it.Cost, Err: ErrInvalidCost}
		}
		if err := it.Policy.CheckCost(it.EffectiveCost(cost)); err != nil {
			return err
		}
	}
	if mixedCosts(items, cost) {
		for i := range items {
			for j := range i {
				a, b := &items[j], &items[i]
				if a.Key == b.Key && a.Policy.Identity() == b.Policy.Identity() && a.EffectiveCost(cost) != b.EffectiveCost(cost) {
					return fmt.Errorf("%w: items %d and %d share a state (key and policy) and ask for %d and %d units; give them one cost",
						ErrInvalidCost, j, i, a.EffectiveCost(cost), b.EffectiveCost(cost))
				}
			}
		}
	}
	return nil
}

// mixedCosts reports whether the items of a check of cost units consume
// different units.
func mixedCosts(items []Keyed, cost int) bool {
	first := items[0].EffectiveCost(cost)
	for i := 1; i < len(items); i++ {
		if items[i].EffectiveCost(cost) != first {
			return true
		}
	}
	return false
}

// UniformCost returns the units every item of a valid check of cost units
// consumes, and whether they all consume the same: stores decide such a
// check as one of that cost, and only checks of mixed units per item.
func UniformCost(items []Keyed, cost int) (int, bool) {
	return items[0].EffectiveCost(cost), !mixedCosts(items, cost)
}

// CheckMany checks cost units against every item, each a key and its
// policy (and an item with a Cost of its own, those units), all or
// nothing: a denial by one consumes nothing from any. It
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
