package core

import (
	"context"
	"time"
)

// waitLimitKey is the context key of a wait limit.
type waitLimitKey struct{}

// waitLimitCtx carries a wait limit in one allocation, answering
// Value(waitLimitKey{}) with itself and leaving the rest to ctx.
type waitLimitCtx struct {
	context.Context
	t time.Time
}

// Value implements context.Context.
func (c *waitLimitCtx) Value(key any) any {
	if _, ok := key.(waitLimitKey); ok {
		return c
	}
	return c.Context.Value(key)
}

// WithWaitLimit returns a copy of ctx carrying the wait limit t, for a
// Bounded backend: a call without an answer once t has passed returns
// context.DeadlineExceeded, while the context itself goes on (no timer, and
// nothing registered with a parent). An earlier limit already on ctx holds.
// core/resilient takes a limit before its budget's end as that call's
// budget; other backends ignore it.
func WithWaitLimit(ctx context.Context, t time.Time) context.Context {
	if cur, ok := WaitLimit(ctx); ok && !t.Before(cur) {
		return ctx
	}
	return &waitLimitCtx{Context: ctx, t: t}
}

// WaitLimit returns the wait limit ctx carries, if any (see WithWaitLimit).
func WaitLimit(ctx context.Context) (time.Time, bool) {
	if w, ok := ctx.Value(waitLimitKey{}).(*waitLimitCtx); ok {
		return w.t, true
	}
	return time.Time{}, false
}
