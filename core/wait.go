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
// do not all check at once, and then the admitting decision's Delay
// (LeakyBucket), so that admitted calls leave at the policy's constant rate.
// When the context's deadline comes before the RetryAfter it returns at once
// with the denial and an error matching context.DeadlineExceeded; when the
// context ends, its error. Either way it consumes nothing: units admitted
// with a Delay the context does not outlast are given back. Invalid
// arguments yield the typed errors of AllowN.
func (l *Limiter) WaitN(ctx context.Context, key string, p Policy, cost int) (Decision, error) {
	for {
		d, err := l.AllowN(ctx, key, p, cost)
		if err != nil || d.Allowed && d.Delay == 0 {
			return d, err
		}
		wait := d.Delay // an admission's place in a leaky bucket's queue
		if !d.Allowed {
			wait = max(d.RetryAfter, time.Millisecond) // a denial always names a wait; never spin
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			err = fmt.Errorf("ratelimit: waiting %v for key %q would pass the context's deadline: %w", wait, key, context.DeadlineExceeded)
		} else {
			if interval := p.Window / time.Duration(p.Limit); !d.Allowed && interval >= 4 {
				wait += rand.N(min(interval, wait) / 4)
			}
			err = clocksleep.Sleep(ctx, l.clock, wait)
		}
		if d.Allowed && err != nil { // give the place back within a second; if that fails, it passes with the queue
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			_ = l.backend.Do(rctx, []Item{{Key: key, Policy: p, Cost: cost, Op: OpRefund}}, l.clock.Now(), make([]Decision, 1))
			cancel()
		}
		if err != nil || d.Allowed {
			return d, err
		}
	}
}
