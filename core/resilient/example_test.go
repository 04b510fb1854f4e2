package resilient_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/memstore"
	"github.com/ratelimit-go/ratelimit/core/resilient"
)

// downBackend stands for a Redis that refuses every connection.
type downBackend struct{}

var errRefused = errors.New("dial tcp 127.0.0.1:6379: connect: connection refused")

func (downBackend) Do(context.Context, []core.Item, time.Time, []core.Decision) error {
	return errRefused
}

// While the primary is down, a fallback memory store limits each instance
// with the same policy, and each decision says who answered.
func Example_fallback() {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	fallback, err := memstore.New()
	if err != nil {
		panic(err)
	}
	store, err := resilient.New(downBackend{},
		resilient.WithFallback(fallback),
		resilient.WithBreaker(2, time.Second),
		resilient.WithClock(clock))
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store, core.WithClock(clock))
	policy := core.Policy{Limit: 2, Window: time.Second, Algorithm: core.FixedWindow}

	for range 3 {
		d, err := limiter.Allow(context.Background(), "client-1", policy)
		fmt.Println(d.Allowed, d.Source, err)
	}
	fmt.Println("breaker:", store.Stats().State)
	// Output:
	// true fallback <nil>
	// true fallback <nil>
	// false fallback <nil>
	// breaker: open
}

// Failing closed denies while the primary is down, with a RetryAfter that
// points at the breaker's next probe.
func Example_failClosed() {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	store, err := resilient.New(downBackend{},
		resilient.WithFailClosed(),
		resilient.WithBreaker(1, 2*time.Second),
		resilient.WithClock(clock))
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store, core.WithClock(clock))
	policy := core.Policy{Limit: 100, Window: time.Minute}

	d, _ := limiter.Allow(context.Background(), "client-1", policy)
	fmt.Println(d.Allowed, d.RetryAfter)
	clock.Advance(1500 * time.Millisecond)
	d, _ = limiter.Allow(context.Background(), "client-1", policy)
	fmt.Println(d.Allowed, d.RetryAfter)
	// Output:
	// false 2s
	// false 500ms
}

// Without a failure mode the error says what happened and stays typed.
func ExampleNew() {
	store, err := resilient.New(downBackend{})
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store)
	_, err = limiter.Allow(context.Background(), "client-1", core.Policy{Limit: 10, Window: time.Second})
	fmt.Println(errors.Is(err, resilient.ErrUnavailable), errors.Is(err, errRefused))
	// Output:
	// true true
}

// The deny cache answers an abusive client's repeated denied checks locally
// until the denial's RetryAfter has passed.
func ExampleWithDenyCache() {
	clock := core.NewManualClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	primary, err := memstore.New()
	if err != nil {
		panic(err)
	}
	store, err := resilient.New(primary, resilient.WithDenyCache(0))
	if err != nil {
		panic(err)
	}
	limiter := core.NewLimiter(store, core.WithClock(clock))
	policy := core.Policy{Limit: 1, Window: time.Second, Algorithm: core.GCRA}

	for range 1000 { // 1,000 requests in 100 ms
		_, _ = limiter.Allow(context.Background(), "abuser", policy)
		clock.Advance(100 * time.Microsecond)
	}
	s := store.Stats()
	fmt.Println("primary calls:", s.PrimaryCalls, "answered locally:", s.DenyCacheHits)
	// Output:
	// primary calls: 2 answered locally: 998
}

// RedisOptions gives the go-redis settings that make the budget real.
func ExampleRedisOptions() {
	t := resilient.RedisOptions(&redis.Options{Addr: "127.0.0.1:6379"}, 50*time.Millisecond)
	fmt.Println(t.ReadTimeout, t.MaxRetries, t.DialerRetries, t.ContextTimeoutEnabled)
	// Output:
	// 50ms -1 1 true
}
