package core_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
)

// counting counts the calls that reach a backend.
type counting struct {
	core.Backend
	calls atomic.Int64
}

func (c *counting) Do(ctx context.Context, items []core.Item, now time.Time, out []core.Decision) error {
	c.calls.Add(1)
	return c.Backend.Do(ctx, items, now, out)
}

// waitTimers waits, with a deadline, until n waiters wait on clock.
func waitTimers(t *testing.T, clock *core.ManualClock, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for core.PendingTimers(clock) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters after 5 s, want %d", core.PendingTimers(clock), n)
		}
		time.Sleep(time.Millisecond)
	}
}

type waited struct {
	d   core.Decision
	err error
	at  time.Time
}

func TestWaitWaitsTheExactRetryAfter(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := core.NewManualClock(t0)
	b := &counting{Backend: backendtest.NewReference()}
	l := core.NewLimiter(b, core.WithClock(clock))
	p := core.MustParsePolicy("1/1s")
	if d, err := l.Allow(context.Background(), "k", p); err != nil || !d.Allowed {
		t.Fatal(d, err)
	}
	done := make(chan waited, 1)
	go func() {
		d, err := l.Wait(context.Background(), "k", p)
		done <- waited{d, err, clock.Now()}
	}()
	waitTimers(t, clock, 1)
	clock.Advance(999 * time.Millisecond) // before the RetryAfter: the timer must still be pending
	if core.PendingTimers(clock) != 1 {
		t.Fatal("the waiter woke before its RetryAfter")
	}
	clock.Advance(time.Millisecond + 250*time.Millisecond) // RetryAfter plus the largest spread
	select {
	case w := <-done:
		if w.err != nil || !w.d.Allowed {
			t.Fatalf("Wait = %+v, %v", w.d, w.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter did not wake once the clock passed its RetryAfter and spread")
	}
	if n := b.calls.Load(); n != 3 {
		t.Fatalf("%d backend calls, want 3 (the first check, the denial, the admission): no busy loop", n)
	}
}

func TestWaitRefusesAWaitPastTheDeadline(t *testing.T) {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	p := core.MustParsePolicy("1/1m")
	_, _ = l.Allow(context.Background(), "k", p)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	started := time.Now()
	d, err := l.Wait(ctx, "k", p)
	if !errors.Is(err, context.DeadlineExceeded) || d.Allowed || d.RetryAfter != time.Minute || time.Since(started) > 500*time.Millisecond {
		t.Fatalf("Wait = %+v, %v after %v; want an immediate DeadlineExceeded", d, err, time.Since(started))
	}
	if core.PendingTimers(clock) != 0 {
		t.Fatal("a refused wait left a timer")
	}
	if pd, _ := l.Peek(context.Background(), "k", p); pd.Remaining != 0 || pd.RetryAfter != time.Minute {
		t.Fatalf("a refused wait consumed: %+v", pd)
	}
}

func TestWaitEndsWithItsContext(t *testing.T) {
	for name, clock := range map[string]core.Clock{"manual": core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), "system": core.SystemClock()} {
		t.Run(name, func(t *testing.T) {
			l := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
			p := core.MustParsePolicy("1/1h")
			_, _ = l.Allow(context.Background(), "k", p)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := l.Wait(ctx, "k", p); done <- err }()
			cancel()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Wait = %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Wait did not end with its context")
			}
		})
	}
}

