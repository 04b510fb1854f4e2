package core

import (
	"context"
	"time"
)

// waitLimitKey is the context key of a wait limit.
type waitLimitKey struct{}

// waitLimitCtx carries a wait limit: one allocation, where
// context.WithValue would take two (its context and the boxed time). It
// answers Value(waitLimitKey{}) with itself and leaves every other method
// and key to the context it wraps, through which the context package still
// finds a cancelable parent.
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
// Bounded backend: a call that has no answer once t has passed returns
// context.DeadlineExceeded, as it would at a deadline of the context's own,
// while the context itself goes on. It bounds one call as
// context.WithTimeout would, for less: no timer per call and nothing
// registered with a parent context that can be canceled. When ctx already carries an earlier wait limit, ctx
// is returned as it is: the earlier limit holds. The returned context ends
// when ctx does, never at t. A Bounded backend reads t, and so does
// core/resilient, which takes a limit before its budget's end as that
// call's budget; any other backend ignores it.
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
