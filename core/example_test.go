package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/backendtest"
	"github.com/ratelimit-go/ratelimit/core/memstore"
)

// A Limiter over the memory store, driven by a ManualClock: three requests a
// second per key, and a fourth waits for the window to slide.
func ExampleLimiter_Allow() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Unix(1_700_000_000, 0))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	perSecond := core.Policy{Name: "per-second", Limit: 3, Window: time.Second, Algorithm: core.SlidingLog}

	ctx := context.Background()
	for i := 1; i <= 4; i++ {
		d, err := limiter.Allow(ctx, "user-42", perSecond)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Printf("request %d: allowed=%v remaining=%d\n", i, d.Allowed, d.Remaining)
	}
	clock.Advance(time.Second)
	d, _ := limiter.Allow(ctx, "user-42", perSecond)
	fmt.Printf("a second later: allowed=%v remaining=%d\n", d.Allowed, d.Remaining)
	// Output:
	// request 1: allowed=true remaining=2
	// request 2: allowed=true remaining=1
	// request 3: allowed=true remaining=0
	// request 4: allowed=false remaining=0
	// a second later: allowed=true remaining=2
}

// A denied decision says exactly when the same request will succeed.
func ExampleDecision_RetryAfter() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Unix(1_700_000_000, 0))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	// 2 per second with GCRA: one unit every 500ms, a burst of 2.
	policy := core.Policy{Limit: 2, Window: time.Second, Algorithm: core.GCRA}

	ctx := context.Background()
	limiter.Allow(ctx, "k", policy)
	clock.Advance(100 * time.Millisecond)
	limiter.Allow(ctx, "k", policy)
	d, _ := limiter.Allow(ctx, "k", policy)
	fmt.Println("allowed:", d.Allowed, "retry after:", d.RetryAfter)

	clock.Advance(d.RetryAfter)
	d, _ = limiter.Allow(ctx, "k", policy)
	fmt.Println("after waiting, allowed:", d.Allowed)
	// Output:
	// allowed: false retry after: 400ms
	// after waiting, allowed: true
}

// Check enforces several policies at once, all or nothing: a request denied
// by the per-second policy consumes nothing from the per-hour one.
func ExampleLimiter_Check() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Unix(1_700_000_000, 0))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	policies := []core.Policy{
		core.MustParsePolicy("2/s;algorithm=fixed_window;name=per-second"),
		core.MustParsePolicy("100/h;algorithm=fixed_window;name=per-hour"),
	}

	ctx := context.Background()
	out := make([]core.Decision, len(policies)) // reused across checks
	for i := 1; i <= 3; i++ {
		r, err := limiter.Check(ctx, "user-42", policies, 1, out)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		b := r.Decision()
		fmt.Printf("request %d: allowed=%v binding=%s remaining=%d retry=%v\n",
			i, r.Allowed, r.Policies[r.Binding].Name, b.Remaining, b.RetryAfter)
	}
	d, _ := limiter.Peek(ctx, "user-42", policies[1])
	fmt.Println("per-hour remaining:", d.Remaining)
	// Output:
	// request 1: allowed=true binding=per-second remaining=1 retry=0s
	// request 2: allowed=true binding=per-second remaining=0 retry=0s
	// request 3: allowed=false binding=per-second remaining=0 retry=1s
	// per-hour remaining: 98
}

// ParsePolicy reads the compact form used in configuration files and flags,
// and points at the bad part of a malformed one.
func ExampleParsePolicy() {
	p, err := core.ParsePolicy("100/1m;burst=20;algorithm=token_bucket;name=api")
	fmt.Println(p.Limit, p.Window, p.Burst, p.Algorithm, p.Name, err)
	fmt.Println(p)

	_, err = core.ParsePolicy("100/1m;algorithm=leaky")
	var pe *core.PolicyError
	if errors.As(err, &pe) {
		fmt.Printf("offset %d: %q\n", pe.Offset, pe.Value)
	}
	fmt.Println(errors.Is(err, core.ErrInvalidPolicy), errors.Is(err, core.ErrUnknownAlgorithm))
	// Output:
	// 100 1m0s 20 token_bucket api <nil>
	// 100/1m;burst=20;algorithm=token_bucket;name=api
	// offset 7: "algorithm=leaky"
	// true true
}

// Invalid arguments are typed errors, never panics.
func ExampleLimiter_AllowN_errors() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store)
	ctx := context.Background()

	_, err = limiter.AllowN(ctx, "k", core.Policy{Limit: 5, Window: time.Second}, 6)
	fmt.Println(errors.Is(err, core.ErrCostExceedsCapacity))
	_, err = limiter.Allow(ctx, "k", core.Policy{Limit: 5})
	var pe *core.PolicyError
	fmt.Println(errors.As(err, &pe), pe.Field)
	_, err = limiter.Allow(ctx, "", core.Policy{Limit: 5, Window: time.Second})
	fmt.Println(errors.Is(err, core.ErrInvalidKey))
	// Output:
	// true
	// true window
	// true
}

