package resilient

import (
	"context"
	"errors"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
)

var _ core.MultiKeyChecker = (*Backend)(nil)

// errNoMultiKey reports a primary or fallback that cannot check several keys
// at once.
var errNoMultiKey = errors.New("resilient: the backend does not implement core.MultiKeyChecker")

// CheckMany implements core.MultiKeyChecker with the wrapper's budget,
// breaker and failure mode, for a primary (and a fallback) that implements
// it; otherwise it returns core.ErrMultiKeyUnsupported. The deny cache does
// not answer multi-key checks: each goes to the primary.
func (b *Backend) CheckMany(ctx context.Context, items []core.Keyed, cost int, now time.Time, out []core.Decision) error {
	if _, ok := b.primary.(core.MultiKeyChecker); !ok {
		return core.ErrMultiKeyUnsupported
	}
	if err := core.ValidateMany(items, cost); err != nil {
		return err
	}
	out = out[:len(items)]
	probe, cause := b.admit(opCheck)
	if cause == nil {
		res, err := b.callPrimaryItems(ctx, opCheckMany, "", nil, items, cost, now, out)
		if cause = b.settle(opCheck, probe, res, err); cause == nil {
			return err
		}
	}
	switch b.mode {
	case modeOpen:
		for i, it := range items {
			out[i] = core.Decision{Allowed: true, Limit: it.Policy.Limit, Policy: it.Policy}
		}
		b.stats.failedOpen.Add(1)
		answered(ctx, out, SourceFailOpen, cause)
		return nil
	case modeClosed:
		wait := b.br.retryIn(b.clock.Now())
		wait = (wait + time.Microsecond - 1).Truncate(time.Microsecond)
		for i, it := range items {
			out[i] = core.Decision{Limit: it.Policy.Limit, RetryAfter: wait, ResetAfter: wait, Policy: it.Policy}
		}
		b.stats.failedClosed.Add(1)
		answered(ctx, out, SourceFailClosed, cause)
		return nil
	case modeFallback:
		fb, ok := b.fallback.(core.MultiKeyChecker)
		if !ok {
			report(ctx, SourceUnavailable, cause)
			return &UnavailableError{Op: "check", Cause: cause, Fallback: errNoMultiKey}
		}
		err := fb.CheckMany(ctx, items, cost, now, out)
		if err == nil {
			b.stats.fallback.Add(1)
			answered(ctx, out, SourceFallback, cause)
			return nil
		}
		if callerError(err) {
			return err
		}
		report(ctx, SourceUnavailable, cause)
		return &UnavailableError{Op: "check", Cause: cause, Fallback: err}
	}
	report(ctx, SourceUnavailable, cause)
	return &UnavailableError{Op: "check", Cause: cause}
}
