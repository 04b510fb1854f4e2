// Package clocksleep waits on a core.Clock: on a ManualClock's After when
// the clock has one, so that tests move waiters on by moving the clock, and
// on a timer otherwise.
package clocksleep

import (
	"context"
	"time"
)

// Sleep waits d on clock, or until ctx is done, returning ctx's error then.
func Sleep(ctx context.Context, clock any, d time.Duration) error {
	var fired <-chan time.Time
	if c, ok := clock.(interface {
		After(time.Duration) <-chan time.Time
	}); ok {
		fired = c.After(d)
	} else {
		t := time.NewTimer(d)
		defer t.Stop()
		fired = t.C
	}
	select {
	case <-fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