// A wrapper that bounds each call to its store gives the store's context a
// wait limit when the store honours one: the call stops waiting then, with
// context.DeadlineExceeded, at the cost of one allocation and no timer of
// the wrapper's (core/resilient passes its budget this way).
func ExampleWithWaitLimit() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if b, ok := core.Backend(store).(core.Bounded); ok && b.Bounded() {
		ctx = core.WithWaitLimit(ctx, time.Now().Add(50*time.Millisecond))
	}
	d, err := backendtest.CheckOne(ctx, store, "user:42", core.MustParsePolicy("10/s"), 1, time.Now())
	fmt.Println(d.Allowed, d.Remaining, err)
	// Output: true 9 <nil>
}

// Wait blocks until the policy admits the call, like x/time/rate's Wait,
// and returns at once when the wait would pass the context's deadline.
func ExampleLimiter_Wait() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store)
	partner := core.MustParsePolicy("2/1h;name=partner")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 3 {
		d, err := limiter.Wait(ctx, "api.partner.example", partner)
		fmt.Println(d.Allowed, d.Remaining, errors.Is(err, context.DeadlineExceeded))
	}
	// Output:
	// true 1 false
	// true 0 false
	// false 0 true
}

// A monthly quota on the calendar of Paris: the window is the month there,
// so at 23:30 on 31 January in Paris the quota resets in 30 minutes, and
// February's window lasts its 28 days.
func ExamplePolicy_calendar() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 1, 31, 23, 30, 0, 0, paris))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	quota := core.MustParsePolicy("1000/1mo;tz=Europe/Paris;name=monthly")

	d, _ := limiter.AllowN(context.Background(), "customer-42", quota, 1000)
	fmt.Println(quota, d.Allowed, d.ResetAfter)
	d, _ = limiter.Allow(context.Background(), "customer-42", quota)
	fmt.Println(d.Allowed, d.RetryAfter)

	clock.Advance(d.RetryAfter)
	d, _ = limiter.Allow(context.Background(), "customer-42", quota)
	fmt.Println(d.Allowed, d.Remaining, d.ResetAfter)
	// Output:
	// 1000/1mo;algorithm=fixed_window;name=monthly;tz=Europe/Paris true 30m0s
	// false 30m0s
	// true 999 672h0m0s
}

// Counting only failed logins: every attempt consumes at entry, so that the
// limit holds under concurrency, and a successful one is refunded with the
// instant of its charge.
func ExampleOpRefund() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	failures := core.Policy{Name: "login-failures", Limit: 3, Window: 15 * time.Minute, Algorithm: core.FixedWindow}
	ctx := context.Background()

	for _, ok := range []bool{false, true, true, false, false, true} {
		at := clock.Now()
		d, err := limiter.Allow(ctx, "alice", failures)
		if err != nil || !d.Allowed {
			fmt.Println("locked out, retry in", d.RetryAfter)
			continue
		}
		if ok { // the password was right: this attempt does not count
			refund := []core.Item{{Key: "alice", Policy: failures, Cost: 1, Op: core.OpRefund, At: at}}
			if _, err := limiter.Do(ctx, refund, nil); err != nil {
				fmt.Println("refund:", err)
			}
		}
		clock.Advance(time.Minute)
	}
	d, _ := limiter.Peek(ctx, "alice", failures)
	fmt.Println("failures left:", d.Remaining)
	// Output:
	// locked out, retry in 10m0s
	// failures left: 0
}

// Settling a cost known only afterwards, such as the tokens a language
// model used: the request reserves an estimate, then the difference is
// charged (past the limit if need be: the key goes into debt) or refunded.
func ExampleOpCharge() {
	store, err := memstore.New()
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC))
	limiter := core.NewLimiter(store, core.WithClock(clock))
	tokens := core.Policy{Name: "tokens", Limit: 10_000, Window: time.Minute, Algorithm: core.TokenBucket}
	ctx := context.Background()

	const estimate = 1_000
	d, err := limiter.AllowN(ctx, "team-7", tokens, estimate)
	if err != nil || !d.Allowed {
		fmt.Println("denied:", err)
		return
	}
	used := 25_000 // reported by the model once the answer is complete
	settle := []core.Item{{Key: "team-7", Policy: tokens, Cost: used - estimate, Op: core.OpCharge}}
	if used < estimate {
		settle[0].Cost, settle[0].Op = estimate-used, core.OpRefund
	}
	r, err := limiter.Do(ctx, settle, nil)
	if err != nil {
		fmt.Println("settle:", err)
		return
	}
	fmt.Println("after the settle: remaining", r.Decisions[0].Remaining, "retry in", r.Decisions[0].RetryAfter)
	// Output:
	// after the settle: remaining 0 retry in 1m30.006s
}
