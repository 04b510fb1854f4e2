package resilient

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

var _ core.MultiKeyChecker = (*Backend)(nil)

// errNoMultiKey reports a primary or fallback that cannot check several keys
// at once.
var errNoMultiKey = errors.New("resilient: the backend does not implement core.MultiKeyChecker")

// CheckMany implements core.MultiKeyChecker with the wrapper's budget,
// breaker and failure mode, for a primary (and a fallback) that implements
// it; otherwise it returns core.ErrMultiKeyUnsupported. A check of one
// item is a check of one key under one policy: with the deny cache on, it
// goes through Check, so that the cache answers it (Envoy's requests of one
// descriptor, say). The deny cache does not answer checks of several items:
// each goes to the primary.
func (b *Backend) CheckMany(ctx context.Context, items []core.Keyed, cost int, now time.Time, out []core.Decision) error {
	if _, ok := b.primary.(core.MultiKeyChecker); !ok {
		return core.ErrMultiKeyUnsupported
	}
	if err := core.ValidateMany(items, cost); err != nil {
		return err
	}
	if len(out) < len(items) {
		return fmt.Errorf("resilient: check: out has %d elements for %d items", len(out), len(items))
	}
	out = out[:len(items)]
	if b.deny != nil && len(items) == 1 {
		var err error
		out[0], err = b.CheckOne(ctx, items[0].Key, items[0].Policy, items[0].EffectiveCost(cost), now)
		return err
	}
	probe, cause := b.admit(opCheck)
	if cause == nil {
		res, err := b.callPrimaryItems(ctx, opCheckMany, "", nil, items, cost, now, out)
		if cause = b.settle(opCheck, probe, res, err); cause == nil {
			return err
		}
	}
	return b.degradeOut(ctx, out, func(i int) core.Policy { return items[i].Policy }, func() error {
		fb, ok := b.fallback.(core.MultiKeyChecker)
		if !ok {
			return errNoMultiKey
		}
		return fb.CheckMany(ctx, items, cost, now, out)
	}, cause)
}
