package redisstore_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/ratelimit-go/ratelimit/core"
	"github.com/ratelimit-go/ratelimit/core/redisstore"
)

// A Limiter over a Redis store: every instance that shares the Redis shares
// the limit. miniredis stands in for Redis here; a real deployment passes its
// *redis.Client, *redis.ClusterClient, Sentinel or Ring client instead.
func Example() {
	srv, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	defer client.Close()

	store, err := redisstore.New(client, redisstore.WithPrefix("myapp:"))
	if err != nil {
		panic(err)
	}
	clock := core.NewManualClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	lim := core.NewLimiter(store, core.WithClock(clock))
	perSecond := core.MustParsePolicy("2/s;algorithm=gcra")

	ctx := context.Background()
	for range 3 {
		d, err := lim.Allow(ctx, "user:42", perSecond)
		if err != nil {
			panic(err)
		}
		fmt.Printf("allowed=%v remaining=%d retry_after=%v\n", d.Allowed, d.Remaining, d.RetryAfter)
	}
	clock.Advance(500 * time.Millisecond)
	d, _ := lim.Allow(ctx, "user:42", perSecond)
	fmt.Printf("after 500ms: allowed=%v\n", d.Allowed)
	// Output:
	// allowed=true remaining=1 retry_after=0s
	// allowed=true remaining=0 retry_after=0s
	// allowed=false remaining=0 retry_after=500ms
	// after 500ms: allowed=true
}

// A multi-policy check is one script call: both policies admit it, or
// neither consumes anything.
func ExampleStore_Do() {
	srv, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()
	store, err := redisstore.New(client)
	if err != nil {
		panic(err)
	}

	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	policies := []core.Policy{
		core.MustParsePolicy("3/s;algorithm=sliding_window;name=burst"),
		core.MustParsePolicy("5/1h;algorithm=fixed_window;name=hourly"),
	}
	out := make([]core.Decision, len(policies))
	for range 4 {
		if err := core.Check(context.Background(), store, "user:42", policies, 1, now, out); err != nil {
			panic(err)
		}
		fmt.Printf("burst: allowed=%v remaining=%d; hourly: allowed=%v remaining=%d\n",
			out[0].Allowed, out[0].Remaining, out[1].Allowed, out[1].Remaining)
	}
	// Output:
	// burst: allowed=true remaining=2; hourly: allowed=true remaining=4
	// burst: allowed=true remaining=1; hourly: allowed=true remaining=3
	// burst: allowed=true remaining=0; hourly: allowed=true remaining=2
	// burst: allowed=false remaining=0; hourly: allowed=true remaining=2
}