// TestWaitHoldsTheLeakyBucketDelay: a leaky bucket admits a call with a
// Delay, its place in the queue; Wait returns only once that has passed, so
// that calls leave at the policy's rate. A caller whose deadline comes
// first, or whose context ends while held, gets its error and its place is
// given back: the next call is held as long as it would have been.
func TestWaitHoldsTheLeakyBucketDelay(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := core.NewManualClock(t0)
	l := core.NewLimiter(backendtest.NewReference(), core.WithClock(clock))
	p := core.MustParsePolicy("2/1s;algorithm=leaky_bucket")
	ctx := context.Background()
	if d, err := l.Wait(ctx, "k", p); err != nil || !d.Allowed || d.Delay != 0 || !clock.Now().Equal(t0) {
		t.Fatalf("first Wait = %+v, %v", d, err)
	}
	done := make(chan waited, 1)
	go func() {
		d, err := l.Wait(ctx, "k", p)
		done <- waited{d, err, clock.Now()}
	}()
	waitTimers(t, clock, 1)
	clock.Advance(499 * time.Millisecond)
	if core.PendingTimers(clock) != 1 {
		t.Fatal("Wait returned before its Delay")
	}
	clock.Advance(time.Millisecond)
	select {
	case w := <-done:
		if w.err != nil || !w.d.Allowed || w.d.Delay != 500*time.Millisecond || !w.at.Equal(t0.Add(500*time.Millisecond)) {
			t.Fatalf("held Wait = %+v, %v at %v", w.d, w.err, w.at)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Wait was not released once its Delay had passed")
	}

	// Now at t0+500ms the queue holds one call (leaving at t0+1s): the next
	// is admitted with a Delay of 500ms. A deadline shorter than that
	// refuses at once, and a context ended while held ends the wait; both
	// give their place back.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if d, err := l.Wait(short, "k", p); !errors.Is(err, context.DeadlineExceeded) || d.Delay != 500*time.Millisecond {
		t.Fatalf("Wait past the deadline = %+v, %v; want DeadlineExceeded", d, err)
	}
	ended, end := context.WithCancel(ctx)
	go func() { _, err := l.Wait(ended, "k", p); done <- waited{err: err} }()
	waitTimers(t, clock, 1)
	end()
	if w := <-done; !errors.Is(w.err, context.Canceled) {
		t.Fatalf("Wait whose context ended = %v", w.err)
	}
	if d, err := l.Allow(ctx, "k", p); err != nil || !d.Allowed || d.Delay != 500*time.Millisecond {
		t.Fatalf("after two places given back, Allow = %+v, %v; want a Delay of 500ms", d, err)
	}
}

// TestWaitersSpread: waiters denied at one instant do not all wake at the
// same instant, and each is admitted once, in turn, with no busy loop.
func TestWaitersSpread(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := core.NewManualClock(t0)
	b := &counting{Backend: backendtest.NewReference()}
	l := core.NewLimiter(b, core.WithClock(clock))
	p := core.MustParsePolicy("10/1s") // one unit per 100 ms
	for range 10 {
		_, _ = l.Allow(context.Background(), "k", p)
	}
	const waiters = 8
	done := make(chan waited, waiters)
	for range waiters {
		go func() {
			d, err := l.Wait(context.Background(), "k", p)
			done <- waited{d, err, clock.Now()}
		}()
	}
	waitTimers(t, clock, waiters)
	wakes := map[time.Time]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for got := 0; got < waiters; {
		select {
		case w := <-done:
			if w.err != nil || !w.d.Allowed {
				t.Fatalf("Wait = %+v, %v", w.d, w.err)
			}
			wakes[w.at] = true
			got++
		default:
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d waiters admitted", got, waiters)
			}
			clock.Advance(5 * time.Millisecond)
			time.Sleep(100 * time.Microsecond)
		}
	}
	if len(wakes) < 2 {
		t.Fatalf("every waiter woke at one instant: %v", wakes)
	}
	if elapsed := clock.Now().Sub(t0); elapsed < waiters*100*time.Millisecond {
		t.Fatalf("%d waiters admitted within %v: faster than the rate", waiters, elapsed)
	}
	if n := b.calls.Load(); n > 10+waiters*12 {
		t.Fatalf("%d backend calls for %d waiters", n, waiters)
	}
}

func TestWaitRefusesBadInput(t *testing.T) {
	t.Parallel()
	l := core.NewLimiter(backendtest.NewReference())
	if _, err := l.WaitN(context.Background(), "k", core.MustParsePolicy("5/1s"), 6); !errors.Is(err, core.ErrCostExceedsCapacity) {
		t.Fatalf("WaitN above the capacity: %v", err)
	}
	if _, err := l.Wait(context.Background(), "", core.MustParsePolicy("5/1s")); !errors.Is(err, core.ErrInvalidKey) {
		t.Fatalf("Wait with no key: %v", err)
	}
}
