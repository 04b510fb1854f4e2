package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/ratelimit-go/ratelimit/internal/clocksleep"
)

// Wait is WaitN with cost 1.
func (l *Limiter) Wait(ctx context.Context, key string, p Policy) (Decision, error) {
	return l.WaitN(ctx, key, p, 1)
}

// WaitN blocks until p admits cost units for key, consumes them and returns
// the admitting decision. It waits each denial's exact RetryAfter plus a
// random share of up to a quarter of the policy's interval, so that waiters
// do not all check at once. When the context's deadline comes before the
// RetryAfter it returns at once with the denial and an error matching
// context.DeadlineExceeded; when the context ends, its error. Invalid
// arguments yield the typed errors of AllowN.
func (l *Limiter) WaitN(ctx context.Context, key string, p Policy, cost int) (Decision, error) {
	for {
		d, err := l.AllowN(ctx, key, p, cost)
		if err != nil || d.Allowed {
			return d, err
		}
		wait := max(d.RetryAfter, time.Millisecond) // a denial always names a wait; never spin
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return d, fmt.Errorf("ratelimit: waiting %v for key %q would pass the context's deadline: %w", wait, key, context.DeadlineExceeded)
		}
		if interval := p.Window / time.Duration(p.Limit); interval >= 4 {
			wait += rand.N(min(interval, wait) / 4)
		}
		if err := clocksleep.Sleep(ctx, l.clock, wait); err != nil {
			return d, err
		}
	}
}
