package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ratelimit-go/ratelimit"
	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/internal/must"
	"github.com/ratelimit-go/ratelimit/keyfuncs"
	"github.com/ratelimit-go/ratelimit/keyfuncs/keyfuncstest"
)

// TestShapingHasACeiling: under 100/1m a leaky bucket would hold the 99th
// queued request for almost a minute; the middleware holds none longer than
// its MaxDelay (1s by default) and denies the rest with the exact
// Retry-After, consuming nothing.
func TestShapingHasACeiling(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []ratelimit.Option
		limit time.Duration
	}{
		{"default", nil, time.Second},
		{"WithMaxDelay", []ratelimit.Option{ratelimit.WithMaxDelay(3 * time.Second)}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			var held []time.Duration
			lim := core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))
			m, err := ratelimit.New(append([]ratelimit.Option{
				ratelimit.WithLimiter(lim),
				ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
				ratelimit.WithPolicy(core.MustParsePolicy("100/1m;algorithm=leaky_bucket;name=shaped")),
				ratelimit.WithShaping(func(_ context.Context, d time.Duration) error { held = append(held, d); return nil }),
			}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			var denied *recorder
			admitted := 0
			for range 100 {
				res := newRecorder()
				if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, nil) {
					denied = res
					break
				}
				admitted++
			}
			for _, d := range held {
				if d > tc.limit {
					t.Fatalf("held a request %v, more than the ceiling %v", d, tc.limit)
				}
			}
			// 600 ms apart: the ceiling admits floor(limit/600ms)+1 at once.
			if want := int(tc.limit/(600*time.Millisecond)) + 1; admitted != want {
				t.Fatalf("admitted %d at once, want %d", admitted, want)
			}
			if denied == nil || denied.status != 429 {
				t.Fatal("no 429 once the hold would exceed the ceiling")
			}
			ra := denied.h.Get("Retry-After")
			if ra == "" || ra == "0" {
				t.Fatalf("Retry-After %q", ra)
			}
			// At RetryAfter the same request is admitted, within the ceiling.
			d, err := lim.Peek(context.Background(), "k", shaped(tc.limit))
			if err != nil || d.Allowed {
				t.Fatalf("peek before: %+v %v", d, err)
			}
			clock.Advance(d.RetryAfter)
			if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), newRecorder(), nil) {
				t.Fatal("denied at its exact RetryAfter")
			}
			if last := held[len(held)-1]; last > tc.limit {
				t.Fatalf("held %v at RetryAfter", last)
			}
		})
	}
	if _, err := ratelimit.New(ratelimit.WithKeyFunc(keyfuncs.RemoteIP), ratelimit.WithPolicy(core.MustParsePolicy("1/s")), ratelimit.WithMaxDelay(-time.Second)); !errors.Is(err, ratelimit.ErrInvalidConfig) {
		t.Fatalf("WithMaxDelay(-1s): %v", err)
	}
}

// shaped is the policy of TestShapingHasACeiling as the middleware checks
// it: with the ceiling limit as its MaxDelay.
func shaped(limit time.Duration) core.Policy {
	p := core.MustParsePolicy("100/1m;algorithm=leaky_bucket;name=shaped")
	p.MaxDelay = limit
	return p
}

// TestNoShapingMeters: with WithShaping(nil) nothing is held, so no ceiling
// applies: a leaky bucket 3/1m admits its capacity at once, as the stores
// do, and then denies with the exact Retry-After.
func TestNoShapingMeters(t *testing.T) {
	t.Parallel()
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := must.Do(ratelimit.New(
		ratelimit.WithLimiter(core.NewLimiter(must.Do(memstore.New()), core.WithClock(clock))),
		ratelimit.WithKeyFunc(keyfuncs.Constant("k")),
		ratelimit.WithPolicy(core.MustParsePolicy("3/1m;algorithm=leaky_bucket")),
		ratelimit.WithShaping(nil)))
	for i := range 3 {
		if v := m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), newRecorder(), nil); !v {
			t.Fatalf("request %d denied without shaping", i+1)
		}
	}
	res := newRecorder()
	if m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, nil) || res.status != 429 || res.h.Get("Retry-After") != "20" {
		t.Fatalf("fourth request: %d, Retry-After %q; want 429 after 20 s", res.status, res.h.Get("Retry-After"))
	}
	clock.Advance(20 * time.Second)
	if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), newRecorder(), nil) {
		t.Fatal("denied at its Retry-After")
	}
}

// TestDefaultShaping: without WithShaping, an admitted request is held on a
// timer for its delay, then goes on; one whose context ends during its hold
// ends there, without calling the next handler or writing a response.
func TestDefaultShaping(t *testing.T) {
	lim, _ := newLimiter(t) // a manual clock: each request queues behind the last
	shaped := func(policy string) *ratelimit.Middleware {
		return must.Do(ratelimit.New(ratelimit.WithLimiter(lim), ratelimit.WithKeyFunc(keyfuncs.Constant(policy)),
			ratelimit.WithPolicy(core.MustParsePolicy(policy))))
	}
	calls := 0
	next := func(context.Context) int { calls++; return 200 }
	m := shaped("1000/1s;algorithm=leaky_bucket;name=fast")
	for i := range 2 { // the second is held 1 ms on the timer
		if res := newRecorder(); !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), res, next) || res.status != 0 {
			t.Fatalf("request %d not passed on (status %d)", i, res.status)
		}
	}
	if calls != 2 {
		t.Fatalf("next called %d times, want 2", calls)
	}

	slow := "2/1m;algorithm=leaky_bucket;max_delay=1m;name=slow" // the second is held 30 s
	m = shaped(slow)
	if !m.Handle(context.Background(), keyfuncstest.New("192.0.2.1:1"), newRecorder(), next) {
		t.Fatal("the first request was held")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan bool)
	res := newRecorder()
	go func() { done <- m.Handle(ctx, keyfuncstest.New("192.0.2.1:1"), res, next) }()
	deadline := time.Now().Add(10 * time.Second)
	for remaining(t, lim, slow, core.MustParsePolicy(slow)) != 0 { // cancel once it is charged, that is, held
		if time.Now().After(deadline) {
			t.Fatal("the second request was not charged within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if passed := <-done; passed || calls != 3 || res.status != 0 {
		t.Fatalf("a request whose context ended during its hold: passed %v, next called %d times (want 3), status %d", passed, calls, res.status)
	}
}
